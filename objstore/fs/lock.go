package fs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"golang.org/x/sys/unix"
)

// Lock striping: a key's writers serialize on one of lockStripes lock files
// in root/.locks, chosen by FNV-1a of the key. Every process computes the
// same stripe, so the lock is shared across processes. Striping bounds the
// number of lock files (they are never deleted, which avoids the
// unlink-while-locked race); two keys that share a stripe only serialize.
const lockStripes = 1024

// Lock waits poll flock(LOCK_NB) with exponential backoff so a wait honors
// ctx and is bounded by lockWaitMax even if a peer process is stopped while
// holding the lock. A dead peer's lock is released by the kernel.
const (
	lockWaitMax     = 30 * time.Second
	lockBackoffMin  = 50 * time.Microsecond
	lockBackoffMax  = 5 * time.Millisecond
	lockFileFlags   = unix.O_RDWR | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	errLockTimedOut = lockTimeoutError("lock wait exceeded")
)

type lockTimeoutError string

func (e lockTimeoutError) Error() string { return string(e) }

// stripeName returns the lock file name for key.
func stripeName(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("%03x.lock", h.Sum64()%lockStripes)
}

// lockKey takes the exclusive flock(2) of key's stripe and returns its
// release. flock locks belong to the open file description, so two
// goroutines of one process exclude each other as two processes do.
func lockKey(ctx context.Context, root int, key string) (func(), error) {
	dir, err := openDir(root, lockDirName)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(dir, stripeName(key), lockFileFlags, filePerm)
	unix.Close(dir)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", refuseLinks(err))
	}
	if err := waitFlock(ctx, fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Closing the last descriptor of the open file releases the lock.
	return func() { unix.Close(fd) }, nil
}

func waitFlock(ctx context.Context, fd int) error {
	deadline := time.Now().Add(lockWaitMax)
	backoff := lockBackoffMin
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("flock: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v", errLockTimedOut, lockWaitMax)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for lock: %w", ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, lockBackoffMax)
	}
}
