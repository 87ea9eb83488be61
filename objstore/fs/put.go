package fs

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// Put stores data under key if cond holds and returns the new ETag.
//
// Every Put first writes a complete temp file and fsyncs it. Then:
//   - CondCreateOnly links the temp to the final name with linkat(2),
//     which fails with EEXIST (ErrPreconditionFailed) if the name exists:
//     an atomic create-only, no check-then-write.
//   - CondIfMatch takes the key's flock, reads the current ETag, compares,
//     and renames the temp over the final name, all under the lock.
//   - CondNone takes the same lock and renames, so it cannot slip between
//     a concurrent CAS's compare and its rename.
//
// Finally the parent directory is fsynced. An error after the new name is
// in place is marked ambiguous (the object is visible, its durability is
// unknown).
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	return s.put(ctx, key, data, cond, nil)
}

var _ objstore.DeferredPublisher = (*Store)(nil)

// PutAfterDeferred is Put that first makes the deferred keys durable
// (objstore.DeferredPublisher): their object files, the directories
// holding them and every directory on their paths not known durable are
// synced as SyncDeferred syncs them, in the same round as this write's
// temp file (SyncDeferred's walk plus the temp), before the new name is
// placed, so
// the write waits for two rounds like a Put and its name can never be
// durable before the deferred objects are. A failure to sync a deferred
// key is an ErrTransient naming it, returned before anything is placed.
func (s *Store) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	return s.put(ctx, key, data, cond, func() []string { return deferred })
}

// put is Put whose temp file is fsynced in one round with the objects of
// the deferred keys after returns (syncDeferred). after (nil: none) is
// called once the temp file is written, right before that round: in a
// batch (PutMany) it waits for the requests of the batch the write names,
// so only the sync round waits for them.
func (s *Store) put(ctx context.Context, key string, data []byte, cond objstore.Condition, after func() []string) (string, error) {
	const op = objstore.OpPut
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return "", err
	}
	defer unix.Close(root)
	// Failed unlinks noted before this write places its file are about
	// older files; a later one may be about this write's (syncfailed.go).
	unlinkMark := s.failedUnlinks.mark()
	if cond.Kind > objstore.CondIfMatch {
		return "", objstore.NewError(op, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("unknown condition kind %d", cond.Kind))
	}
	tmpDir, err := openDir(root, tmpDirName)
	if err != nil {
		return "", storeErr(op, key, err)
	}
	defer unix.Close(tmpDir)
	tmp, f, h, err := writeTemp(tmpDir, data)
	if err != nil {
		return "", storeErr(op, key, err) // never "not found": the temp dir is ours
	}
	// After a rename the temp name is gone (ENOENT); after a link, or a
	// failure, this removes it. Best effort: a leftover temp is invisible
	// to every operation and SweepTemp removes it.
	defer unix.Unlinkat(tmpDir, tmp, 0)
	temp := []syncTarget{{fd: int(f.Fd()), what: "temp"}}
	var deferred []string
	if after != nil {
		deferred = after()
	}
	if len(deferred) > 0 && !s.noSync {
		err = s.syncDeferred(ctx, deferred, temp)
	} else {
		err = s.syncRound(temp)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close temp: %w", cerr)
	}
	var oe *objstore.Error
	if errors.As(err, &oe) {
		return "", err // a deferred key's failure, named and typed by syncDeferred
	}
	if err != nil {
		return "", storeErr(op, key, err)
	}
	s.hit(pointTempWritten)
	if err := ctx.Err(); err != nil {
		return "", ctxErr(op, key, err)
	}
	src := source{dir: tmpDir, name: tmp}
	if cond.Kind == objstore.CondCreateOnly {
		err = s.publish(root, s.layout.encodeKey(key), src, placeLink)
	} else {
		err = s.replace(ctx, root, key, src, cond)
	}
	if err != nil {
		return "", wrapErr(op, key, err)
	}
	// A new file at key: no earlier sync of it failed, and its absence
	// no longer matters (a failed unlink noted before unlinkMark).
	s.failed.forget(key)
	s.failedUnlinks.forgetNotedBy(key, unlinkMark)
	return h.etag(), nil
}

// replace performs a CondNone or CondIfMatch write under the key's lock.
func (s *Store) replace(ctx context.Context, root int, key string, src source, cond objstore.Condition) error {
	release, err := lockKey(ctx, root, key)
	if err != nil {
		return storeErr(objstore.OpPut, key, err)
	}
	defer release()
	s.hit(pointLocked)
	names := s.layout.encodeKey(key)
	if cond.Kind == objstore.CondIfMatch {
		h, _, err := readKey(root, s.layout, key, false)
		if errors.Is(err, unix.ENOENT) {
			return objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
				errors.New("if-match: key does not exist"))
		}
		if err != nil {
			return fmt.Errorf("if-match: read current: %w", err)
		}
		if h.etag() != cond.ETag {
			return objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
				fmt.Errorf("if-match: current etag %s, want %s", h.etag(), cond.ETag))
		}
	}
	return s.publish(root, names, src, placeRename)
}

// source is a durable temp file waiting to be published.
type source struct {
	dir  int
	name string
}

// A place function puts src at name inside dir, atomically.
type placeFunc func(src source, dir int, name string) error

// placeLink fails with EEXIST if name exists: the create-only primitive.
func placeLink(src source, dir int, name string) error {
	if err := unix.Linkat(src.dir, src.name, dir, name, 0); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	return nil
}

// placeRename replaces whatever is at name, including a symlink itself
// (rename never follows the target name).
func placeRename(src source, dir int, name string) error {
	if err := unix.Renameat(src.dir, src.name, dir, name); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return nil
}

// publish walks (creating) the key's directories, places src, and fsyncs
// the parent directory together with the parent of every directory the
// walk made, in one round (placedTargets). ENOENT means a concurrent Delete pruned a parent
// between the walk and the place: walk again, at most publishAttempts times.
func (s *Store) publish(root int, names []string, src source, place placeFunc) error {
	dirs, final := names[:len(names)-1], names[len(names)-1]
	for attempt := 0; attempt < publishAttempts; attempt++ {
		c, err := resolve(root, dirs, s.createMode(), s.createMode() == createDeferred, s.stats)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return err
		}
		s.hit(pointWalked)
		err = place(src, c.leaf(), final)
		if errors.Is(err, unix.ENOENT) {
			c.close()
			continue
		}
		if err != nil {
			c.close()
			return err
		}
		s.hit(pointPlaced)
		if !s.nameDeferred {
			err = s.syncRound(placedTargets(c))
		}
		c.close()
		if err != nil {
			return &ambiguousError{fmt.Errorf("fsync dir after publish: %w", err)}
		}
		return nil
	}
	// Not wrapping the last ENOENT: this is a retry budget exhausted
	// (ErrTransient), not a missing key.
	return fmt.Errorf("publish: parent directory or temp file vanished %d times", publishAttempts)
}

// Delete removes key under the key's lock (so it cannot slip between a
// concurrent CAS's compare and its rename), fsyncs the parent, then prunes
// empty parent directories. Deleting a missing key is not an error, except
// after this Store's earlier unlink of it failed its directory fsync (an
// ambiguous ErrTransient then): until the key is written again, a delete
// that finds it missing returns a definite ErrTransient with cause
// objstore.ErrSyncFailed, as a second fsync could not prove the unlink
// durable (syncfailed.go).
func (s *Store) Delete(ctx context.Context, key string) error {
	const op = objstore.OpDelete
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	release, err := lockKey(ctx, root, key)
	if err != nil {
		return storeErr(op, key, err)
	}
	c, err := s.unlinkLocked(root, key, true)
	release()
	if err == nil {
		s.failed.forget(key)
	}
	if c != nil {
		prune(c, s.durable)
		c.close()
	}
	return wrapErr(op, key, err)
}

// unlinkLocked removes key's file, then with sync fsyncs its directory;
// the caller holds the key's lock. It returns the open parent chain for
// pruning (and, without sync, for the caller's fsync) when a file was
// removed. A missing key is nil, nil unless an earlier unlink of it
// failed its directory fsync (failedUnlinks: checkUnlink's error). With
// sync, a failed fsync notes the key in failedUnlinks before the lock is
// released, and a successful one clears it.
func (s *Store) unlinkLocked(root int, key string, sync bool) (*chain, error) {
	mark := s.failedUnlinks.mark()
	names := s.layout.encodeKey(key)
	c, err := walk(root, names[:len(names)-1], noCreate, true, nil)
	if errors.Is(err, unix.ENOENT) {
		return nil, s.failedUnlinks.checkUnlink(key)
	}
	if err != nil {
		return nil, err
	}
	err = unix.Unlinkat(c.leaf(), names[len(names)-1], 0)
	if errors.Is(err, unix.ENOENT) {
		c.close()
		return nil, s.failedUnlinks.checkUnlink(key)
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("unlink: %w", err)
	}
	if !sync {
		return c, nil
	}
	if err := s.fsync(c.leaf()); err != nil {
		c.close()
		s.failedUnlinks.note([]string{key}) // a retry finds it gone: never report that durable
		return nil, &ambiguousError{fmt.Errorf("fsync dir after unlink: %w", err)}
	}
	s.failedUnlinks.forgetNotedBy(key, mark)
	return c, nil
}
