package gc

import (
	"math"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// This file is docs/gc.md §7's progress rule: a collection bounded in
// time (or in deletes) reaches every sweep. Its marking completes first;
// then each category's deletes take at most a share of what is left, so a
// run cut short in one category still deletes in every later one. A
// manifest sweep cut short leaves garbage manifests whose pins later
// categories may delete; its collection record then binds Pins on them
// until they are gone (Leftover).

// SweepShare is what the next category of a collection's deletes may use,
// with left categories still to sweep (this one included): until its
// deadline — now plus an equal share of the time to until, the run's last
// delete time — and at most deletes of the budget (an equal share, rounded
// up). Unused shares pass on: the next call divides what is left again.
// left <= 1 gets everything left.
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

// Leftover is rec rewritten by a collector whose manifest sweep stopped
// with the planned manifests left still present, before it deletes
// anything of a later category (whose objects those manifests may name):
// its plan becomes left's ranges (rec's plan if they exceed
// format.MaxPlanRanges) and it never goes stale, so every Pin of a left
// manifest answers ErrReclaimed (PinReclaimed) until a later collection
// finds each of them gone and deletes the record (LeftoverGone).
func Leftover(rec format.Collection, left []format.ManifestRef) format.Collection {
	out := rec
	out.State = format.CollectionDeleting
	if plan := PlanOf(left); len(plan) <= format.MaxPlanRanges {
		out.Plan = plan
	}
	out.ExpiresUnixNano, out.SkewMarginNanos = math.MaxInt64, 0
	return out
}

// IsLeftover reports whether rec was written by Leftover.
func IsLeftover(rec format.Collection) bool {
	return rec.State == format.CollectionDeleting && rec.ExpiresUnixNano == math.MaxInt64 && rec.SkewMarginNanos == 0
}

// LeftoverGone reports whether a leftover record binds nothing any more:
// no manifest of its plan is present. present answers for one
// incarnation's version from a listing made after the record was read as
// a leftover (its manifests were listed by its collector before that, and
// a manifest key is never written again once deleted), less what the
// listing collection deleted since.
func LeftoverGone(rec format.Collection, present func(inc IncKey, from, to uint64) bool) bool {
	if !IsLeftover(rec) {
		return false
	}
	for _, r := range rec.Plan {
		if present(IncKey{Name: r.Branch, Inc: r.Incarnation}, r.From, r.To) {
			return false
		}
	}
	return true
}
