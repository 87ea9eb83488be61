//go:build simplant

package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// With the planted bug "stamp-first" the stamp is visible before the
// backfill, so a crash between them loses main's lineage for good: the next
// open sees stamp 4 and does not migrate again. This is what the
// simulator's migrator workload must catch (the correct build keeps the
// lineage: TestCrashBeforeStampCompletesOnNextOpen).
func TestPlantedStampFirstLosesLineage(t *testing.T) {
	if err := plant.Enable(plant.StampFirst); err != nil {
		t.Fatal(err)
	}
	defer plant.Enable()
	store := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, store, 1)
	main := fxBranch(t, fx, "main")
	env := migEnv(2)
	env.Failpoints = failpoint.NewSet()
	env.Failpoints.Arm(failpoint.MigrationBeforeStamp, failpoint.Action{Kind: failpoint.Crash})
	if _, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: env}); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("Open = %v, want the crash", err)
	}
	g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	got := logIDs(t, g, mustRef(t, g, "main"), 10)
	if want := expectedLog(t, fx, "main"); len(got) >= len(want) {
		t.Fatalf("stamp-first lost nothing (%d of %d commits): the planted bug is not observable", len(got), len(want))
	}
	if _, err := g.Commit(mctx, main.Commits[0].ID); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("a lost legacy commit is still readable: %v", err)
	}
}
