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
	rep, err := SweepCuts(context.Background(), WriterScenarios()[0], CutOptions{Seed: 1, SingleOpenerOnly: true})
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
