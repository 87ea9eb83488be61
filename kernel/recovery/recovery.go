// Package recovery holds the pure decisions of graphkernel's crash recovery:
// how one table of a recovery sidecar is classified against the live branch
// state, what the sweep does with the sidecar as a whole, and which tables a
// roll-back must restore. Nothing here performs I/O, reads a clock or draws
// entropy, which is what lets rapid test the decision table exhaustively;
// the kernel gathers the observations and carries the decision out.
package recovery

// Class is how one table of a sidecar stands against the live branch.
type Class uint8

// The table classes.
const (
	// NoMovement: the table's HEAD equals the manifest pin; nothing of the
	// write is dangling on it.
	NoMovement Class = iota + 1
	// RolledPast: HEAD is exactly the version the sidecar said it would
	// commit (carrying the sidecar's writer token) and the pin is still the
	// one the write was planned on.
	RolledPast
	// Unexpected: HEAD is anywhere else (someone else's version, a
	// restore, or ours with the pin moved underneath it).
	Unexpected
	// Violation: HEAD is behind the manifest pin — a published version is
	// missing. Recovery must not touch this graph.
	Violation
	// Published: the sidecar's version is, or was, pinned by a manifest
	// since the write was planned: the intent is already in the chain.
	Published
)

// String names the class.
func (c Class) String() string {
	switch c {
	case NoMovement:
		return "no-movement"
	case RolledPast:
		return "rolled-past-expected"
	case Unexpected:
		return "unexpected"
	case Violation:
		return "invariant-violation"
	case Published:
		return "published"
	}
	return "invalid-class"
}

// Observation is what the sweep saw of one sidecar table.
type Observation struct {
	Expected uint64 // sidecar: the pin the write was planned on (0: unpinned)
	Commit   uint64 // sidecar: the version the write commits
	Pin      uint64 // live manifest pin (0: unpinned)
	Head     uint64 // live HEAD on the sidecar's fork, or the pin if the fork is behind an inherited pin
	// HeadOurs: the version at Head carries the sidecar's writer token.
	HeadOurs bool
	// Published: some manifest since the sidecar's base pinned exactly the
	// sidecar's version with the sidecar's token.
	Published bool
}

// Classify returns the class of one observed table. It is total: every
// observation has exactly one class.
func Classify(o Observation) Class {
	switch {
	case o.Head < o.Pin:
		return Violation
	case o.Published:
		return Published
	case o.Head == o.Pin:
		return NoMovement
	case o.Head == o.Commit && o.HeadOurs && o.Pin == o.Expected:
		return RolledPast
	}
	return Unexpected
}

// Decision is what the sweep does with one sidecar.
type Decision uint8

// The decisions.
const (
	// Fail: some table is an invariant violation. The open fails loudly
	// and the sidecar stays.
	Fail Decision = iota + 1
	// Finish: every table is Published. Write the (presence-checked) audit
	// and delete the sidecar; publish nothing.
	Finish
	// Defer: some but not all tables are Published — the intent is only
	// partly visible, which one atomic publish can never produce. Leave
	// the sidecar for the next pass; the open still succeeds.
	Defer
	// RollForward: every table RolledPast. Publish the sidecar's versions
	// with expectations that every pin is still the planned one.
	RollForward
	// RollBack: anything else. Restore every table that needs it (see
	// NeedsRestore) by writing a new version, then publish once.
	RollBack
)

// String names the decision.
func (d Decision) String() string {
	switch d {
	case Fail:
		return "fail"
	case Finish:
		return "finish"
	case Defer:
		return "defer"
	case RollForward:
		return "roll-forward"
	case RollBack:
		return "roll-back"
	}
	return "invalid-decision"
}

// Decide returns the decision for a sidecar whose tables have classes. When
// abandon is set (the writer itself gives up on its own write), a sidecar
// that would roll forward rolls back instead. It panics on an empty class
// list: a sidecar names at least one table.
func Decide(classes []Class, abandon bool) Decision {
	if len(classes) == 0 {
		panic("recovery: Decide: a sidecar names at least one table")
	}
	count := map[Class]int{}
	for _, c := range classes {
		if c < NoMovement || c > Published {
			panic("recovery: Decide: invalid class")
		}
		count[c]++
	}
	n := len(classes)
	switch {
	case count[Violation] > 0:
		return Fail
	case count[Published] == n:
		return Finish
	case count[Published] > 0:
		return Defer
	case count[RolledPast] == n && !abandon:
		return RollForward
	}
	return RollBack
}

// NeedsRestore reports whether a roll-back must write a restore version on
// top of the table's HEAD: when HEAD runs ahead of the pin (something
// dangles), or when HEAD is still below the sidecar's commit version (the
// restore then occupies that version, so a still-live writer's create-only
// table write can never land and its publish can never succeed).
func NeedsRestore(o Observation) bool {
	return o.Head > o.Pin || o.Head < o.Commit
}
