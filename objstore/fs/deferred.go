package fs

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/graphkernel/graphkernel/objstore"
)

var _ objstore.DeferredPutter = (*Store)(nil)

// syncWorkers bounds the fsyncs SyncDeferred has in flight at once: the
// file system commits concurrent fsyncs together, which is what makes a
// batch cheaper than an fsync per object.
const syncWorkers = 16

// fsyncFd is unix.Fsync; a test records through it what SyncDeferred syncs.
var fsyncFd = unix.Fsync

// PutDeferred is Put with CondCreateOnly that fsyncs nothing: the temp
// file, new directories and the parent are left to SyncDeferred. The
// object is in place (visible, create-only) when it returns.
func (s *Store) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	u := *s
	u.noSync = true
	return u.Put(ctx, key, data, objstore.CreateOnly)
}

// syncJob is one fsync of SyncDeferred: the object file at names, or the
// directory names (the root when empty).
type syncJob struct {
	key   string
	names []string
	file  bool
}

// SyncDeferred fsyncs each key's object file and every directory on its
// path (each directory once), syncWorkers at a time. Any failure (a
// missing key included: it was deferred, so it must exist) is an
// ErrTransient error naming the first failing key in key order; none of
// the batch may then be assumed durable.
func (s *Store) SyncDeferred(ctx context.Context, keys []string) error {
	if s.noSync || len(keys) == 0 {
		return nil
	}
	jobs, err := s.syncJobs(keys)
	if err != nil {
		return err
	}
	root, err := s.begin(ctx, objstore.OpPut, keys[0])
	if err != nil {
		return err
	}
	defer unix.Close(root)
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(syncWorkers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = syncOne(root, jobs[i])
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return objstore.NewError(objstore.OpPut, jobs[i].key, objstore.ErrTransient,
				fmt.Errorf("sync deferred write: %w", err))
		}
	}
	return nil
}

// syncJobs lists the files of keys (in key order) and then the distinct
// directories on their paths (in path order).
func (s *Store) syncJobs(keys []string) ([]syncJob, error) {
	var jobs []syncJob
	dirs := map[string]syncJob{}
	for _, key := range keys {
		if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
			return nil, err
		}
		names := s.layout.encodeKey(key)
		jobs = append(jobs, syncJob{key: key, names: names, file: true})
		for i := 0; i < len(names); i++ {
			p := strings.Join(names[:i], "/")
			if _, ok := dirs[p]; !ok {
				dirs[p] = syncJob{key: key, names: names[:i]}
			}
		}
	}
	paths := make([]string, 0, len(dirs))
	for p := range dirs { //detlint:ordered sorted below
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		jobs = append(jobs, dirs[p])
	}
	return jobs, nil
}

// syncOne fsyncs one file or directory below root, never following a
// symlink.
func syncOne(root int, j syncJob) error {
	dirs := j.names
	if j.file {
		dirs = j.names[:len(j.names)-1]
	}
	c, err := walk(root, dirs, noCreate, false)
	if err != nil {
		return err
	}
	defer c.close()
	if !j.file {
		return fsyncFd(c.leaf())
	}
	fd, err := unix.Openat(c.leaf(), j.names[len(j.names)-1], fileFlags, 0)
	if err != nil {
		return fmt.Errorf("open %q: %w", j.key, err)
	}
	defer unix.Close(fd)
	return fsyncFd(fd)
}
