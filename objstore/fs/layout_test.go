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

// openLayout opens a fresh root in layout l: a root of an older layout
// (trie1, trie2) is made the way an earlier version left it, by its marker
// directory alone.
func openLayout(tb interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, dir string, l layout) *Store {
	tb.Helper()
	if l != newestLayout {
		if err := os.Mkdir(filepath.Join(dir, l.marker()), 0o755); err != nil {
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

// Open reads the layout from the root's marker: a new root gets trie3
// (a ULID-named object under its 7-character time prefix, a version in
// trie2's digit trie), a trie1 or trie2 root keeps its layout (and its
// paths) across reopens, and a root with two markers, an unknown marker,
// or a marker that is not a directory is refused with a typed error. A
// key whose first segment starts ".layout-" is a key, not a marker.
func TestOpenLayoutMarkers(t *testing.T) {
	ctx := context.Background()
	fresh := t.TempDir()
	s := openLayout(t, fresh, layoutTrie3)
	mustPut(t, s, ".layout-x/18446744073709551615", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(fresh, ".layout-x.d", "18.c", "44.c", "67.c", "44.c", "07.c", "37.c", "0.c", "9.c")); err != nil {
		t.Fatalf("trie3 version path: %v", err)
	}
	mustPut(t, s, "d/01JGJFGR48VKRYADDJY7NRAJWJ", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(fresh, "d.d", "01.c", "JG.c", "JF.c", "G.c", "R48VKRYADDJY7NRAJWJ.o")); err != nil {
		t.Fatalf("trie3 ULID path: %v", err)
	}
	if s2, err := Open(fresh); err != nil || s2.layout != layoutTrie3 {
		t.Fatalf("reopen trie3: %v", err)
	}

	t2 := t.TempDir()
	s = openLayout(t, t2, layoutTrie2)
	mustPut(t, s, "d/01JGJFGR48VKRYADDJY7NRAJWJ", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(t2, "d.d", "01.c", "JG.c", "JF.c", "GR.c", "48.c", "VK.c", "RY.c")); err != nil {
		t.Fatalf("trie2 ULID path: %v", err)
	}
	s2, err := Open(t2)
	if err != nil || s2.layout != layoutTrie2 {
		t.Fatalf("reopen trie2: %v", err)
	}
	mustPut(t, s2, "d/01JGJFGR48VKRYADDJY7NRAJWK", "w", objstore.CreateOnly)
	requireKeys(t, s2, "d/01JGJFGR48VKRYADDJY7NRAJWJ", "d/01JGJFGR48VKRYADDJY7NRAJWK")
	if _, err := os.Stat(filepath.Join(t2, markerTrie3)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a trie2 root got a trie3 marker: %v", err)
	}

	old := t.TempDir()
	s = openLayout(t, old, layoutTrie1)
	mustPut(t, s, "b/18446744073709551615", "v", objstore.CreateOnly)
	if _, err := os.Stat(filepath.Join(old, "b.d", "18.c", "44.c")); err != nil {
		t.Fatalf("trie1 path: %v", err)
	}
	s2, err = Open(old)
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
		{"trie2-and-trie3", []string{markerTrie2, markerTrie3}, "", ErrMixedLayout},
		{"trie1-and-trie3", []string{markerTrie1, markerTrie3}, "", ErrMixedLayout},
		{"unknown", []string{".layout-trie4"}, "", ErrUnknownLayout},
		{"unknown-and-known", []string{markerTrie3, ".layout-zz"}, "", ErrMixedLayout},
		{"marker-is-file", nil, markerTrie2, errNotStorable},
		{"trie3-marker-is-file", nil, markerTrie3, errNotStorable},
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
// agree on one layout: both succeed, in trie3, and the root holds one
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
		if errs[i] != nil || stores[i].layout != layoutTrie3 {
			t.Fatalf("opener %d: %v", i, errs[i])
		}
	}
	markers, _, err := scanRoot(dir)
	if err != nil || !slices.Equal(markers, []string{markerTrie3}) {
		t.Fatalf("markers %q, %v", markers, err)
	}
}

// An opener that finds a root unmarked, but loses the race to one marking
// it with another layout (an older binary making trie1 or trie2), refuses
// the root (ErrMixedLayout) instead of writing trie3 paths beside the
// other's: it reads its marker back.
func TestOpenRefusesLayoutMarkedMeanwhile(t *testing.T) {
	for _, other := range []string{markerTrie1, markerTrie2} {
		t.Run(other, func(t *testing.T) {
			dir := t.TempDir()
			afterLayoutScan = func(root string) {
				if err := os.Mkdir(filepath.Join(root, other), 0o755); err != nil {
					t.Error(err)
				}
			}
			defer func() { afterLayoutScan = nil }()
			if _, err := Open(dir); !errors.Is(err, ErrMixedLayout) {
				t.Fatalf("open: %v, want ErrMixedLayout", err)
			}
		})
	}
}

// Property: in every layout, over random keys mixing digit runs, letters
// and separators (so one directory holds chunks of both widths, keys and
// their extensions; a shared 11- or 12-byte lead puts trie2's switch to
// one-digit chunks, and a two-byte chunk across it, among siblings), List
// returns exactly the model's keys in byte order, for any prefix,
// startAfter and page size.
func TestListOrderProperty(t *testing.T) {
	key := rapid.StringMatching(`[0-9ab]{1,3}(/(0123456789ab?)?[0-9ab][0-9ab.]{0,11}){0,2}`)
	checkListOrder(t, key,
		rapid.StringMatching(`([0-9ab]{1,2}(/(0123456789ab?)?[0-9ab]{0,2})?)?`),
		rapid.StringMatching(`[0-9ab/.]{0,5}`))
}

// allLayouts are the layouts a property test draws from.
var allLayouts = []layout{layoutTrie1, layoutTrie2, layoutTrie3}

// ulidish draws a final segment near the ULID shape: a ULID over a small
// alphabet (so siblings share time prefixes and a trie3 leaf holds many
// of them), or one cut short, extended, or with one byte outside the
// alphabet (then not ULID-shaped: trie3 cuts it as trie2 does, among
// ULID-shaped siblings, keys that are prefixes of one another).
func ulidish() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		u := rapid.StringMatching(`[07][0A]{3}[0AZ]{3}[01AZ]{19}`).Draw(t, "ulid")
		switch rapid.IntRange(0, 4).Draw(t, "mutation") {
		case 1:
			return u[:rapid.IntRange(1, ulidLen-1).Draw(t, "cut")]
		case 2:
			return u + rapid.StringMatching(`[0AZ]{1,3}`).Draw(t, "ext")
		case 3:
			i := rapid.IntRange(0, ulidLen-1).Draw(t, "at")
			return u[:i] + rapid.SampledFrom([]string{"a", "I", "8", "."}).Draw(t, "odd") + u[i+1:]
		}
		return u
	})
}

// Property: in every layout, over keys whose final segments are ULIDs
// and near-ULIDs (see ulidish) in a couple of directories, List returns
// exactly the model's keys in byte order, for any prefix, startAfter and
// page size: trie3's short ULID trie beside trie2-cut siblings keeps the
// order.
func TestListOrderPropertyULID(t *testing.T) {
	key := rapid.Custom(func(t *rapid.T) string {
		return rapid.SampledFrom([]string{"a/", "b/", "a/0/"}).Draw(t, "dir") + ulidish().Draw(t, "seg")
	})
	checkListOrder(t, key,
		rapid.StringMatching(`(a/(0/)?|b/)?[07]?[0A]{0,3}[0AZ]{0,4}`),
		rapid.StringMatching(`([ab]/(0/)?)?[07]?[0A]{0,3}[0AZ]{0,4}[01AZ]{0,20}`))
}

// checkListOrder checks, on a new store of a drawn layout, that after
// puts of distinct keys drawn from key, List paged from a drawn prefix
// and startAfter with a drawn page size returns exactly the model's keys
// in byte order.
func checkListOrder(t *testing.T, key, prefixGen, afterGen *rapid.Generator[string]) {
	rapid.Check(t, func(t *rapid.T) {
		l := rapid.SampledFrom(allLayouts).Draw(t, "layout")
		dir, err := os.MkdirTemp("", "fs-listprop-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		listOrderCase(t, openLayout(t, dir, l), l, key, prefixGen, afterGen)
	})
}

// listOrderCase is one case of checkListOrder on store s of layout l.
func listOrderCase(t *rapid.T, s *Store, l layout, key, prefixGen, afterGen *rapid.Generator[string]) {
	keys := rapid.SliceOfNDistinct(key, 1, 30, rapid.ID[string]).Draw(t, "keys")
	for _, k := range keys {
		if _, err := s.Put(context.Background(), k, []byte(k), objstore.CreateOnly); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	slices.Sort(keys)
	prefix := prefixGen.Draw(t, "prefix")
	after := afterGen.Draw(t, "after")
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
}
