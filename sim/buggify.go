package sim

import (
	"math/rand/v2"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

// countOnly are catalogued sites the simulator reads as counters
// (World.FailpointHits) and BUGGIFY never enables: failpoint.RidingRedo
// marks a round redone over the riding budget, where an injected error or
// crash would only repeat what BeforePublish injects, and leaving it out
// of chooseSites' draws keeps the schedules of every seed as they were.
var countOnly = map[failpoint.Name]bool{failpoint.RidingRedo: true}

// chooseSites decides, once per run, which failpoint sites BUGGIFY enables.
// It draws one value per catalogued site in sorted order (countOnly
// aside), whatever the configuration, so the scheduler's stream does not
// depend on it.
func chooseSites(rng *rand.Rand, cfg BuggifyConfig) map[failpoint.Name]bool {
	sites := map[failpoint.Name]bool{}
	for _, n := range failpoint.All() {
		if countOnly[n] {
			continue
		}
		if rng.Float64() < cfg.SiteProb {
			sites[n] = true
		}
	}
	return sites
}

// EnabledSites lists the failpoint sites BUGGIFY enabled for this run, in
// sorted order.
func (w *World) EnabledSites() []failpoint.Name {
	var out []failpoint.Name
	for _, n := range failpoint.All() {
		if w.sites[n] {
			out = append(out, n)
		}
	}
	return out
}

// newFailpoints returns a's failpoint set: a crash action crashes a, and the
// decider fires enabled sites with the seeded rate during the fault phase.
func (w *World) newFailpoints(a *Actor) *failpoint.Set {
	s := failpoint.NewSet()
	s.OnCrash(func() {
		if w.stopped.Load() || a.crashed {
			return
		}
		a.crashed = true
		w.stats.Crashes++
	})
	s.SetDecider(func(n failpoint.Name) (failpoint.Action, bool) {
		return w.decide(a, n)
	})
	return w.track(s)
}

// decide is the BUGGIFY decider. It runs on the running actor's goroutine,
// so it may draw from the world's PRNG.
func (w *World) decide(a *Actor, n failpoint.Name) (failpoint.Action, bool) {
	if w.stopped.Load() || w.quiet || a.immune || !w.sites[n] {
		return failpoint.Action{}, false
	}
	if w.rng.Float64() >= w.cfg.Buggify.FireProb {
		return failpoint.Action{}, false
	}
	w.stats.FailpointFires++
	crash := w.rng.Float64() < w.cfg.Buggify.CrashShare && w.ownCrashes() < w.cfg.Crash.Max
	w.trace.event("failpoint actor=%d site=%s crash=%t", a.id, n, crash)
	if crash {
		return failpoint.Action{Kind: failpoint.Crash}, true
	}
	return failpoint.Action{Kind: failpoint.ReturnError}, true
}
