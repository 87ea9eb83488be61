package branchindex

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/format"
)

func fork(name string, inc, src format.ID, tomb bool) format.Manifest {
	m := format.Manifest{Branch: format.BranchIdentity{Name: name, Incarnation: 1, IncarnationID: inc}, Tombstone: tomb}
	if src != (format.ID{}) {
		m.ForkOf = &format.ForkPoint{Branch: "src", Incarnation: 1, IncarnationID: src}
	}
	return m
}

// Only live heads forked from exactly the deleted incarnation are
// dependents; a marker's claim counts for nothing.
func TestDependents(t *testing.T) {
	src, other := format.ID{1}, format.ID{2}
	heads := []format.Manifest{
		fork("c2", format.ID{10}, src, false),
		fork("dead", format.ID{11}, src, true),         // deleted since
		fork("elsewhere", format.ID{12}, other, false), // re-created from another source
		fork("main", format.ID{13}, format.ID{}, false),
		fork("c1", format.ID{14}, src, false),
		fork("c1", format.ID{14}, src, false), // two markers, one head
		fork("src", format.ID{15}, src, false),
	}
	if got := Dependents(src, "src", heads); !cmp.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("Dependents = %v", got)
	}
	if got := Dependents(format.ID{3}, "src", heads); got != nil {
		t.Fatalf("Dependents of an unforked incarnation = %v", got)
	}
}

func TestMarkerFor(t *testing.T) {
	m := fork("c", format.ID{10}, format.ID{1}, false)
	x, ok := MarkerFor(&m)
	if !ok || x != (format.ForkMarker{Source: format.ID{1}, Child: "c", ChildIncarnationID: format.ID{10}}) || !NeedsMarker(&m) {
		t.Fatalf("MarkerFor = %+v %v", x, ok)
	}
	main := fork("main", format.ID{10}, format.ID{}, false)
	if _, ok := MarkerFor(&main); ok || NeedsMarker(&main) {
		t.Fatal("main has a marker")
	}
	dead := fork("c", format.ID{10}, format.ID{1}, true)
	if NeedsMarker(&dead) {
		t.Fatal("a deleted incarnation needs a marker")
	}
}

func TestCursorAndPageBounds(t *testing.T) {
	for _, c := range []struct {
		in, want int
	}{{0, DefaultPageNames}, {-1, DefaultPageNames}, {5, 5}, {MaxPageNames + 1, MaxPageNames}} {
		if got := PageNames(c.in); got != c.want {
			t.Errorf("PageNames(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	if n, err := DecodeCursor(EncodeCursor("feat.1")); err != nil || n != "feat.1" {
		t.Fatalf("cursor round trip: %q %v", n, err)
	}
	if n, err := DecodeCursor(""); err != nil || n != "" {
		t.Fatalf("empty cursor: %q %v", n, err)
	}
	for _, bad := range []string{"feat", "v2:feat", "v1:", "v1:.x", "v1:a/b"} {
		if _, err := DecodeCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("DecodeCursor(%q) = %v", bad, err)
		}
	}
	if got := ChildNames([]string{"b", "a", "b"}); !cmp.Equal(got, []string{"a", "b"}) {
		t.Fatalf("ChildNames = %v", got)
	}
}

func TestNextIncarnation(t *testing.T) {
	for _, tc := range []struct {
		found      bool
		cur, floor uint64
		want       uint64
	}{
		{false, 0, 0, 1}, // a new name on a graph never collected
		{false, 0, 7, 7}, // a name with no manifest after a collection raised the floor
		{true, 3, 7, 4},  // the tombstone is there: one above it
		{true, 9, 2, 10},
	} {
		if got := NextIncarnation(tc.found, tc.cur, tc.floor); got != tc.want {
			t.Errorf("NextIncarnation(%v, %d, %d) = %d, want %d", tc.found, tc.cur, tc.floor, got, tc.want)
		}
	}
}
