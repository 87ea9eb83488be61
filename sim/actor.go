package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

type actorState uint8

const (
	stateParked actorState = iota
	stateRunning
	stateDone
	stateCrashed
)

// point says where a parked actor waits; crashes happen only at store calls.
type point uint8

const (
	pointStart point = iota
	pointBefore
	pointAfter
	pointAfterWrite
	pointSleep
)

func (p point) String() string {
	return [...]string{"start", "before-call", "after-call", "after-write", "sleep"}[p]
}

// Actor is one simulated process. Its goroutine runs only while it holds the
// baton; every store call it makes with Context() and every Clock.Sleep is a
// scheduling point.
type Actor struct {
	w       *World
	id      int
	name    string
	ctx     context.Context
	resume  chan struct{}
	readyAt int64
	point   point
	state   actorState
	crashed bool
	immune  bool // see World.SuspendFaults
	rng     *rand.Rand
	entropy *entropyReader
	fp      *failpoint.Set
	err     error
}

type actorKey struct{}

// Spawn starts an actor running fn, ready now. See SpawnAfter.
func (w *World) Spawn(name string, fn func(*Actor) error) *Actor {
	return w.SpawnAfter(0, name, fn)
}

// SpawnAfter starts an actor that first runs after the simulated delay d.
// Its goroutine blocks until the scheduler hands it the baton. fn's error is
// kept (see Err); a panic in fn is recorded in Stats().Panics.
func (w *World) SpawnAfter(d time.Duration, name string, fn func(*Actor) error) *Actor {
	if len(w.actors) >= MaxActors {
		panic(fmt.Sprintf("sim: more than %d actors", MaxActors))
	}
	a := &Actor{
		w:       w,
		id:      len(w.actors),
		name:    name,
		resume:  make(chan struct{}),
		readyAt: w.now.Load() + int64(max(d, 0)),
		point:   pointStart,
		state:   stateParked,
	}
	s1, s2 := w.actorSeeds(name)
	a.rng = rand.New(rand.NewPCG(s1, 0x776f726b6c6f6164))                      // "workload"
	a.entropy = &entropyReader{r: rand.New(rand.NewPCG(s2, 0x656e74726f7079))} // "entropy"
	a.ctx = context.WithValue(w.ctx, actorKey{}, a)
	a.fp = w.newFailpoints(a)
	w.actors = append(w.actors, a)
	w.stats.Spawned++
	w.trace.event("spawn actor=%d name=%s ready=%d", a.id, name, a.readyAt)
	w.wg.Add(1)
	startGoroutine(a, fn)
	return a
}

// startGoroutine starts an actor's goroutine; set in goroutine.go.
var startGoroutine func(a *Actor, fn func(*Actor) error)

// actorSeeds derives an actor's two PRNG seeds from the world seed and the
// actor's name (and how many actors had that name before), not from the
// scheduler's stream: removing one actor from a scenario (shrinking) leaves
// every other actor's random choices unchanged.
func (w *World) actorSeeds(name string) (uint64, uint64) {
	w.names[name]++
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", w.cfg.Seed, name, w.names[name])
	s := h.Sum64()
	return s, s ^ 0x9e3779b97f4a7c15
}

// main is the actor goroutine: wait for the baton, run fn, hand back.
func (a *Actor) main(fn func(*Actor) error) {
	w := a.w
	defer w.wg.Done()
	select {
	case <-a.resume:
	case <-w.done:
		return
	}
	err := a.call(fn)
	if w.stopped.Load() {
		return
	}
	a.err = err
	if a.crashed {
		a.state = stateCrashed
	} else {
		a.state = stateDone
		w.trace.event("exit actor=%d err=%s", a.id, errClass(err))
	}
	w.yield <- a
}

// call runs fn and turns a panic into a recorded violation.
func (a *Actor) call(fn func(*Actor) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("actor %d (%s) panicked: %v", a.id, a.name, r)
			if a.w.stopped.Load() {
				a.w.late.add(msg)
			} else {
				a.w.stats.Panics = append(a.w.stats.Panics, msg)
				a.w.trace.event("panic actor=%d: %v", a.id, r)
			}
			err = fmt.Errorf("sim: %s", msg)
		}
	}()
	return fn(a)
}

// park hands the baton back and waits to be resumed d after now.
func (a *Actor) park(d time.Duration, p point) error {
	w := a.w
	if w.stopped.Load() {
		return a.stopErr()
	}
	if a.crashed { // a failpoint crashed it while it ran
		a.state = stateCrashed
		w.yield <- a
		<-w.done
		return ErrCrashed
	}
	a.readyAt = w.now.Load() + int64(max(d, 0))
	a.point = p
	a.state = stateParked
	w.yield <- a
	select {
	case <-a.resume:
		return nil
	case <-w.done:
		return a.stopErr()
	}
}

func (a *Actor) stopErr() error {
	if a.crashed {
		return ErrCrashed
	}
	return ErrStopped
}

func (w *World) actorOf(ctx context.Context) (*Actor, error) {
	a, ok := ctx.Value(actorKey{}).(*Actor)
	if !ok || a.w != w {
		return nil, ErrNoActor
	}
	return a, nil
}

// ActorOf returns the actor a context belongs to, or nil.
func ActorOf(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// ID returns the actor's index in the world, from 0.
func (a *Actor) ID() int { return a.id }

// Name returns the name the actor was spawned with.
func (a *Actor) Name() string { return a.name }

// World returns the actor's world.
func (a *Actor) World() *World { return a.w }

// Context returns the context every store call and sleep of the actor must
// use: it identifies the actor to the scheduler and ends when the world
// stops.
func (a *Actor) Context() context.Context { return a.ctx }

// Rand returns the actor's own seeded PRNG for workload decisions.
func (a *Actor) Rand() *rand.Rand { return a.rng }

// Entropy returns the actor's seeded entropy stream (for kernel.Env).
func (a *Actor) Entropy() io.Reader { return a.entropy }

// Failpoints returns the actor's failpoint set, driven by the world's
// BUGGIFY decider; a Crash action crashes this actor.
func (a *Actor) Failpoints() *failpoint.Set { return a.fp }

// Crashed reports whether the actor crashed. A crashed actor's in-flight
// operation never returns to its client.
func (a *Actor) Crashed() bool { return a.crashed }

// Done reports whether the actor's function returned (without crashing).
func (a *Actor) Done() bool { return a.state == stateDone }

// Err returns the error the actor's function returned.
func (a *Actor) Err() error { return a.err }

// Sleep parks the actor for d of simulated time (a scheduling point).
func (a *Actor) Sleep(d time.Duration) error { return a.w.Clock().Sleep(a.ctx, d) }

// Clock is the world's simulated clock. It satisfies kernel.Clock.
type Clock struct{ w *World }

// Now returns Epoch plus the simulated time elapsed.
func (c Clock) Now() time.Time { return Epoch.Add(time.Duration(c.w.now.Load())) }

// Sleep parks the actor of ctx for d (negative d counts as zero): a
// scheduling point. It fails with ErrStopped or ErrCrashed once the world
// stopped, and with ErrNoActor if ctx carries no actor of this world.
func (c Clock) Sleep(ctx context.Context, d time.Duration) error {
	a, err := c.w.actorOf(ctx)
	if err != nil {
		return err
	}
	if c.w.stopped.Load() {
		return a.stopErr()
	}
	c.w.trace.sleep(a.id, d)
	return a.park(d, pointSleep)
}

// entropyReader turns a seeded PRNG into an io.Reader.
type entropyReader struct{ r *rand.Rand }

// Read fills p with seeded bytes; it never fails.
func (e *entropyReader) Read(p []byte) (int, error) {
	var buf [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(buf[:], e.r.Uint64())
		copy(p[i:], buf[:])
	}
	return len(p), nil
}
