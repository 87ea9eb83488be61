package gc

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/oklog/ulid/v2"
)

// TestNamedVersionReadsOnlyWhatMarksCannotDecide: a pinned named version's
// number comes from its pin, an unpinned one is decided without its number
// unless a sidecar's AnyFork mark names its table (then the collector must
// read it), whatever other tables' marks say.
func TestNamedVersionReadsOnlyWhatMarksCannotDecide(t *testing.T) {
	live := fork(0)
	pinnedAt, _ := ulid.ParseStrict(oldULID(9))
	otherAt, _ := ulid.ParseStrict(oldULID(8))
	m, err := Mark([]RootManifest{{Key: "k", Fork: live, Pins: []format.TablePin{{Name: "t", Fork: live, Version: 5, Attempt: pinnedAt}}}},
		[]AnyFork{{Table: "s", Version: 4}}, []TableKey{{Table: "p", Fork: live, Version: 7, Attempt: otherAt}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		in       TableKey
		want     uint64
		wantRead bool
	}{
		{"pinned by a root manifest", TableKey{Table: "t", Fork: live, Attempt: pinnedAt}, 5, false},
		{"named by a sidecar's plan", TableKey{Table: "p", Fork: live, Attempt: otherAt}, 7, false},
		{"unpinned, no sidecar names its table", TableKey{Table: "t", Fork: live, Attempt: otherAt}, 0, false},
		{"unpinned, another fork of a pinned key", TableKey{Table: "t", Fork: fork(1), Attempt: pinnedAt}, 0, false},
		{"unpinned, a sidecar names its table by number", TableKey{Table: "s", Fork: live, Attempt: otherAt}, 0, true},
	}
	for _, c := range cases {
		got, read := NamedVersion(m, c.in)
		if got.Version != c.want || read != c.wantRead || got.Attempt != c.in.Attempt || got.Table != c.in.Table || got.Fork != c.in.Fork {
			t.Errorf("%s: %+v read %v, want version %d read %v", c.name, got, read, c.want, c.wantRead)
		}
		if !read && c.want != 0 && !m.TableMarked(got) {
			t.Errorf("%s: the completed key %+v is not marked", c.name, got)
		}
	}
	if _, read := NamedVersion(&Marks{}, TableKey{Table: "s", Attempt: otherAt}); read {
		t.Error("empty marks asked for a read")
	}
}

// TestUnreadableNamedIsGarbage: an unreadable version named per attempt
// is an attempt that never published exactly when no mark names it; a
// pinned one (root manifest or sidecar plan) or a counter-named one is
// damage to kept data, never garbage.
func TestUnreadableNamedIsGarbage(t *testing.T) {
	live := fork(0)
	pinnedAt, _ := ulid.ParseStrict(oldULID(9))
	planAt, _ := ulid.ParseStrict(oldULID(8))
	tornAt, _ := ulid.ParseStrict(oldULID(7))
	m, err := Mark([]RootManifest{{Key: "k", Fork: live, Pins: []format.TablePin{{Name: "t", Fork: live, Version: 5, Attempt: pinnedAt}}}},
		[]AnyFork{{Table: "s", Version: 4}}, []TableKey{{Table: "p", Fork: live, Version: 7, Attempt: planAt}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   TableKey
		want bool
	}{
		{"pinned by a root manifest (number unknown to the caller)", TableKey{Table: "t", Fork: live, Attempt: pinnedAt}, false},
		{"pinned by a root manifest (number from the pin)", TableKey{Table: "t", Fork: live, Version: 5, Attempt: pinnedAt}, false},
		{"named by a sidecar's plan", TableKey{Table: "p", Fork: live, Attempt: planAt}, false},
		{"counter-named, unmarked", TableKey{Table: "t", Fork: live, Version: 3}, false},
		{"unpinned", TableKey{Table: "t", Fork: live, Attempt: tornAt}, true},
		{"unpinned, a sidecar names its table by number", TableKey{Table: "s", Fork: live, Attempt: tornAt}, true},
	}
	for _, c := range cases {
		if got := UnreadableNamedIsGarbage(m, c.in); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
