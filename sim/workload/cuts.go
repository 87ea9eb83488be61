package workload

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/sim/check"
)

func init() {
	Register(&Workload{
		Name: "cuts",
		Doc: "the recovery issue's exhaustive crash-cut sweep over every writer kind: crash after each durable " +
			"effect (and inside recovery), reopen with one and two openers, state must be pre or post, one audit per sidecar",
		Generate: func(seed uint64, faults string) *Scenario {
			return &Scenario{Workload: "cuts", Seed: seed, Faults: faults, QuietPhase: 1}
		},
		Plants: []string{plant.DoubleAudit, plant.PrivatePlan},
		Run:    runCuts,
	})
}

// runCuts runs kerneltest.SweepCuts over every writer scenario with the
// scenario's seed. Its trace hash covers each sweep's recorded effects,
// counts and verdicts (the sweep's concurrent openers are free-running, but
// their verdicts must not depend on the interleaving).
func runCuts(s *Scenario, _ Options) *Result {
	res := &Result{Scenario: s}
	h := sha256.New()
	for _, sc := range kerneltest.WriterScenarios() {
		rep, err := kerneltest.SweepCuts(context.Background(), sc, kerneltest.CutOptions{Seed: s.Seed})
		if err != nil {
			res.Violations = append(res.Violations, check.Violation{Check: "cuts", Detail: fmt.Sprintf("%s: harness: %v", sc.Name, err)})
			continue
		}
		vs := append([]string(nil), rep.Violations...)
		sort.Strings(vs)
		fmt.Fprintf(h, "%s %d %d %d %d %v\n", rep.Scenario, rep.WriterCuts, rep.RecoveryCuts, rep.Reopens, len(rep.Effects), vs)
		for _, e := range rep.Effects {
			fmt.Fprintf(h, "%s %s\n", e.Op, e.Key)
		}
		for _, v := range vs {
			res.Violations = append(res.Violations, check.Violation{Check: "cuts", Detail: v})
		}
		res.Cuts += rep.Cuts
		res.Ops += rep.Reopens
		res.Crashes += rep.Crashes
		res.Recoveries += rep.Recoveries
	}
	copy(res.TraceHash[:], h.Sum(nil))
	return res
}
