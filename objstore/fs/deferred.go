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

var _ objstore.IntactDeferredPutter = (*Store)(nil)

// PutDeferredIntact is Put under cond that fsyncs only its temp file,
// before the link or rename: the object is never torn by a crash (the key
// holds the old object or this one, whole), but its name and any new
// directory are durable only once SyncDeferred or PutAfterDeferred named
// its key. One round, against a Put's two.
func (s *Store) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	u := *s
	u.nameDeferred = true
	etag, err := u.Put(ctx, key, data, cond)
	return etag, !s.noSync, err
}

// SyncDeferred makes the keys' objects durable: it fsyncs each key's
// object file and the directory holding it, and the parent of every
// directory on their paths that this Store does not know durable
// (durableDirs: a directory whose parent it fsynced before, with the
// identity it still has, and all of its ancestors too), each directory
// once, syncWorkers at a time. On a Store's first sync that is every
// directory on the paths and the root; in the steady state of a commit,
// the leaf directories alone. It walks the tree of those paths once,
// depth first (every directory opened once below its parent, never
// following a symlink), rather than walking from the root for each file
// and directory: a batch's keys share most of their path; in the steady
// state it walks none of it: a leaf directory known durable, opened in
// one openat2 with the identity it is known by, stands for every
// directory above it (openKnownLeaves). Any failure (a
// missing key included: it was deferred, so it must exist) is an
// ErrTransient error naming the first failing key in key order (a file's
// failure before a directory's); none of the batch may then be assumed
// durable, and the Store learns nothing from it.
func (s *Store) SyncDeferred(ctx context.Context, keys []string) error {
	if s.noSync || len(keys) == 0 {
		return nil
	}
	return s.syncDeferred(ctx, keys, nil)
}

// syncDeferred is SyncDeferred of keys (at least one) in one round that
// also fsyncs extra (PutAfterDeferred's temp file); a failure of extra is
// reported after any of the keys'.
func (s *Store) syncDeferred(ctx context.Context, keys []string, extra []syncTarget) error {
	tree, err := s.syncTree(keys)
	if err != nil {
		return err
	}
	if err := s.failed.check(keys); err != nil {
		return err // never synced again: a second fsync may lie (syncfailed.go)
	}
	root, err := s.begin(ctx, objstore.OpPut, keys[0])
	if err != nil {
		return err
	}
	defer unix.Close(root)
	run := &syncRun{ctx: ctx, durable: s.durable, next: make(chan syncJob)}
	var wg sync.WaitGroup
	for range syncWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range run.next {
				s.countJob(j)
				err := fsyncFd(j.fd)
				if j.close {
					unix.Close(j.fd)
				}
				if err != nil {
					run.fail(j, err)
				}
			}
		}()
	}
	if s.stats != nil {
		s.stats.rounds.Add(1)
	}
	for i := range extra {
		run.next <- syncJob{fd: extra[i].fd, extra: &extra[i]}
	}
	epoch := s.durable.epoch()
	anchors := run.openKnownLeaves(root, tree)
	for _, a := range anchors {
		if ctx.Err() != nil {
			unix.Close(a.fd)
			continue
		}
		run.visit(a.fd, a)
		if !a.sync {
			unix.Close(a.fd)
			continue
		}
		run.next <- syncJob{fd: a.fd, close: true, node: a}
	}
	tree.known = true // the anchor: its own entry is not the store's
	run.visit(root, tree)
	if ctx.Err() == nil && tree.sync {
		run.next <- syncJob{fd: root, node: tree}
	}
	close(run.next)
	wg.Wait()
	if s.stats != nil {
		s.stats.fastLeaves.Add(uint64(len(anchors)))
		s.stats.walkedDirs.Add(uint64(len(run.dirs)))
	}
	if run.err == nil && run.extraErr == nil && ctx.Err() == nil {
		s.durable.record(epoch, run.dirs)
	}
	if run.err == nil && run.extraErr == nil && ctx.Err() != nil {
		return objstore.NewError(objstore.OpPut, keys[0], objstore.ErrTransient, fmt.Errorf("sync deferred write: %w", ctx.Err()))
	}
	if run.fsyncFailed {
		s.failed.note(keys) // a file or directory of theirs failed its fsync: none is trusted again
		return objstore.NewError(objstore.OpPut, run.err.node.key, objstore.ErrTransient,
			fmt.Errorf("sync deferred write: %w: %w", run.err.err, objstore.ErrSyncFailed))
	}
	if run.err != nil {
		return objstore.NewError(objstore.OpPut, run.err.node.key, objstore.ErrTransient,
			fmt.Errorf("sync deferred write: %w", run.err.err))
	}
	return run.extraErr
}

// syncNode is a directory (kids) or object file (file) on the paths of a
// SyncDeferred batch; key is the first key in key order through it and
// rank orders its failure (files by key order, then directories).
type syncNode struct {
	name string
	file bool
	key  string
	rank int
	kids []*syncNode // sorted by name
	// path is a directory's names below the root joined by "/"
	// (durableDirs' key).
	path string
	// Set by the walk: id (idOK: the file system reports it) is the
	// identity of the directory it opened; known, that this Store knows
	// it and its ancestors durable (so its parent need not be fsynced
	// for it); sync, that it must be fsynced (it holds a file of the
	// batch or a directory not known durable).
	id    dirID
	idOK  bool
	known bool
	sync  bool
	// Set by openKnownLeaves: leaf, that the directory holds a file of
	// the batch; fast, that it is a leaf the Store knows durable, opened
	// in one openat2 from the root as fd with the identity it is known
	// by, so it and every directory above it are known durable without
	// opening them; covered, that it is fast or holds no file and every
	// directory below it is covered (no walk needs to open it).
	leaf    bool
	fast    bool
	covered bool
	fd      int
}

// syncTree builds the tree of the keys' paths below the root.
func (s *Store) syncTree(keys []string) (*syncNode, error) {
	root := &syncNode{key: keys[0]}
	index := map[*syncNode]map[string]*syncNode{}
	dirs := 0
	for k, key := range keys {
		if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
			return nil, err
		}
		n := root
		names := s.layout.encodeKey(key)
		for i, name := range names {
			if index[n] == nil {
				index[n] = map[string]*syncNode{}
			}
			kid, ok := index[n][name]
			if !ok {
				kid = &syncNode{name: name, file: i == len(names)-1, key: key, rank: k}
				if kid.file {
					n.leaf = true
				} else {
					dirs++
					kid.rank = len(keys) + dirs
					kid.path = strings.Join(names[:i+1], "/")
				}
				index[n][name] = kid
				n.kids = append(n.kids, kid)
			}
			n = kid
		}
	}
	root.rank = len(keys)
	var sortKids func(n *syncNode)
	sortKids = func(n *syncNode) {
		sort.Slice(n.kids, func(a, b int) bool { return n.kids[a].name < n.kids[b].name })
		for _, kid := range n.kids {
			sortKids(kid)
		}
	}
	sortKids(root)
	return root, nil
}

// syncJob is one fsync: fd (closed after it unless it is the root's) for
// node, or for extra (a caller's descriptor, never closed here).
type syncJob struct {
	fd    int
	close bool
	node  *syncNode
	extra *syncTarget
}

// syncRun is one SyncDeferred walk: its job queue and its first failure.
type syncRun struct {
	ctx      context.Context
	durable  *durableDirs
	dirs     []*syncNode // every directory the walk opened
	next     chan syncJob
	mu       sync.Mutex
	err      *syncFailure
	extraErr error // the first failure of an extra target
	// fsyncFailed: an fsync of a key's file or directory failed (not an
	// open: a missing key is no failed writeback), so the batch's keys
	// can never be trusted durable (failedSyncs).
	fsyncFailed bool
}

type syncFailure struct {
	node *syncNode
	err  error
}

// fail records a failure of j's fsync, keeping the first in rank order.
func (r *syncRun) fail(j syncJob, err error) {
	if j.extra != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.extraErr == nil {
			r.extraErr = fmt.Errorf("fsync %s: %w", j.extra.what, err)
		}
		return
	}
	r.mu.Lock()
	r.fsyncFailed = true
	r.mu.Unlock()
	r.failNode(j.node, err)
}

// failNode records a failure of n, keeping the first in rank order.
func (r *syncRun) failNode(n *syncNode, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil || n.rank < r.err.node.rank {
		r.err = &syncFailure{node: n, err: err}
	}
}

// openKnownLeaves is the steady state's fast path: it opens each leaf
// directory of the tree below root (one that holds a file of the batch)
// that the Store knows durable in one openat2 from the root, without
// following a symlink anywhere on the path or leaving the root
// (openBeneathPath, as a request resolves its leaf), and reads its
// identity. A leaf that has the identity the Store knows it by is fast:
// it, and every directory above it, is known durable without opening
// them. Every directory on its path was durable (with its entry) when the
// Store recorded the leaf (durableDirs.record records a directory only
// with all of its ancestors durable), and none can have been replaced
// since: a directory is removed only once empty, so replacing one above
// the leaf would remove the leaf first, which then could not have its old
// identity, and this store never renames a directory (one renamed away
// and back is trusted by the walk too). Any miss (the leaf not known, a
// new identity or none, openat2 refused or absent, a symlink or foreign
// file on the path) leaves the leaf to the walk, which opens it and its
// ancestors one at a time and gives a refusal its exact error. It marks
// the fast leaves and the directories covered by them (which the walk
// then skips) and returns the fast leaves in tree order, each open as
// its fd: the anchors the caller walks below (visit) and fsyncs. Nothing
// it learns is recorded in durableDirs: a fast leaf is known already.
func (r *syncRun) openKnownLeaves(root int, tree *syncNode) []*syncNode {
	var fast []*syncNode
	var mark func(n *syncNode) bool
	mark = func(n *syncNode) bool {
		if n.leaf && n != tree && r.ctx.Err() == nil && r.durable.cached(n.path) {
			if fd, ok := openBeneathPath(root, n.path); ok {
				if id, idOK := dirIdentity(fd); idOK && r.durable.known(n.path, id) {
					n.fast, n.known, n.id, n.idOK, n.fd = true, true, id, true, fd
					fast = append(fast, n)
				} else {
					unix.Close(fd)
				}
			}
		}
		covered := !n.leaf
		for _, kid := range n.kids {
			if !kid.file && !mark(kid) {
				covered = false
			}
		}
		n.covered = n.fast || covered
		return n.covered
	}
	mark(tree)
	return fast
}

// visit opens each child of directory n (open as fd) without following a
// symlink and queues the fsyncs the batch needs below n: every file; a
// directory after its own children, which are opened through it, if it
// holds a file or a directory not known durable (n.sync is set likewise
// for n's caller). A directory is known durable if durableDirs has it with
// the identity just read from the open descriptor and its parent is known
// durable. A covered child (openKnownLeaves) is known durable and left
// alone: the fast leaves at and below it are the caller's anchors.
func (r *syncRun) visit(fd int, n *syncNode) {
	for _, kid := range n.kids {
		if r.ctx.Err() != nil {
			return
		}
		if kid.covered {
			continue
		}
		if kid.file {
			f, err := unix.Openat(fd, kid.name, fileFlags, 0)
			if err != nil {
				r.failNode(kid, fmt.Errorf("open %q: %w", kid.key, err))
				continue
			}
			n.sync = true
			r.next <- syncJob{fd: f, close: true, node: kid}
			continue
		}
		d, err := openDir(fd, kid.name)
		if err != nil {
			r.failNode(kid, err)
			continue
		}
		kid.id, kid.idOK = dirIdentity(d)
		kid.known = n.known && kid.idOK && r.durable.known(kid.path, kid.id)
		if !kid.known {
			n.sync = true
		}
		r.dirs = append(r.dirs, kid)
		r.visit(d, kid)
		if !kid.sync {
			unix.Close(d)
			continue
		}
		r.next <- syncJob{fd: d, close: true, node: kid}
	}
}

// countJob adds one fsync of a SyncDeferred batch to the stats.
func (s *Store) countJob(j syncJob) {
	if s.stats == nil {
		return
	}
	if j.extra != nil {
		if j.extra.dir {
			s.stats.dirs.Add(1)
		} else {
			s.stats.files.Add(1)
		}
		return
	}
	if j.node.file {
		s.stats.files.Add(1)
	} else {
		s.stats.dirs.Add(1)
	}
}
