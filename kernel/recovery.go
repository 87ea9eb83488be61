package kernel

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RecoveryActor is the actor of every commit recovery publishes.
const RecoveryActor = "recovery"

// RecoveryMessagePrefix starts the message of every recovery commit that
// publishes no writer's intent (a roll-back). A roll-forward commit carries
// the original writer's message instead, with actor RecoveryActor and kind
// recovery.
const RecoveryMessagePrefix = "graphkernel:recovery "

// WriterKindWrite is the writer kind Write records in its sidecars.
const WriterKindWrite = "write"

// RecoveryLease is how old (by the injected clock, from the ULID time of
// its op id) a sidecar must be before a writer's heal-first sweep acts on
// it. Younger sidecars most likely belong to live writers; acting on them is
// safe (every recovery action is fenced) but would make concurrent writers
// undo each other. Both the open-time sweep and the heal-first sweep honour
// the lease (a young sidecar is left and counted as Young); only Recover
// with IgnoreLease acts on every sidecar.
const RecoveryLease = 30 * time.Second

// ErrRecoveryInvariant matches *RecoveryInvariantError.
var ErrRecoveryInvariant = errors.New("kernel: recovery found a broken invariant")

// RecoveryInvariantError reports a table whose HEAD is behind its published
// version: a published table version is missing. Recovery refuses to act;
// the open (or the write whose heal-first met it) fails, and the sidecar
// stays for an operator.
type RecoveryInvariantError struct {
	Op     string // the sidecar's operation id
	Branch string
	Table  string
	Head   uint64
	Pin    uint64
}

// Error implements error.
func (e *RecoveryInvariantError) Error() string {
	return fmt.Sprintf("kernel: recovery of op %s on %s: table %q HEAD %d is behind its published version %d (sidecar kept)",
		e.Op, e.Branch, e.Table, e.Head, e.Pin)
}

// Is makes errors.Is(err, ErrRecoveryInvariant) hold.
func (e *RecoveryInvariantError) Is(target error) bool { return target == ErrRecoveryInvariant }

// RecoverOptions tune Recover.
type RecoverOptions struct {
	// IgnoreLease makes the sweep act on every sidecar, however young.
	// Recovery actions are fenced, so this is never unsafe for the graph,
	// but it undoes (or completes) the in-flight writes of live writers:
	// ask for it only when no other process is writing.
	IgnoreLease bool
}

// RecoveryReport says what one sweep did.
type RecoveryReport struct {
	Resolved int // sidecars resolved (audited and deleted), now or by a concurrent recoverer
	Deferred int // sidecars left for a later pass (partly visible, or the pass budget ran out)
	Young    int // sidecars younger than RecoveryLease, left to their writers
	// Unreadable counts sidecars a heal-first could not read but whose
	// body shows they concern other branches or tables: left, and not an
	// error for this write (the open-time sweep still fails on them).
	Unreadable int
}

// Recover runs the recovery sweep now over every sidecar of the graph, as a
// read-write Open does: sidecars past RecoveryLease (all of them with
// IgnoreLease) are rolled forward or back, each with one audit record. It
// returns a joined error for the sidecars it could not resolve (they stay).
func (g *Graph) Recover(ctx context.Context, opts RecoverOptions) (RecoveryReport, error) {
	if err := g.checkWritable("recover"); err != nil {
		return RecoveryReport{}, err
	}
	return g.sweep(ctx, sweepScope{ignoreLease: opts.IgnoreLease})
}
