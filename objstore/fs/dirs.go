package fs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Bookkeeping directories directly under the root. Their names end in
// neither ".d", ".c" nor ".o", so no key maps to them and List skips them.
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

// openDir opens the directory name inside parent without following a
// symlink in its place.
func openDir(parent int, name string) (int, error) {
	fd, err := unix.Openat(parent, name, dirFlags, 0)
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

// chain is the open directories from the root down to an object's parent:
// fds[i] is the directory names[i] inside dirFd(i). The root fd is borrowed;
// close releases only fds.
type chain struct {
	root  int
	fds   []int
	names []string
}

// dirFd returns the directory that contains names[i] (the root for i=0).
func (c *chain) dirFd(i int) int {
	if i == 0 {
		return c.root
	}
	return c.fds[i-1]
}

// leaf is the deepest open directory.
func (c *chain) leaf() int { return c.dirFd(len(c.fds)) }

func (c *chain) close() {
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}

// walk opens dirs one component at a time below root, never following a
// symlink (openat with O_NOFOLLOW|O_DIRECTORY on every component), so no
// path it returns can leave the root. With create it makes missing
// directories and fsyncs each parent after a mkdir so the new entry is
// durable before anything is placed inside it.
func walk(root int, dirs []string, create bool) (*chain, error) {
	c := &chain{root: root, fds: make([]int, 0, len(dirs)), names: dirs}
	for i, name := range dirs {
		parent := c.dirFd(i)
		if create {
			if err := mkdirDurable(parent, name); err != nil {
				c.close()
				return nil, err
			}
		}
		fd, err := openDir(parent, name)
		if err != nil {
			c.close()
			return nil, err
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// mkdirDurable makes directory name inside parent if it is missing and
// fsyncs parent when it did.
func mkdirDurable(parent int, name string) error {
	err := unix.Mkdirat(parent, name, dirPerm)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mkdir %q: %w", name, err)
	}
	if err := unix.Fsync(parent); err != nil {
		return fmt.Errorf("fsync parent of %q: %w", name, err)
	}
	return nil
}

// prune removes the now-empty directories of c, deepest first, and stops at
// the first that is not empty (or any other failure). Best effort: an empty
// directory left behind is invisible to every operation. A concurrent Put
// that loses its parent to prune sees ENOENT and walks again.
func prune(c *chain) {
	for i := len(c.names) - 1; i >= 0; i-- {
		if err := unix.Unlinkat(c.dirFd(i), c.names[i], unix.AT_REMOVEDIR); err != nil {
			return
		}
	}
}
