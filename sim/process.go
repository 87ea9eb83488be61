package sim

import "github.com/graphkernel/graphkernel/kernel/failpoint"

// A simulated process may run several actors that share one handle (the
// goroutines of one service: group commit needs callers that share a
// data handle). Such a process dies whole: when one of its actors crashes,
// the workload's crash callback kills the others with Kill. Their shared
// handle draws its failpoints from SharedFailpoints, which acts for
// whichever actor is running.

// Kill crashes b, a parked actor, because another actor of its process
// crashed: b never runs again and its in-flight call never returns, as
// after a crash at a store call. It counts no crash of its own and calls
// no OnCrash callback (the caller is that callback). A running, done or
// crashed actor is left as it is (only the scheduler's goroutine calls
// Kill, while no actor runs).
func (w *World) Kill(b *Actor) {
	if b.state != stateParked {
		return
	}
	b.crashed = true
	b.state = stateCrashed
	w.trace.event("kill actor=%d t=%d", b.id, w.now.Load())
}

// SharedFailpoints returns a failpoint set for a handle shared by several
// actors: the BUGGIFY decider and a crash action act for the actor running
// when the site is reached (exactly one runs at a time), as each actor's
// own set (Actor.Failpoints) does for it.
func (w *World) SharedFailpoints() *failpoint.Set {
	s := failpoint.NewSet()
	s.OnCrash(func() {
		a := w.running()
		if a == nil || w.stopped.Load() || a.crashed {
			return
		}
		a.crashed = true
		w.stats.Crashes++
	})
	s.SetDecider(func(n failpoint.Name) (failpoint.Action, bool) {
		a := w.running()
		if a == nil {
			return failpoint.Action{}, false
		}
		return w.decide(a, n)
	})
	return w.track(s)
}

// running returns the actor holding the baton, or nil.
func (w *World) running() *Actor {
	for _, a := range w.actors {
		if a.state == stateRunning {
			return a
		}
	}
	return nil
}
