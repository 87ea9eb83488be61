package fs

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// In trie3 a symlink planted as a ULID window's directory (any of the 4
// trie levels of a ULID-shaped segment) is never followed, though the
// target holds a valid object under the very name the key's tail maps to
// (a store that followed it would read "secret"): every operation fails
// with ErrInvalidKey, List skips it, and the target is untouched.
func TestSymlinkedULIDWindowConfined(t *testing.T) {
	const key = "d/01JGJFGR48VKRYADDJY7NRAJWJ"
	levels := []string{"d.d", "01.c", "JG.c", "JF.c", "G.c"}
	for depth := 1; depth < len(levels); depth++ {
		t.Run(levels[depth], func(t *testing.T) {
			s := openT(t)
			if s.layout != layoutTrie3 {
				t.Fatalf("new root in layout %d", s.layout)
			}
			out := newOutside(t)
			// The rest of the key's path below the link, ending in a valid
			// object file (a copy of the outside's b.o).
			rest := filepath.Join(append([]string{out.path}, levels[depth+1:]...)...)
			if err := os.MkdirAll(rest, 0o755); err != nil {
				t.Fatal(err)
			}
			obj, err := os.ReadFile(filepath.Join(out.path, "b.o"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rest, "R48VKRYADDJY7NRAJWJ.o"), obj, 0o644); err != nil {
				t.Fatal(err)
			}
			before := out.snapshot(t)
			parent := filepath.Join(append([]string{s.Root()}, levels[:depth]...)...)
			if err := os.MkdirAll(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out.path, filepath.Join(parent, levels[depth])); err != nil {
				t.Fatal(err)
			}
			for op, err := range attackOps(s, key, out.etag) {
				if !errors.Is(err, objstore.ErrInvalidKey) {
					t.Errorf("%s %q through a symlinked %s: %v, want ErrInvalidKey", op, key, levels[depth], err)
				}
			}
			requireKeys(t, s)
			if after := out.snapshot(t); !maps.Equal(before, after) {
				t.Fatalf("outside changed:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}
