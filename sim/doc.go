// Package sim is graphkernel's deterministic simulator: a world of simulated
// processes (actors) sharing one objstore/sim store, driven by a seeded
// scheduler over a simulated clock.
//
// # Baton passing
//
// Every actor runs on its own goroutine, but exactly one actor runs at a
// time. An actor gives the baton back to the scheduler at every scheduling
// point:
//
//   - every object-store call, twice: when it is issued (before any effect)
//     and when its effect is durable (before the caller sees the result);
//   - every Clock.Sleep.
//
// The scheduler then picks the next actor: among the parked actors whose
// ready time is within Config.Window of the earliest one, it picks one with
// the seeded PRNG and advances the clock to its ready time. A store call's
// simulated latency (drawn by the store) is split between its two points.
//
// The world reads no wall clock, no global random source and no environment,
// and no map order reaches a decision, so a seed determines the whole run.
// Every scheduling decision and every store call with its result feeds a
// running SHA-256: TraceHash. Two runs of one seed, in one process or in two,
// give the same hash bit for bit.
//
// # Crashes
//
// At a store-call scheduling point during the fault phase the scheduler may
// crash the parked actor (Config.Crash): after the effect of a write it is a
// crash at a durable cut. A failpoint armed to crash crashes the running
// actor at its next scheduling point. A crashed actor is never resumed, so it
// makes no durable effect after its crash point, and its in-memory state is
// gone. Stop releases every parked goroutine by failing its parked call with
// ErrStopped (or ErrCrashed), and waits for all of them to exit.
//
// # Using it
//
//	p, _ := sim.Profile("default")
//	w := sim.New(p.Apply(sim.Config{Seed: 7}))
//	w.Spawn("writer", func(a *sim.Actor) error {
//		_, err := w.Store().Put(a.Context(), "k", []byte("v"), objstore.CreateOnly)
//		return err
//	})
//	w.RunUntil(time.Minute)
//	w.Stop()
//	fmt.Printf("%x\n", w.TraceHash())
package sim
