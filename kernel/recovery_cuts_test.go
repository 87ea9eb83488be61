package kernel_test

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/kerneltest"
)

// TestCrashCutSweep runs the exhaustive crash-cut sweep over every writer
// kind of the kernel: crash after each durable effect of the write (and of
// each recovery), reopen, and require pre-or-post state, one audit record
// per left sidecar, no sidecar left; plus the acknowledgement cut.
func TestCrashCutSweep(t *testing.T) {
	for _, sc := range kerneltest.WriterScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			rep, err := kerneltest.SweepCuts(recCtx, sc, kerneltest.CutOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Violations) > 0 {
				t.Fatalf("%d violations:\n%s", len(rep.Violations), strings.Join(rep.Violations, "\n"))
			}
			t.Logf("%s: %d effects, %d writer cuts, %d recovery cuts, %d reopens", sc.Name, len(rep.Effects), rep.WriterCuts, rep.RecoveryCuts, rep.Reopens)
		})
	}
}
