package gc

import (
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func policy(t testing.TB, p Policy) Policy {
	t.Helper()
	p, err := p.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ago(d time.Duration) int64 { return now.Add(-d).UnixNano() }

func TestProtectedTable(t *testing.T) {
	p := policy(t, Policy{KeepLast: 2, KeepFor: time.Hour, Grace: time.Minute, SkewMargin: time.Minute})
	old := ago(10 * time.Hour)
	hist := func(times ...int64) []ManifestTime {
		out := make([]ManifestTime, len(times))
		for i, tm := range times {
			out[i] = ManifestTime{Version: uint64(len(times) - i), CommitUnixNano: tm}
		}
		return out
	}
	cases := []struct {
		name      string
		loaded    []ManifestTime
		total     int
		tombstone int64
		n         int
		more      bool
	}{
		{"keep last only", hist(old, old, old, old), 4, 0, 2, false},
		{"young by age", hist(old, old, ago(time.Hour+time.Minute), old), 4, 0, 3, false},
		{"pushed out recently", hist(ago(time.Minute), old, old, old), 4, 0, 3, false},
		{"pushed out long ago", hist(ago(3*time.Minute), old, old, old), 4, 0, 2, false},
		{"unknown time kept", hist(old, old, 0, old), 4, 0, 3, false},
		{"needs more", hist(old, old), 4, 0, 2, true},
		{"fewer than keep last", hist(old), 1, 0, 1, false},
		{"deleted long ago", hist(old, old, old), 3, old, 0, false},
		{"deleted recently", hist(ago(time.Minute), old, old), 3, ago(time.Minute), 3, false},
	}
	for _, tc := range cases {
		if n, more := Protected(tc.loaded, tc.total, tc.tombstone, p, now); n != tc.n || more != tc.more {
			t.Errorf("%s: Protected = %d, %v; want %d, %v", tc.name, n, more, tc.n, tc.more)
		}
	}
}

func fork(i int) format.ID { return format.ID{byte(i + 1)} }

func oldULID(seq byte) string {
	id := ulid.ULID{}
	_ = id.SetTime(ulid.Timestamp(now.Add(-24 * time.Hour)))
	id[15] = seq
	return id.String()
}

// TestSharedVersionKeptAcrossBranches is the case the reference system got
// wrong: feat inherits version 1 of table t from main; main moves to
// version 2 and its own retention drops version 1; feat's retained
// manifest still pins it, so it and its fragment are kept.
func TestSharedVersionKeptAcrossBranches(t *testing.T) {
	t.Run("across branches", func(t *testing.T) {
		if kept := sharedVersionKept(t); !kept {
			t.Fatalf("version 1 of main's fork, pinned by feat, would be deleted")
		}
	})
	t.Run("per branch (planted bug) deletes it", func(t *testing.T) {
		SetBranchLocal(true)
		defer SetBranchLocal(false)
		if kept := sharedVersionKept(t); kept {
			t.Fatalf("per-branch reachability kept the shared version: the test cannot fail")
		}
	})
}

func sharedVersionKept(t *testing.T) bool {
	p := policy(t, Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute})
	mainFork, featFork := fork(0), fork(1)
	v1 := TableKey{Table: "t", Fork: mainFork, Version: 1}
	v2 := TableKey{Table: "t", Fork: mainFork, Version: 2}
	roots := []RootManifest{
		{Key: "main/v2", Fork: mainFork, Pins: []format.TablePin{{Name: "t", Fork: mainFork, Version: 2}}},
		{Key: "feat/v0", Fork: featFork, Pins: []format.TablePin{{Name: "t", Fork: mainFork, Version: 1}}},
	}
	m, err := Mark(roots, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f1 := oldULID(1)
	if err := m.MarkFragments("t", []string{f1}); err != nil {
		t.Fatal(err)
	}
	k := NewKnown()
	k.Add(IncKey{"main", 1}, IncState{Fork: mainFork, HeadVersion: 2, Pins: map[string]uint64{"t": 2}})
	k.Add(IncKey{"feat", 1}, IncState{Fork: featFork, HeadVersion: 0, Pins: map[string]uint64{"t": 1}})
	if !KeepTableVersion(m, k, v2, true, p, now) {
		t.Fatalf("main's pinned head version would be deleted")
	}
	v0 := TableKey{Table: "t", Fork: mainFork, Version: 0}
	if KeepTableVersion(m, k, v0, false, p, now) {
		t.Fatalf("an unreached version %v below every pin is kept", v0)
	}
	return KeepTableVersion(m, k, v1, false, p, now) && KeepFragment(m, FragKey{Table: "t", Name: f1}, p, now)
}

// TestKeepRules pins the keep decisions one by one.
func TestKeepRules(t *testing.T) {
	p := policy(t, Policy{Grace: time.Minute, SkewMargin: time.Minute})
	m, _ := Mark(nil, []AnyFork{{Table: "s", Version: 4}}, nil)
	k := NewKnown()
	live, dead := fork(0), fork(1)
	k.Add(IncKey{"main", 1}, IncState{Fork: live, HeadVersion: 9, Pins: map[string]uint64{"t": 5}})
	k.Add(IncKey{"gone", 1}, IncState{Fork: dead, HeadVersion: 3, Pins: map[string]uint64{"t": 2}, Expired: true})
	young := ulid.ULID{}
	_ = young.SetTime(ulid.Timestamp(now.Add(-time.Minute)))
	oldFork, _ := ulid.ParseStrict(oldULID(9))
	otherAttempt, _ := ulid.ParseStrict(oldULID(8))
	pinned, _ := Mark([]RootManifest{{Key: "k", Fork: live, Pins: []format.TablePin{{Name: "t", Fork: live, Version: 5, Attempt: oldFork}}}}, nil, nil)
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"manifest newer than the load", KeepManifest(m, k, "x", IncKey{"main", 1}, 10), true},
		{"manifest of an unknown incarnation", KeepManifest(m, k, "x", IncKey{"new", 1}, 0), true},
		{"manifest outside retention", KeepManifest(m, k, "x", IncKey{"main", 1}, 3), false},
		{"version above the pin", KeepTableVersion(m, k, TableKey{"t", live, 6, format.ID{}}, false, p, now), true},
		{"newest on its fork", KeepTableVersion(m, k, TableKey{"t", live, 4, format.ID{}}, true, p, now), true},
		{"unpinned table", KeepTableVersion(m, k, TableKey{"u", live, 1, format.ID{}}, false, p, now), true},
		{"below the pin, unreached", KeepTableVersion(m, k, TableKey{"t", live, 4, format.ID{}}, false, p, now), false},
		{"named by a sidecar", KeepTableVersion(m, k, TableKey{"s", dead, 4, format.ID{}}, false, p, now), true},
		{"expired incarnation", KeepTableVersion(m, k, TableKey{"t", dead, 3, format.ID{}}, true, p, now), false},
		{"young unknown fork", KeepTableVersion(m, k, TableKey{"t", young, 1, format.ID{}}, true, p, now), true},
		{"old unknown fork", KeepTableVersion(m, k, TableKey{"t", oldFork, 1, format.ID{}}, true, p, now), false},
		// Versions named per attempt (format 8): only a pin or the grace rule
		// keeps them, wherever they sit against the head's pin.
		{"named, young attempt", KeepTableVersion(m, k, TableKey{"t", live, 6, young}, false, p, now), true},
		{"named, old attempt above the pin", KeepTableVersion(m, k, TableKey{"t", live, 6, oldFork}, false, p, now), false},
		{"named, old attempt of an unpinned table", KeepTableVersion(m, k, TableKey{"u", live, 1, oldFork}, false, p, now), false},
		{"named, old attempt pinned", KeepTableVersion(pinned, k, TableKey{"t", live, 5, oldFork}, false, p, now), true},
		{"named, old attempt, another attempt pinned", KeepTableVersion(pinned, k, TableKey{"t", live, 5, otherAttempt}, false, p, now), false},
		{"young fragment", KeepFragment(m, FragKey{"t", young.String()}, p, now), true},
		{"old fragment", KeepFragment(m, FragKey{"t", oldULID(3)}, p, now), false},
		{"non-ULID fragment", KeepFragment(m, FragKey{"t", "a0"}, p, now), true},
		{"young commit index", KeepCommitIndex(m, young, p, now), true},
		{"old commit index", KeepCommitIndex(m, oldFork, p, now), false},
		{"live lease", LeaseLive(format.Lease{ExpiresUnixNano: ago(-time.Minute)}, p, now), true},
		{"lease within skew", LeaseLive(format.Lease{ExpiresUnixNano: ago(30 * time.Second)}, p, now), true},
		{"expired lease", LeaseLive(format.Lease{ExpiresUnixNano: ago(2 * time.Minute)}, p, now), false},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: kept %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestMarkedNeverDeleted (rapid): over random branch sets sharing table
// versions, every table version a root manifest of any branch pins, and
// every fragment such a version names, is kept, whatever fork it is on —
// against the naive union over all branches.
func TestMarkedNeverDeleted(t *testing.T) {
	p := policy(t, Policy{Grace: time.Minute, SkewMargin: time.Minute})
	rapid.Check(t, func(t *rapid.T) {
		nb := rapid.IntRange(1, 4).Draw(t, "branches")
		k := NewKnown()
		var roots []RootManifest
		want := map[TableKey]bool{}
		for b := 0; b < nb; b++ {
			k.Add(IncKey{fmt.Sprint("b", b), 1}, IncState{Fork: fork(b), HeadVersion: 5, Pins: map[string]uint64{"t": 9}})
			for v := 0; v < rapid.IntRange(1, 4).Draw(t, "roots"); v++ {
				var pins []format.TablePin
				for _, tb := range []string{"t", "u"} {
					if rapid.Bool().Draw(t, "pinned") {
						pk := TableKey{Table: tb, Fork: fork(rapid.IntRange(0, nb-1).Draw(t, "fork")), Version: rapid.Uint64Range(1, 8).Draw(t, "v")}
						pins = append(pins, format.TablePin{Name: tb, Fork: pk.Fork, Version: pk.Version})
						want[pk] = true
					}
				}
				roots = append(roots, RootManifest{Key: fmt.Sprint(b, "/", v), Fork: fork(b), Pins: pins})
			}
		}
		m, err := Mark(roots, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for tk := range want { //detlint:ordered every entry is checked; order reaches no output
			if err := m.MarkFragments(tk.Table, []string{oldULID(byte(tk.Version))}); err != nil {
				t.Fatal(err)
			}
			if !KeepTableVersion(m, k, tk, false, p, now) {
				t.Fatalf("reachable %+v would be deleted", tk)
			}
			if !KeepFragment(m, FragKey{Table: tk.Table, Name: oldULID(byte(tk.Version))}, p, now) {
				t.Fatalf("fragment of reachable %+v would be deleted", tk)
			}
		}
	})
}
