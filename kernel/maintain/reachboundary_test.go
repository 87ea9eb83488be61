package maintain_test

import (
	"testing"
	"time"
)

// TestCollectMakesItsBoundaryReachesDurable: a collection that keeps a
// manifest and deletes the one before it (here retention: main's last 3
// kept, the rest deleted) leaves nobody able to rebuild the kept one's
// reach should its commit index be lost, and a publish writes its index
// unsynced (docs/format.md "The index follows the publish"): an OS crash
// after the collection loses it. So the collection makes the reach of
// every kept manifest whose reach's inputs it does not keep durable
// before deleting anything (the boundary of what it keeps, docs/gc.md
// rule 3c). Red without: the oldest kept commit's merge base with the
// head walks into the collected history (ErrReclaimed; simrun -workload
// lifetime -faults oscrash -seed 256: main's oldest retained manifests'
// indexes torn by a crash, the manifest before them collected).
func TestCollectMakesItsBoundaryReachesDurable(t *testing.T) {
	f := newDeferringFixture(t)
	main := f.branch("main")
	cs := f.seed(main, 8)
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy) // KeepLast 3
	if rep.Manifests.Deleted == 0 {
		t.Fatalf("nothing collected: %+v", rep)
	}
	f.base.MachineCrash(0, 0) // every unsynced object lost
	oldest, head := cs[len(cs)-3], cs[len(cs)-1]
	for _, c := range cs[len(cs)-3:] {
		got, err := f.reopen().Kernel().MergeBaseOf(ctx, c.ID, head.ID)
		if err != nil || got.ID != c.ID {
			t.Fatalf("merge base of kept commit v%d (the oldest kept is v%d) and the head after the collection and a crash: %s %v, want the commit itself",
				c.ManifestVersion, oldest.ManifestVersion, got.ID, err)
		}
	}
}
