package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestFailedSyncIsNeverPublished: a publish whose sync of its deferred
// objects fails (an fsync's EIO: objstore.ErrSyncFailed) fails the commit
// — retryable for the caller, nothing published — rather than syncing the
// same objects again: on Linux a second fsync succeeds over pages that
// never reached the disk, so a publish after it would name a table
// version that a power loss then takes. The store here forgets a failed
// sync (sim's Forgetful view passes the OS's second answer on), so only
// the kernel's rule keeps the commit from being acknowledged. Red
// without it: the publish is retried, the commit acknowledged, and after
// the machine crash the head's table version is gone.
func TestFailedSyncIsNeverPublished(t *testing.T) {
	base := sim.New(sim.Config{Seed: 1})
	store := base.Forgetful()
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	first := commitTable(t, g, main, "a", "1")
	base.FailSyncs(1)
	c, err := g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "2"), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "test", Message: "a+2"})
	base.MachineCrash(0, 0)
	cold := coldHandle(t, store)
	snap, serr := cold.SnapshotAt(ctx, mustBranch(t, cold, "main"))
	if serr != nil {
		t.Fatal(serr)
	}
	pin, _ := snap.Table("a")
	if _, rerr := cold.ReadTable(ctx, "a", pin.Ref()); rerr != nil {
		t.Fatalf("after the crash the head (commit %s; the write answered %v, %v) reads: %v", snap.Head(), c.ID, err, rerr)
	}
	if err == nil {
		t.Fatalf("the write whose sync failed was acknowledged (commit %s) and survived only by luck", c.ID)
	}
	if !errors.Is(err, objstore.ErrSyncFailed) || !objstore.IsRetryable(err) || objstore.IsAmbiguous(err) {
		t.Fatalf("write whose sync failed: %v, want a definite, retryable ErrSyncFailed", err)
	}
	if snap.Head() != first.ID {
		t.Fatalf("head after the crash is %s, want the first commit %s", snap.Head(), first.ID)
	}
	w, oerr := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(5)})
	if oerr != nil {
		t.Fatal(oerr)
	}
	commitTable(t, w, mustBranch(t, w, "main"), "a", "2") // written again, fresh objects: it lands
}
