package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// QuarantineActor is the actor of every quarantine record.
const QuarantineActor = "quarantine"

// UnreadableSidecarError reports a recovery sidecar the sweep cannot read:
// corrupt (matches ErrCorrupt) or of a newer format (matches
// ErrUnsupportedFormat). The sidecar is kept untouched. It fails the open
// and the writes it could concern: those on its branch and tables, or every
// write when its scope cannot be read either. An operator who has checked
// that no newer binary will recover it moves it aside with
// Graph.QuarantineSidecar; a newer-format sidecar is resolved by opening the
// graph with a binary that reads its format.
type UnreadableSidecarError struct {
	Key string // the sidecar's key
	Op  string // its operation id
	Err error  // why it cannot be read

	raw []byte // the bytes read, for the scope probe
}

// Error implements error.
func (e *UnreadableSidecarError) Error() string {
	return fmt.Sprintf("kernel: recovery: sidecar %s cannot be read and is kept (%v); open the graph with a binary that reads it, "+
		"or move it aside with QuarantineSidecar(op %s), which keeps its bytes in a quarantine record", e.Key, e.Err, e.Op)
}

// Unwrap returns the cause.
func (e *UnreadableSidecarError) Unwrap() error { return e.Err }

// QuarantineSidecar moves aside the sidecar of op that recovery cannot read
// (corrupt or of a newer format): it writes the quarantine record
// R/quarantine/<op> create-only, holding the sidecar's bytes as stored, the
// reason and the time, and only then deletes the sidecar, so a crash in
// between leaves both and a retry finishes. The versions the sidecar's
// write left above their pins stay (they are never visible). A sidecar
// recovery can read is refused with ErrInvalidArgument: Recover resolves it.
// An absent sidecar is ErrNotFound.
func (g *Graph) QuarantineSidecar(ctx context.Context, op CommitID, reason string) error {
	if err := g.checkWritable("quarantine sidecar"); err != nil {
		return err
	}
	ctx = g.withOpBudget(ctx, "quarantine sidecar")
	key := g.keys.Sidecar(op)
	var obj objstore.Object
	err := g.withRetry(ctx, "read sidecar", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if err != nil {
		return storeNotFound("quarantine sidecar "+key, err)
	}
	if s, _, err := format.DecodeSidecar(obj.Data); err == nil && s.Op == op {
		return fmt.Errorf("quarantine sidecar %s: %w: it is readable; Recover resolves it", key, ErrInvalidArgument)
	}
	q := format.Quarantine{Op: op, Reason: reason, Actor: QuarantineActor, TimeUnixNano: g.clock.Now().UnixNano(), Sidecar: obj.Data}
	if err := format.ValidateQuarantine(&q); err != nil {
		return fmt.Errorf("quarantine sidecar %s: %w: %v", key, ErrInvalidArgument, err)
	}
	if err := g.writeQuarantine(ctx, &q); err != nil {
		return err
	}
	return g.deleteSidecar(ctx, op)
}

// writeQuarantine writes q create-only; a record already there (an earlier
// quarantine that crashed before its delete) must hold the same sidecar
// bytes.
func (g *Graph) writeQuarantine(ctx context.Context, q *format.Quarantine) error {
	tok, err := g.token()
	if err != nil {
		return err
	}
	data, err := format.EncodeQuarantine(q, tok)
	if err != nil {
		return fmt.Errorf("quarantine sidecar of op %s: %w", q.Op, err)
	}
	key := g.keys.Quarantine(q.Op)
	ours, err := g.putCreateOnly(ctx, "write quarantine record", key, data)
	if err != nil || ours {
		return err
	}
	var obj objstore.Object
	if err := g.withRetry(ctx, "read quarantine record", func() (err error) { obj, err = g.store.Get(ctx, key); return err }); err != nil {
		return fmt.Errorf("read quarantine record %s: %w", key, err)
	}
	prev, _, err := format.DecodeQuarantine(obj.Data)
	if err != nil {
		return fmt.Errorf("quarantine record %s: %w", key, err)
	}
	if !bytes.Equal(prev.Sidecar, q.Sidecar) {
		return fmt.Errorf("quarantine record %s holds other sidecar bytes: %w", key, ErrCorrupt)
	}
	return nil
}

// asUnreadable reports whether err is an unreadable sidecar.
func asUnreadable(err error) (*UnreadableSidecarError, bool) {
	var ue *UnreadableSidecarError
	ok := errors.As(err, &ue)
	return ue, ok
}
