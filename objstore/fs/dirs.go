package fs

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Bookkeeping directories directly under the root. Their names (and the
// layout markers', see markerTrie1) end in neither ".d", ".c" nor ".o", so
// no key maps to them and List skips them.
const (
	tmpDirName  = ".tmp"
	lockDirName = ".locks"
)

const (
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	dirPerm   = 0o755
	filePerm  = 0o644
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// openRoot opens the store root. The root path was resolved to an absolute,
// symlink-free path by Open; O_NOFOLLOW refuses a root swapped for a
// symlink since.
func (s *Store) openRoot() (int, error) {
	fd, err := unix.Open(s.root, dirFlags, 0)
	if err != nil {
		return -1, fmt.Errorf("open root %s: %w", s.root, refuseLinks(err))
	}
	return fd, nil
}

// openatDir is unix.Openat for openDir; a test counts the directories
// opened through it.
var openatDir = unix.Openat

// openDir opens the directory name inside parent without following a
// symlink in its place.
func openDir(parent int, name string) (int, error) {
	fd, err := openatDir(parent, name, dirFlags, 0)
	if err != nil {
		return -1, fmt.Errorf("open dir %q: %w", name, refuseLinks(err))
	}
	return fd, nil
}

// refuseLinks marks the errors openat returns for a symlink (O_NOFOLLOW) or
// a non-directory (O_DIRECTORY) as errNotStorable.
func refuseLinks(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%w: %w", errNotStorable, err)
	}
	return err
}

// chain is the open directories from the root down to an object's parent.
// A full chain keeps every level open (fds[i] is the directory names[i]
// inside dirFd(i)) so prune can remove empty levels; otherwise only the
// leaf stays open, so a deep key costs two descriptors, not one per level.
// The root fd is borrowed; close releases only fds.
type chain struct {
	root  int
	fds   []int
	names []string
	full  bool
	// made lists, deepest last, the levels i whose directory names[i]
	// this walk found missing (createDeferred); their parents (dirFd(i))
	// are fsynced with the leaf (placedTargets).
	made []int
}

// dirFd returns the directory that contains names[i] (the root for i=0).
func (c *chain) dirFd(i int) int {
	if !c.full {
		panic("fs: dirFd on a chain that keeps only its leaf")
	}
	if i == 0 {
		return c.root
	}
	return c.fds[i-1]
}

// leaf is the deepest open directory.
func (c *chain) leaf() int {
	if len(c.fds) == 0 {
		return c.root
	}
	return c.fds[len(c.fds)-1]
}

func (c *chain) close() {
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}

// createMode says whether walk makes missing directories, and whether it
// fsyncs their parents.
type createMode uint8

const (
	noCreate       createMode = iota // a missing directory is ENOENT
	createSynced                     // make it, then fsync its parent
	createUnsynced                   // make it (Options.NoSync)
	// createDeferred makes it without an fsync and records the level in
	// chain.made; the caller must keep the full chain and fsync
	// placedTargets before it reports the write durable. Used by publish: one journal
	// commit then covers every new directory and the placed name, instead
	// of one commit per mkdir.
	createDeferred
)

// createMode is how this store's writes make directories.
func (s *Store) createMode() createMode {
	if s.noSync {
		return createUnsynced
	}
	return createDeferred
}

// fsync syncs fd unless the store skips fsync (Options.NoSync).
func (s *Store) fsync(fd int) error {
	if s.noSync {
		return nil
	}
	s.count([]syncTarget{{fd: fd, dir: true}})
	return fsyncFd(fd)
}

// walk opens dirs one component at a time below root, never following a
// symlink (openat with O_NOFOLLOW|O_DIRECTORY on every component), so no
// path it returns can leave the root. With create it makes a missing
// directory: createSynced fsyncs its parent at once; createDeferred leaves
// that to the caller (placedTargets), before the write is reported durable
// (until then nothing refers to what the walk made). With full it keeps
// every level open.
func walk(root int, dirs []string, create createMode, full bool, stats *syncCounters) (*chain, error) {
	if create == createDeferred && !full {
		panic("fs: walk with createDeferred needs the full chain")
	}
	c := &chain{root: root, names: dirs, full: full}
	for i, name := range dirs {
		fd, made, err := openChild(c.leaf(), name, create)
		if err != nil {
			c.close()
			return nil, err
		}
		if made && create == createDeferred {
			c.made = append(c.made, i)
		}
		if made && stats != nil {
			stats.mkdirs.Add(1)
		}
		if !full && len(c.fds) > 0 {
			unix.Close(c.fds[0])
			c.fds = c.fds[:0]
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// resolveFlags is how openBeneath resolves a key's directory path in one
// openat2(2): no symlink anywhere on it (not even a magic link), and
// nothing outside the root.
const resolveFlags = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// openat2 is unix.Openat2; a test replaces it (to count the calls, or to
// make it report ENOSYS as a kernel before 5.6 or a seccomp filter does).
var openat2 = unix.Openat2

// noOpenat2 is set once openat2 reported ENOSYS (a kernel before 5.6, or a
// seccomp filter that answers so): every later resolve walks at once.
// EPERM (another seccomp filter's answer, but also a permission check's)
// is not remembered: each resolve asks again, then walks.
var noOpenat2 atomic.Bool

// openBeneath opens the directory the names spell below root in one
// openat2(2), with the flags walk opens each component with and
// resolveFlags: the kernel refuses a symlink at any component (ELOOP)
// and a non-directory (ENOTDIR), as walk's O_NOFOLLOW|O_DIRECTORY on each
// component do. ok is false on any failure, and the caller then walks:
// the walk makes what is missing (ENOENT) under its durability rules and
// gives a refused path (ELOOP, ENOTDIR, EXDEV, EACCES, ...) its exact
// error, so the one-shot open only ever stands in for a walk that would
// have found every directory present.
func openBeneath(root int, names []string) (fd int, ok bool) {
	if len(names) == 0 {
		return -1, false
	}
	return openBeneathPath(root, strings.Join(names, "/"))
}

// openBeneathPath is openBeneath of the names joined by "/" (path, not
// empty).
func openBeneathPath(root int, path string) (fd int, ok bool) {
	if noOpenat2.Load() {
		return -1, false
	}
	how := unix.OpenHow{Flags: uint64(dirFlags), Resolve: resolveFlags}
	fd, err := openat2(root, path, &how)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			noOpenat2.Store(true)
		}
		return -1, false
	}
	return fd, true
}

// resolve opens the directories dirs spell below root as walk does, in one
// openat2 when every one of them is present (openBeneath): the chain then
// holds the leaf alone, with no level made (walk's chain when it found
// every directory present, but never full: a caller that needs every
// level open, prune's, calls walk). Otherwise it walks.
func resolve(root int, dirs []string, create createMode, full bool, stats *syncCounters) (*chain, error) {
	if fd, ok := openBeneath(root, dirs); ok {
		return &chain{root: root, fds: []int{fd}, names: dirs}, nil
	}
	return walk(root, dirs, create, full, stats)
}

// openChild opens directory name inside parent, first making it (durably
// unless create defers or skips the sync) if it is missing and create is
// set. missing reports that it was missing, whoever then made it: a racing
// creator's mkdir may not be durable yet, so its parent needs an fsync too.
func openChild(parent int, name string, create createMode) (fd int, missing bool, err error) {
	fd, err = openDir(parent, name)
	if err == nil || create == noCreate || !errors.Is(err, unix.ENOENT) {
		return fd, false, err
	}
	if err := mkdirDurable(parent, name, create == createSynced); err != nil {
		return -1, true, err
	}
	fd, err = openDir(parent, name)
	return fd, true, err
}

// placedTargets is what makes a name placed at the end of c durable: the
// leaf directory that holds it and the parent of every directory c's walk
// found missing. They are fsynced in one round (Store.syncRound), all at
// once: until the round ends nothing refers to the new directories but the
// object, which is not yet acknowledged, so no order among them matters,
// and the file system can commit every entry together instead of one
// sequential fsync per new directory.
func placedTargets(c *chain) []syncTarget {
	t := []syncTarget{{fd: c.leaf(), dir: true, what: "directory after publish"}}
	for _, i := range c.made {
		t = append(t, syncTarget{fd: c.dirFd(i), dir: true, what: fmt.Sprintf("parent of new directory %q", c.names[i])})
	}
	return t
}

// mkdirDurable makes directory name inside parent if it is missing and
// fsyncs parent when it did.
func mkdirDurable(parent int, name string, sync bool) error {
	err := unix.Mkdirat(parent, name, dirPerm)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mkdir %q: %w", name, err)
	}
	if !sync {
		return nil
	}
	if err := unix.Fsync(parent); err != nil {
		return fmt.Errorf("fsync parent of %q: %w", name, err)
	}
	return nil
}

// prune removes the now-empty directories of c, deepest first, and stops at
// the first that is not empty (or any other failure), and makes durable
// forget each it removed. Best effort: an empty directory left behind is
// invisible to every operation. A concurrent Put that loses its parent to
// prune sees ENOENT and walks again.
func prune(c *chain, durable *durableDirs) {
	for i := len(c.names) - 1; i >= 0; i-- {
		if err := unix.Unlinkat(c.dirFd(i), c.names[i], unix.AT_REMOVEDIR); err != nil {
			return
		}
		durable.drop(c.names[:i+1])
	}
}
