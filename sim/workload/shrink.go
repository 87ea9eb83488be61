package workload

// Shrink minimizes a failing scenario: it removes whole actors, then ever
// smaller chunks of each actor's operations (delta debugging), then halves
// the fault phase, keeping every change after which the run still fails
// with a violation of the same check as the original failure. It runs at
// most maxRuns scenarios (the seed stays the same) and returns the smallest
// failing scenario found, its result, and the runs spent.
func Shrink(s *Scenario, orig *Result, maxRuns int, run func(*Scenario) *Result) (*Scenario, *Result, int) {
	if len(orig.Violations) == 0 {
		return s, orig, 0
	}
	want := orig.Violations[0].Check
	best, bestRes, runs := s, orig, 0
	try := func(c *Scenario) bool {
		if runs >= maxRuns {
			return false
		}
		runs++
		r := run(c)
		for _, v := range r.Violations {
			if v.Check == want {
				best, bestRes = c, r
				return true
			}
		}
		return false
	}
	for pass := 0; pass < maxShrinkPasses && runs < maxRuns; pass++ {
		before := best
		shrinkActors(&best, &runs, maxRuns, try)
		shrinkOps(&best, &runs, maxRuns, try)
		if best == before {
			break
		}
	}
	for runs < maxRuns && best.FaultPhase > 0 {
		c := best.Clone()
		c.FaultPhase /= 2
		if !try(c) {
			break
		}
	}
	return best, bestRes, runs
}

// maxShrinkPasses bounds the actor-then-ops passes: removing ops can make an
// actor removable, and removing an actor can make ops removable.
const maxShrinkPasses = 4

// shrinkActors tries removing each actor, last first.
func shrinkActors(best **Scenario, runs *int, maxRuns int, try func(*Scenario) bool) {
	for i := len((*best).Actors) - 1; i >= 0 && *runs < maxRuns; i-- {
		c := (*best).Clone()
		c.Actors = append(c.Actors[:i], c.Actors[i+1:]...)
		try(c)
	}
}

// shrinkOps removes ever smaller chunks of each actor's ops.
func shrinkOps(best **Scenario, runs *int, maxRuns int, try func(*Scenario) bool) {
	for i := 0; i < len((*best).Actors) && *runs < maxRuns; i++ {
		for chunk := len((*best).Actors[i].Ops) / 2; chunk >= 1 && *runs < maxRuns; chunk /= 2 {
			for start := 0; start < len((*best).Actors[i].Ops) && *runs < maxRuns; {
				c := (*best).Clone()
				ops := c.Actors[i].Ops
				end := min(start+chunk, len(ops))
				c.Actors[i].Ops = append(ops[:start:start], ops[end:]...)
				if !try(c) {
					start += chunk
				}
			}
		}
	}
}
