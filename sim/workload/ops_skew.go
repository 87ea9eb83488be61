package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/sim/check"
)

// skewedClock is a host clock off the world's by off (ActorPlan.Clock).
type skewedClock struct {
	kernel.Clock
	off time.Duration
}

// Now returns the world's time plus the offset.
func (c skewedClock) Now() time.Time { return c.Clock.Now().Add(c.off) }

// maintClockBehind is how far the maintenance workload's skewed actors
// (a writer and a collector) run behind: past the skew margin by more than
// a whole run, so every branch head they meet was written by a clock more
// than the margin ahead of theirs.
const maintClockBehind = 10 * time.Minute

// genMaintSkewed plans the maintenance workload's two skewed actors: s0
// inserts on main and s1 collects, both with a clock maintClockBehind
// behind the world's. Every publish of s0 and every collection of s1 must
// refuse with kernel.ErrClockSkew (docs/gc.md §4).
func genMaintSkewed(rng *rand.Rand) []ActorPlan {
	w := genMaintActor(rng, "s0", [2]time.Duration{2 * time.Second, 10 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gtx", Args: map[string]string{"kind": "insert", "person": dataPeople[rng.IntN(len(dataPeople))]}}
	})
	c := genMaintActor(rng, "s1", [2]time.Duration{5 * time.Second, 20 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gcollect", Args: map[string]string{}}
	})
	w.Clock, c.Clock = -maintClockBehind, -maintClockBehind
	return []ActorPlan{w, c}
}

// behindEveryHead reports whether the process's clock runs behind every
// commit time a simulated run can hold by more than the workload's skew
// margin: every head is written by an exact clock at or after the run's
// start, and the run lasts its two phases. The kernel must refuse every
// publish and every collection of such a process.
func (p *Proc) behindEveryHead() bool {
	if p.run.W == nil { // a real run's length is not the scenario's
		return false
	}
	margin := p.run.wl.SkewMargin
	if margin == 0 {
		margin = kernel.DefaultSkewMargin
	}
	return -p.plan.Clock > margin+p.run.S.FaultPhase+p.run.S.QuietPhase
}

// checkSkewAccepted records a violation (check clock-skew) when an
// operation of a process whose clock runs behind every head by more than
// the margin succeeded: it published, or collected, by a clock the grace
// rule cannot trust.
func (p *Proc) checkSkewAccepted(what string, err error) {
	if err == nil && p.behindEveryHead() {
		p.run.Violate(check.Violation{Check: "clock-skew", Detail: fmt.Sprintf(
			"%s: %s succeeded with a clock %s behind the world's (margin %s)", p.name, what, -p.plan.Clock, p.run.wl.SkewMargin)})
	}
}

// checkSkewRefusal records a violation (check clock-skew) when a process
// with an exact clock is refused for clock skew: no workload runs a clock
// ahead of the world's, so every head time is at most the world's time
// when it is read, and an exact clock is never more than the margin
// behind one.
func (p *Proc) checkSkewRefusal(what string, err error) {
	if p.plan.Clock == 0 && errors.Is(err, kernel.ErrClockSkew) {
		p.run.Violate(check.Violation{Check: "clock-skew", Detail: fmt.Sprintf(
			"%s: %s refused for clock skew with an exact clock: %v", p.name, what, err)})
	}
}
