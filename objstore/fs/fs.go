package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// Store is an objstore.Store over one directory on local disk. Any number
// of Stores, in any number of processes, may share a root. Store holds no
// open files between calls and needs no Close.
type Store struct {
	root string
	// noSync skips every fsync (Options.NoSync): fixtures only.
	noSync bool
	// hook, when set by a test, is called at the crash points below.
	hook func(point string)
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
	if err := checkLayout(real); err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", root, err)
	}
	return &Store{root: real, noSync: opts.NoSync}, nil
}

// ErrLegacyLayout is returned by Open for a root that holds objects in the
// flat layout of earlier versions (a key's final segment one file name),
// which this version would not find. Such a store is refused, never read
// or written: migrate it by copying its keys through an older binary's
// Store into a new root.
var ErrLegacyLayout = errors.New("fs: store uses the old flat layout (no " + layoutMarker + " marker); refusing to open it")

// checkLayout accepts a root carrying the layout marker, refuses one that
// holds key entries without it (ErrLegacyLayout), and marks a root that
// holds no keys yet. Concurrent Opens of a new root all succeed: mkdir of
// the marker is idempotent, and a root with the marker is never rescanned.
func checkLayout(root string) error {
	marker := filepath.Join(root, layoutMarker)
	if st, err := os.Lstat(marker); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: %w", marker, errNotStorable)
		}
		return nil
	}
	names, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range names {
		if _, _, ok := decodeName(e.Name()); ok {
			return ErrLegacyLayout
		}
	}
	return ensureBookkeepingDir(marker)
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
	h, data, err := readKey(root, key, true)
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
	h, _, err := readKey(root, key, false)
	if err != nil {
		return objstore.Attrs{}, wrapErr(objstore.OpHead, key, err)
	}
	return objstore.Attrs{Size: int64(h.size), ETag: h.etag()}, nil
}

// readKey opens key's object file below root and reads it.
func readKey(root int, key string, wantData bool) (header, []byte, error) {
	names := encodeKey(key)
	c, err := walk(root, names[:len(names)-1], noCreate, false)
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
