package maintain_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// TestCollectKeepsPagedVersions: table versions whose fragment infos are
// paged into fragment chunks (InlineFragments 1) list no fragment to the
// kernel; a collection keeping the last 3 commits must still keep every
// fragment and fragment chunk they reach (red without the collector's
// chunk marking: the retained commits lose their fragments), delete the
// chunks of the versions it drops, and leave a graph verify finds clean.
func TestCollectKeepsPagedVersions(t *testing.T) {
	f := newFixtureWith(t, 1)
	main := f.branch("main")
	var cs []kernel.Commit
	for i := 0; i < 12; i++ { // each insert a new fragment (binary-counter merges leave several)
		cs = append(cs, f.commit(main, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("q%02d", i), "x")) }))
	}
	paged := 0
	for _, tv := range storedVersions(t, f, "Person") {
		if chunks, err := data.FragmentChunks(tv); err == nil && len(chunks) > 0 && len(tv.Fragments) == 0 {
			paged++
		}
	}
	if paged < 3 {
		t.Fatalf("%d paged Person versions, want the last commits paged", paged)
	}
	f.collectShrinking(root + "/adj/Person/")
	g := f.reopen()
	for n, c := range cs[len(cs)-3:] {
		s, err := g.SnapshotAtCommit(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := len(cs) - 3 + n + 1
		rows, err := s.GetMany(ctx, "Person", allQ(want))
		if err != nil || len(rows) != want {
			t.Fatalf("retained commit %d: %d rows, %v; want %d", n, len(rows), err, want)
		}
	}
	f.verifyClean("a paged graph")
}

func allQ(n int) []string {
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("q%02d", i))
	}
	return ids
}
