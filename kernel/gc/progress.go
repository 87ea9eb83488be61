package gc

import "time"

// SweepShare is docs/gc.md §7's progress rule, what the next category of
// a collection's deletes may use, with left categories still to sweep
// (this one included): until its deadline — now plus an equal share of
// the time to until, the run's last delete time — and at most deletes of
// the budget (an equal share, rounded up). Unused shares pass on: the
// next call divides what is left again. left <= 1 gets everything left.
// So a run cut short in one category still deletes in every later one.
func SweepShare(now, until time.Time, budget, left int) (deadline time.Time, deletes int) {
	if left <= 1 || budget <= 0 {
		return until, max(budget, 0)
	}
	if until.After(now) {
		deadline = now.Add(until.Sub(now) / time.Duration(left))
	} else {
		deadline = until
	}
	return deadline, (budget + left - 1) / left
}

// SweepStart is where a collection starts walking n candidates whose
// order across them does not matter (names in the manifest sweep, garbage
// table versions), from a random draw: concurrent collections, which list
// the same garbage, then start on different parts of it instead of
// repeating each other's deletes in the same order.
func SweepStart(n int, draw uint64) int {
	if n <= 0 {
		return 0
	}
	return int(draw % uint64(n))
}
