package workload

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

func init() {
	Register(&Workload{
		Name: "cuts",
		Doc: "the recovery issue's exhaustive crash-cut sweep over every writer kind, counter-named (recovered) and named per attempt: crash after each durable " +
			"effect (and inside recovery), reopen with one and two openers, state must be pre or post, one audit per sidecar",
		Generate: func(seed uint64, faults string) *Scenario {
			return &Scenario{Workload: "cuts", Seed: seed, Faults: faults, QuietPhase: 1}
		},
		Plants:      []string{plant.DoubleAudit, plant.PrivatePlan},
		Run:         runCuts,
		RidingScale: ridingScaleCuts,
	})
}

// cutsFormats are the two write formats the cuts workload sweeps, in
// order: counter-named (kernel.Options.CounterWrites, format 7's writes:
// every cut before the publish leaves a sidecar that a reopen must roll
// forward or back, so recovery and its planted bugs stay exercised) and
// named per attempt, as objects (format 8 to 10) and riding their manifest
// (format 11, what a handle writes by default): no cut may leave a sidecar
// or anything to recover.
var cutsFormats = []struct {
	name     string
	counter  bool
	noRiding bool
}{{"counter", true, false}, {"named", false, true}, {"riding", false, false}}

// runCuts runs kerneltest.SweepCuts over every writer scenario in both
// write formats (cutsFormats) with the scenario's seed. Its trace hash
// covers each sweep's recorded effects, counts and verdicts (the sweep's
// concurrent openers are free-running, but their verdicts must not depend
// on the interleaving).
//
// The riding sweeps run with the scenario's riding budget (ridingFor on
// the scale of the sweep's versions, about 200 bytes each): under a small
// one a two-table write rides one version and spills the other, and
// Result.Riding counts the spilled versions' object writes.
func runCuts(s *Scenario, _ Options) *Result {
	res := &Result{Scenario: s, Riding: RidingCounts{Budgeted: s.Riding != (kernel.RidingBudget{})}}
	h := sha256.New()
	for _, f := range cutsFormats {
		for _, sc := range kerneltest.WriterScenarios() {
			opt := kerneltest.CutOptions{Seed: s.Seed, CounterWrites: f.counter, NoRiding: f.noRiding}
			if f.name == "riding" {
				opt.RidingBudget = s.Riding
			}
			sweepCuts(res, h, sc, f.name, opt)
		}
	}
	copy(res.TraceHash[:], h.Sum(nil))
	return res
}

// sweepCuts runs one scenario's sweep in one format and adds its counts,
// trace and violations (named "<scenario>/<format>: ...") to res.
func sweepCuts(res *Result, h io.Writer, sc kerneltest.CutScenario, format string, opt kerneltest.CutOptions) {
	rep, err := kerneltest.SweepCuts(context.Background(), sc, opt)
	if err != nil {
		res.Violations = append(res.Violations, check.Violation{Check: "cuts", Detail: fmt.Sprintf("%s/%s: harness: %v", sc.Name, format, err)})
		return
	}
	vs := append([]string(nil), rep.Violations...)
	sort.Strings(vs)
	fmt.Fprintf(h, "%s/%s %d %d %d %d %v\n", rep.Scenario, format, rep.WriterCuts, rep.RecoveryCuts, rep.Reopens, len(rep.Effects), vs)
	for _, e := range rep.Effects {
		fmt.Fprintf(h, "%s %s\n", e.Op, e.Key)
	}
	for _, v := range vs {
		res.Violations = append(res.Violations, check.Violation{Check: "cuts", Detail: format + ": " + v})
	}
	if format == "riding" && sc.Name != "compaction" { // a compaction's content-preserving version never rides
		for _, e := range rep.Effects { // one uncrashed run: each put of a version named per attempt is a spill
			if e.Op == objstore.OpPut && strings.Contains(e.Key, "/tables/") {
				res.Riding.Spilled++
			}
		}
	}
	res.Cuts += rep.Cuts
	res.Ops += rep.Reopens
	res.Crashes += rep.Crashes
	res.Recoveries += rep.Recoveries
}
