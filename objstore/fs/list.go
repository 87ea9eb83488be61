package fs

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

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

// maxHeldDirs bounds the directory descriptors one List keeps open to
// open their subdirectories without walking from the root again; past it a
// directory's descriptor is closed once read and its subdirectories are
// reached from the root (resolve). A head lookup holds about one per level
// of its path. A variable only so tests can force the walk.
var maxHeldDirs = 64

// direntBufBytes is the getdents buffer size (the one os uses).
const direntBufBytes = 8192

// direntBufs recycles getdents buffers between List calls.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufBytes); return &b }}

// lister is one List call's walk state.
type lister struct {
	store      *Store
	root       int
	prefix     string
	startAfter string
	front      frontier
	// held are the expanded directories whose descriptors may still be
	// open; run closes them all before it returns.
	held  []*siblings
	nheld int // how many of held have an open descriptor
	peak  int // the most descriptors held at once, for tests of the bound
	// The byte forms of prefix and startAfter, the getdents buffer, and
	// the scratch of the last directory read (reused by the next).
	prefixB, afterB []byte
	buf             *[]byte
	scratch         dirScan
	expanded        int // directories read, for tests of the pruning
	entries         int // directory entries read, for tests of history-flat cost
}

// dirScan is the scratch of one directory read: a candidate's lower
// bound (the directory's, then the candidate's fragment), and the wanted
// children's fragments back to back with their spans. readChildren keeps
// it in a local while parsing, so no entry writes a pointer to the heap.
type dirScan struct {
	lower []byte
	arena []byte
	spans []span
	// all says every child of the directory is wanted (its lower bound
	// already has the prefix and is at or past startAfter), so consider
	// skips the test.
	all bool
}

// span locates one wanted child's fragment in siblings.frags (or
// dirScan.arena while reading), and says its kind ('o' an object, 'c' a
// chunk directory, 'd' a segment directory). It holds no pointer, so
// heap moves cost no GC write barrier.
type span struct {
	order      uint64 // the fragment's first 8 bytes, big-endian, zero-padded
	start, end int32
	kind       byte
}

// orderOf is a span's order word: comparing two fragments' words orders
// them as the fragments, except that words equal may hide a difference
// (past byte 8, or zero padding), which less settles on the bytes.
func orderOf(frag []byte) uint64 {
	var b [8]byte
	copy(b[:], frag)
	return binary.BigEndian.Uint64(b[:])
}

func (w *lister) run(ctx context.Context, want int) ([]string, error) {
	w.prefixB, w.afterB = []byte(w.prefix), []byte(w.startAfter)
	w.buf = direntBufs.Get().(*[]byte)
	defer func() {
		direntBufs.Put(w.buf)
		w.buf = nil
		for _, k := range w.held {
			w.release(k)
		}
		w.held = nil
	}()
	w.front = frontier{{lower: ""}}
	var keys []string
	for w.front.Len() > 0 && len(keys) < want {
		it := heap.Pop(&w.front).(entry)
		if it.kids != nil {
			w.advance(it.kids) // its next sibling takes its place
		}
		if it.isKey {
			if !isCanonical(w.store.layout, it.lower, it.path()) {
				continue // checked when popped, not when pushed: a leaf holds up to 100 keys, a page wants few
			}
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
		if it.kids != nil {
			if it.kids.dirsLeft--; it.kids.dirsLeft == 0 {
				w.release(it.kids) // no subdirectory of it is left to open
			}
		}
	}
	return keys, nil
}

// advance pushes the smallest child of kids not yet pushed, if any.
func (w *lister) advance(kids *siblings) {
	if c, ok := kids.pop(); ok {
		heap.Push(&w.front, entry{lower: kids.lower + c.frag, isKey: c.kind == 'o', kids: kids, child: c})
	}
}

// expand reads one directory, heaps the children that can contribute and
// pushes the smallest: the frontier holds one child per expanded
// directory, and popping it pushes the next (a k-way merge), so a
// directory of n children costs one O(n) heapify, not a sort, n frontier
// entries and n path copies, when the page wants few keys.
func (w *lister) expand(dir entry) error {
	w.expanded++
	fd, err := w.open(dir)
	if errors.Is(err, unix.ENOENT) {
		return nil // pruned by a concurrent Delete: it held no keys
	}
	if err != nil {
		return err
	}
	w.store.hit(pointListOpened)
	kids := &siblings{lower: dir.lower, fd: fd}
	if dir.kids != nil {
		kids.path = dir.path()
	}
	w.held = append(w.held, kids)
	w.nheld++
	w.peak = max(w.peak, w.nheld)
	if err := w.readChildren(kids); errors.Is(err, unix.ENOENT) {
		w.release(kids)
		return nil // pruned by a concurrent Delete since it was opened: it held no keys
	} else if err != nil {
		return err
	}
	if kids.dirsLeft == 0 || w.nheld > maxHeldDirs {
		w.release(kids) // nothing below it to open, or too many held
	}
	w.advance(kids)
	return nil
}

// open opens the directory of a frontier entry without following a
// symlink: the root afresh (its own read offset, the caller's root fd may
// be read again), a child of a held directory relative to it, any other
// directory from the root (resolve: one openat2, or a walk).
func (w *lister) open(dir entry) (int, error) {
	if dir.kids == nil {
		fd, err := unix.Openat(w.root, ".", dirFlags, 0)
		if err != nil {
			return -1, fmt.Errorf("open root: %w", err)
		}
		return fd, nil
	}
	if dir.kids.fd >= 0 {
		return openDir(dir.kids.fd, dir.child.name())
	}
	c, err := resolve(w.root, dir.path(), noCreate, false, nil)
	if err != nil {
		return -1, err
	}
	fd := c.leaf()
	c.fds = nil // ownership passes to the caller
	return fd, nil
}

// release closes kids' descriptor if it is still open.
func (w *lister) release(kids *siblings) {
	if kids.fd >= 0 {
		unix.Close(kids.fd)
		w.nheld--
	}
	kids.fd = -1
}

// readChildren reads the directory open at kids.fd with getdents and
// heaps its wanted children into kids. Names are parsed in place; only the
// wanted children's fragments are copied, into one string.
func (w *lister) readChildren(kids *siblings) error {
	sc := dirScan{lower: append(w.scratch.lower[:0], kids.lower...), arena: w.scratch.arena[:0], spans: w.scratch.spans[:0]}
	// Every child's lower bound strictly extends kids.lower: if that has
	// the prefix and is not below startAfter, every child is wanted.
	sc.all = bytes.HasPrefix(sc.lower, w.prefixB) && bytes.Compare(w.afterB, sc.lower) <= 0
	err := w.readDirents(&sc, kids)
	w.scratch = sc
	if err != nil {
		return err
	}
	kids.frags = string(sc.arena)
	kids.heap = slices.Clone(sc.spans)
	for _, sp := range kids.heap {
		if sp.kind != 'o' {
			kids.dirsLeft++
		}
	}
	kids.heapify()
	return nil
}

// readDirents reads every dirent of kids.fd and records the wanted
// children in sc.
func (w *lister) readDirents(sc *dirScan, kids *siblings) error {
	buf := *w.buf
	for {
		n, err := unix.Getdents(kids.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read dir %q: %w", strings.Join(kids.path, "/"), err)
		}
		if n <= 0 {
			break
		}
		if err := w.parseDirents(sc, kids, buf[:n]); err != nil {
			return err
		}
	}
	return nil
}

// Offsets in a struct linux_dirent64.
const (
	direntIno    = 0
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// parseDirents records the wanted children among the dirents in b.
func (w *lister) parseDirents(sc *dirScan, kids *siblings, b []byte) error {
	for off := 0; off < len(b); {
		if len(b)-off < direntName {
			return fmt.Errorf("read dir %q: short dirent", strings.Join(kids.path, "/"))
		}
		reclen := int(binary.NativeEndian.Uint16(b[off+direntReclen:]))
		if reclen < direntName || off+reclen > len(b) {
			return fmt.Errorf("read dir %q: malformed dirent", strings.Join(kids.path, "/"))
		}
		rec := b[off : off+reclen]
		off += reclen
		name := rec[direntName:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if binary.NativeEndian.Uint64(rec[direntIno:]) == 0 || isDots(name) {
			continue
		}
		w.entries++
		if err := w.consider(sc, kids, name, rec[direntType]); err != nil {
			return err
		}
	}
	return nil
}

// isDots reports whether name is "." or "..".
func isDots(name []byte) bool {
	return (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.')
}

// consider records the directory entry name (of dirent type typ) as a
// child of kids if it decodes to a key fragment, has the file type its
// suffix gives it (symlinks never do), and is wanted by the page.
func (w *lister) consider(sc *dirScan, kids *siblings, name []byte, typ byte) error {
	if len(name) <= sufLen {
		return nil
	}
	body, kind := name[:len(name)-sufLen], suffixKind(name)
	if kind == 0 {
		return nil // bookkeeping dirs, foreign files
	}
	start := len(sc.arena)
	if start+len(name) > math.MaxInt32 {
		return fmt.Errorf("read dir %q: %w: names exceed 2 GiB", strings.Join(kids.path, "/"), errNotStorable)
	}
	sc.arena = append(sc.arena, body...)
	if kind == 'd' {
		sc.arena = append(sc.arena, '/')
	}
	frag := sc.arena[start:]
	if !sc.all {
		sc.lower = append(sc.lower[:len(kids.lower)], frag...)
		if !w.wanted(sc.lower, kind == 'o') {
			sc.arena = sc.arena[:start]
			return nil
		}
	}
	ok, err := typeMatches(kids.fd, name, typ, kind == 'o')
	if err != nil || !ok {
		sc.arena = sc.arena[:start]
		return err
	}
	sc.spans = append(sc.spans, span{order: orderOf(frag), start: int32(start), end: int32(len(sc.arena)), kind: kind})
	return nil
}

// suffixKind is the kind a file name's suffix gives it ('d' for sufDir,
// 'c' for sufChunk, 'o' for sufObj), or 0 for any other name.
func suffixKind(name []byte) byte {
	if name[len(name)-2] != '.' {
		return 0
	}
	switch k := name[len(name)-1]; k {
	case sufDir[1], sufChunk[1], sufObj[1]:
		return k
	}
	return 0
}

// typeMatches reports whether the entry name in directory fd, of dirent
// type typ, is a regular file (isKey) or a directory; symlinks never
// match. A filesystem that reports no type is asked with fstatat (without
// following a symlink); an entry gone since is no match.
func typeMatches(fd int, name []byte, typ byte, isKey bool) (bool, error) {
	if typ == unix.DT_UNKNOWN {
		var st unix.Stat_t
		err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("stat %q: %w", name, err)
		}
		if isKey {
			return st.Mode&unix.S_IFMT == unix.S_IFREG, nil
		}
		return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
	}
	if isKey {
		return typ == unix.DT_REG, nil
	}
	return typ == unix.DT_DIR, nil
}

// wanted reports whether a child with lower bound lower can be (isKey), or
// can hold, a key of this page (run drops a key that is not canonical when
// it pops it).
func (w *lister) wanted(lower []byte, isKey bool) bool {
	if isKey {
		return bytes.HasPrefix(lower, w.prefixB) && bytes.Compare(lower, w.afterB) > 0
	}
	// Every key below the directory strictly extends lower.
	if !bytes.HasPrefix(lower, w.prefixB) && !bytes.HasPrefix(w.prefixB, lower) {
		return false
	}
	return bytes.Compare(w.afterB, lower) < 0 || bytes.HasPrefix(w.afterB, lower)
}

// isCanonical rejects file names planted by hand that decode to a key the
// store's layout would map elsewhere (or to no valid key): List only returns keys
// that Get can read.
func isCanonical(l layout, key string, path []string) bool {
	return objstore.ValidateKey(objstore.OpList, key) == nil && slices.Equal(l.encodeKey(key), path)
}

// entry is a key (isKey) or an unexpanded directory whose keys all
// strictly extend lower: a child of an expanded directory, or the root
// (kids nil).
type entry struct {
	lower string
	isKey bool
	kids  *siblings
	child dirChild
}

// path is the entry's file path below the root.
func (e entry) path() []string {
	if e.kids == nil {
		return nil
	}
	return append(slices.Clip(e.kids.path), e.child.name())
}

// siblings are the wanted children of one expanded directory not yet
// pushed to the frontier, a min-heap by their lower bounds, and the
// directory's descriptor while a subdirectory of it may still be opened.
type siblings struct {
	lower    string   // the directory's lower bound
	path     []string // the directory's path below the root
	fd       int      // its descriptor, or -1 once released
	dirsLeft int      // wanted subdirectories not yet expanded
	frags    string   // the wanted children's fragments, back to back
	heap     []span   // the children not yet pushed, into frags
}

// dirChild is one directory entry: the key bytes its name spells and its
// kind ('o' an object, 'c' a chunk directory, 'd' a segment directory).
type dirChild struct {
	frag string
	kind byte
}

// name is the file name the child has in its directory.
func (c dirChild) name() string {
	switch c.kind {
	case 'd':
		return c.frag[:len(c.frag)-1] + sufDir
	case 'c':
		return c.frag + sufChunk
	}
	return c.frag + sufObj
}

// less orders two children of the directory by their lower bounds, a key
// before a directory with the same lower bound (whose keys are all
// greater).
func (s *siblings) less(a, b span) bool {
	if a.order != b.order {
		return a.order < b.order
	}
	if c := strings.Compare(s.frags[a.start:a.end], s.frags[b.start:b.end]); c != 0 {
		return c < 0
	}
	return cmpKeyFirst(a.kind == 'o', b.kind == 'o') < 0
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

// heapify orders s.heap as a min-heap by less.
func (s *siblings) heapify() {
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.siftDown(i)
	}
}

// pop removes and returns the smallest child not yet pushed.
func (s *siblings) pop() (dirChild, bool) {
	h := s.heap
	if len(h) == 0 {
		return dirChild{}, false
	}
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	s.heap = h[:last]
	s.siftDown(0)
	return dirChild{frag: s.frags[top.start:top.end], kind: top.kind}, true
}

// siftDown restores the min-heap order below index i.
func (s *siblings) siftDown(i int) {
	h := s.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && s.less(h[r], h[l]) {
			m = r
		}
		if !s.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
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
