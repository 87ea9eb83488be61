package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"pgregory.net/rapid"
)

// openLayout opens a fresh root in layout l: a trie1 root is made the way
// an earlier version left it, by its marker directory alone.
func openLayout(tb interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, dir string, l layout) *Store {
	tb.Helper()
	if l == layoutTrie1 {
		if err := os.Mkdir(filepath.Join(dir, markerTrie1), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	s, err := OpenWith(dir, Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	if s.layout != l {
		tb.Fatalf("open: layout %d, want %d", s.layout, l)
	}
	return s
}

// Open reads the layout from the root's marker: a new root gets trie2, a
// trie1 root keeps trie1 (and its 2-byte chunk paths) across reopens, and a
// root with two markers, an unknown marker, or a marker that is not a
// directory is refused with a typed error. A key whose first segment
// starts ".layout-" is a key, not a marker.
func TestOpenLayoutMarkers(t *testing.T) {
	ctx := context.Background()
	fresh := t.TempDir()
	s := openLayout(t, fresh, layoutTrie2)
	mustPut(t, s, ".layout-x/18446744073709551615", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(fresh, ".layout-x.d", "18.c", "44.c", "67.c", "44.c", "07.c", "37.c", "0.c", "9.c")); err != nil {
		t.Fatalf("trie2 path: %v", err)
	}
	if s2, err := Open(fresh); err != nil || s2.layout != layoutTrie2 {
		t.Fatalf("reopen trie2: %v", err)
	}

	old := t.TempDir()
	s = openLayout(t, old, layoutTrie1)
	mustPut(t, s, "b/18446744073709551615", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(old, "b.d", "18.c", "44.c")); err != nil {
		t.Fatalf("trie1 path: %v", err)
	}
	s2, err := Open(old)
	if err != nil || s2.layout != layoutTrie1 {
		t.Fatalf("reopen trie1: %v", err)
	}
	if got := mustGet(t, s2, "b/18446744073709551615"); string(got.Data) != "v" {
		t.Fatalf("get = %q", got.Data)
	}
	if _, err := s2.Put(ctx, "b/18446744073709551614", []byte("w"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	requireKeys(t, s2, "b/18446744073709551614", "b/18446744073709551615")

	for _, tc := range []struct {
		name    string
		markers []string
		file    string
		want    error
	}{
		{"both", []string{markerTrie1, markerTrie2}, "", ErrMixedLayout},
		{"unknown", []string{".layout-trie3"}, "", ErrUnknownLayout},
		{"unknown-and-known", []string{markerTrie2, ".layout-zz"}, "", ErrMixedLayout},
		{"marker-is-file", nil, markerTrie2, errNotStorable},
		{"legacy", nil, "18446744073709551615.o", ErrLegacyLayout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, m := range tc.markers {
				if err := os.Mkdir(filepath.Join(dir, m), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.file), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Open(dir); !errors.Is(err, tc.want) {
				t.Fatalf("open: %v, want %v", err, tc.want)
			}
		})
	}
}

// Two openers of one empty root that both scan it before either marks it
// agree on one layout: both succeed, in trie2, and the root holds one
// marker.
func TestOpenRaceAgreesOnLayout(t *testing.T) {
	dir := t.TempDir()
	var scanned sync.WaitGroup
	scanned.Add(2)
	afterLayoutScan = func(string) { scanned.Done(); scanned.Wait() }
	defer func() { afterLayoutScan = nil }()
	var wg sync.WaitGroup
	stores := make([]*Store, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(dir)
		}()
	}
	wg.Wait()
	for i := range stores {
		if errs[i] != nil || stores[i].layout != layoutTrie2 {
			t.Fatalf("opener %d: %v", i, errs[i])
		}
	}
	markers, _, err := scanRoot(dir)
	if err != nil || !slices.Equal(markers, []string{markerTrie2}) {
		t.Fatalf("markers %q, %v", markers, err)
	}
}

// An opener that finds a root unmarked, but loses the race to one marking
// it with another layout (an older binary making trie1), refuses the root
// (ErrMixedLayout) instead of writing trie2 paths beside trie1 ones: it
// reads its marker back.
func TestOpenRefusesLayoutMarkedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	afterLayoutScan = func(root string) {
		if err := os.Mkdir(filepath.Join(root, markerTrie1), 0o755); err != nil {
			t.Error(err)
		}
	}
	defer func() { afterLayoutScan = nil }()
	if _, err := Open(dir); !errors.Is(err, ErrMixedLayout) {
		t.Fatalf("open: %v, want ErrMixedLayout", err)
	}
}

// Property: in either layout, over random keys mixing digit runs, letters
// and separators (so one directory holds chunks of both widths, keys and
// their extensions; a shared 11- or 12-byte lead puts trie2's switch to
// one-digit chunks, and a two-byte chunk across it, among siblings), List
// returns exactly the model's keys in byte order, for any prefix,
// startAfter and page size.
func TestListOrderProperty(t *testing.T) {
	key := rapid.StringMatching(`[0-9ab]{1,3}(/(0123456789ab?)?[0-9ab][0-9ab.]{0,11}){0,2}`)
	rapid.Check(t, func(t *rapid.T) {
		l := rapid.SampledFrom([]layout{layoutTrie1, layoutTrie2}).Draw(t, "layout")
		dir, err := os.MkdirTemp("", "fs-listprop-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		s := openLayout(t, dir, l)
		keys := rapid.SliceOfNDistinct(key, 1, 30, rapid.ID[string]).Draw(t, "keys")
		for _, k := range keys {
			if _, err := s.Put(context.Background(), k, []byte(k), objstore.CreateOnly); err != nil {
				t.Fatalf("put %q: %v", k, err)
			}
		}
		slices.Sort(keys)
		prefix := rapid.StringMatching(`([0-9ab]{1,2}(/(0123456789ab?)?[0-9ab]{0,2})?)?`).Draw(t, "prefix")
		after := rapid.StringMatching(`[0-9ab/.]{0,5}`).Draw(t, "after")
		limit := rapid.IntRange(1, 7).Draw(t, "limit")
		var want []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) && k > after {
				want = append(want, k)
			}
		}
		var got []string
		for range len(keys) + 2 { // bounded: each page but the last adds >= 1 key
			page, err := s.List(context.Background(), prefix, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Keys...)
			if !page.Truncated {
				break
			}
			after = page.Keys[len(page.Keys)-1]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("layout %d: list %q after pages = %q, want %q", l, prefix, got, want)
		}
	})
}
