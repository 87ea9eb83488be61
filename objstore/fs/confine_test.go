package fs

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// outsideDir is a directory outside the store holding a valid object file
// "b.o" (so a store that followed a symlink into it would read it
// successfully). snapshot captures every file there to prove it untouched.
type outsideDir struct {
	path string
	etag string
}

func newOutside(t *testing.T) outsideDir {
	t.Helper()
	o, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return outsideDir{path: o.Root(), etag: mustPut(t, o, "b", "secret", objstore.CreateOnly)}
}

func (o outsideDir) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(o.path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// attackOps runs every operation on key and returns their errors; a write
// that succeeds must not have touched the outside (checked by the caller).
func attackOps(s *Store, key, etag string) map[string]error {
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["get"] = s.Get(ctx, key)
	_, errs["head"] = s.Head(ctx, key)
	_, errs["put-if-match"] = s.Put(ctx, key, []byte("pwned"), objstore.IfMatch(etag))
	_, errs["put-create"] = s.Put(ctx, key, []byte("pwned"), objstore.CreateOnly)
	_, errs["put"] = s.Put(ctx, key, []byte("pwned"), objstore.Unconditional)
	errs["delete"] = s.Delete(ctx, key)
	return errs
}

// A symlink planted inside the root as a directory component (a key
// segment's ".d" or a long segment's ".c") is never followed: every
// operation through it fails with ErrInvalidKey, List skips it, and the
// directory it points to is untouched.
func TestSymlinkedDirectoryConfined(t *testing.T) {
	long := strings.Repeat("L", chunkMaxBytes)
	tests := []struct{ link, key string }{
		{"a.d", "a/b"},
		{long + ".c", long + "x/b"}, // a long non-final segment's chunk
		{"LL.c", long + "b"},        // a final segment's trie chunk
	}
	for _, tc := range tests {
		t.Run(tc.link[:2]+strconv.Itoa(len(tc.link)), func(t *testing.T) {
			s := openT(t)
			out := newOutside(t)
			before := out.snapshot(t)
			if err := os.Symlink(out.path, filepath.Join(s.Root(), tc.link)); err != nil {
				t.Fatal(err)
			}
			for op, err := range attackOps(s, tc.key, out.etag) {
				if !errors.Is(err, objstore.ErrInvalidKey) {
					t.Errorf("%s %q through a symlinked dir: %v, want ErrInvalidKey", op, tc.key, err)
				}
			}
			requireKeys(t, s)
			if after := out.snapshot(t); !maps.Equal(before, after) {
				t.Fatalf("outside changed:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// A symlink planted as an object file is never followed: reads and CAS
// fail with ErrInvalidKey, create-only finds the name taken, an
// unconditional Put replaces the link itself and Delete removes the link
// itself; the target file is untouched throughout.
func TestSymlinkedObjectConfined(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	out := newOutside(t)
	before := out.snapshot(t)
	link := filepath.Join(s.Root(), "f.o")
	plant := func() {
		os.Remove(link)
		if err := os.Symlink(filepath.Join(out.path, "b.o"), link); err != nil {
			t.Fatal(err)
		}
	}
	plant()
	want := map[string]error{
		"get": objstore.ErrInvalidKey, "head": objstore.ErrInvalidKey,
		"put-if-match": objstore.ErrInvalidKey, "put-create": objstore.ErrPreconditionFailed,
	}
	for op, kind := range want {
		var err error
		switch op {
		case "get":
			_, err = s.Get(ctx, "f")
		case "head":
			_, err = s.Head(ctx, "f")
		case "put-if-match":
			_, err = s.Put(ctx, "f", []byte("pwned"), objstore.IfMatch(out.etag))
		case "put-create":
			_, err = s.Put(ctx, "f", []byte("pwned"), objstore.CreateOnly)
		}
		if !errors.Is(err, kind) {
			t.Errorf("%s through a symlinked object: %v, want %v", op, err, kind)
		}
	}
	requireKeys(t, s) // a symlink is not an object
	mustPut(t, s, "f", "mine", objstore.Unconditional)
	if got := string(mustGet(t, s, "f").Data); got != "mine" {
		t.Fatalf("f = %q", got)
	}
	plant()
	if err := s.Delete(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("symlink not removed: %v", err)
	}
	if after := out.snapshot(t); !maps.Equal(before, after) {
		t.Fatalf("outside changed:\nbefore %q\nafter  %q", before, after)
	}
}

// Keys with ".." (or ".") segments are rejected before any I/O by every
// operation, so they cannot reach a file next to the root.
func TestDotDotKeysConfined(t *testing.T) {
	parent := t.TempDir()
	s, err := Open(filepath.Join(parent, "store"))
	if err != nil {
		t.Fatal(err)
	}
	bait := newStoreAt(t, parent) // parent/x.o and parent/y.d/z.o are valid objects
	mustPut(t, bait, "x", "bait", objstore.CreateOnly)
	mustPut(t, bait, "y/z", "bait", objstore.CreateOnly)
	out := outsideDir{path: parent}
	before := out.snapshot(t)
	for _, key := range []string{"../x", "a/../../x", "..", ".", "./x", "a/./b", "../y/z", "a/.."} {
		for op, err := range attackOps(s, key, "") {
			if !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("%s %q: %v, want ErrInvalidKey", op, key, err)
			}
		}
		if _, err := s.List(context.Background(), key+"/", "", 0); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("list prefix %q/: %v, want ErrInvalidKey", key, err)
		}
	}
	if after := out.snapshot(t); !maps.Equal(before, after) {
		t.Fatalf("files next to the root changed:\nbefore %q\nafter  %q", before, after)
	}
}

func newStoreAt(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Symlinks planted in place of the bookkeeping directories are not
// followed: writes fail and nothing is created where they point.
func TestSymlinkedBookkeepingConfined(t *testing.T) {
	for _, dir := range []string{tmpDirName, lockDirName} {
		t.Run(dir, func(t *testing.T) {
			s := openT(t)
			out := newOutside(t)
			before := out.snapshot(t)
			p := filepath.Join(s.Root(), dir)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out.path, p); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(context.Background(), "k", []byte("v"), objstore.Unconditional); !errors.Is(err, objstore.ErrTransient) || !errors.Is(err, errNotStorable) {
				t.Fatalf("put with %s symlinked: %v", dir, err)
			}
			if after := out.snapshot(t); !maps.Equal(before, after) {
				t.Fatalf("outside changed:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// Open resolves a symlinked root once: retargeting the link later does not
// move the store.
func TestRootResolvedOnce(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	s := newStoreAt(t, link)
	if s.Root() != a {
		t.Fatalf("root %s, want %s", s.Root(), a)
	}
	os.Remove(link)
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(a, "k.o")); err != nil {
		t.Fatalf("object not under the original root: %v", err)
	}
	if names, _ := osReadDirNames(b); len(names) != 0 {
		t.Fatalf("store wrote into the retargeted link: %v", names)
	}
}

// A FIFO or directory planted as an object file is refused without
// blocking or reading it.
func TestForeignObjectFileRefused(t *testing.T) {
	s := openT(t)
	if err := unix.Mkfifo(filepath.Join(s.Root(), "ff.o"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.Root(), "dd.o"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ff", "dd"} {
		if _, err := s.Get(context.Background(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("get %s: %v, want ErrInvalidKey", key, err)
		}
	}
	requireKeys(t, s)
}
