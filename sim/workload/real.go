package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// RealEnv is where ExecuteReal runs a scenario: a real store (fs or S3), a
// fresh graph root on it, and a real clock (injected: this package never
// reads the wall clock itself).
type RealEnv struct {
	Store objstore.Store
	// Root must be a root no earlier run used.
	Root  string
	Clock kernel.Clock
	// Scale multiplies the scenario's phases and think times (0 means 1):
	// a real store cannot compress time, so soaks shrink them instead.
	Scale float64
	// QuietBound bounds the quiet phase in real time (0: the scaled
	// scenario quiet phase).
	QuietBound time.Duration
}

// ExecuteReal runs s on a real store: every process is a real goroutine,
// concurrently, with no injected faults, crashes or failpoints (the store
// brings its own), and the same checkers and porcupine run on the recorded
// history. Determinism is a simulator property and is not checked here.
func ExecuteReal(s *Scenario, env RealEnv, opt Options) *Result {
	res := &Result{Scenario: s}
	if err := s.Validate(); err != nil {
		res.Violations = []check.Violation{{Check: "scenario", Detail: err.Error()}}
		return res
	}
	if wl, _ := Lookup(s.Workload); wl.Run != nil {
		return wl.Run(s, opt) // its own harness, on its own stores
	}
	scale := env.Scale
	if scale <= 0 {
		scale = 1
	}
	var tick atomic.Int64
	var quiet, stopped atomic.Bool
	wl, _ := Lookup(s.Workload)
	r := &Run{S: s, wl: wl, opt: opt, Store: env.Store, Insp: storeInspector{env.Store}, Root: env.Root,
		H:     check.NewHistory(func() int64 { return tick.Add(1) }),
		clock: env.Clock, scale: scale, quiet: quiet.Load, stopped: stopped.Load,
		procs: map[int]*Proc{}, sidecars: map[string]sidecarLife{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := func(id int, plan *ActorPlan, delay time.Duration) {
		h := &realHost{ctx: ctx, clock: env.Clock, scale: scale, id: id,
			rng: rand.New(rand.NewPCG(s.Seed, uint64(id))), ent: rand.New(rand.NewPCG(s.Seed^0x5eed, uint64(id)))}
		p := &Proc{run: r, plan: plan, name: plan.Name}
		r.joinService(p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h.Sleep(delay) != nil {
				return
			}
			if err := p.main(h); err != nil && !p.Over(err) {
				r.Violate(check.Violation{Check: "process", Detail: fmt.Sprintf("%s: %v", plan.Name, err)})
			}
		}()
	}
	start(0, &ActorPlan{Name: initActor}, 0)
	for i := range s.Actors {
		start(i+1, &s.Actors[i], time.Second)
	}
	_ = env.Clock.Sleep(ctx, scaled(s.FaultPhase, scale))
	quiet.Store(true)
	bound := env.QuietBound
	if bound <= 0 {
		bound = scaled(s.QuietPhase, scale)
	}
	if !waitBounded(ctx, &wg, env.Clock, bound) {
		r.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("processes still running %v into the quiet phase", bound)})
	}
	if !stopped.Load() {
		start(len(s.Actors)+1, &ActorPlan{Name: janitorActor}, 0)
		if !waitBounded(ctx, &wg, env.Clock, bound) {
			r.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("janitor still running after %v", bound)})
		}
	}
	stopped.Store(true)
	cancel()
	wg.Wait()
	r.finalChecksRecovering()
	res = r.counts(opt)
	res.SimTime = scaled(s.FaultPhase, scale)
	return res
}

// finalChecksRecovering runs the final checks, turning a store the checker
// cannot read (an inspector panic) into a violation.
func (r *Run) finalChecksRecovering() {
	defer func() {
		if x := recover(); x != nil {
			r.Violate(check.Violation{Check: "inspect", Detail: fmt.Sprint(x)})
		}
	}()
	r.finalChecks()
}

func scaled(d time.Duration, scale float64) time.Duration { return time.Duration(float64(d) * scale) }

// waitBounded waits for wg, or for bound on clock; it reports whether wg
// finished.
func waitBounded(ctx context.Context, wg *sync.WaitGroup, clock kernel.Clock, bound time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timeout := make(chan struct{})
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = clock.Sleep(tctx, bound); close(timeout) }()
	select {
	case <-done:
		return true
	case <-timeout:
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// realHost runs a process on a real goroutine.
type realHost struct {
	ctx   context.Context
	clock kernel.Clock
	scale float64
	id    int
	rng   *rand.Rand
	mu    sync.Mutex
	ent   *rand.Rand
}

func (h *realHost) Context() context.Context    { return h.ctx }
func (h *realHost) Rand() *rand.Rand            { return h.rng }
func (h *realHost) Failpoints() *failpoint.Set  { return nil }
func (h *realHost) Crashed() bool               { return false }
func (h *realHost) ID() int                     { return h.id }
func (h *realHost) Entropy() io.Reader          { return realEntropy{h} }
func (h *realHost) Sleep(d time.Duration) error { return h.clock.Sleep(h.ctx, scaled(d, h.scale)) }

type realEntropy struct{ h *realHost }

// Read fills p from the host's seeded stream (locked: the kernel may read
// it from one goroutine only, but the lock costs nothing).
func (e realEntropy) Read(p []byte) (int, error) {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	for i := range p {
		p[i] = byte(e.h.ent.Uint32())
	}
	return len(p), nil
}

// storeInspector adapts a real store to check.Inspector, retrying transient
// faults a bounded number of times.
type storeInspector struct{ s objstore.Store }

// StoreInspector returns the inspector ExecuteReal checks a real store
// with: it panics on a store it cannot read (cmd/simrun's process harness
// uses it on its final state).
func StoreInspector(s objstore.Store) check.Inspector { return storeInspector{s} }

const inspectAttempts = 10

func (in storeInspector) Keys(prefix string) []string {
	var out []string
	after := ""
	for pages := 0; pages < 1<<20; pages++ {
		var page objstore.ListPage
		var err error
		for a := 0; a < inspectAttempts; a++ {
			if page, err = in.s.List(context.Background(), prefix, after, objstore.MaxListLimit); !objstore.IsRetryable(err) {
				break
			}
		}
		if err != nil {
			panic(fmt.Sprintf("workload: inspect list %q: %v", prefix, err))
		}
		out = append(out, page.Keys...)
		if !page.Truncated || len(page.Keys) == 0 {
			return out
		}
		after = page.Keys[len(page.Keys)-1]
	}
	panic(fmt.Sprintf("workload: inspect list %q: too many pages", prefix))
}

func (in storeInspector) Peek(key string) ([]byte, bool) {
	for a := 0; a < inspectAttempts; a++ {
		obj, err := in.s.Get(context.Background(), key)
		switch {
		case err == nil:
			return obj.Data, true
		case errors.Is(err, objstore.ErrNotFound):
			return nil, false
		case !objstore.IsRetryable(err):
			panic(fmt.Sprintf("workload: inspect get %q: %v", key, err))
		}
	}
	panic(fmt.Sprintf("workload: inspect get %q: retries exhausted", key))
}
