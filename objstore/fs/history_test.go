package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// putManifests writes versions 1..n of branch main, incarnation 1, through
// the store (create-only, a few writers at once).
func putManifests(tb testing.TB, s *Store, keys format.Keys, from, to int) {
	tb.Helper()
	var wg sync.WaitGroup
	const writers = 8
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for v := from + w; v <= to; v += writers {
				if _, err := s.Put(context.Background(), keys.Manifest("main", 1, uint64(v)), []byte("m"), objstore.CreateOnly); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// headEntries runs the kernel's head lookup, LIST(incarnation prefix,
// limit 1), and returns the key it found and the directory entries read.
func headEntries(tb testing.TB, s *Store, prefix string) (string, int) {
	tb.Helper()
	root, err := s.openRoot()
	if err != nil {
		tb.Fatal(err)
	}
	defer unix.Close(root)
	w := lister{store: s, root: root, prefix: prefix}
	keys, err := w.run(context.Background(), 1+1) // List asks for limit+1
	if err != nil {
		tb.Fatal(err)
	}
	if len(keys) == 0 {
		tb.Fatal("no head")
	}
	return keys[0], w.entries
}

// maxHeadEntries bounds the directory entries a head lookup reads in the
// trie2 and trie3 layouts (which map versions alike; new roots are trie3): the directories on the way to the head (root,
// g, branches, main, the incarnation) hold a fixed handful (10 in all);
// the head's 6 two-byte trie directories hold one chunk each (their 12
// leading digits are the same for every version below 10^8); of its 8
// one-digit directories (at most 10 chunks each) only the last 5 differ
// among 10^4 versions (the others hold one); and the lookup opens one
// more directory of at most 10 to find the page's second key:
// 10 + 6*1 + 5*10 + 3*1 + 10. The bound does not grow with depth beyond
// the levels whose digits differ. Measured: 26, 37, 45 entries at depth
// 10, 10^3, 10^4 (trie1, 2-byte chunks up to 100 per directory: 185 at
// 10^4).
const maxHeadEntries = 10 + 6*1 + 5*10 + 3*1 + 10

// K10 on fs: a head lookup (List limit 1 under a branch incarnation) reads
// a bounded number of directory entries however deep the history, where
// the flat layout read every version (ReadDir of one directory of n files).
func TestHeadLookupEntriesFlatAcrossDepths(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10000 objects")
	}
	s := openT(t)
	keys := format.NewKeys("g")
	prefix := keys.IncarnationPrefix("main", 1)
	done := 0
	for _, depth := range []int{10, 1000, 10000} {
		putManifests(t, s, keys, done+1, depth)
		done = depth
		head, n := headEntries(t, s, prefix)
		if want := keys.Manifest("main", 1, uint64(depth)); head != want {
			t.Fatalf("depth %d: head %q, want %q", depth, head, want)
		}
		t.Logf("depth %5d: head lookup read %d directory entries", depth, n)
		if n > maxHeadEntries {
			t.Errorf("depth %d: head lookup read %d directory entries, want <= %d", depth, n, maxHeadEntries)
		}
		page, err := s.List(context.Background(), prefix, "", 1)
		if err != nil || len(page.Keys) != 1 || page.Keys[0] != head || !page.Truncated {
			t.Fatalf("depth %d: List = %v, %v", depth, page, err)
		}
	}
}

// BenchmarkPublishDepth measures one publish's store round trip on fs, the
// kernel's LIST(limit 1) head lookup plus GET of the head plus a
// create-only PUT of the next version, at history depths 10, 100, 1000
// and 10000, and reports each depth's latency relative to depth 10
// (ratio/depth10). A history-flat layout keeps the ratio near 1. Under
// -short (CI's smoke run) depths 10 and 100 only.
func BenchmarkPublishDepth(b *testing.B) {
	keys := format.NewKeys("g")
	prefix := keys.IncarnationPrefix("main", 1)
	var base float64
	for _, depth := range benchsize.First([]int{10, 100, 1000, 10000}, 2) {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			s, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			putManifests(b, s, keys, 1, depth)
			ctx := context.Background()
			v := depth
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				page, err := s.List(ctx, prefix, "", 1)
				if err != nil || len(page.Keys) != 1 {
					b.Fatalf("list: %v %v", page, err)
				}
				if _, err := s.Get(ctx, page.Keys[0]); err != nil {
					b.Fatal(err)
				}
				v++
				if _, err := s.Put(ctx, keys.Manifest("main", 1, uint64(v)), []byte("m"), objstore.CreateOnly); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if depth == 10 {
				base = ns
			}
			if base > 0 {
				b.ReportMetric(ns/base, "ratio/depth10")
			}
			_, n := headEntries(b, s, prefix)
			b.ReportMetric(float64(n), "entries/lookup")
		})
	}
}

// A root holding objects in the old flat layout (no layout marker) is
// refused with ErrLegacyLayout rather than read as empty; a fresh root is
// marked, and reopening a marked root works.
func TestOpenRefusesLegacyLayout(t *testing.T) {
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "18446744073709551615.o"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(old); !errors.Is(err, ErrLegacyLayout) {
		t.Fatalf("open legacy root: %v, want ErrLegacyLayout", err)
	}
	fresh := t.TempDir()
	s, err := Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "a/18446744073709551615", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(fresh, markerTrie3)); err != nil {
		t.Fatalf("no layout marker: %v", err)
	}
	s2, err := Open(fresh)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	requireKeys(t, s2, "a/18446744073709551615")
}
