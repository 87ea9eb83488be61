package maintain_test

import (
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
)

// TestMaintainResolvesAbandonedSidecars: a writer that died between its
// sidecar and its publish on a short-lived branch, which was then deleted,
// leaves a sidecar that no write on that branch will ever heal and no
// long-running process will ever sweep (only a read-write Open does). It
// pins the dead incarnation (docs/gc.md: a pending sidecar's floor), so
// its name, manifests and table versions were never collected: the
// lifetime-10k workload under default faults piled up one such dead name
// per interrupted commit until collections could no longer load the store
// within their time bound. Maintain resolves sidecars past
// kernel.RecoveryLease first (Recover), so the collection that follows
// deletes the dead name whole.
func TestMaintainResolvesAbandonedSidecars(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	f.crashBeforePublish(feat, true)
	if err := f.g.Kernel().DeleteBranch(ctx, "feat"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Hour) // past the recovery lease, the grace period and the tombstone's retention
	p := maintain.RunPolicy{Collect: maintain.Policy{Policy: gc.Policy{KeepLast: 1, KeepFor: time.Hour, Grace: time.Minute, SkewMargin: time.Minute}}}
	rep, err := maintain.Maintain(ctx, f.g, f.m, p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recovery.Resolved != 1 || !rep.Collect.Complete {
		t.Fatalf("maintain report %+v", rep)
	}
	for _, prefix := range []string{"/sidecars/", "/branches/feat/"} {
		if page, err := f.store.List(ctx, root+prefix, "", 10); err != nil || len(page.Keys) != 0 {
			t.Fatalf("%s after Maintain: %v %v", prefix, page.Keys, err)
		}
	}
}
