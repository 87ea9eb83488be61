package fs

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

var _ objstore.BatchDeleter = (*Store)(nil)

// Bounds of one sync round of DeleteMany: the keys it unlinks, and the
// distinct directories whose chains it holds open (each a descriptor a
// level) until their fsync.
const (
	deleteGroupKeys = 128
	deleteGroupDirs = 32
)

// DeleteMany implements objstore.BatchDeleter: each key is removed as
// Delete removes it (under the key's lock; a missing key is no error),
// but the directories the unlinks changed are fsynced once each, together
// in one round (syncRound) after the unlinks of a group (up to
// deleteGroupKeys keys in up to deleteGroupDirs directories), instead of
// one fsync and one round per key; then the empty directories are pruned
// as Delete prunes them. A key reports nil only after its directory was
// synced, so a batch is as durable as its keys deleted one by one; a
// failed round makes every key of its group whose unlink it covered
// ambiguous (ErrTransient) and remembered as Delete's failed fsync is:
// deleting it again fails with objstore.ErrSyncFailed until the key is
// written again (syncfailed.go). The key's lock covers its unlink, not
// the fsync after it (Delete holds it through its fsync): a concurrent
// If-Match Put may see the key gone before that is durable, as a Get,
// which takes no lock, may after either, and a concurrent Delete finding
// it gone returns nil before the round ends (so before a failure of the
// round is remembered). Two keys share an fsync
// only if their directory has the same identity (dirIdentity) when each
// was unlinked, so a directory removed and made again between them is
// synced in both incarnations; without an identity each key's directory
// is synced.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	if errs := objstore.OversizedBatch(keys); errs != nil {
		return errs
	}
	errs := make([]error, len(keys))
	for start := 0; start < len(keys); {
		start += s.deleteGroup(ctx, keys[start:], errs[start:])
	}
	return errs
}

// unlinkedDir is one directory a group's unlinks changed: its open chain
// and the indexes of the group's keys unlinked in it.
type unlinkedDir struct {
	c    *chain
	keys []int
}

// deleteGroup unlinks the first keys (up to deleteGroupKeys, stopping
// after the one whose directory is the deleteGroupDirs-th), syncs the
// directories it changed in one round, prunes them, sets their errs, and
// returns how many keys it took (at least one).
func (s *Store) deleteGroup(ctx context.Context, keys []string, errs []error) int {
	const op = objstore.OpDelete
	root := -1 // opened at the first valid key; every chain borrows it
	defer func() {
		if root >= 0 {
			unix.Close(root)
		}
	}()
	// Failed unlinks noted from here on may be about files unlinked
	// after this group's: its round clears only earlier ones.
	mark := s.failedUnlinks.mark()
	var dirs []*unlinkedDir
	byID := map[dirID]*unlinkedDir{}
	n := 0
	for i, key := range keys {
		if n == deleteGroupKeys || len(dirs) == deleteGroupDirs {
			break
		}
		n++
		if root < 0 {
			r, err := s.begin(ctx, op, key)
			if err != nil {
				errs[i] = err
				continue
			}
			root = r
		} else if err := objstore.ValidateKey(op, key); err != nil {
			errs[i] = err
			continue
		} else if err := ctx.Err(); err != nil {
			errs[i] = ctxErr(op, key, err)
			continue
		}
		c, err := s.unlinkOne(ctx, root, key)
		if err == nil {
			s.failed.forget(key) // gone: a later write at key is a new file
		}
		if err != nil || c == nil {
			errs[i] = err
			continue
		}
		id, ok := dirIdentity(c.leaf())
		if d := byID[id]; ok && d != nil { // the same directory: one fsync covers both
			d.keys = append(d.keys, i)
			c.close()
			continue
		}
		d := &unlinkedDir{c: c, keys: []int{i}}
		dirs = append(dirs, d)
		if ok {
			byID[id] = d
		}
	}
	s.syncUnlinked(keys, dirs, errs, mark)
	return n
}

// syncUnlinked fsyncs the directories of a group's unlinks in one round,
// then prunes them as Delete does (not after a failed round: Delete
// prunes only a synced unlink) and closes their chains. A failed round
// notes its unlinked keys in failedUnlinks; a successful one clears the
// notes of those keys numbered at most mark (taken before the group's
// first unlink).
func (s *Store) syncUnlinked(keys []string, dirs []*unlinkedDir, errs []error, mark uint64) {
	targets := make([]syncTarget, len(dirs))
	for j, d := range dirs {
		targets[j] = syncTarget{fd: d.c.leaf(), dir: true, what: "dir after unlink"}
	}
	err := s.syncRound(targets)
	for _, d := range dirs {
		if err != nil {
			for _, i := range d.keys {
				errs[i] = wrapErr(objstore.OpDelete, keys[i], &ambiguousError{fmt.Errorf("fsync dir after unlink: %w", err)})
				s.failedUnlinks.note(keys[i : i+1]) // a retry finds it gone: never report that durable
			}
		} else {
			for _, i := range d.keys {
				s.failedUnlinks.forgetNotedBy(keys[i], mark)
			}
			prune(d.c, s.durable)
		}
		d.c.close()
	}
}

// unlinkOne removes key's file under the key's lock without syncing its
// directory (unlinkLocked), returning the open parent chain (nil: the key
// was missing).
func (s *Store) unlinkOne(ctx context.Context, root int, key string) (*chain, error) {
	const op = objstore.OpDelete
	release, err := lockKey(ctx, root, key)
	if err != nil {
		return nil, storeErr(op, key, err)
	}
	c, err := s.unlinkLocked(root, key, false)
	release()
	return c, wrapErr(op, key, err)
}
