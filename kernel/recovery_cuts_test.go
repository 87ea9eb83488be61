package kernel_test

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/kerneltest"
)

// TestCrashCutSweep runs the exhaustive crash-cut sweep over every writer
// kind of the kernel, in both write formats: crash after each durable
// effect of the write (and of each recovery), reopen, and require
// pre-or-post state, one audit record per left sidecar, no sidecar left;
// plus the acknowledgement cut. Named per attempt (format 8) no cut may
// leave a sidecar at all, riding their manifest (format 11) or not;
// counter-named (format 7's writes, which old
// graphs may still hold) every sidecar-leaving cut is recovered.
func TestCrashCutSweep(t *testing.T) {
	for _, f := range []struct {
		name              string
		counter, noRiding bool
	}{{"riding", false, false}, {"named", false, true}, {"counter", true, false}} {
		for _, sc := range kerneltest.WriterScenarios() {
			t.Run(sc.Name+"/"+f.name, func(t *testing.T) {
				crashCutSweep(t, sc, kerneltest.CutOptions{Seed: 1, CounterWrites: f.counter, NoRiding: f.noRiding})
			})
		}
	}
}

func crashCutSweep(t *testing.T, sc kerneltest.CutScenario, opt kerneltest.CutOptions) {
	counter := opt.CounterWrites
	rep, err := kerneltest.SweepCuts(recCtx, sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("%d violations:\n%s", len(rep.Violations), strings.Join(rep.Violations, "\n"))
	}
	if !counter && (rep.Recoveries != 0 || rep.RecoveryCuts != 0) {
		t.Fatalf("a write named per attempt left something to recover: %d recoveries, %d recovery cuts", rep.Recoveries, rep.RecoveryCuts)
	}
	t.Logf("%s: %d effects, %d writer cuts, %d recovery cuts, %d reopens", sc.Name, len(rep.Effects), rep.WriterCuts, rep.RecoveryCuts, rep.Reopens)
}
