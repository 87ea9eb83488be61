package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/sim"
	"github.com/graphkernel/graphkernel/sim/check"
)

// Proc is one simulated process executing an actor plan: it opens the graph
// (the init process creates it), runs its operations in order until the
// quiet phase, then, if it is a writer, makes one final commit that must be
// acknowledged.
type Proc struct {
	run  *Run
	plan *ActorPlan
	name string
	gen  int
	next int // index of the next op to run; a restart resumes here
	// resumedAt is the op index this generation began at (next when it
	// was spawned): a restart's crash interrupted the op before it.
	resumedAt int
	h         host
	g         *kernel.Graph
	data      *data.Graph
	// maint is the process's maintenance handle, kept across its
	// collections (its cache of immutable objects), new after a restart.
	maint *maintain.Maintainer
	held  []heldSnap
	fc    *feedConsumer // the change feed consumer's in-memory state (ops_feed.go)
	// svc is the service whose data handle the process shares (service.go);
	// actor is its simulated actor (nil on a real store).
	svc   *service
	actor *sim.Actor
	// lifeResumed: a restarted changer already deleted the branch of the
	// cycle its crash interrupted (lifetime.go).
	lifeResumed bool
	// lifeInCycle: a cycle op of this process began and was not yet
	// counted ended (lifeCycleOver).
	lifeInCycle atomic.Bool
}

// Graph returns the process's kernel handle.
func (p *Proc) Graph() *kernel.Graph { return p.g }

// Ctx returns the context of the process's calls.
func (p *Proc) Ctx() context.Context { return p.h.Context() }

// Rand returns the process's seeded PRNG.
func (p *Proc) Rand() *rand.Rand { return p.h.Rand() }

// Run returns the run the process belongs to.
func (p *Proc) Run() *Run { return p.run }

// Name returns the process name (plan name, "~n" after n restarts).
func (p *Proc) Name() string { return p.name }

// Tag returns the unique tag of op index of this process's plan.
func (p *Proc) Tag(index int) string { return fmt.Sprintf("%s.%d", p.plan.Name, index) }

// client is the porcupine client id of the process.
func (p *Proc) client() int { return p.h.ID() }

// env is the kernel environment of the process.
// Its clock is off the world's by the plan's Clock (a skewed host).
func (p *Proc) env() kernel.Env {
	var clock kernel.Clock = p.run.clock
	if p.plan.Clock != 0 {
		clock = skewedClock{Clock: clock, off: p.plan.Clock}
	}
	return kernel.Env{Clock: clock, Entropy: p.h.Entropy(), Failpoints: p.h.Failpoints()}
}

// kopts are the kernel options of the process's handles: its environment,
// the workload's grace period, skew margin and reach bounds (0: the
// kernel's defaults) and the scenario's riding budget.
func (p *Proc) kopts() kernel.Options {
	wl := p.run.wl
	return kernel.Options{Env: p.env(), Grace: p.run.margin(wl.Grace, realGraceFloor), SkewMargin: p.run.margin(wl.SkewMargin, realSkewFloor), ReachEntries: wl.ReachEntries, ReachFolds: wl.ReachFolds, RidingBudget: p.run.S.Riding}
}

// Over reports whether err (or the process's state) means the process must
// end now: its actor crashed or the world stopped. Nothing may be recorded
// after that.
func (p *Proc) Over(err error) bool {
	return p.h.Crashed() || p.run.stopped() || errors.Is(err, sim.ErrStopped) || errors.Is(err, sim.ErrCrashed)
}

// end returns the error that ends the process.
func (p *Proc) end(err error) error {
	if err == nil {
		return sim.ErrStopped
	}
	return err
}

// Unexpected records err as a violation if it is a kind no correct kernel
// returns under the simulated faults (corruption, an unsupported format).
func (p *Proc) Unexpected(what string, err error) {
	if err == nil || p.Over(err) {
		return
	}
	if errors.Is(err, kernel.ErrCorrupt) || errors.Is(err, kernel.ErrUnsupportedFormat) {
		p.run.Violate(check.Violation{Check: "kernel-error", Detail: fmt.Sprintf("%s: %s: %v", p.name, what, err)})
	}
	p.checkSkewRefusal(what, err)
}

// main is the process's life.
func (p *Proc) main(h host) error {
	p.h = h
	if p.plan.Name == janitorActor {
		return p.janitor()
	}
	if p.plan.Name == initActor {
		return p.setup()
	}
	if err := p.awaitSetup(); err != nil {
		return err
	}
	if err := p.open(); err != nil {
		return err
	}
	if p.gen > 0 {
		p.run.recoveries.Add(1)
	}
	for p.next < len(p.plan.Ops) && !p.run.quiet() {
		op := p.plan.Ops[p.next]
		if err := p.think(op.Think); err != nil {
			return err
		}
		if p.run.quiet() {
			break
		}
		idx := p.next
		p.next++
		p.run.ops.Add(1)
		if err := opExec[op.Kind](p, idx, op); err != nil || p.Over(nil) {
			return p.end(err)
		}
	}
	if err := p.lifeAfterCycles(); err != nil || p.Over(nil) {
		return p.end(err)
	}
	return p.final()
}

// thinkStep bounds one sleep of a think: a longer think (a later shift's
// start, lifeShifts) sleeps in steps and ends when the quiet phase begins,
// since a phase that PhaseDone ends early may end before it.
const thinkStep = time.Minute

// think sleeps d before an op: at once for d ≤ thinkStep (every ordinary
// think, so schedules stay as they were), else in steps of thinkStep,
// returning early once the quiet phase began (at most d/thinkStep steps).
func (p *Proc) think(d time.Duration) error {
	for ; d > thinkStep; d -= thinkStep {
		if p.run.quiet() {
			return nil
		}
		if err := p.h.Sleep(thinkStep); err != nil {
			return err
		}
	}
	if p.run.quiet() {
		return nil
	}
	return p.h.Sleep(d)
}

// open creates (init process) or opens the graph, retrying until it works.
func (p *Proc) open() error {
	for attempt := 0; attempt < maxOpenAttempts; attempt++ {
		var err error
		if p.plan.Name == initActor {
			contract := p.run.wl.Contract
			if contract == nil {
				contract = SchemaContract
			}
			p.g, err = kernel.Init(p.Ctx(), p.run.Store, p.run.Root, contract, p.kopts())
			if errors.Is(err, kernel.ErrGraphExists) {
				p.g, err = kernel.Open(p.Ctx(), p.run.Store, p.run.Root, p.kopts())
			}
		} else {
			p.g, err = kernel.Open(p.Ctx(), p.run.Store, p.run.Root, p.kopts())
		}
		if err == nil {
			return nil
		}
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("open", err)
		if err := p.h.Sleep(openRetryDelay); err != nil {
			return err
		}
	}
	p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("%s could not open the graph in %d attempts", p.name, maxOpenAttempts)})
	return nil
}

// setup is the init process: create the graph (or write the workload's
// fixture), seed base data, then let the other processes in.
func (p *Proc) setup() error {
	if p.run.wl.Fixture != nil {
		if err := p.fixture(); err != nil {
			return err
		}
		p.run.setupDone.Store(true)
		return nil
	}
	if err := p.open(); err != nil {
		return err
	}
	if p.run.wl.Seed != nil {
		if err := p.run.wl.Seed(p); err != nil {
			return err
		}
	}
	p.run.setupDone.Store(true)
	return nil
}

// setupPolls bounds how long a process waits for the init process.
const setupPolls = 2000

// awaitSetup waits (in simulated or real time) until the init process has
// finished: nobody may see a half-written fixture.
func (p *Proc) awaitSetup() error {
	for poll := 0; !p.run.setupDone.Load(); poll++ {
		if poll >= setupPolls {
			p.run.Violate(check.Violation{Check: "liveness", Detail: p.name + ": the graph's setup never finished"})
			return p.end(nil)
		}
		if err := p.sleep(100 * time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// fixture runs the workload's setup in the init process: store faults off
// and the process immune to crashes while it writes, so the pre-existing
// state is exactly what the workload describes.
func (p *Proc) fixture() error {
	w := p.run.W
	if w != nil {
		w.SuspendFaults(p.h.(*sim.Actor))
		defer w.ResumeFaults()
	}
	if err := p.run.wl.Fixture(p); err != nil && !p.Over(err) {
		p.run.Violate(check.Violation{Check: "setup", Detail: fmt.Sprintf("fixture: %v", err)})
	}
	return nil
}

// janitorPolls bounds how long the janitor waits for the other processes.
const janitorPolls = 600

// janitor runs in the quiet phase: once every other process has ended it
// opens the graph read-write (the open-time recovery sweep resolves what
// crashed processes left) and runs the workload's final check.
func (p *Proc) janitor() error {
	for poll := 0; !p.run.othersDone(); poll++ {
		if poll >= janitorPolls {
			p.run.Violate(check.Violation{Check: "liveness", Detail: "processes still running when the janitor gave up waiting: " + p.run.othersLive()})
			return nil
		}
		if err := p.sleep(time.Second); err != nil {
			return err
		}
	}
	if err := p.open(); err != nil {
		return err
	}
	// Everyone else is gone: resolve every sidecar, however young (the
	// open-time sweep leaves those younger than the recovery lease).
	for attempt := 0; attempt < maxFinalAttempts; attempt++ {
		rep, err := p.g.Recover(p.Ctx(), kernel.RecoverOptions{IgnoreLease: true})
		if err == nil {
			p.run.resolved.Add(int64(rep.Resolved))
			break
		}
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("recover", err)
		if err := p.sleep(finalRetryDelay); err != nil {
			return err
		}
	}
	if p.run.wl.Final != nil {
		return p.run.wl.Final(p)
	}
	return nil
}

// final makes a writer's last commit in the quiet phase: with every fault
// off it must be acknowledged within a few attempts.
func (p *Proc) final() error {
	if !p.plan.writes() {
		return nil
	}
	for poll := 0; !p.run.quiet(); poll++ { // a plan that ran out of ops early waits for the quiet phase
		if poll >= janitorPolls {
			return nil
		}
		if err := p.sleep(time.Second); err != nil {
			return err
		}
	}
	var last error
	for attempt := 0; attempt < maxFinalAttempts; attempt++ {
		tag := fmt.Sprintf("%s.final%d", p.name, attempt)
		out, err := p.Commit(tag, "main", []string{"fin_" + p.plan.Name}, false)
		if err != nil {
			return err
		}
		if out.acked {
			return nil
		}
		last = out.err
		if err := p.h.Sleep(finalRetryDelay); err != nil {
			return err
		}
	}
	p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf(
		"%s: final commit not acknowledged in the quiet phase after %d attempts: %v", p.name, maxFinalAttempts, last)})
	return nil
}

// writes reports whether the plan commits (so it owes a final commit).
func (a *ActorPlan) writes() bool {
	for _, op := range a.Ops {
		if op.Kind == "commit" {
			return true
		}
	}
	return false
}

// sleep is a helper for ops that wait in simulated time.
func (p *Proc) sleep(d time.Duration) error { return p.h.Sleep(d) }
