package fs

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// List returns up to limit keys with the given prefix that sort strictly
// after startAfter, in byte-wise order of the KEY (not of file names).
//
// The walk is best-first over a min-heap of keys and unexpanded
// directories. A directory is pushed with the key bytes its path spells,
// which is a lower bound of every key below it, so popping the minimum
// emits keys in order even where subtrees interleave (the keys under
// "a.d" start "a/", those under a chunk directory "a.c" continue "a" with
// any byte). A directory is opened only when its key range can hold a key
// with the prefix and after startAfter, and the walk stops at limit+1 keys.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	const op = objstore.OpList
	if err := objstore.ValidatePrefix(op, prefix); err != nil {
		return objstore.ListPage{}, err
	}
	if err := ctx.Err(); err != nil {
		return objstore.ListPage{}, ctxErr(op, prefix, err)
	}
	limit = objstore.ClampLimit(limit)
	root, err := s.openRoot()
	if err != nil {
		return objstore.ListPage{}, storeErr(op, prefix, err)
	}
	defer unix.Close(root)
	w := lister{store: s, root: root, prefix: prefix, startAfter: startAfter}
	keys, err := w.run(ctx, limit+1)
	if err != nil {
		return objstore.ListPage{}, wrapErr(op, prefix, err)
	}
	page := objstore.ListPage{Keys: keys, Truncated: len(keys) > limit}
	if page.Truncated {
		page.Keys = keys[:limit]
	}
	return page, nil
}

// lister is one List call's walk state.
type lister struct {
	store      *Store
	root       int
	prefix     string
	startAfter string
	front      frontier
	expanded   int // directories read, for tests of the pruning
	entries    int // directory entries read, for tests of history-flat cost
}

func (w *lister) run(ctx context.Context, want int) ([]string, error) {
	w.front = frontier{{lower: ""}}
	var keys []string
	for w.front.Len() > 0 && len(keys) < want {
		it := heap.Pop(&w.front).(entry)
		if it.kids != nil && it.i+1 < len(it.kids.list) {
			heap.Push(&w.front, it.kids.at(it.i+1)) // its next sibling takes its place
		}
		if it.isKey && !isCanonical(it.lower, it.path()) {
			continue // checked when popped, not when pushed: a leaf holds up to 100 keys, a page wants few
		}
		if it.isKey {
			if len(keys) > 0 && keys[len(keys)-1] >= it.lower {
				panic(fmt.Sprintf("fs: list emitted %q after %q", it.lower, keys[len(keys)-1]))
			}
			keys = append(keys, it.lower)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		if err := w.expand(it); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// expand reads one directory, sorts the children that can contribute and
// pushes the first: the heap holds one child per expanded directory, and
// popping it pushes the next (a k-way merge), so a directory of n children
// costs one sort, not n heap entries and n path copies, when the page
// wants few keys.
func (w *lister) expand(dir entry) error {
	w.expanded++
	path := dir.path()
	ents, err := w.readDir(path)
	if errors.Is(err, unix.ENOENT) {
		return nil // pruned by a concurrent Delete: it held no keys
	}
	if err != nil {
		return err
	}
	w.entries += len(ents)
	kids := &siblings{lower: dir.lower, path: path}
	for _, e := range ents {
		frag, kind, ok := decodeName(e.Name())
		if !ok || !typeMatches(kind, e.Type()) {
			continue // bookkeeping dirs, foreign files, symlinks
		}
		c := dirChild{frag: frag, name: e.Name(), isKey: kind == sufObj}
		if w.wanted(dir.lower+frag, c.isKey) {
			kids.list = append(kids.list, c)
		}
	}
	if len(kids.list) == 0 {
		return nil
	}
	slices.SortFunc(kids.list, cmpChild)
	heap.Push(&w.front, kids.at(0))
	return nil
}

// cmpChild orders two children of one directory by their lower bounds.
func cmpChild(a, b dirChild) int {
	if c := strings.Compare(a.frag, b.frag); c != 0 {
		return c
	}
	return cmpKeyFirst(a.isKey, b.isKey)
}

// cmpKeyFirst orders a key before a directory with the same lower bound
// (whose keys are all greater).
func cmpKeyFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// typeMatches reports whether a directory entry of kind has the file type
// the key mapping gives it; symlinks never match.
func typeMatches(kind string, t iofs.FileMode) bool {
	if kind == sufObj {
		return t.IsRegular()
	}
	return t.IsDir()
}

// wanted reports whether a child with lower bound lower can be (isKey), or
// can hold, a key of this page (run drops a key that is not canonical when
// it pops it).
func (w *lister) wanted(lower string, isKey bool) bool {
	if isKey {
		return strings.HasPrefix(lower, w.prefix) && lower > w.startAfter
	}
	// Every key below the directory strictly extends lower.
	if !strings.HasPrefix(lower, w.prefix) && !strings.HasPrefix(w.prefix, lower) {
		return false
	}
	return w.startAfter < lower || strings.HasPrefix(w.startAfter, lower)
}

// isCanonical rejects file names planted by hand that decode to a key the
// store would map elsewhere (or to no valid key): List only returns keys
// that Get can read.
func isCanonical(key string, path []string) bool {
	return objstore.ValidateKey(objstore.OpList, key) == nil && slices.Equal(encodeKey(key), path)
}

// readDir lists the directory at path below the root without following
// symlinks.
func (w *lister) readDir(path []string) ([]os.DirEntry, error) {
	c, err := walk(w.root, path, noCreate, false)
	if err != nil {
		return nil, err
	}
	defer c.close()
	fd, err := unix.Openat(c.leaf(), ".", dirFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("open dir: %w", err)
	}
	// The name is the real path, used by os only to lstat entries whose
	// type the filesystem does not report.
	f := os.NewFile(uintptr(fd), filepath.Join(append([]string{w.store.root}, path...)...))
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("read dir %s: %w", f.Name(), err)
	}
	return ents, nil
}

// entry is a key (isKey) or an unexpanded directory whose keys all
// strictly extend lower: child i of an expanded directory's sorted
// children, or the root (kids nil).
type entry struct {
	lower string
	isKey bool
	kids  *siblings
	i     int
}

// path is the entry's file path below the root.
func (e entry) path() []string {
	if e.kids == nil {
		return nil
	}
	return append(slices.Clip(e.kids.path), e.kids.list[e.i].name)
}

// siblings are the wanted children of one expanded directory, sorted by
// their lower bounds.
type siblings struct {
	lower string   // the directory's lower bound
	path  []string // the directory's path below the root
	list  []dirChild
}

// dirChild is one directory entry: the key bytes its name spells, the name,
// and whether it is an object (else a directory).
type dirChild struct {
	frag, name string
	isKey      bool
}

// at is the heap entry of child i.
func (s *siblings) at(i int) entry {
	return entry{lower: s.lower + s.list[i].frag, isKey: s.list[i].isKey, kids: s, i: i}
}

// frontier is a min-heap of entries by lower; a key sorts before a
// directory with the same lower bound (whose keys are all greater).
type frontier []entry

func (f frontier) Len() int { return len(f) }
func (f frontier) Less(i, j int) bool {
	if f[i].lower != f[j].lower {
		return f[i].lower < f[j].lower
	}
	return f[i].isKey && !f[j].isKey
}
func (f frontier) Swap(i, j int) { f[i], f[j] = f[j], f[i] }
func (f *frontier) Push(x any)   { *f = append(*f, x.(entry)) }
func (f *frontier) Pop() any {
	old := *f
	it := old[len(old)-1]
	*f = old[:len(old)-1]
	return it
}
