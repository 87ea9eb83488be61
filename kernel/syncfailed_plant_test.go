//go:build simplant

package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
)

// TestPlantedSyncRetryPublishLosesACommit: with planted bug
// sync-retry-publish the kernel retries a publish whose sync failed, the
// forgetful store lets the second sync succeed, the commit is
// acknowledged, and the machine crash takes its table version: the head
// reads ErrReclaimed. TestFailedSyncIsNeverPublished is the control (the
// same scenario, plant off: the write fails, nothing is lost).
func TestPlantedSyncRetryPublishLosesACommit(t *testing.T) {
	if err := plant.Enable(plant.SyncRetryPublish); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	o := failedSyncOutcome(t)
	if o.writeErr != nil || !errors.Is(o.readErr, kernel.ErrReclaimed) {
		t.Fatalf("with %s planted: write %v, head read after the crash %v; want an acknowledged write whose version the crash took (ErrReclaimed)", plant.SyncRetryPublish, o.writeErr, o.readErr)
	}
}
