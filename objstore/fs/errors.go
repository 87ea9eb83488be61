package fs

import (
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// errNotStorable is the cause when a path component below the root is not
// what the key mapping put there: a symlink, or a file where a directory
// belongs. The store never follows such an entry.
var errNotStorable = errors.New("fs: path component is a symlink or foreign file; refusing to follow")

// errCorrupt is the cause when an object file fails its header or checksum
// (objstore.ErrCorruptObject).
var errCorrupt = fmt.Errorf("fs: corrupt object file: %w", objstore.ErrCorruptObject)

// kindOf maps an OS error to the objstore kind a caller branches on.
//
//   - ENOENT -> ErrNotFound; EEXIST -> ErrPreconditionFailed.
//   - ELOOP, ENOTDIR, EISDIR, ENAMETOOLONG -> ErrInvalidKey: the key cannot
//     be resolved inside the root without following a symlink or a foreign
//     file planted there, so the key is unusable in this store.
//   - a permanent refusal (see rejected) -> ErrRejected.
//   - everything else (EINTR, EAGAIN, EIO, ENOSPC, EDQUOT, a cancelled
//     context, ...) -> ErrTransient, with the cause kept visible to
//     errors.Is/As; callers' retry budgets bound these.
func kindOf(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return objstore.ErrNotFound
	case errors.Is(err, unix.EEXIST):
		return objstore.ErrPreconditionFailed
	case errors.Is(err, errNotStorable), errors.Is(err, unix.ELOOP),
		errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EISDIR),
		errors.Is(err, unix.ENAMETOOLONG):
		return objstore.ErrInvalidKey
	case rejected(err):
		return objstore.ErrRejected
	}
	return objstore.ErrTransient
}

// rejected reports the failures that retrying cannot cure: permission
// denied (EACCES, EPERM), a read-only filesystem (EROFS), and an object
// file that fails its header or checksum (errCorrupt). They need an
// operator. A full disk or quota (ENOSPC, EDQUOT) is deliberately not
// among them: space comes back when temp files are swept, objects deleted
// or another writer's temp file is removed, so it stays ErrTransient and
// the caller's retry budget bounds it.
func rejected(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) ||
		errors.Is(err, unix.EROFS) || errors.Is(err, errCorrupt)
}

// ambiguousError marks a failure after the new name was already in place
// (the fsync of the parent directory failed): the write is visible, its
// durability unknown.
type ambiguousError struct{ err error }

func (e *ambiguousError) Error() string { return e.err.Error() }
func (e *ambiguousError) Unwrap() error { return e.err }

// wrapErr turns err into an *objstore.Error for op and key. An err that
// already is an *objstore.Error passes through unchanged; an
// ambiguousError becomes an ambiguous ErrTransient.
func wrapErr(op objstore.Op, key string, err error) error {
	if err == nil {
		return nil
	}
	var oe *objstore.Error
	if errors.As(err, &oe) {
		return err
	}
	var ae *ambiguousError
	if errors.As(err, &ae) {
		return objstore.NewAmbiguousError(op, key, objstore.ErrTransient, err)
	}
	return objstore.NewError(op, key, kindOf(err), err)
}

// ctxErr reports a cancelled or expired context as a non-ambiguous
// transient error; it is checked before any I/O.
func ctxErr(op objstore.Op, key string, err error) error {
	return objstore.NewError(op, key, objstore.ErrTransient, fmt.Errorf("context: %w", err))
}
