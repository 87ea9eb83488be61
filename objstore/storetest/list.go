package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// orderKeys exercise byte-wise order: case, digits, punctuation that sorts
// around '/', multi-byte UTF-8, dots inside segments, URL-special characters,
// and keys that are prefixes of other keys.
var orderKeys = []string{
	"a/b", "a/b/c", "a/bc", "a/b-c", "a/b0", "a/b/c/d", "a/B", "a/a", "a/c",
	"a", "A", "B/x", "Z", "a-b", "a.b", "a0", "a9", "aa", "ab", "b", "1", "10", "2",
	"é", "é/x", "e", "f", "日本/語", "日本語", "😀", "\u00a0nbsp", "z~", "~tilde",
	".a", "..a", "a/.hidden", "a/..b", "a b", "a+b", "a%2Fb", "a&b=c", "a?b", "a#b", "a*b", "a'b", "a\\b",
}

// scrambled returns keys in a fixed order unrelated to sorting.
func scrambled(keys []string) []string {
	out := slices.Clone(keys)
	for i := range out { // fixed permutation: reverse every other pair
		j := (i*7 + 3) % len(out)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// flatOrderKeys are orderKeys' properties in a flat key set: '/' sorts
// between '-', '.' and '0' inside a segment ("a/b-c" < "a/b.c" < "a/b/c/d" <
// "a/b/e" < "a/b0"), so a lister that walks directories instead of bytes
// fails; a key sorts before the keys it is a byte prefix of ("1" < "10",
// "b" < "b-"); multi-byte UTF-8 after a directory and a sibling ("é-x" <
// "é/x" < "éx").
var flatOrderKeys = []string{
	"a/b/c/d", "a/b/e", "a/bc", "a/b-c", "a/b.c", "a/b0", "a/B", "a/a", "a/c",
	"A", "B/x", "Z", "a-b", "a.b", "a0", "a9", "aa", "ab", "b", "b-", "1", "10", "2",
	"é-x", "é/x", "éx", "e", "f", "日本/語", "日本語", "😀", "\u00a0nbsp", "z~", "~tilde",
	".a", "..a", "a/.hidden", "a/..b", "a b", "a+b", "a%2Fb", "a&b=c", "a?b", "a#b", "a*b", "a'b", "a\\b",
}

// testListOrder: List returns every key in byte-wise lexicographic order.
func testListOrder(t *testing.T, s objstore.Store, keys []string) {
	putAll(t, s, scrambled(keys))
	want := sortedWithPrefix(keys, "")
	p, err := s.List(t.Context(), "", "", 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	checkPage(t, p, "", "", 0)
	wantKeys(t, "List all", p.Keys, want)
	if p.Truncated {
		t.Errorf("List of %d keys with the default limit is truncated", len(want))
	}
}

// testListPagination: walking pages of every size yields exactly the keys.
func testListPagination(t *testing.T, s objstore.Store, keys []string) {
	putAll(t, s, scrambled(keys))
	for _, prefix := range []string{"", "a", "a/", "a/b", "日本"} {
		want := sortedWithPrefix(keys, prefix)
		for _, limit := range []int{1, 2, 3, 7, 1000, 0, -5, 5000} {
			got := listAll(t, s, prefix, "", limit, len(keys))
			wantKeys(t, fmt.Sprintf("walk prefix %q limit %d", prefix, limit), got, want)
		}
	}
}

// prefixSet is the keys testListPrefix writes and the List calls it checks.
type prefixSet struct {
	keys  []string
	cases []prefixCase
}

// prefixCase is one List(prefix) and the keys it must return, in order.
type prefixCase struct {
	prefix string
	want   []string
}

// nestedPrefixes include keys that are path-prefixes of others ("a", "a/b").
var nestedPrefixes = prefixSet{
	keys: []string{"a", "ab", "a/a", "a/b", "a/b-c", "a/b/c", "a/bc", "a/c", "b/a/b", ".a", "..a", "x"},
	cases: []prefixCase{
		{"a/b", []string{"a/b", "a/b-c", "a/b/c", "a/bc"}},
		{"a/b/", []string{"a/b/c"}},
		{"a/", []string{"a/a", "a/b", "a/b-c", "a/b/c", "a/bc", "a/c"}},
		{"a", []string{"a", "a/a", "a/b", "a/b-c", "a/b/c", "a/bc", "a/c", "ab"}},
		{"a/b/c/d", nil},
		{"nomatch", nil},
		{"b/", []string{"b/a/b"}},
		{".", []string{"..a", ".a"}},
		{"..", []string{"..a"}},
		{"a/.", nil},
		{"a/..", nil},
	},
}

// flatPrefixes are the same checks in a flat key set: "a/b" (a directory,
// not a key) matches "a/b-c", "a/b-x/y", "a/b/c" and "a/bc"; a prefix that
// is itself a key ("a/c") matches it and the keys it is a byte prefix of.
var flatPrefixes = prefixSet{
	keys: []string{"a-b", "ab", "a/a", "a/b-c", "a/b-x/y", "a/b/c", "a/bc", "a/c", "a/c.d", "b/a/b", ".a", "..a", "x"},
	cases: []prefixCase{
		{"a/b", []string{"a/b-c", "a/b-x/y", "a/b/c", "a/bc"}},
		{"a/b/", []string{"a/b/c"}},
		{"a/b-x/", []string{"a/b-x/y"}},
		{"a/c", []string{"a/c", "a/c.d"}},
		{"a/", []string{"a/a", "a/b-c", "a/b-x/y", "a/b/c", "a/bc", "a/c", "a/c.d"}},
		{"a", []string{"a-b", "a/a", "a/b-c", "a/b-x/y", "a/b/c", "a/bc", "a/c", "a/c.d", "ab"}},
		{"a/b/c/d", nil},
		{"nomatch", nil},
		{"b/", []string{"b/a/b"}},
		{".", []string{"..a", ".a"}},
		{"..", []string{"..a"}},
		{"a/.", nil},
		{"a/..", nil},
	},
}

// testListPrefix: a prefix is a byte prefix, not a path segment.
func testListPrefix(t *testing.T, s objstore.Store, set prefixSet) {
	putAll(t, s, set.keys)
	for _, tc := range set.cases {
		got := listAll(t, s, tc.prefix, "", 0, 20)
		wantKeys(t, fmt.Sprintf("List(%q)", tc.prefix), got, tc.want)
	}
}

// testListStartAfter: startAfter need not be a key, nor inside the prefix.
func testListStartAfter(t *testing.T, s objstore.Store) {
	putAll(t, s, []string{"o/z", "p/a", "p/c", "p/e", "q/a"})
	cases := []struct {
		prefix, after string
		want          []string
	}{
		{"p/", "", []string{"p/a", "p/c", "p/e"}},
		{"p/", "p/a", []string{"p/c", "p/e"}},
		{"p/", "p/b", []string{"p/c", "p/e"}},
		{"p/", "p/dé", []string{"p/e"}},
		{"p/", "p/e", nil},
		{"p/", "p/z", nil},
		{"p/", "o", []string{"p/a", "p/c", "p/e"}},
		{"p/", "p", []string{"p/a", "p/c", "p/e"}},
		{"p/", "p/", []string{"p/a", "p/c", "p/e"}},
		{"p/", "q", nil},
		{"", "p/c", []string{"p/e", "q/a"}},
		{"", "o/z", []string{"p/a", "p/c", "p/e", "q/a"}},
		{"", "~", nil},
	}
	for _, tc := range cases {
		for _, limit := range []int{1, 0} {
			got := listAll(t, s, tc.prefix, tc.after, limit, 10)
			wantKeys(t, fmt.Sprintf("List(%q, after %q, limit %d)", tc.prefix, tc.after, limit), got, tc.want)
		}
	}
}

// testListLimitClamp: limits <= 0 or > MaxListLimit return at most
// MaxListLimit keys, and the walk still sees every key.
func testListLimitClamp(t *testing.T, s objstore.Store) {
	const n = objstore.MaxListLimit + 5
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("c/%04d", i)
	}
	putParallel(t, s, keys, 8)
	for _, limit := range []int{0, -1, objstore.MaxListLimit + 1, 1 << 20} {
		p, err := s.List(t.Context(), "c/", "", limit)
		if err != nil {
			t.Fatalf("List limit %d: %v", limit, err)
		}
		if len(p.Keys) != objstore.MaxListLimit || !p.Truncated {
			t.Errorf("List limit %d: %d keys, truncated %v; want %d, true", limit, len(p.Keys), p.Truncated, objstore.MaxListLimit)
		}
		wantKeys(t, fmt.Sprintf("first page, limit %d", limit), p.Keys, keys[:len(p.Keys)])
	}
	wantKeys(t, "walk", listAll(t, s, "c/", "", 0, n), keys)
	wantKeys(t, "tail", listAll(t, s, "c/", keys[n-6], 0, n), keys[n-5:])
}

// putParallel creates keys with workers goroutines, content = key.
func putParallel(t *testing.T, s objstore.Store, keys []string, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += workers {
				if _, err := s.Put(t.Context(), keys[i], []byte(keys[i]), objstore.CreateOnly); err != nil {
					errs <- fmt.Errorf("Put(%q): %w", keys[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
