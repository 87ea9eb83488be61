// Package check holds the simulator's checkers: the recorded history and its
// linearizability check with porcupine (against the models in package
// model), and the structural invariants read straight from the store's
// durable state with kernel/format, independently of the kernel's own read
// paths.
//
// Every checker returns Violations; it never panics on bad data, because bad
// data is exactly what it exists to report.
//
// The linearizability check runs porcupine, which uses goroutines and a
// wall-clock timeout: it runs after a simulation, outside the deterministic
// world, and its verdict never feeds a trace hash. A verdict of Unknown (the
// timeout expired) counts as a failure.
package check

import "fmt"

// Violation is one broken invariant.
type Violation struct {
	// Check names the invariant (stable, used in summaries).
	Check string
	// Detail says what was observed.
	Detail string
}

// String renders the violation on one line.
func (v Violation) String() string { return v.Check + ": " + v.Detail }

func violation(check, format string, args ...any) Violation {
	return Violation{Check: check, Detail: fmt.Sprintf(format, args...)}
}
