package fs

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// Every OS error maps to the kind a caller branches on, both for a key's
// own path (wrapErr) and for the root and bookkeeping directories
// (storeErr, which never says "not found" or "invalid key"). Permanent
// refusals are ErrRejected, never a retryable kind; a full disk stays
// ErrTransient (space can come back: SweepTemp, deletes, other writers).
func TestErrorKinds(t *testing.T) {
	pathErr := func(errno unix.Errno) error { return &os.PathError{Op: "openat", Path: "a.d", Err: errno} }
	tests := []struct {
		name      string
		cause     error
		key, root error // kind from wrapErr, from storeErr
	}{
		{"ENOENT", pathErr(unix.ENOENT), objstore.ErrNotFound, objstore.ErrTransient},
		{"EEXIST", fmt.Errorf("link: %w", unix.EEXIST), objstore.ErrPreconditionFailed, objstore.ErrTransient},
		{"ELOOP", pathErr(unix.ELOOP), objstore.ErrInvalidKey, objstore.ErrTransient},
		{"ENOTDIR", pathErr(unix.ENOTDIR), objstore.ErrInvalidKey, objstore.ErrTransient},
		{"not storable", fmt.Errorf(".tmp: %w", errNotStorable), objstore.ErrInvalidKey, objstore.ErrTransient},
		{"EACCES", pathErr(unix.EACCES), objstore.ErrRejected, objstore.ErrRejected},
		{"EPERM", fmt.Errorf("rename: %w", unix.EPERM), objstore.ErrRejected, objstore.ErrRejected},
		{"EROFS", fmt.Errorf("link: %w", unix.EROFS), objstore.ErrRejected, objstore.ErrRejected},
		{"corrupt", fmt.Errorf("if-match: read current: %w", fmt.Errorf("%w: checksum mismatch", errCorrupt)), objstore.ErrRejected, objstore.ErrRejected},
		{"ENOSPC", fmt.Errorf("write temp: %w", unix.ENOSPC), objstore.ErrTransient, objstore.ErrTransient},
		{"EDQUOT", fmt.Errorf("write temp: %w", unix.EDQUOT), objstore.ErrTransient, objstore.ErrTransient},
		{"EIO", pathErr(unix.EIO), objstore.ErrTransient, objstore.ErrTransient},
		{"EINTR", pathErr(unix.EINTR), objstore.ErrTransient, objstore.ErrTransient},
		{"lock timeout", errors.New("lock wait timed out"), objstore.ErrTransient, objstore.ErrTransient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				via  string
				err  error
				want error
			}{
				{"wrapErr", wrapErr(objstore.OpPut, "k", tc.cause), tc.key},
				{"storeErr", storeErr(objstore.OpPut, "k", tc.cause), tc.root},
			} {
				var oe *objstore.Error
				if !errors.As(c.err, &oe) || oe.Kind != c.want || oe.Ambiguous || !errors.Is(c.err, tc.cause) {
					t.Errorf("%s(%v) = %v, want unambiguous kind %v keeping the cause", c.via, tc.cause, c.err, c.want)
				}
				if c.want == objstore.ErrRejected && objstore.IsRetryable(c.err) {
					t.Errorf("%s(%v) = %v is retryable", c.via, tc.cause, c.err)
				}
			}
		})
	}
}

// A failure after the new name is in place stays an ambiguous
// ErrTransient whatever its errno: the write is visible, so it is not a
// refusal.
func TestAmbiguousNeverRejected(t *testing.T) {
	err := wrapErr(objstore.OpPut, "k", &ambiguousError{fmt.Errorf("fsync dir after publish: %w", unix.EROFS)})
	if !errors.Is(err, objstore.ErrTransient) || !objstore.IsAmbiguous(err) || errors.Is(err, objstore.ErrRejected) {
		t.Fatalf("got %v, want an ambiguous ErrTransient", err)
	}
}
