package fs

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

var _ objstore.BatchDeleter = (*Store)(nil)

// deleteGroup bounds the keys one sync round of DeleteMany covers, and so
// the parent chains it holds open at once (one per distinct directory).
const deleteGroup = 128

// DeleteMany implements objstore.BatchDeleter: each key is removed as
// Delete removes it (under the key's lock; a missing key is no error),
// but the directories the unlinks changed are fsynced once each, together
// in one round (syncRound) after the unlinks of up to deleteGroup keys,
// instead of one fsync and one round per key; then the empty directories
// are pruned as Delete prunes them. A key reports nil only after its
// directory was synced, so a batch is as durable as its keys deleted one
// by one; a failed round makes every key of its group whose unlink it
// covered ambiguous (ErrTransient: delete it again). Two keys share an
// fsync only if their directory has the same identity (dirIdentity) when
// each was unlinked, so a directory removed and made again between them
// is synced in both incarnations; without an identity each key's
// directory is synced.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	if errs := objstore.OversizedBatch(keys); errs != nil {
		return errs
	}
	errs := make([]error, len(keys))
	for start := 0; start < len(keys); start += deleteGroup {
		end := min(start+deleteGroup, len(keys))
		s.deleteGroup(ctx, keys[start:end], errs[start:end])
	}
	return errs
}

// unlinkedDir is one directory a group's unlinks changed: its open chain
// and the indexes of the group's keys unlinked in it.
type unlinkedDir struct {
	c    *chain
	keys []int
}

// deleteGroup unlinks keys (at most deleteGroup), syncs the directories
// it changed in one round, prunes them, and sets errs (one per key).
func (s *Store) deleteGroup(ctx context.Context, keys []string, errs []error) {
	const op = objstore.OpDelete
	root := -1 // opened at the first valid key; every chain borrows it
	defer func() {
		if root >= 0 {
			unix.Close(root)
		}
	}()
	var dirs []*unlinkedDir
	byID := map[dirID]*unlinkedDir{}
	for i, key := range keys {
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
	s.syncUnlinked(keys, dirs, errs)
}

// syncUnlinked fsyncs the directories of a group's unlinks in one round,
// then prunes them as Delete does (not after a failed round: Delete
// prunes only a synced unlink) and closes their chains.
func (s *Store) syncUnlinked(keys []string, dirs []*unlinkedDir, errs []error) {
	targets := make([]syncTarget, len(dirs))
	for j, d := range dirs {
		targets[j] = syncTarget{fd: d.c.leaf(), dir: true, what: "dir after unlink"}
	}
	err := s.syncRound(targets)
	for _, d := range dirs {
		if err != nil {
			for _, i := range d.keys {
				errs[i] = wrapErr(objstore.OpDelete, keys[i], &ambiguousError{fmt.Errorf("fsync dir after unlink: %w", err)})
			}
		} else {
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
