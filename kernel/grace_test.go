package kernel_test

import (
	"errors"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestWritePastGraceRefusesToPublish pins the writer's half of the
// collector's contract (docs/gc.md): a write whose staging began longer ago
// than the grace period refuses to publish with a typed, retryable
// *GraceExpiredError, publishes nothing, leaves no sidecar and undoes its
// own version; a write within the grace period publishes.
func TestWritePastGraceRefusesToPublish(t *testing.T) {
	store, g, clock, main := graceGraph(t)
	write := func(staging time.Duration) error {
		_, err := g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
			clock.Advance(staging) // a slow stage: fragments written long before the publish
			return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "slow"), Rows: p.Rows + 1}, nil
		}}}, kernel.LineageIntent{Actor: "test", Message: "slow"})
		return err
	}
	err := write(2 * time.Minute)
	var ge *kernel.GraceExpiredError
	if !errors.As(err, &ge) || !errors.Is(err, kernel.ErrGraceExpired) || !ge.Retryable() || ge.Grace != time.Minute {
		t.Fatalf("write past grace: %v, want *GraceExpiredError", err)
	}
	if errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("a refused publish is definite, got ambiguous: %v", err)
	}
	if n := len(fullLog(t, g, main)); n != 2 {
		t.Fatalf("log has %d commits after a refused write, want 2", n)
	}
	if left := kerneltest.Sidecars(store, root); len(left) != 0 {
		t.Fatalf("sidecars left: %v", left)
	}
	if err := write(30 * time.Second); err != nil {
		t.Fatalf("write within grace: %v", err)
	}
	snap, _ := g.SnapshotAt(ctx, main)
	pin, _ := snap.Table("a")
	tv, _ := g.ReadPinned(ctx, pin)
	if len(tv.Fragments) != 2 || tv.Fragments[1] != "slow" {
		t.Fatalf("published content %v", tv.Fragments)
	}
}

// TestReadSinceStartsTheGraceClock: LineageIntent.ReadSince moves the
// start of the grace period back to when the caller read what it refers
// to, for a bare Publish (which stages nothing, so had no grace check) and
// for a Write (whose own start is later): past it both refuse with
// *GraceExpiredError and publish nothing; within it both publish.
func TestReadSinceStartsTheGraceClock(t *testing.T) {
	_, g, clock, main := graceGraph(t)
	publish := func(intent kernel.LineageIntent) error {
		_, err := g.Publish(ctx, main, nil, intent, nil)
		return err
	}
	write := func(intent kernel.LineageIntent) error {
		_, err := g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
			return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "w"), Rows: p.Rows + 1}, nil
		}}}, intent)
		return err
	}
	for _, c := range []struct {
		name string
		do   func(kernel.LineageIntent) error
	}{{"publish", publish}, {"write", write}} {
		name, do := c.name, c.do
		read := clock.Now()
		clock.Advance(2 * time.Minute)
		before := len(fullLog(t, g, main))
		err := do(kernel.LineageIntent{Actor: "t", Message: name, ReadSince: read})
		if !errors.Is(err, kernel.ErrGraceExpired) {
			t.Fatalf("%s read past grace: %v, want ErrGraceExpired", name, err)
		}
		if n := len(fullLog(t, g, main)); n != before {
			t.Fatalf("%s: log grew from %d to %d after a refusal", name, before, n)
		}
		if err := do(kernel.LineageIntent{Actor: "t", Message: name, ReadSince: clock.Now().Add(-30 * time.Second)}); err != nil {
			t.Fatalf("%s within grace: %v", name, err)
		}
	}
}

// graceGraph is a graph on a sim store with a one-minute grace period, its
// manual clock, and main holding one commit of table a.
func graceGraph(t *testing.T) (*sim.Store, *kernel.Graph, *kernel.ManualClock, kernel.BranchRef) {
	t.Helper()
	store := sim.New(sim.Config{Seed: 1})
	env := testEnv(1)
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: env, Grace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	return store, g, env.Clock.(*kernel.ManualClock), main
}
