package maintain_test

import (
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// incTop is the newest manifest left of one incarnation.
type incTop struct {
	inc       uint64
	tombstone bool
}

// incarnationTops returns, for every incarnation of name on the store
// (newest first), whether its newest manifest is a tombstone.
func (f *fixture) incarnationTops(name string) []incTop {
	f.t.Helper()
	st := f.store.Store.(*sim.Store)
	keys := format.NewKeys(root)
	var out []incTop
	for _, k := range st.Keys(root + "/branches/" + name + "/") { // newest incarnation, newest version first
		inc, _, err := keys.ParseManifestKey(name, k)
		if err != nil {
			f.t.Fatal(err)
		}
		if n := len(out); n > 0 && out[n-1].inc == inc {
			continue
		}
		b, _ := st.Peek(k)
		mf, _, err := format.DecodeManifest(b)
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, incTop{inc, mf.Tombstone})
	}
	return out
}

// TestCollectNeverResurrectsADeletedIncarnation: a deleted incarnation
// of a re-created name (not its name's newest) past retention is
// collected, except what rule 3b keeps: the merged-from manifests main's
// folds name, which the merge base of main and a live branch forked
// before them opens. Whatever of it stays, its tombstone stays on top: an
// incarnation whose deletion is forgotten reads as live to every later
// collection (its head kept for ever, a live pair of rule 3b), and a
// collection racing the one that deleted the tombstone, finding the head
// gone, judged its fork unknown and deleted the table versions the kept
// manifests pin (simrun -seed 44, maint: "table-head: c1#1 pins Person
// v50, which does not exist"). Red before gc.KeepIncarnationTops.
func TestCollectNeverResurrectsADeletedIncarnation(t *testing.T) {
	f := newReachFixture(t, 4, 2)
	main := f.branch("main")
	f.seed(main, 0)
	long := f.fork("long", main) // live beside main: the pair rule 3b keeps a merge base for
	f.commit(long, func(tx *data.Txn) error { return tx.Insert("Person", person("l", "long")) })
	const cycles = 8
	for i := 0; i < cycles; i++ {
		f.mergedAndDeleted("c", string(rune('a'+i))) // c#1, c#2, ...: one name, re-created each cycle
	}
	before := f.incarnationTops("c")
	if len(before) != cycles {
		t.Fatalf("%d incarnations of c listed, want %d", len(before), cycles)
	}
	f.clock.Advance(time.Hour)
	rep := f.collect(metaPolicy)
	if rep.MergeBases == 0 {
		t.Fatalf("the collection kept no merge base (the shape needs rule 3b to keep merged-from manifests): %+v", rep)
	}
	after := f.incarnationTops("c")
	for _, x := range after {
		if !x.tombstone {
			t.Errorf("c#%d: its newest manifest after the collection is not its tombstone: a deleted incarnation reads as live", x.inc)
		}
	}
	if len(after) < 2 {
		t.Fatalf("no older incarnation of c kept: the shape needs rule 3b to keep one (%+v)", rep)
	}
}
