package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// Store is an objstore.Store over one directory on local disk. Any number
// of Stores, in any number of processes, may share a root. Store holds no
// open files between calls and needs no Close.
type Store struct {
	root string
	// layout is the root's key mapping, read from its marker at Open.
	layout layout
	// noSync skips every fsync (Options.NoSync): fixtures only.
	noSync bool
	// nameDeferred skips the fsyncs after the name is placed (directory,
	// new directories' parents): PutDeferredIntact.
	nameDeferred bool
	// hook, when set by a test, is called at the crash points below.
	hook func(point string)
	// stats counts fsyncs (SyncStats); shared by copies of the Store.
	stats *syncCounters
	// durable is the directories this Store knows durable, which
	// SyncDeferred need not sync again (nil with NoSync); shared by
	// copies of the Store.
	durable *durableDirs
	// failed is the keys whose deferred sync failed, which no later sync
	// may report durable (syncfailed.go); shared by copies of the Store.
	failed *failedSyncs
	// failedUnlinks is the keys whose unlink's directory fsync failed,
	// which no later delete finding them absent may report durable
	// (syncfailed.go); shared by copies of the Store.
	failedUnlinks *failedSyncs
}

// Crash points a test can stop a writer at, and rendezvous points in a
// reader (see Store.hook).
const (
	pointTempWritten = "temp-written" // temp durable, nothing published, lock not held
	pointLocked      = "locked"       // key lock held, nothing published
	pointWalked      = "walked"       // parent directories open, nothing placed
	pointPlaced      = "placed"       // new name in place, parent not yet fsynced
	pointListOpened  = "list-opened"  // List opened a directory, not yet read it
)

// publishAttempts bounds how often a write re-walks its parent directories
// after a concurrent Delete pruned one of them (ENOENT).
const publishAttempts = 8

var _ objstore.Store = (*Store)(nil)

// Open returns a Store rooted at root, creating the directory (and its
// bookkeeping subdirectories .tmp and .locks) if needed. root is resolved
// once to an absolute, symlink-free path; every later access is relative to
// it and never follows a symlink below it.
func Open(root string) (*Store, error) { return OpenWith(root, Options{}) }

// Options tune a Store. The zero value is the durable default.
type Options struct {
	// NoSync skips every fsync (temp files, new directories, parents after
	// a publish or delete). Writes keep their atomicity and visibility
	// rules (link, rename, flock), so every other process sees exactly what
	// it would see with fsync, but an OS crash or power loss may lose or
	// tear recent writes. It exists only to build large fixtures (a 10^5
	// commit history for the depth benchmarks) in reasonable time; never use
	// it for a graph whose data matters.
	NoSync bool
}

// OpenWith is Open with options (see Options).
func OpenWith(root string, opts Options) (*Store, error) {
	if root == "" {
		return nil, errors.New("fs: open: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", root, err)
	}
	for _, d := range []string{tmpDirName, lockDirName} {
		if err := ensureBookkeepingDir(filepath.Join(real, d)); err != nil {
			return nil, fmt.Errorf("fs: open %s: %w", root, err)
		}
	}
	l, err := checkLayout(real)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", root, err)
	}
	s := &Store{root: real, layout: l, noSync: opts.NoSync, stats: &syncCounters{},
		failed: &failedSyncs{}, failedUnlinks: &failedSyncs{}}
	if !opts.NoSync {
		s.durable = newDurableDirs(durableDirsLimit)
	}
	return s, nil
}

// ErrLegacyLayout is returned by Open for a root that holds objects in the
// flat layout of earlier versions (a key's final segment one file name),
// which this version would not find. Such a store is refused, never read
// or written: migrate it by copying its keys through an older binary's
// Store into a new root.
var ErrLegacyLayout = errors.New("fs: store uses the old flat layout (no " + markerPrefix + "* marker); refusing to open it")

// ErrUnknownLayout is returned by Open for a root whose layout marker
// (a ".layout-*" directory) names a layout this version does not know,
// written by a newer binary: it is never read or written.
var ErrUnknownLayout = errors.New("fs: store uses an unknown layout; refusing to open it")

// ErrMixedLayout is returned by Open for a root carrying more than one
// layout marker (for example two binaries of different versions marked
// one empty root at once): which mapping its keys follow is unknown, so
// it is never read or written.
var ErrMixedLayout = errors.New("fs: store carries more than one layout marker; refusing to open it")

// afterLayoutScan, when set by a test, runs between checkLayout's first
// scan of an unmarked root and its mkdir of the marker: a rendezvous for
// racing openers.
var afterLayoutScan func(root string)

// checkLayout returns the layout a root's marker names. It refuses a root
// with more than one marker (ErrMixedLayout), an unknown marker
// (ErrUnknownLayout), or key entries but no marker (ErrLegacyLayout), and
// marks an unmarked root holding no keys with the newest layout (trie3).
// Racing Opens of a new root agree: mkdir of the marker is idempotent,
// and the marker is read back by a second scan, which refuses the root
// (ErrMixedLayout) if another opener marked it with another layout
// meanwhile, rather than use a layout the other is not using.
func checkLayout(root string) (layout, error) {
	for attempt := 0; attempt < 2; attempt++ {
		markers, hasKeys, err := scanRoot(root)
		if err != nil {
			return 0, err
		}
		switch {
		case len(markers) > 1:
			return 0, fmt.Errorf("%w: %s", ErrMixedLayout, strings.Join(markers, ", "))
		case len(markers) == 1:
			l, ok := layoutOf(markers[0])
			if !ok {
				return 0, fmt.Errorf("%w: %s", ErrUnknownLayout, markers[0])
			}
			return l, nil
		case hasKeys:
			return 0, ErrLegacyLayout
		case attempt > 0:
			return 0, errors.New("layout marker vanished after it was made")
		}
		if afterLayoutScan != nil {
			afterLayoutScan(root)
		}
		if err := ensureBookkeepingDir(filepath.Join(root, newestLayout.marker())); err != nil {
			return 0, err
		}
	}
	panic("unreachable")
}

// scanRoot returns the layout markers in root (sorted: ".layout-" names
// no key maps to) and whether it holds any entry a key maps to. A marker that is not a directory (a
// symlink, a file) is errNotStorable.
func scanRoot(root string) (markers []string, hasKeys bool, err error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, false, err
	}
	for _, e := range ents {
		name := e.Name()
		_, _, isKey := decodeName(name) // a key may start ".layout-" too
		if strings.HasPrefix(name, markerPrefix) && !isKey {
			if !e.IsDir() {
				return nil, false, fmt.Errorf("%s: %w", filepath.Join(root, name), errNotStorable)
			}
			markers = append(markers, name)
		} else if isKey {
			hasKeys = true
		}
	}
	return markers, hasKeys, nil
}

func ensureBookkeepingDir(path string) error {
	if err := os.Mkdir(path, dirPerm); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %w", path, errNotStorable)
	}
	return nil
}

// Root returns the resolved absolute root directory.
func (s *Store) Root() string { return s.root }

func (s *Store) hit(point string) {
	if s.hook != nil {
		s.hook(point)
	}
}

// begin validates key and ctx, then opens the root; the caller closes it.
func (s *Store) begin(ctx context.Context, op objstore.Op, key string) (int, error) {
	if err := objstore.ValidateKey(op, key); err != nil {
		return -1, err
	}
	if err := ctx.Err(); err != nil {
		return -1, ctxErr(op, key, err)
	}
	root, err := s.openRoot()
	if err != nil {
		return -1, storeErr(op, key, err)
	}
	return root, nil
}

// storeErr reports a failure to reach the root or a bookkeeping directory
// (or to write a temp file or take a lock there) as ErrRejected when it is
// a permanent refusal (see rejected) and as ErrTransient otherwise, never
// as "not found" or "invalid key": it is the store that is broken, not the
// key.
func storeErr(op objstore.Op, key string, err error) error {
	kind := objstore.ErrTransient
	if rejected(err) {
		kind = objstore.ErrRejected
	}
	return objstore.NewError(op, key, kind, err)
}

// Get returns the object's bytes and ETag, read from one open file, or
// ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	root, err := s.begin(ctx, objstore.OpGet, key)
	if err != nil {
		return objstore.Object{}, err
	}
	defer unix.Close(root)
	h, data, err := readKey(root, s.layout, key, true)
	if err != nil {
		return objstore.Object{}, wrapErr(objstore.OpGet, key, err)
	}
	return objstore.Object{Data: data, ETag: h.etag()}, nil
}

// Head returns the object's size and ETag, or ErrNotFound.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	root, err := s.begin(ctx, objstore.OpHead, key)
	if err != nil {
		return objstore.Attrs{}, err
	}
	defer unix.Close(root)
	h, _, err := readKey(root, s.layout, key, false)
	if err != nil {
		return objstore.Attrs{}, wrapErr(objstore.OpHead, key, err)
	}
	return objstore.Attrs{Size: int64(h.size), ETag: h.etag()}, nil
}

// readKey opens key's object file below root and reads it.
func readKey(root int, l layout, key string, wantData bool) (header, []byte, error) {
	names := l.encodeKey(key)
	c, err := resolve(root, names[:len(names)-1], noCreate, false, nil)
	if err != nil {
		return header{}, nil, err
	}
	defer c.close()
	f, err := openObject(c.leaf(), names[len(names)-1])
	if err != nil {
		return header{}, nil, err
	}
	defer f.Close()
	return readObject(f, wantData)
}
