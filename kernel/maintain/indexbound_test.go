package maintain_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// keepHead keeps main's head alone past the grace.
var keepHead = maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}

// ceilDiv is a/b rounded up.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestCompactionBoundsIndexObjects: after n one-row commits on main, each
// id sorting before the 20 seeded ones (the pattern that split a full id
// page into a full page and a one-id page at every commit), a compaction
// and a collection keeping main's head alone, the Person id index holds
// exactly the full pages its rows need and the chunks listing them:
// ceil(rows/IDPageRows) pages + ceil(pages/IDChunkPages) chunks, so 100
// and 1000 commits differ by at most 1.5x (2 and 3 objects). Existence
// checks still answer through the index. Red before index pages absorbed
// their short neighbour and compaction repacked (23 objects after 1000
// commits); each alone is pinned by TestOneRowCommitsKeepIndexPagesFull
// and TestCompactRepacksEdgeIndexes (kernel/data).
func TestCompactionBoundsIndexObjects(t *testing.T) {
	counts := map[int]int{}
	for _, n := range []int{100, 1000} {
		f := newFixture(t)
		main := f.branch("main")
		f.seed(main, 0)
		for i := 0; i < n; i++ {
			f.commit(main, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("f%05d", i), "x")) })
		}
		if _, err := f.g.Compact(ctx, main, compact.Policy{}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Hour)
		f.collect(keepHead)
		rows := n + 20
		pages := ceilDiv(rows, data.IDPageRows)
		want := pages + ceilDiv(pages, data.IDChunkPages)
		got := len(f.store.Store.(*sim.Store).Keys(root + "/adj/Person/"))
		counts[n] = got
		if got != want {
			t.Errorf("%d commits (%d rows): %d Person id index objects, want %d", n, rows, got, want)
		}
		if edges := len(f.store.Store.(*sim.Store).Keys(root + "/adj/Knows/")); edges != 0 {
			t.Errorf("%d commits: %d Knows index objects for an empty table", n, edges)
		}
		g := f.reopen()
		for _, id := range []string{"f00000", fmt.Sprintf("f%05d", n-1), "p00", "p19"} {
			tx, err := g.Begin(ctx, main)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Insert("Person", person(id, "dup")); err == nil {
				_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "t", Message: "dup"})
				if !errors.Is(err, data.ErrIDExists) {
					t.Fatalf("commit of existing %s after the repack: %v, want ErrIDExists", id, err)
				}
			} else if !errors.Is(err, data.ErrIDExists) {
				t.Fatalf("insert of existing %s after the repack: %v", id, err)
			}
		}
	}
	if counts[1000]*2 > counts[100]*3 {
		t.Errorf("id index objects %d after 100 commits, %d after 1000: more than 1.5x", counts[100], counts[1000])
	}
}
