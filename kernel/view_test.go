package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestStaleViewPublishReparents pins issue #32's head discovery: a handle
// publishing on a current view makes no LIST; one whose view is stale
// (another handle published meanwhile) finds out by its create-only
// manifest write failing, loads the head once and re-parents on it, so the
// chain stays linear and holds both commits. Red if the failed write were
// taken for a slot race alone (planted bug stale-view-commit).
func TestStaleViewPublishReparents(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 1})
	mustInit(t, inner, 1)
	cs := counting.New(inner)
	g, err := kernel.Open(ctx, cs, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kernel.Open(ctx, inner, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	first, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs.Reset()
	second, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cs.Counts(); c.List.Requests != 0 || c.Requests() != 2 {
		t.Fatalf("publish on a current view: %+v, want 2 PUTs and no LIST", c)
	}
	racer, err := other.Publish(ctx, mustBranch(t, other, "main"), nil, kernel.LineageIntent{Actor: "other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs.Reset()
	ours, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cs.Counts(); c.List.Requests != 1 || c.Put.Errors != 1 {
		t.Fatalf("publish on a stale view: %+v, want one failed PUT and one head discovery", c)
	}
	if len(ours.Parents) != 1 || ours.Parents[0] != racer.ID || ours.ManifestVersion != racer.ManifestVersion+1 {
		t.Fatalf("our commit v%d has parents %v, want the racer %s (v%d)", ours.ManifestVersion, ours.Parents, racer.ID, racer.ManifestVersion)
	}
	log := fullLog(t, g, main)
	if len(log) < 4 || log[0].ID != ours.ID || log[1].ID != racer.ID || log[2].ID != second.ID || log[3].ID != first.ID {
		t.Fatalf("log is not the linear chain ours, racer, second, first")
	}
}
