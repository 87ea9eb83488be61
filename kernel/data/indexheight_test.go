package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// treeShape walks direction dir of table's index in the version g's main
// head pins: its height (the top refs' level), its level-0 chunks, and the
// ref chunks off the rightmost path that list fewer than two refs.
func treeShape(t *testing.T, g *Graph, table string, dir adjDir) (height, leaves, thin int) {
	t.Helper()
	s := snap(t, g)
	tb, err := s.cat.table(table)
	must(t, err)
	md := "id"
	if dir != dirID {
		md = dir.String()
	}
	top := indexRefsOf(t, pinnedVersion(t, g, table), md)
	if len(top) == 0 {
		return 0, 0, 0
	}
	r := newReader(g, s.cat)
	var walk func(refs []adjRef, rightmost bool)
	walk = func(refs []adjRef, rightmost bool) {
		for i, ref := range refs {
			c, err := r.chunk(ctx, tb, dir, ref)
			must(t, err)
			last := rightmost && i == len(refs)-1
			if len(c.Pages) < 2 && !last {
				thin++
			}
			if ref.Level == 0 {
				leaves++
				continue
			}
			walk(c.Pages, last)
		}
	}
	walk(top, true)
	return top[0].Level, leaves, thin
}

// TestIndexTreeStaysBalancedUnderRandomCommits: one-row commits of ids in
// random order split chunks in the middle of the tree. A split cut
// greedily (the first chunk full, the rest in a second) left a one-ref
// chunk over a narrow key range that few later ids fall in, so the tree
// filled with one-ref chunks and grew a level every few hundred commits
// (fanout 4: level 14 at 3,000 ids, where 4 is enough; a writer panics
// past 16 levels). A chunk split in the middle of its level is cut into
// halves, so every ref chunk off the rightmost path lists at least two
// refs (and every level-0 chunk two pages) and the height stays
// logarithmic in the leaf chunks. Ascending ids
// (the rightmost path) still fill their chunks.
func TestIndexTreeStaysBalancedUnderRandomCommits(t *testing.T) {
	for _, order := range []string{"random", "ascending"} {
		t.Run(order, func(t *testing.T) {
			g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{}).withIndexFanout(4)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 2000; i++ {
				id := fmt.Sprintf("p%06d", i)
				if order == "random" {
					id = fmt.Sprintf("p%06d", rng.IntN(1_000_000))
				}
				commitTx(t, g, func(tx *Txn) error { return tx.Upsert("Person", person(id, "x")) })
			}
			height, leaves, thin := treeShape(t, g, "Person", dirID)
			bound := int(math.Ceil(math.Log2(float64(leaves)))) + 1 // every ref chunk off the rightmost path lists >= 2 refs
			t.Logf("%s: height %d over %d leaf chunks, %d thin chunks (bound %d)", order, height, leaves, thin, bound)
			if thin > 0 || height > bound {
				t.Fatalf("%s ids: height %d over %d leaf chunks (bound %d), %d chunks off the rightmost path with one ref", order, height, leaves, bound, thin)
			}
		})
	}
}

// TestTreeTooTallIsATypedError: at IndexFanout 2 (the smallest the option
// takes) a split of three refs can only be two and one, so random one-row
// commits still grow the id index's tree past MaxIndexLevels (about 400
// commits). The commit that would write a 17th level fails with
// ErrTreeTooTall and publishes nothing; the writer does not panic (it
// did: "needs more than 16 levels", taking the process with it), and the
// branch stays readable.
func TestTreeTooTallIsATypedError(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{}).withIndexFanout(2)
	rng := rand.New(rand.NewPCG(1, 2))
	var last error
	for i := 0; i < 2000 && last == nil; i++ {
		id := fmt.Sprintf("p%06d", rng.IntN(1_000_000))
		br := mainRef(t, g)
		before, err := g.Kernel().Head(ctx, br)
		must(t, err)
		tx, err := g.Begin(ctx, br)
		must(t, err)
		must(t, tx.Upsert("Person", person(id, "x")))
		if _, last = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); last != nil {
			after, err := g.Kernel().Head(ctx, br)
			must(t, err)
			if after.ID != before.ID {
				t.Fatalf("a failed commit (%v) moved main's head", last)
			}
		}
	}
	if !errors.Is(last, ErrTreeTooTall) {
		t.Fatalf("2,000 random commits at fanout 2: last error %v, want ErrTreeTooTall", last)
	}
	if got := scanIDs(t, snap(t, g), "Person"); got == "" {
		t.Fatal("the branch reads no Person after the refused commit")
	}
}

// TestIndexChunksTrackRowsUnderChurn: random inserts and deletes around a
// steady ~250 live ids. Deletes thin chunks; before, a thinned chunk was
// rewritten thin and never merged, so without a compaction the leaf
// chunks grew with the history, not the rows (fanout 4: 30 → 47 leaf
// chunks and 6 → 26 one-ref chunks from 1,000 to 4,000 commits). A
// rewritten chunk under half full absorbs the unchanged chunk after it (as
// a rewritten page absorbs a short page), so the index follows its rows.
func TestIndexChunksTrackRowsUnderChurn(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{}).withIndexFanout(4)
	rng := rand.New(rand.NewPCG(1, 2))
	var live []string
	var leavesAt1000 int
	for i := 0; i < 4000; i++ {
		if len(live) > 200 && rng.IntN(2) == 0 {
			k := rng.IntN(len(live))
			id := live[k]
			live[k] = live[len(live)-1]
			live = live[:len(live)-1]
			commitTx(t, g, func(tx *Txn) error { return tx.Delete("Person", id) })
		} else {
			id := fmt.Sprintf("p%06d", rng.IntN(1_000_000))
			live = append(live, id)
			commitTx(t, g, func(tx *Txn) error { return tx.Upsert("Person", person(id, "x")) })
		}
		if i == 999 {
			_, leavesAt1000, _ = treeShape(t, g, "Person", dirID)
		}
	}
	height, leaves, thin := treeShape(t, g, "Person", dirID)
	t.Logf("after 4,000 commits: %d live ids, height %d, %d leaf chunks (%d after 1,000), %d one-ref chunks", len(live), height, leaves, leavesAt1000, thin)
	if 10*leaves > 13*leavesAt1000 || thin > 8 {
		t.Fatalf("the index grows with the history: %d leaf chunks after 4,000 commits against %d after 1,000 (the rows about equal), %d one-ref chunks off the rightmost path", leaves, leavesAt1000, thin)
	}
}
