package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// smallBudget lets a bigWrite of 400 bytes ride (a 589-byte payload), two
// of them share a manifest (1,178 bytes) and a third spill; a bigWrite of
// 900 bytes (1,089) is over the version bound.
var smallBudget = kernel.RidingBudget{VersionBytes: 1000, ManifestBytes: 1300}

// TestRidingBudgetOutOfRangeIsRefused: Options.RidingBudget may lower the
// format's riding bounds, never raise them; Init and Open refuse a
// negative field or one above format.MaxRidingVersionBytes /
// MaxRidingManifestBytes with ErrInvalidArgument, and accept 0 (the
// maxima) and the maxima themselves.
func TestRidingBudgetOutOfRangeIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget kernel.RidingBudget
		ok     bool
	}{
		{"zero", kernel.RidingBudget{}, true},
		{"maxima", kernel.RidingBudget{VersionBytes: format.MaxRidingVersionBytes, ManifestBytes: format.MaxRidingManifestBytes}, true},
		{"small", kernel.RidingBudget{VersionBytes: 1, ManifestBytes: 1}, true},
		{"negative version", kernel.RidingBudget{VersionBytes: -1}, false},
		{"negative manifest", kernel.RidingBudget{ManifestBytes: -1}, false},
		{"version over the format", kernel.RidingBudget{VersionBytes: format.MaxRidingVersionBytes + 1}, false},
		{"manifest over the format", kernel.RidingBudget{ManifestBytes: format.MaxRidingManifestBytes + 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := sim.New(sim.Config{Seed: 1})
			_, err := kernel.Init(ctx, st, root, schema, kernel.Options{Env: testEnv(1), RidingBudget: tc.budget})
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, kernel.ErrInvalidArgument) {
				t.Fatalf("Init with %+v = %v, want ok %v or ErrInvalidArgument", tc.budget, err, tc.ok)
			}
			if !tc.ok {
				mustInit(t, st, 1)
			}
			_, err = kernel.Open(ctx, st, root, kernel.Options{Env: testEnv(2), RidingBudget: tc.budget})
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, kernel.ErrInvalidArgument) {
				t.Fatalf("Open with %+v = %v, want ok %v or ErrInvalidArgument", tc.budget, err, tc.ok)
			}
		})
	}
}

// TestRidingBudgetSpillsAndRidesAgain: under a small budget a manifest
// mixes riding and object versions: a version rides while it fits the
// manifest's room and the version bound, spills to an object past either,
// and a spilled table rides again once room is freed. The plan decides it
// (ridingPlans): with no racing writer no round is redone. No manifest
// the handle publishes exceeds its budget, and a cold handle with the
// format's maxima reads every version.
func TestRidingBudgetSpillsAndRidesAgain(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	if _, err := kernel.Init(ctx, st, root, schema, kernel.Options{Env: testEnv(1), RidingBudget: smallBudget}); err != nil {
		t.Fatal(err)
	}
	fps := failpoint.NewSet()
	env := testEnv(2)
	env.Failpoints = fps
	g, err := kernel.Open(ctx, st, root, kernel.Options{Env: env, RidingBudget: smallBudget})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	for i, step := range []struct {
		table string
		pad   int
		rides bool
	}{
		{"a", 400, true},
		{"b", 400, true},
		{"c", 400, false}, // the manifest's room is spent
		{"a", 900, false}, // over the version bound: a's room is freed
		{"c", 400, true},  // the spilled table rides again
		{"a", 400, false}, // b and c spent the room again
	} {
		if _, err := g.Write(ctx, main, []kernel.TableWrite{bigWrite(step.table, step.pad)}, kernel.LineageIntent{Actor: "t"}); err != nil {
			t.Fatal(err)
		}
		pins := headManifestPins(t, st)
		if pin := headPin(t, st, step.table); (pin.Riding != "") != step.rides {
			t.Fatalf("step %d: %s (%d bytes of padding) rides %v, want %v", i, step.table, step.pad, pin.Riding != "", step.rides)
		}
		if n := format.RidingBytes(pins); n > smallBudget.ManifestBytes {
			t.Fatalf("step %d: the head carries %d riding bytes, over the budget of %d", i, n, smallBudget.ManifestBytes)
		}
		if n := fps.Hits(failpoint.RidingRedo); n != 0 {
			t.Fatalf("step %d: %d rounds redone over the budget with no racing writer: the plan ignored the budget", i, n)
		}
		cold := coldHandle(t, st)
		for _, p := range pins {
			if _, err := cold.ReadPinned(ctx, p); err != nil {
				t.Fatalf("step %d: read %s: %v", i, p.Name, err)
			}
		}
	}
}

// TestRidingBudgetRaceRedoesTheRound is
// TestRidingOverBudgetRedoesTheRoundWithObjects under a small budget:
// a write plans c to ride beside a, a racing writer's b spends the room
// before its publish, the publish refuses and the round is redone with c
// an object, once (failpoint.RidingRedo hit once); the head stays within
// the budget. Red without the re-check (planted riding-unchecked:
// TestPlantedRidingUncheckedGoesOverBudget).
func TestRidingBudgetRaceRedoesTheRound(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	riders := raceOverBudget(t, st)
	for table, rides := range map[string]bool{"a": true, "b": true, "c": false} { //detlint:ordered each table checked alike
		if pin := headPin(t, st, table); (pin.Riding != "") != rides {
			t.Fatalf("%s rides %v, want %v", table, pin.Riding != "", rides)
		}
	}
	if n := format.RidingBytes(headManifestPins(t, st)); n > smallBudget.ManifestBytes {
		t.Fatalf("the head carries %d riding bytes, over the budget of %d", n, smallBudget.ManifestBytes)
	}
	if n := riders.Hits(failpoint.RidingRedo); n != 1 {
		t.Fatalf("rounds redone over the budget: %d, want 1", n)
	}
}

// raceOverBudget writes a, then c from one handle and, while c's round
// builds, b from another, both with smallBudget; it returns the first
// handle's failpoints.
func raceOverBudget(t *testing.T, st *sim.Store) *failpoint.Set {
	t.Helper()
	fps := failpoint.NewSet()
	env := testEnv(1)
	env.Failpoints = fps
	g, err := kernel.Init(ctx, st, root, schema, kernel.Options{Env: env, RidingBudget: smallBudget})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kernel.Open(ctx, st, root, kernel.Options{Env: testEnv(2), RidingBudget: smallBudget})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	if _, err := g.Write(ctx, main, []kernel.TableWrite{bigWrite("a", 400)}, kernel.LineageIntent{Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	w := bigWrite("c", 400)
	build, raced := w.Build, false
	w.Build = func(p kernel.TableVersion) (kernel.TableContent, error) {
		if !raced { // after this write planned on a head with room, before its publish
			raced = true
			if _, err := other.Write(ctx, mustBranch(t, other, "main"), []kernel.TableWrite{bigWrite("b", 400)}, kernel.LineageIntent{Actor: "other"}); err != nil {
				t.Fatal(err)
			}
		}
		return build(p)
	}
	if _, err := g.Write(ctx, main, []kernel.TableWrite{w}, kernel.LineageIntent{Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	return fps
}

// TestPublishOverTheRidingBudgetIsTyped: Publish of adopted riding
// versions (kernel.UpdateOf) cannot turn them into objects, so when they
// do not fit the handle's riding budget on the head it refuses with
// ErrInvalidArgument (definite: nothing is published), not with the
// write path's internal redo signal.
func TestPublishOverTheRidingBudgetIsTyped(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g, err := kernel.Init(ctx, st, root, schema, kernel.Options{Env: testEnv(1), RidingBudget: smallBudget})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	dev, err := g.CreateBranch(ctx, "dev", main)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b"} {
		if _, err := g.Write(ctx, main, []kernel.TableWrite{bigWrite(table, 400)}, kernel.LineageIntent{Actor: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Write(ctx, dev, []kernel.TableWrite{bigWrite("c", 400)}, kernel.LineageIntent{Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	snap, err := g.SnapshotAt(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := snap.Table("c")
	if pin.Riding == "" {
		t.Fatal("c does not ride on dev")
	}
	before := headManifestPins(t, st)
	_, err = g.Publish(ctx, main, []kernel.TableUpdate{kernel.UpdateOf(pin)}, kernel.LineageIntent{Actor: "t"}, nil)
	if !errors.Is(err, kernel.ErrInvalidArgument) || objstore.IsAmbiguous(err) {
		t.Fatalf("Publish of c over the riding budget = %v, want ErrInvalidArgument (definite)", err)
	}
	if after := headManifestPins(t, st); len(after) != len(before) {
		t.Fatal("the refused publish moved main")
	}
}

// TestSmallBudgetWriterInheritsALargerHead: writers with different riding
// budgets share a branch (simrun -procs runs them so). A small-budget
// writer on a head that carries more riding bytes than its budget writes
// its version as an object, keeps the riding versions it inherited, and
// redoes no round; the larger-budget writer then rides again.
func TestSmallBudgetWriterInheritsALargerHead(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	if _, err := kernel.Init(ctx, st, root, schema, kernel.Options{Env: testEnv(1)}); err != nil {
		t.Fatal(err)
	}
	fps := failpoint.NewSet()
	env := testEnv(3)
	env.Failpoints = fps
	large, err := kernel.Open(ctx, st, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	small, err := kernel.Open(ctx, st, root, kernel.Options{Env: env, RidingBudget: smallBudget})
	if err != nil {
		t.Fatal(err)
	}
	write := func(g *kernel.Graph, table string) {
		t.Helper()
		if _, err := g.Write(ctx, mustBranch(t, g, "main"), []kernel.TableWrite{bigWrite(table, 400)}, kernel.LineageIntent{Actor: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"a", "b", "c"} {
		write(large, table)
	}
	if n := format.RidingBytes(headManifestPins(t, st)); n <= smallBudget.ManifestBytes {
		t.Fatalf("the large writer's head carries %d riding bytes, want more than the small budget's %d", n, smallBudget.ManifestBytes)
	}
	write(small, "a")
	for table, rides := range map[string]bool{"a": false, "b": true, "c": true} { //detlint:ordered each table checked alike
		if pin := headPin(t, st, table); (pin.Riding != "") != rides {
			t.Fatalf("after the small writer: %s rides %v, want %v", table, pin.Riding != "", rides)
		}
	}
	if n := fps.Hits(failpoint.RidingRedo); n != 0 {
		t.Fatalf("the small writer redid %d rounds over its budget", n)
	}
	write(large, "a")
	if pin := headPin(t, st, "a"); pin.Riding == "" {
		t.Fatal("the large writer's next version of a does not ride")
	}
	cold := coldHandle(t, st)
	for _, p := range headManifestPins(t, st) {
		if _, err := cold.ReadPinned(ctx, p); err != nil {
			t.Fatalf("read %s: %v", p.Name, err)
		}
	}
}
