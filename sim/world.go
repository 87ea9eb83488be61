package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
)

// Epoch is the simulated wall-clock time at which every world starts.
var Epoch = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// DefaultWindow is the scheduling window when Config.Window is zero.
const DefaultWindow = 2 * time.Millisecond

// MaxActors bounds the actors one world may spawn (restarts included).
const MaxActors = 4096

// Errors a parked call fails with when the world stops or its actor crashed.
var (
	// ErrStopped fails every call a live actor makes once the world stopped.
	ErrStopped = errors.New("sim: world stopped")
	// ErrCrashed fails every call a crashed actor makes; none has an effect.
	ErrCrashed = errors.New("sim: actor crashed")
	// ErrNoActor fails a store call or sleep whose context carries no actor
	// of this world: something escaped the baton.
	ErrNoActor = errors.New("sim: call outside any actor of this world")
)

// CrashConfig sets the seeded crash rates of the fault phase.
type CrashConfig struct {
	// AtCall is the chance to crash an actor parked at an issued store call,
	// before its effect.
	AtCall float64
	// AfterWrite is the chance to crash an actor right after one of its
	// writes became durable, before it learns the result: a durable cut.
	AfterWrite float64
	// Max bounds the crashes of one run (failpoint crashes included;
	// a machine crash's are bounded by MachineCrashConfig.Max).
	Max int
}

// MachineCrashConfig sets the seeded machine crashes of the fault phase:
// a power loss of the one machine every actor runs on. When Rate is
// positive the actors' store defers durability as objstore/fs does
// (World.Client: objstore/sim's Deferring view), and a machine crash
// crashes every started live actor at once (each restarts as after a
// crash of its own: OnCrash) and makes the store lose, revert or tear
// every object not yet durable (objsim.Store.MachineCrash).
type MachineCrashConfig struct {
	// Rate is the chance, at each store-call scheduling point where an
	// actor may crash (CrashConfig's points), that the machine crashes
	// instead. Zero turns machine crashes and the deferral off.
	Rate float64
	// Max bounds the machine crashes of one run.
	Max int
	// Keep and Tear are MachineCrash's chances that a volatile object
	// survives whole and that one whose data was deferred too is torn.
	Keep, Tear float64
}

// BuggifyConfig arms failpoints BUGGIFY-style: each catalogued site is
// enabled for the whole run with probability SiteProb; an enabled site fires
// with probability FireProb each time it is reached, crashing the actor with
// probability CrashShare (within CrashConfig.Max) and returning an injected
// error otherwise.
type BuggifyConfig struct {
	SiteProb, FireProb, CrashShare float64
}

// Config configures a World.
type Config struct {
	// Seed determines the whole run.
	Seed uint64
	// Faults are the store's fault rates during the fault phase.
	Faults objsim.Faults
	// Crash sets the crash rates of the fault phase.
	Crash CrashConfig
	// Buggify arms failpoints during the fault phase.
	Buggify BuggifyConfig
	// Machine sets the machine crashes of the fault phase (and whether
	// the store defers durability).
	Machine MachineCrashConfig
	// Window is the scheduling window (DefaultWindow if zero).
	Window time.Duration
	// TraceLines, when positive, keeps up to that many human-readable trace
	// lines (see Trace). The hash covers the whole run either way.
	TraceLines int
}

// Stats counts what happened in a world.
type Stats struct {
	// Steps counts scheduling decisions.
	Steps uint64
	// Crashes counts crashed actors (scheduler, failpoint and machine
	// crashes).
	Crashes int
	// MachineCrashes counts machine crashes; Lost, Reverted, Torn and
	// Kept sum what they did to the volatile objects.
	MachineCrashes             int
	Lost, Reverted, Torn, Kept int
	// FailpointFires counts failpoint hits the BUGGIFY decider fired.
	FailpointFires int
	// Spawned counts actors spawned.
	Spawned int
	// Panics lists actor panics (kernel invariant violations), in order.
	Panics []string
}

// World is one deterministic simulation: a store, a clock, a scheduler and
// its actors. All methods except Stop, TraceHash, Now and the read-only
// accessors must be called either before RunUntil or from the running actor.
type World struct {
	cfg     Config
	rng     *rand.Rand
	store   *objsim.Store
	now     atomic.Int64 // simulated nanoseconds since Epoch
	actors  []*Actor
	yield   chan *Actor
	done    chan struct{}
	stopped atomic.Bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	trace   tracer
	quiet   bool
	sites   map[failpoint.Name]bool
	stats   Stats
	onCrash func(*Actor)
	tick    int64
	late    lateRecorder
	observe func(actor int, c *objsim.Call, applied bool, result error)
	names   map[string]int // spawns per actor name
	immune  *Actor         // see SuspendFaults
	victims int            // actors machine crashes crashed (not bounded by Crash.Max)
	// fpSets are every failpoint set the world made (FailpointHits).
	fpMu   sync.Mutex
	fpSets []*failpoint.Set
}

// track records s for FailpointHits and returns it.
func (w *World) track(s *failpoint.Set) *failpoint.Set {
	w.fpMu.Lock()
	defer w.fpMu.Unlock()
	w.fpSets = append(w.fpSets, s)
	return s
}

// FailpointHits reports how often site n was reached (fired or not) by
// the handles of every actor and shared set of the world: a count of a
// kernel path taken (failpoint.RidingRedo: rounds redone over the riding
// budget).
func (w *World) FailpointHits(n failpoint.Name) int {
	w.fpMu.Lock()
	defer w.fpMu.Unlock()
	total := 0
	for _, s := range w.fpSets {
		total += s.Hits(n)
	}
	return total
}

// New returns a world at time zero with an empty store whose hook is the
// world. It panics on an invalid configuration (a bug in the caller).
func New(cfg Config) *World {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &World{
		cfg:    cfg,
		rng:    rand.New(rand.NewPCG(cfg.Seed, 0x7363686564756c65)), // "schedule"
		yield:  make(chan *Actor),
		done:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
		trace:  newTracer(cfg.TraceLines),
		names:  map[string]int{},
	}
	w.store = objsim.New(objsim.Config{Seed: cfg.Seed, Faults: cfg.Faults, Hook: worldHook{w}})
	w.sites = chooseSites(w.rng, cfg.Buggify)
	w.trace.event("world seed=%d", cfg.Seed)
	return w
}

// Store returns the world's store, for inspection and accounting. Actors
// use Client.
func (w *World) Store() *objsim.Store { return w.store }

// Client returns the store as actors use it, with their own context: the
// store itself, or, when Config.Machine.Rate is positive, its Deferring
// view (durability deferred as on objstore/fs, lost by a machine crash
// until synced).
func (w *World) Client() objstore.Store {
	if w.cfg.Machine.Rate > 0 {
		return w.store.Deferring()
	}
	return w.store
}

// Clock returns the world's simulated clock.
func (w *World) Clock() Clock { return Clock{w: w} }

// Elapsed returns the simulated time since the world started.
func (w *World) Elapsed() time.Duration { return time.Duration(w.now.Load()) }

// Seed returns the world's seed.
func (w *World) Seed() uint64 { return w.cfg.Seed }

// Quiet reports whether the world is in its quiet phase.
func (w *World) Quiet() bool { return w.quiet }

// Stats returns a copy of the world's counters.
func (w *World) Stats() Stats {
	s := w.stats
	s.Panics = append([]string(nil), w.stats.Panics...)
	s.Panics = append(s.Panics, w.late.list()...)
	return s
}

// Observe installs f, called for every store call once its effect (if any)
// is durable, on the calling actor's goroutine while it holds the baton.
// Checkers use it to learn which actor wrote or deleted which key.
func (w *World) Observe(f func(actor int, c *objsim.Call, applied bool, result error)) { w.observe = f }

// OnCrash installs f, called on the scheduler's goroutine once for every
// actor that crashed (to spawn its restart, for example).
func (w *World) OnCrash(f func(*Actor)) { w.onCrash = f }

// EnterQuietPhase stops every fault: store error faults and latency spikes,
// crashes and failpoints. Base latency stays.
func (w *World) EnterQuietPhase() {
	f := w.cfg.Faults
	f.TransientRate, f.ConflictRate, f.LostAckRate, f.SpikeRate, f.ReadOutageAfterLostAck = 0, 0, 0, 0, 0
	w.store.SetFaults(f)
	w.quiet = true
	w.trace.event("quiet at=%d", w.now.Load())
}

// SuspendFaults turns store faults off (base latency stays) and makes a
// immune to crashes and failpoints until ResumeFaults: a workload's setup
// actor writes its pre-existing state exactly.
func (w *World) SuspendFaults(a *Actor) {
	f := w.cfg.Faults
	f.TransientRate, f.ConflictRate, f.LostAckRate, f.SpikeRate, f.ReadOutageAfterLostAck = 0, 0, 0, 0, 0
	w.store.SetFaults(f)
	a.immune = true
	w.immune = a
	w.trace.event("faults suspended for actor=%d", a.id)
}

// ResumeFaults undoes SuspendFaults (unless the quiet phase began).
func (w *World) ResumeFaults() {
	if !w.quiet {
		w.store.SetFaults(w.cfg.Faults)
	}
	if w.immune != nil {
		w.immune.immune = false
		w.immune = nil
	}
	w.trace.event("faults resumed")
}

// Tick returns the next value of the world's event counter. Histories use it
// as porcupine timestamps: it orders events exactly as they happened.
func (w *World) Tick() int64 {
	w.tick++
	return w.tick
}

// Live reports the actors that are neither done nor crashed, in id order.
func (w *World) Live() []*Actor {
	var out []*Actor
	for _, a := range w.actors {
		if a.state != stateDone && a.state != stateCrashed {
			out = append(out, a)
		}
	}
	return out
}

// Window returns the scheduling window: an actor parked until t runs by
// t + Window (another ready within the window may run first).
func (w *World) Window() time.Duration { return w.cfg.Window }

// Actors returns every actor spawned so far, in id order.
func (w *World) Actors() []*Actor { return append([]*Actor(nil), w.actors...) }

// RunUntil runs the world until no live actor is left or the next one is
// ready only after the simulated time limit (since the world started). It
// reports whether live actors remain.
func (w *World) RunUntil(limit time.Duration) bool {
	if w.stopped.Load() {
		panic("sim: RunUntil after Stop")
	}
	for {
		a := w.pick(int64(limit))
		if a == nil {
			return len(w.Live()) > 0
		}
		if a.readyAt > w.now.Load() {
			w.now.Store(a.readyAt)
		}
		w.stats.Steps++
		if w.maybeCrash(a) {
			continue
		}
		w.trace.sched(a.id, w.now.Load())
		a.state = stateRunning
		a.resume <- struct{}{}
		b := <-w.yield
		if b != a {
			panic(fmt.Sprintf("sim: actor %d yielded while %d held the baton", b.id, a.id))
		}
		if a.state == stateCrashed {
			w.crashed(a, "failpoint")
		}
	}
}

// pick chooses the next actor: the parked actors ready within the window of
// the earliest one, then one of them with the seeded PRNG. It returns nil if
// none is ready by limit.
func (w *World) pick(limit int64) *Actor {
	var first int64 = -1
	for _, a := range w.actors {
		if a.state == stateParked && (first < 0 || a.readyAt < first) {
			first = a.readyAt
		}
	}
	if first < 0 || first > limit {
		return nil
	}
	horizon := first + int64(w.cfg.Window)
	var cands []*Actor
	for _, a := range w.actors {
		if a.state == stateParked && a.readyAt <= horizon && a.readyAt <= limit {
			cands = append(cands, a)
		}
	}
	if len(cands) == 1 {
		return cands[0]
	}
	return cands[w.rng.IntN(len(cands))]
}

// maybeCrash crashes a, parked at a store call, with the configured rate,
// or, with the machine crash rate, crashes the machine.
func (w *World) maybeCrash(a *Actor) bool {
	if w.quiet || a.immune {
		return false
	}
	if m := w.cfg.Machine; m.Rate > 0 && w.immune == nil && w.stats.MachineCrashes < m.Max &&
		(a.point == pointBefore || a.point == pointAfterWrite) && w.rng.Float64() < m.Rate {
		w.machineCrash(a)
		return true
	}
	if w.ownCrashes() >= w.cfg.Crash.Max {
		return false
	}
	var rate float64
	switch a.point {
	case pointBefore:
		rate = w.cfg.Crash.AtCall
	case pointAfterWrite:
		rate = w.cfg.Crash.AfterWrite
	default:
		return false
	}
	if rate <= 0 || w.rng.Float64() >= rate {
		return false
	}
	a.crashed = true
	a.state = stateCrashed
	w.stats.Crashes++
	w.crashed(a, a.point.String())
	return true
}

// machineCrash is a power loss while a is parked at a store call: the
// store loses what was not durable, then every started live actor (parked
// past its start: running processes) crashes, in id order, each told to
// OnCrash.
func (w *World) machineCrash(a *Actor) {
	m := w.cfg.Machine
	rep := w.store.MachineCrash(m.Keep, m.Tear)
	w.stats.MachineCrashes++
	w.stats.Lost += rep.Lost
	w.stats.Reverted += rep.Reverted
	w.stats.Torn += rep.Torn
	w.stats.Kept += rep.Kept
	w.trace.event("machine crash at actor=%d %s t=%d: lost=%d reverted=%d torn=%d kept=%d",
		a.id, a.point, w.now.Load(), rep.Lost, rep.Reverted, rep.Torn, rep.Kept)
	for _, b := range append([]*Actor(nil), w.actors...) {
		if b.state != stateParked || b.point == pointStart {
			continue
		}
		b.crashed = true
		b.state = stateCrashed
		w.stats.Crashes++
		w.victims++
		w.crashed(b, "machine")
	}
}

// ownCrashes counts the crashes CrashConfig.Max bounds: every crashed
// actor but a machine crash's (MachineCrashConfig.Max bounds those).
func (w *World) ownCrashes() int { return w.stats.Crashes - w.victims }

// crashed records a's crash and tells the OnCrash callback.
func (w *World) crashed(a *Actor, where string) {
	w.trace.event("crash actor=%d at=%s t=%d", a.id, where, w.now.Load())
	if w.onCrash != nil {
		w.onCrash(a)
	}
}

// Stop ends the run: every parked call fails (ErrStopped, or ErrCrashed for
// a crashed actor) with no effect, and Stop waits until every actor goroutine
// has exited. It is idempotent.
func (w *World) Stop() {
	if w.stopped.Swap(true) {
		return
	}
	w.trace.event("stop at=%d", w.now.Load())
	w.cancel()
	close(w.done)
	w.wg.Wait()
}

// TraceHash returns the SHA-256 of the run's trace so far.
func (w *World) TraceHash() [32]byte { return w.trace.sum() }

// Trace returns the kept human-readable trace lines (see Config.TraceLines).
func (w *World) Trace() []string { return w.trace.text() }

// Note adds a line to the trace (and its hash) from the running actor or the
// harness: workloads use it to log operations.
func (w *World) Note(format string, args ...any) {
	if w.stopped.Load() {
		return
	}
	w.trace.event(format, args...)
}

// worldHook makes every store call two scheduling points.
type worldHook struct{ w *World }

// BeforeCall parks the calling actor for the first half of the call's
// latency, before any effect.
func (h worldHook) BeforeCall(ctx context.Context, c *objsim.Call) error {
	a, err := h.w.actorOf(ctx)
	if err != nil {
		return err
	}
	if h.w.stopped.Load() {
		return a.stopErr()
	}
	h.w.trace.call(a.id, c)
	return a.park(c.Latency/2, pointBefore)
}

// AfterCall parks the calling actor for the second half of the call's
// latency, after its effect and before it sees the result.
func (h worldHook) AfterCall(ctx context.Context, c *objsim.Call, applied bool, result error) error {
	a, err := h.w.actorOf(ctx)
	if err != nil {
		return err
	}
	if h.w.stopped.Load() {
		return a.stopErr()
	}
	h.w.trace.result(c.Seq, applied, result)
	if h.w.observe != nil {
		h.w.observe(a.id, c, applied, result)
	}
	p := pointAfter
	if applied && (c.Op == objstore.OpPut || c.Op == objstore.OpDelete) {
		p = pointAfterWrite
	}
	return a.park(c.Latency-c.Latency/2, p)
}

// lateRecorder keeps panics that happen after Stop, when several released
// goroutines may run at once.
type lateRecorder struct {
	mu     sync.Mutex
	panics []string
}

func (l *lateRecorder) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.panics = append(l.panics, s)
}

func (l *lateRecorder) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.panics...)
}

// Stopped reports whether Stop was called. Actor code checks it before
// recording anything once its calls start failing.
func (w *World) Stopped() bool { return w.stopped.Load() }
