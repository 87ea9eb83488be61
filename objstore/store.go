// Package objstore is the one narrow interface through which graphkernel
// persists everything: a flat key space of immutable-or-CAS-replaced objects
// with S3 semantics. Three backends implement it (objstore/sim, objstore/fs,
// objstore/s3) and one conformance suite (objstore/storetest) pins that they
// mean the same thing.
//
// ETags: a successful write always yields an ETag that identifies the stored
// version well enough for If-Match. On S3 the ETag is a content MD5, so a
// rewrite of identical bytes keeps the same ETag. Callers must therefore not
// rely on ETags for ABA safety: every object the kernel writes carries its own
// unique writer token, and identity questions are answered by that token.
//
// Errors: every Store error is an *Error whose kind says what a caller may
// do next. ErrNotFound is the only benign absence. ErrPreconditionFailed is
// final: re-read before acting. ErrConflict and ErrTransient are retryable
// after backoff (IsRetryable). ErrInvalidKey is returned before any I/O.
// ErrRejected means the backend refused the request for good (permission
// denied, bad request, corrupt stored object, read-only filesystem, missing
// bucket): not retryable, report it. ErrAmbiguous accompanies a write whose
// outcome is unknown; resolve it by reading back, never by guessing.
package objstore

import "context"

// MaxListLimit is the largest page List returns.
const MaxListLimit = 1000

// CondKind says which precondition a Put carries.
type CondKind uint8

// The three Put conditions.
const (
	// CondNone writes unconditionally.
	CondNone CondKind = iota
	// CondCreateOnly writes only if the key does not exist
	// (S3 If-None-Match: *).
	CondCreateOnly
	// CondIfMatch replaces only if the current ETag equals Condition.ETag
	// (S3 If-Match). A missing key fails the condition.
	CondIfMatch
)

// Condition is the precondition of a Put.
type Condition struct {
	Kind CondKind
	ETag string // for CondIfMatch only
}

// Unconditional is the Condition of a plain overwrite.
var Unconditional = Condition{Kind: CondNone}

// CreateOnly is the Condition of a write that must not replace anything.
var CreateOnly = Condition{Kind: CondCreateOnly}

// IfMatch is the Condition of a compare-and-swap against etag.
func IfMatch(etag string) Condition { return Condition{Kind: CondIfMatch, ETag: etag} }

// Object is what Get returns.
type Object struct {
	Data []byte
	ETag string
}

// Attrs is what Head returns.
type Attrs struct {
	Size int64
	ETag string
}

// ListPage is one page of List.
type ListPage struct {
	// Keys are in byte-wise lexicographic order, all > startAfter and all
	// starting with the prefix.
	Keys []string
	// Truncated reports that more keys may follow the last one returned.
	Truncated bool
}

// Store is the object-store contract. Every method validates its key (or
// prefix) before any I/O and returns *Error values whose kinds are the
// sentinels of this package. Implementations are safe for concurrent use.
type Store interface {
	// Get returns the object's bytes and ETag, or ErrNotFound.
	Get(ctx context.Context, key string) (Object, error)
	// Head returns the object's size and ETag, or ErrNotFound.
	Head(ctx context.Context, key string) (Attrs, error)
	// List returns up to limit keys (1..MaxListLimit; <=0 means
	// MaxListLimit, larger is clamped) that start with prefix and sort
	// strictly after startAfter, in byte-wise lexicographic order.
	List(ctx context.Context, prefix, startAfter string, limit int) (ListPage, error)
	// Put stores data under key if cond holds and returns the new ETag. A
	// failed condition returns ErrPreconditionFailed.
	Put(ctx context.Context, key string, data []byte, cond Condition) (string, error)
	// Delete removes key. Deleting a missing key is not an error, except
	// where the store knows an earlier delete of it was not made durable
	// (fs: ErrTransient with cause ErrSyncFailed, see ErrSyncFailed).
	// Unconditional only: nothing in graphkernel depends on conditional
	// deletes.
	Delete(ctx context.Context, key string) error
}

// ClampLimit normalises a List limit to 1..MaxListLimit.
func ClampLimit(limit int) int {
	if limit <= 0 || limit > MaxListLimit {
		return MaxListLimit
	}
	return limit
}
