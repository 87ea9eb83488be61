package sim

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
)

var testFaults = objsim.Faults{
	TransientRate: 0.05, ConflictRate: 0.05, LostAckRate: 0.05,
	LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond,
	SpikeRate: 0.01, SpikeLatency: time.Second,
}

// counterActor increments a shared CAS counter n times, retrying lost races,
// with think time in between: a small program with real contention.
func counterActor(n int) func(*Actor) error {
	return func(a *Actor) error {
		ctx, st := a.Context(), a.World().Store()
		for i := 0; i < n; i++ {
			for attempt := 0; attempt < 50; attempt++ {
				obj, err := st.Get(ctx, "ctr")
				var cond objstore.Condition
				val := 0
				switch {
				case errors.Is(err, objstore.ErrNotFound):
					cond = objstore.CreateOnly
				case err != nil:
					if errors.Is(err, ErrStopped) || errors.Is(err, ErrCrashed) {
						return err
					}
					continue
				default:
					fmt.Sscan(string(obj.Data), &val)
					cond = objstore.IfMatch(obj.ETag)
				}
				_, err = st.Put(ctx, "ctr", []byte(fmt.Sprint(val+1)), cond)
				if err == nil || objstore.IsAmbiguous(err) {
					break
				}
				if errors.Is(err, ErrStopped) || errors.Is(err, ErrCrashed) {
					return err
				}
			}
			if err := a.Sleep(time.Duration(a.Rand().IntN(500)) * time.Millisecond); err != nil {
				return err
			}
		}
		return nil
	}
}

func runCounters(seed uint64, cfg Config) *World {
	cfg.Seed = seed
	w := New(cfg)
	for i := 0; i < 4; i++ {
		w.Spawn(fmt.Sprintf("counter-%d", i), counterActor(20))
	}
	w.RunUntil(time.Hour)
	w.Stop()
	return w
}

// TestSameSeedSameHash pins determinism: one seed, two runs in one process,
// the same trace hash bit for bit; other seeds give other hashes.
func TestSameSeedSameHash(t *testing.T) {
	cfg := Config{Faults: testFaults, Crash: CrashConfig{AtCall: 0.01, AfterWrite: 0.02, Max: 2}}
	seen := map[[32]byte]uint64{}
	for seed := uint64(1); seed <= 8; seed++ {
		a, b := runCounters(seed, cfg), runCounters(seed, cfg)
		if a.TraceHash() != b.TraceHash() {
			t.Fatalf("seed %d: hashes differ %x vs %x", seed, a.TraceHash(), b.TraceHash())
		}
		if a.Elapsed() != b.Elapsed() || a.Stats().Steps != b.Stats().Steps {
			t.Fatalf("seed %d: runs differ in time or steps", seed)
		}
		if other, dup := seen[a.TraceHash()]; dup {
			t.Fatalf("seeds %d and %d share hash %x", other, seed, a.TraceHash())
		}
		seen[a.TraceHash()] = seed
	}
}

// TestOneActorRunsAtATime pins the baton: no two actors are ever between
// scheduling points at once.
func TestOneActorRunsAtATime(t *testing.T) {
	w := New(Config{Seed: 3, Faults: testFaults})
	var inside, overlaps atomic.Int32
	for i := 0; i < 8; i++ {
		w.Spawn("a", func(a *Actor) error {
			for j := 0; j < 30; j++ {
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				runtime.Gosched() // invite a concurrent actor, if any could run
				inside.Add(-1)
				if _, err := w.Store().Head(a.Context(), "k"); err != nil && !errors.Is(err, objstore.ErrNotFound) &&
					!errors.Is(err, objstore.ErrTransient) {
					return err
				}
			}
			return nil
		})
	}
	w.RunUntil(time.Hour)
	w.Stop()
	if overlaps.Load() != 0 {
		t.Fatalf("%d overlapping actor steps", overlaps.Load())
	}
	for _, a := range w.Actors() {
		if !a.Done() || a.Err() != nil {
			t.Fatalf("actor %d done=%v err=%v", a.ID(), a.Done(), a.Err())
		}
	}
}

// TestClockAdvancesBySleepAndLatency pins the simulated clock: sleeps and
// store latency advance it, and nothing else does.
func TestClockAdvancesBySleepAndLatency(t *testing.T) {
	w := New(Config{Seed: 1, Faults: objsim.Faults{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond}})
	var before, afterSleep, afterCall time.Time
	w.Spawn("sleeper", func(a *Actor) error {
		before = w.Clock().Now()
		if err := a.Sleep(3 * time.Second); err != nil {
			return err
		}
		afterSleep = w.Clock().Now()
		_, err := w.Store().Get(a.Context(), "missing")
		afterCall = w.Clock().Now()
		if !errors.Is(err, objstore.ErrNotFound) {
			return fmt.Errorf("get: %v", err)
		}
		return nil
	})
	w.RunUntil(time.Hour)
	w.Stop()
	if !before.Equal(Epoch) || afterSleep.Sub(before) != 3*time.Second || afterCall.Sub(afterSleep) != 10*time.Millisecond {
		t.Fatalf("times %v %v %v", before, afterSleep, afterCall)
	}
}

// TestCrashedActorHasNoLaterEffects pins crash semantics: a crash right
// after a durable write stops the actor there; Stop releases it with
// ErrCrashed and no goroutine leaks.
func TestCrashedActorHasNoLaterEffects(t *testing.T) {
	base := runtime.NumGoroutine()
	w := New(Config{Seed: 5, Crash: CrashConfig{AfterWrite: 1, Max: 1}})
	var crashedActor *Actor
	w.OnCrash(func(a *Actor) { crashedActor = a })
	victim := w.Spawn("victim", func(a *Actor) error {
		for i := 0; i < 5; i++ {
			if _, err := w.Store().Put(a.Context(), fmt.Sprintf("k/%d", i), []byte("x"), objstore.CreateOnly); err != nil {
				return err
			}
		}
		return nil
	})
	live := w.RunUntil(time.Hour)
	if live || crashedActor != victim || !victim.Crashed() {
		t.Fatalf("live=%v crashed=%v", live, victim.Crashed())
	}
	if keys := w.Store().Keys("k/"); len(keys) != 1 {
		t.Fatalf("keys after crash %v, want exactly the first write", keys)
	}
	w.Stop()
	if keys := w.Store().Keys("k/"); len(keys) != 1 {
		t.Fatalf("keys after stop %v: a crashed actor wrote after its crash", keys)
	}
	waitGoroutines(t, base)
}

// TestStopReleasesParkedActors pins that a run cut short leaks nothing: live
// actors parked mid-sleep and mid-call are released with ErrStopped.
func TestStopReleasesParkedActors(t *testing.T) {
	base := runtime.NumGoroutine()
	w := New(Config{Seed: 9, Faults: testFaults})
	errs := make([]error, 6)
	for i := range errs {
		w.Spawn("looper", func(a *Actor) error {
			for {
				if _, err := w.Store().List(a.Context(), "", "", 1); errors.Is(err, ErrStopped) {
					errs[i] = err
					return err
				}
				if err := a.Sleep(time.Second); err != nil {
					errs[i] = err
					return err
				}
			}
		})
	}
	if !w.RunUntil(time.Minute) {
		t.Fatal("loopers finished on their own")
	}
	w.Stop()
	for i, err := range errs {
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("actor %d ended with %v, want ErrStopped", i, err)
		}
	}
	waitGoroutines(t, base)
}

// TestCallOutsideActorFails pins that a store call escaping the baton is
// refused loudly instead of racing the scheduler.
func TestCallOutsideActorFails(t *testing.T) {
	w := New(Config{Seed: 1})
	defer w.Stop()
	if _, err := w.Store().Get(context.Background(), "k"); !errors.Is(err, ErrNoActor) {
		t.Fatalf("get outside actor: %v", err)
	}
	if err := w.Clock().Sleep(context.Background(), time.Second); !errors.Is(err, ErrNoActor) {
		t.Fatalf("sleep outside actor: %v", err)
	}
}

// TestFailpointCrashStopsActor pins the BUGGIFY path: an enabled site that
// fires a crash stops the actor at its next scheduling point.
func TestFailpointCrashStopsActor(t *testing.T) {
	w := New(Config{Seed: 2, Buggify: BuggifyConfig{SiteProb: 1, FireProb: 1, CrashShare: 1}, Crash: CrashConfig{Max: 1}})
	crashes := 0
	w.OnCrash(func(*Actor) { crashes++ })
	a := w.Spawn("writer", func(a *Actor) error {
		if err := a.Failpoints().Hit(a.Context(), failpoint.BeforePublish); !errors.Is(err, failpoint.ErrCrashed) {
			return fmt.Errorf("hit: %v", err)
		}
		_, err := w.Store().Put(a.Context(), "after", []byte("x"), objstore.CreateOnly)
		return err
	})
	w.RunUntil(time.Hour)
	w.Stop()
	if !a.Crashed() || crashes != 1 || w.Stats().FailpointFires != 1 {
		t.Fatalf("crashed=%v crashes=%d fires=%d", a.Crashed(), crashes, w.Stats().FailpointFires)
	}
	if _, ok := w.Store().Peek("after"); ok {
		t.Fatal("a crashed actor's write landed")
	}
	if len(w.EnabledSites()) != len(failpoint.All())-len(countOnly) || w.sites[failpoint.RidingRedo] {
		t.Fatalf("sites %v", w.EnabledSites())
	}
}

// TestPanicIsRecorded pins that a kernel invariant panic inside an actor is
// a recorded violation, not a crashed test binary.
func TestPanicIsRecorded(t *testing.T) {
	w := New(Config{Seed: 1})
	w.Spawn("boom", func(*Actor) error { panic("invariant broken") })
	w.RunUntil(time.Hour)
	w.Stop()
	if p := w.Stats().Panics; len(p) != 1 {
		t.Fatalf("panics %v", p)
	}
}

// waitGoroutines asserts the goroutine count returns to base. A released
// actor goroutine may still be on its way out when Stop returns, and on a
// loaded machine its OS thread can stay descheduled for a while, so it
// yields a bounded number of times (no sleeps, no wall clock) and counts
// again after taking the stack dump: a goroutine that finished exiting
// while the dump was taken is not a leak (CI once failed with a dump that
// showed no goroutine beyond the test's own).
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	const maxYields = 1_000_000
	for i := 0; i < maxYields && runtime.NumGoroutine() > base; i++ {
		runtime.Gosched()
	}
	if runtime.NumGoroutine() <= base {
		return
	}
	buf := make([]byte, 1<<16)
	dump := buf[:runtime.Stack(buf, true)]
	if n := runtime.NumGoroutine(); n > base {
		t.Fatalf("%d goroutines leaked:\n%s", n-base, dump)
	}
}
