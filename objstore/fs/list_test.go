package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// List answers the same however many directory descriptors it may hold:
// with none held every subdirectory is reached by a walk from the root,
// with one or two most are, and the default holds a whole path. Keys
// include segment directories, long chunked segments and history tries.
func TestListSameWithFewHeldDirs(t *testing.T) {
	s := openT(t)
	keys := listKeys()
	fk := format.NewKeys("g")
	for v := uint64(1); v <= 30; v++ {
		keys = append(keys, fk.Manifest("main", 1, v*37), fk.Manifest("dev", 2, v))
	}
	for _, k := range keys {
		mustPut(t, s, k, "v", objstore.CreateOnly)
	}
	sort.Strings(keys)
	prefixes := []string{"", "a", "a/", "x", "g/branches/", fk.IncarnationPrefix("main", 1), fk.IncarnationPrefix("dev", 2)[:30]}
	defer func(n int) { maxHeldDirs = n }(maxHeldDirs)
	for _, held := range []int{0, 1, 2, 64} {
		maxHeldDirs = held
		for _, p := range prefixes {
			want := filterPrefix(keys, p)
			for _, limit := range []int{1, 3, 1000} {
				if got := listAll(t, s, p, limit); !slices.Equal(got, want) {
					t.Fatalf("held %d, list(%.30q, limit %d)\n got %.200q\nwant %.200q", held, p, limit, got, want)
				}
			}
		}
	}
}

// A List holds at most maxHeldDirs+1 directory descriptors at once, and
// closes every one it opened before it returns, on success and on error.
func TestListClosesItsDirectories(t *testing.T) {
	s := openT(t)
	for i := 0; i < 12; i++ {
		mustPut(t, s, fmt.Sprintf("d%02d/e/f/g%02d", i, i), "v", objstore.CreateOnly)
	}
	defer func(n int) { maxHeldDirs = n }(maxHeldDirs)
	maxHeldDirs = 1
	before := openFds(t)
	root, err := s.openRoot()
	if err != nil {
		t.Fatal(err)
	}
	w := lister{store: s, root: root}
	keys, err := w.run(context.Background(), 1000)
	if err != nil || len(keys) != 12 {
		t.Fatalf("run: %d keys, %v", len(keys), err)
	}
	if w.peak > maxHeldDirs+1 {
		t.Errorf("held %d descriptors at once, bound %d", w.peak, maxHeldDirs+1)
	}
	w = lister{store: s, root: root}
	if _, err := w.run(&cancelAfter{Context: context.Background(), n: 6}, 1000); err == nil || w.expanded < 5 {
		t.Fatalf("run canceled after 6 checks: %v after %d dirs", err, w.expanded)
	}
	unix.Close(root)
	maxHeldDirs = 64
	for i := 0; i < 20; i++ {
		if _, err := s.List(context.Background(), "d0", "", 1); err != nil {
			t.Fatal(err)
		}
	}
	if after := openFds(t); after != before {
		t.Fatalf("open descriptors %d before, %d after: List leaks", before, after)
	}
}

// openFds counts this process's open file descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// On a filesystem whose dirents carry no type (DT_UNKNOWN), List asks
// fstatat without following links, and reaches the same verdicts as from
// the dirent types: objects are regular files, directories directories,
// symlinks neither, a vanished entry nothing.
func TestTypeMatchesWithoutDirentType(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "f.o"), nil, 0o644))
	must(os.Mkdir(filepath.Join(dir, "d.c"), 0o755))
	must(os.Symlink("f.o", filepath.Join(dir, "lf.o")))
	must(os.Symlink("d.c", filepath.Join(dir, "ld.c")))
	fd, err := unix.Open(dir, dirFlags, 0)
	must(err)
	defer unix.Close(fd)
	for _, tc := range []struct {
		name       string
		typ        byte
		key, match bool
	}{
		{"f.o", unix.DT_REG, true, true},
		{"f.o", unix.DT_REG, false, false},
		{"d.c", unix.DT_DIR, false, true},
		{"d.c", unix.DT_DIR, true, false},
		{"lf.o", unix.DT_LNK, true, false},
		{"ld.c", unix.DT_LNK, false, false},
		{"gone.o", unix.DT_REG, true, false},
	} {
		if tc.name != "gone.o" {
			got, err := typeMatches(fd, []byte(tc.name), tc.typ, tc.key)
			if err != nil || got != tc.match {
				t.Errorf("%s typed: %v %v, want %v", tc.name, got, err, tc.match)
			}
		}
		got, err := typeMatches(fd, []byte(tc.name), unix.DT_UNKNOWN, tc.key)
		if err != nil || got != tc.match {
			t.Errorf("%s untyped (key %v): %v %v, want %v", tc.name, tc.key, got, err, tc.match)
		}
	}
}

// cancelAfter is a context that reports itself canceled from its n-th
// Err call on, so a List fails midway with directories held.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// A directory that a concurrent Delete prunes after List opened it and
// before List read it held no keys: List skips it (Linux answers getdents
// on a removed directory with ENOENT) and lists the rest.
func TestListSkipsDirectoryPrunedWhileOpen(t *testing.T) {
	s := openT(t)
	mustPut(t, s, "a/x", "v", objstore.CreateOnly)
	mustPut(t, s, "b/x", "v", objstore.CreateOnly)
	deleter, err := Open(s.root)
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	s.hook = func(p string) {
		if p != pointListOpened {
			return
		}
		if opened++; opened == 2 { // the root, then a.d
			if err := deleter.Delete(context.Background(), "a/x"); err != nil {
				t.Errorf("delete: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s.root, "a.d")); !os.IsNotExist(err) {
				t.Errorf("delete did not prune a.d: %v", err)
			}
		}
	}
	page, err := s.List(context.Background(), "", "", 10)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if !slices.Equal(page.Keys, []string{"b/x"}) || opened < 2 {
		t.Fatalf("list = %q after %d opens, want [b/x]", page.Keys, opened)
	}
}
