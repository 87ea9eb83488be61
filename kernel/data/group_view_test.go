package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestGroupLeaderUsesView pins that a group's leader validates on the
// handle's view (kernel.SnapshotView), as a lone Commit does: on a handle
// whose view is current, the group discovers no head (no List of the
// branch's manifests) between the members' Begins and their outcomes.
func TestGroupLeaderUsesView(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := groupGraph(t, cs, GroupOptions{})
	commitTx(t, g, insertPerson("warm")) // the handle's view is the head
	txns := []*Txn{beginWith(t, g, insertPerson("a")), beginWith(t, g, insertPerson("b")), beginWith(t, g, insertPerson("c"))}
	cs.Reset()
	out := runQueue(t, g, txns)
	for i, o := range out {
		if o.err != nil || o.info.Size != 3 {
			t.Fatalf("member %d: %v %+v, want one group of 3", i, o.err, o.info)
		}
	}
	if n := cs.CountWhere(objstore.OpList, testRoot+"/branches/"); n != 0 {
		t.Fatalf("the group listed the branch's manifests %d times on a current view, want 0 (SnapshotAt instead of the view)", n)
	}
}

// TestGroupStaleViewRefusalConfirmed pins the other half of validating on
// the view: a member refused on a stale view is refused only once the head
// confirms it, as a lone Commit's refusal is. Another handle deletes x
// after the members began; the group's view still holds x, so the member
// inserting x fails there — and must instead commit (in the group, or
// alone after it), as it would alone on the head.
func TestGroupStaleViewRefusalConfirmed(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := groupGraph(t, store, GroupOptions{})
	commitTx(t, g, insertPerson("x"))
	txns := []*Txn{beginWith(t, g, insertPerson("a")), beginWith(t, g, insertPerson("x")), beginWith(t, g, insertPerson("b"))}
	other := openGraph(t, store, 9)
	commitTx(t, other, func(tx *Txn) error { return tx.Delete("Person", "x") })
	out := runQueue(t, g, txns)
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("member %d: %v (a refusal on the stale view, not confirmed on the head)", i, o.err)
		}
	}
	if _, ok, err := snap(t, g).Get(ctx, "Person", "x"); err != nil || !ok {
		t.Fatalf("x not at the head (ok=%v err=%v)", ok, err)
	}
}
