package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Scenarios of publish retries, shared by the normal tests (the correct
// behaviour) and the simplant tests (the planted bugs are observable).

// pubLoseFirstAttempt runs one Publish whose first attempt loses its
// create-only manifest write: just before it, another handle publishes
// (deterministically, from a store hook). It returns our commit, the
// racer's, and main's whole log.
func pubLoseFirstAttempt(t *testing.T) (ours, racer kernel.Commit, log []kernel.Commit) {
	t.Helper()
	hook := &wrOnce{}
	store := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{Before: hook.before}})
	g := mustInit(t, store, 1)
	other, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	hook.match = func(c *sim.Call) bool { return c.Op == objstore.OpPut && isManifestKey(c.Key) }
	hook.action = func() {
		racer, err = other.Publish(ctx, mustBranch(t, other, "main"), nil, kernel.LineageIntent{Actor: "racer"}, nil)
		if err != nil {
			t.Errorf("racer: %v", err)
		}
	}
	main := mustBranch(t, g, "main")
	ours, err = g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "ours"}, nil)
	if err != nil || !hook.fired {
		t.Fatalf("Publish = %v (racer ran: %v)", err, hook.fired)
	}
	return ours, racer, fullLog(t, g, main)
}

// TestPublishRetryReparents pins that a publish which lost a race resolves
// its parent again from the manifest its retry loaded: our commit lands on
// top of the racer's, and the chain stays linear.
func TestPublishRetryReparents(t *testing.T) {
	ours, racer, log := pubLoseFirstAttempt(t)
	if len(ours.Parents) != 1 || ours.Parents[0] != racer.ID || ours.ManifestVersion != racer.ManifestVersion+1 {
		t.Fatalf("our commit v%d has parents %v, want the racer's %s (v%d)", ours.ManifestVersion, ours.Parents, racer.ID, racer.ManifestVersion)
	}
	assertLinear(t, log)
}
