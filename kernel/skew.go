package kernel

import (
	"errors"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// ErrClockSkew matches *ClockSkewError.
var ErrClockSkew = errors.New("kernel: clocks disagree by more than the skew margin")

// ClockSkewError says a clock was found further from another process's
// clock than the skew margin allows (docs/gc.md §4): the grace rule's
// safety argument no longer holds, so the operation refused before doing
// anything that relies on it. A refused publish published nothing (unless
// the error is also ambiguous); a refused collection deleted nothing.
//
// Not retryable: the condition lasts until the wrong clock is corrected
// (or, when the reference's own writer ran ahead, until real time reaches
// the reference time less the margin), so an immediate retry meets it
// again. Fix the host's clock (NTP) and begin again.
type ClockSkewError struct {
	Op        string        // what refused ("publish on main#1", "collect")
	Reference string        // what the clock was compared with (a branch head and its commit)
	RefTime   time.Time     // the reference's time, by its writer's clock
	Now       time.Time     // the refusing process's clock
	Margin    time.Duration // the skew margin
}

// Error implements error.
func (e *ClockSkewError) Error() string {
	return fmt.Sprintf("kernel: %s: clock reads %s, %s before %s (time %s), beyond the skew margin %s (fix the clock)",
		e.Op, e.Now.Format(time.RFC3339Nano), e.RefTime.Sub(e.Now), e.Reference, e.RefTime.Format(time.RFC3339Nano), e.Margin)
}

// Is makes errors.Is(err, ErrClockSkew) hold.
func (e *ClockSkewError) Is(target error) bool { return target == ErrClockSkew }

// Retryable reports false: retrying before a clock is fixed meets the
// same disagreement.
func (e *ClockSkewError) Retryable() bool { return false }

// checkSkew refuses a publish (and a write round, before it stages
// anything) whose clock reads more than the skew margin before the time of
// head, the branch head it loaded: this process's clock, or the head
// writer's, is off by more than the collectors assume, and a collector
// may judge what this write stages as long abandoned (docs/gc.md §4).
// Recovery's publishes are exempt: they reference only versions a sidecar
// or the retained history already keeps as roots, whatever their time.
func (g *Graph) checkSkew(req *publishReq, head *format.Manifest) error {
	if req.commit.Kind == format.KindRecovery {
		return nil
	}
	return g.checkClockAgainst("publish on "+req.branch.String(), "the head of "+req.branch.String(), head)
}

// checkClockAgainst refuses op with *ClockSkewError when the handle's
// clock, read now, lies more than the skew margin before the time of m, a
// manifest (named what) read before now: true time does not run backwards
// between m's write and this reading, so the two clocks disagree beyond
// the margin.
func (g *Graph) checkClockAgainst(op, what string, m *format.Manifest) error {
	if plant.Enabled(plant.SkewUnchecked) { // planted bug: the clock is trusted blindly
		return nil
	}
	now := g.clock.Now()
	at, behind := lineage.ClockBehind(m, now, g.skew)
	if !behind {
		return nil
	}
	ref := fmt.Sprintf("%s (v%d)", what, m.Version)
	if m.Commit != nil {
		ref = fmt.Sprintf("%s (v%d, commit %s)", what, m.Version, m.Commit.ID)
	}
	return &ClockSkewError{Op: op, Reference: ref, RefTime: at, Now: now, Margin: g.skew}
}
