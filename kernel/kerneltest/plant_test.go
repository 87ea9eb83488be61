//go:build simplant

package kerneltest

import (
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// TestCutSweepCatchesDoubleAudit: with the planted double-audit bug (the
// audit path skips its presence check and writes under a fresh key), the
// crash-cut sweep must report a second audit record for some op.
func TestCutSweepCatchesDoubleAudit(t *testing.T) {
	if err := plant.Enable(plant.DoubleAudit); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	rep, err := SweepCuts(context.Background(), WriterScenarios()[0], CutOptions{Seed: 1, SingleOpenerOnly: true, CounterWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	caught := 0
	for _, v := range rep.Violations {
		if strings.Contains(v, "audit records, want exactly 1") {
			caught++
		}
	}
	if caught == 0 {
		t.Fatalf("double-audit not caught in %d cuts; violations: %v", rep.Cuts, rep.Violations)
	}
	t.Logf("double-audit caught %d times in %d cuts", caught, rep.Cuts)
}

// TestCutSweepCatchesPrivatePlan: with the planted private-plan bug (each
// recoverer makes its own roll-back plan), the staged second opener of some
// cut publishes a second recovery commit that no audit record names, and
// the cut sweep, which counts commits and not only records, reports it.
func TestCutSweepCatchesPrivatePlan(t *testing.T) {
	if err := plant.Enable(plant.PrivatePlan); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	caught, cuts := 0, 0
	for _, sc := range WriterScenarios() {
		rep, err := SweepCuts(context.Background(), sc, CutOptions{Seed: 1, CounterWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		cuts += rep.Cuts
		for _, v := range rep.Violations {
			if strings.Contains(v, "audit records, want exactly 1") && strings.Contains(v, "recovery commit") {
				caught++
			}
		}
	}
	if caught == 0 {
		t.Fatalf("private-plan not caught in %d cuts", cuts)
	}
	t.Logf("private-plan caught %d times in %d cuts", caught, cuts)
}
