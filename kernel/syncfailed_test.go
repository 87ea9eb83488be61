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
	o := failedSyncOutcome(t)
	if o.readErr != nil {
		t.Fatalf("after the crash the head (commit %s; the write answered %v, %v) reads: %v", o.head, o.commit.ID, o.writeErr, o.readErr)
	}
	if o.writeErr == nil {
		t.Fatalf("the write whose sync failed was acknowledged (commit %s) and survived only by luck", o.commit.ID)
	}
	if !errors.Is(o.writeErr, objstore.ErrSyncFailed) || !objstore.IsRetryable(o.writeErr) || objstore.IsAmbiguous(o.writeErr) {
		t.Fatalf("write whose sync failed: %v, want a definite, retryable ErrSyncFailed", o.writeErr)
	}
	if o.head != o.first.ID {
		t.Fatalf("head after the crash is %s, want the first commit %s", o.head, o.first.ID)
	}
	w, err := kernel.Open(ctx, o.store, root, kernel.Options{Env: testEnv(5)})
	if err != nil {
		t.Fatal(err)
	}
	commitTable(t, w, mustBranch(t, w, "main"), "a", "2") // written again, fresh objects: it lands
}

// failedSync is what failedSyncOutcome saw.
type failedSync struct {
	store         objstore.Store
	first, commit kernel.Commit
	writeErr      error // the write whose publish sync failed
	head          kernel.CommitID
	readErr       error // reading the head's table after the crash
}

// failedSyncOutcome commits once, then writes again with the publish's
// sync failing once on a store that forgets it (sim Forgetful), crashes
// the machine losing every volatile object, and reads main's head table
// with a cold handle.
func failedSyncOutcome(t *testing.T) failedSync {
	base := sim.New(sim.Config{Seed: 1})
	o := failedSync{store: base.Forgetful()}
	// Versions as objects (format 10): a version riding its manifest
	// (format 11) defers nothing for the publish to sync.
	g, err := kernel.Init(ctx, o.store, root, schema, kernel.Options{Env: testEnv(1), NoRiding: true})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	o.first = commitTable(t, g, main, "a", "1")
	base.FailSyncs(1)
	o.commit, o.writeErr = g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "2"), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "test", Message: "a+2"})
	base.MachineCrash(0, 0)
	cold := coldHandle(t, o.store)
	snap, err := cold.SnapshotAt(ctx, mustBranch(t, cold, "main"))
	if err != nil {
		t.Fatal(err)
	}
	o.head = snap.Head()
	pin, _ := snap.Table("a")
	_, o.readErr = cold.ReadPinned(ctx, pin)
	return o
}
