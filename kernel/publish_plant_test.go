//go:build simplant

package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// enablePlant switches one planted bug on for the test.
func enablePlant(t *testing.T, name string) {
	t.Helper()
	if err := plant.Enable(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
}

// With the planted bug "reparent-once" a publish that lost its first
// attempt reuses the parent it resolved then: our commit and the racer's
// are both children of the same commit — a forked chain, which the
// simulator's lineage checker must catch (the correct build re-parents:
// TestPublishRetryReparents).
func TestPlantedReparentOnceForksTheChain(t *testing.T) {
	enablePlant(t, plant.ReparentOnce)
	ours, racer, log := pubLoseFirstAttempt(t)
	if len(ours.Parents) != 1 || ours.Parents[0] == racer.ID || ours.Parents[0] != racer.Parents[0] {
		t.Fatalf("reparent-once did not fork: our parents %v, racer %s with parents %v", ours.Parents, racer.ID, racer.Parents)
	}
	if ours.ManifestVersion != racer.ManifestVersion+1 || len(log) < 2 || log[0].ID != ours.ID {
		t.Fatalf("our commit v%d is not the head on top of the racer's v%d", ours.ManifestVersion, racer.ManifestVersion)
	}
}

// With the planted bug "ignore-lost-ack" a publish whose manifest write
// landed but lost its acknowledgement is reported as a definite failure
// (never read back), yet its commit is on the branch: a commit lost to its
// caller, which the simulator's "a failed commit is visible only if its
// outcome was ambiguous" checker must catch (the correct build reads back
// and reports success: TestLostAckPublishIsResolvedByReadBack).
func TestPlantedIgnoreLostAckLosesCommit(t *testing.T) {
	enablePlant(t, plant.IgnoreLostAck)
	_, log, err := pubLostAck(t)
	var ce *kernel.ContentionError
	if !errors.As(err, &ce) || ce.Ambiguous || errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("Publish = %v, want the planted definite failure", err)
	}
	if countIn(log, ce.CommitID) != 1 {
		t.Fatalf("the failed commit %s appears %d times in %d commits: the planted bug is not observable", ce.CommitID, countIn(log, ce.CommitID), len(log))
	}
}

// pubLostAck runs one Publish whose first manifest write lands but loses
// its acknowledgement (an ambiguous error), and returns the Publish result
// and main's whole log. (Only the planted-bug tests use it.)
func pubLostAck(t *testing.T) (kernel.Commit, []kernel.Commit, error) {
	t.Helper()
	base := sim.New(sim.Config{Seed: 1})
	mustInit(t, base, 1)
	store := &ackStore{Store: base, match: isManifestKey, remaining: 1, apply: true}
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	c, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "me", Message: "lost ack"}, nil)
	if store.hits != 1 {
		t.Fatalf("lost-ack fault fired %d times", store.hits)
	}
	return c, fullLog(t, g, main), err
}
