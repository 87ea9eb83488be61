package objstore

import (
	"errors"
	"fmt"
)

// Sentinel error kinds. Every error a Store returns is an *Error whose Kind is
// one of these, so callers branch with errors.Is.
var (
	// ErrNotFound: the key does not exist. The only benign absence.
	ErrNotFound = errors.New("objstore: not found")
	// ErrPreconditionFailed: a conditional Put's condition did not hold
	// (S3 412, or 404 on a replace-if-match). Final: re-read before acting.
	ErrPreconditionFailed = errors.New("objstore: precondition failed")
	// ErrConflict: a concurrent conditional request collided
	// (S3 409 ConditionalRequestConflict). Transient: retry.
	ErrConflict = errors.New("objstore: conflict")
	// ErrTransient: timeouts, 5xx, throttling. Retry with backoff.
	ErrTransient = errors.New("objstore: transient failure")
	// ErrRejected: the backend refused the request and retrying will not
	// help: permission denied, bad request, corrupt stored object,
	// read-only filesystem, missing bucket. Final, not retryable: report
	// it. A read is
	// never ambiguous; a write is only if the refusal may have come after
	// the write was applied (no backend here does that: every refusal it
	// maps is decided before the write takes effect).
	ErrRejected = errors.New("objstore: request rejected")
	// ErrInvalidKey: the key breaks the key rules (see ValidateKey).
	// Returned before any I/O.
	ErrInvalidKey = errors.New("objstore: invalid key")
	// ErrAmbiguous marks an outcome that may or may not have been applied,
	// for example a timeout after a PUT was sent, or a lost acknowledgement.
	// It always accompanies another kind (usually ErrTransient). Resolve it
	// by reading back; never guess.
	ErrAmbiguous = errors.New("objstore: outcome ambiguous")
)

// ErrCorruptObject is a cause, never a Kind: a read of an object whose
// stored bytes fail the backend's own integrity check (fs: a file whose
// header or checksum is wrong, as a crash leaves an object written with
// PutDeferred and never synced, or as damage leaves any). Its Kind is
// ErrRejected: a retry reads the same bytes. A caller that may treat an
// object it never made durable as absent tells it apart with errors.Is.
var ErrCorruptObject = errors.New("objstore: stored object fails its integrity check")

// ErrSyncFailed is a cause, never a Kind: making a deferred object durable
// failed (fs: an fsync returned an error, EIO after a failed writeback),
// so its bytes may never reach the disk, and a later sync of the same
// object cannot be trusted to say otherwise (Linux reports a writeback
// error once, then lets fsync succeed over pages it marked clean). Its
// Kind is ErrTransient: the caller may write the object again (a fresh
// write, under a fresh name) and retry. A store that defers durability
// remembers the keys of a failed sync and fails every later sync naming
// one with this cause again, until the key is written again
// (objstore.DeferredPutter); a caller never publishes an object whose
// sync failed by syncing it again. The same cause marks a delete whose
// unlink could not be made durable (fs: its directory's fsync failed,
// an ambiguous ErrTransient; a later delete that finds the key absent
// returns this cause, definite, until the key is written again): a crash
// may bring such an object back, so a caller never takes the retried
// delete for a durable one; writing the key again and deleting it makes
// the delete durable.
var ErrSyncFailed = errors.New("objstore: a deferred object could not be made durable")

// Op names the store operation an error came from.
type Op string

// The operations of Store.
const (
	OpGet    Op = "get"
	OpHead   Op = "head"
	OpList   Op = "list"
	OpPut    Op = "put"
	OpDelete Op = "delete"
)

// Error is the one error type every Store returns. It carries the operation,
// the key, the kind (one of the sentinels above), whether the outcome is
// ambiguous, and the underlying cause.
type Error struct {
	Op        Op
	Key       string
	Kind      error
	Ambiguous bool
	Err       error
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %q: %v", e.Op, e.Key, e.Kind)
	if e.Ambiguous {
		msg += " (outcome ambiguous: may have been applied)"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap exposes the kind, ErrAmbiguous when set, and the cause to errors.Is
// and errors.As.
func (e *Error) Unwrap() []error {
	out := make([]error, 0, 3)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Ambiguous {
		out = append(out, ErrAmbiguous)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// NewError builds an *Error of the given kind.
func NewError(op Op, key string, kind error, cause error) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Err: cause}
}

// NewAmbiguousError builds an *Error of the given kind whose outcome may or
// may not have been applied.
func NewAmbiguousError(op Op, key string, kind error, cause error) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Ambiguous: true, Err: cause}
}

// IsAmbiguous reports whether err says the request may have been applied.
func IsAmbiguous(err error) bool { return errors.Is(err, ErrAmbiguous) }

// IsRetryable reports whether err is a transient kind (conflict or transient)
// that a caller may retry after backoff. An ambiguous write must be resolved
// by reading back before it is retried. Every other kind is final:
// ErrNotFound and ErrPreconditionFailed are answers, ErrInvalidKey and
// ErrRejected are refusals that a retry would only repeat, so a caller
// returns them (wrapped) at once instead of spending its retry budget.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrTransient)
}
