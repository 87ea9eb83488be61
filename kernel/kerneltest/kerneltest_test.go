package kerneltest

import (
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
)

// SweepCuts over the two-table write of the recovery issue, written as
// format 7 did (CounterWrites): it records the write's durable effects
// (sidecar, two table versions, manifest, the commit index, sidecar
// delete), exercises every cut plus the acknowledgement cut and the cuts
// inside each recovery, and finds nothing wrong.
func TestSweepCutsTwoTable(t *testing.T) {
	rep, err := SweepCuts(context.Background(), WriterScenarios()[0], CutOptions{Seed: 3, CounterWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("violations: %v", rep.Violations)
	}
	if len(rep.Effects) != 6 || rep.WriterCuts != len(rep.Effects)+2 || rep.RecoveryCuts == 0 || rep.Cuts != rep.WriterCuts+rep.RecoveryCuts {
		t.Fatalf("report %+v", rep)
	}
	for i, want := range []string{"put", "put", "put", "put", "put", "delete"} {
		if string(rep.Effects[i].Op) != want {
			t.Fatalf("effect %d is %+v, want a %s", i, rep.Effects[i], want)
		}
	}
}

// SweepCuts over the same two-table write named per attempt (format 8),
// its versions objects (NoRiding, as format 10 wrote them):
// two table-version PUTs, the manifest, the commit index — no sidecar, so
// every cut is pre or post with nothing to recover (a sidecar left at any
// cut is a violation).
func TestSweepCutsTwoTableNamed(t *testing.T) {
	sweepCutsWithEffects(t, CutOptions{Seed: 3, NoRiding: true}, "/tables/", "/tables/", "/branches/", "/index/commits/")
}

// sweepCutsWithEffects sweeps the first writer scenario with opt and
// wants no violation, nothing to recover and exactly these durable
// effects: puts under the given key parts, in order.
func sweepCutsWithEffects(t *testing.T, opt CutOptions, want ...string) {
	t.Helper()
	rep, err := SweepCuts(context.Background(), WriterScenarios()[0], opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("violations: %v", rep.Violations)
	}
	if len(rep.Effects) != len(want) || rep.RecoveryCuts != 0 || rep.Recoveries != 0 {
		t.Fatalf("report %+v", rep)
	}
	for i, w := range want {
		if e := rep.Effects[i]; e.Op != "put" || !strings.Contains(e.Key, w) {
			t.Fatalf("effect %d is %+v, want a put under %s", i, e, w)
		}
	}
}

// SweepCuts over the same two-table write with both versions riding the
// manifest (format 11): the manifest and the commit index are its only
// durable effects, so a cut either shows the whole write or none of it.
func TestSweepCutsTwoTableRiding(t *testing.T) {
	sweepCutsWithEffects(t, CutOptions{Seed: 3}, "/branches/", "/index/commits/")
}

// A scenario whose write changes nothing is a harness error, not a pass.
func TestSweepCutsRejectsNoOpWrite(t *testing.T) {
	sc := WriterScenarios()[0]
	sc.Write = func(context.Context, *kernel.Graph) error { return nil }
	if _, err := SweepCuts(context.Background(), sc, CutOptions{}); err == nil {
		t.Fatal("a no-op write passed the sweep")
	}
}
