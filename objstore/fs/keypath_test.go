package fs

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/graphkernel/graphkernel/objstore"
	"pgregory.net/rapid"
)

// The trie1 key mapping is injective and reversible, keeps every name
// under NAME_MAX, and gives a key and its extensions distinct kinds of
// names.
func TestEncodeKeyTable(t *testing.T) {
	long := strings.Repeat("x", 450)
	euro := strings.Repeat("€", 100) // 300 bytes of 3-byte runes
	tests := []struct {
		key  string
		want []string
	}{
		{"a", []string{"a.o"}},
		{"a/b", []string{"a.d", "b.o"}},
		{"a/b/c", []string{"a.d", "b.d", "c.o"}},
		{"a.d/b.o", []string{"a.d.d", "b..c", "o.o"}},
		{".tmp", []string{".t.c", "mp.o"}},
		{"ab", []string{"ab.o"}},
		{"abc", []string{"ab.c", "c.o"}},
		{"x/€€", []string{"x.d", "€.c", "€.o"}},
		{"18446744073709551615", []string{"18.c", "44.c", "67.c", "44.c", "07.c", "37.c", "09.c", "55.c", "16.c", "15.o"}},
		{".locks/x", []string{".locks.d", "x.o"}},
		{"..a/.b", []string{"..a.d", ".b.o"}},
		{long, append(slices.Repeat([]string{"xx.c"}, 12), strings.Repeat("x", 200)+".c", strings.Repeat("x", 200)+".c", strings.Repeat("x", 26)+".o")},
		{long + "/k", []string{strings.Repeat("x", 200) + ".c", strings.Repeat("x", 200) + ".c", strings.Repeat("x", 50) + ".d", "k.o"}},
		{strings.Repeat("y", 224), append(slices.Repeat([]string{"yy.c"}, 12), strings.Repeat("y", 200)+".o")},
		// Trie chunks of 3-byte runes hold one rune each (8 of them = 24
		// bytes); then 200 is not a rune boundary: cut at 198.
		{euro, append(slices.Repeat([]string{"€.c"}, 8), strings.Repeat("€", 66)+".c", strings.Repeat("€", 26)+".o")},
	}
	for _, tc := range tests {
		got := layoutTrie1.encodeKey(tc.key)
		if !slices.Equal(got, tc.want) {
			t.Errorf("encodeKey(%.40q) = %.80q, want %.80q", tc.key, got, tc.want)
		}
		back, ok := decodeNames(got)
		if !ok || back != tc.key {
			t.Errorf("decodeNames(encodeKey(%.40q)) = %.40q, %v", tc.key, back, ok)
		}
	}
}

// The trie2 mapping cuts a trie chunk that starts with an ASCII digit to
// one byte and any other to two (one whole rune if longer), so children of
// one directory mix widths; it is as reversible as trie1.
func TestEncodeKeyTableTrie2(t *testing.T) {
	long := strings.Repeat("x", 450)
	digits := "18446744073709551615"
	var digitChunks []string
	for _, d := range digits[:len(digits)-1] {
		digitChunks = append(digitChunks, string(d)+".c")
	}
	tests := []struct {
		key  string
		want []string
	}{
		{"a", []string{"a.o"}},
		{"7", []string{"7.o"}},
		{"ab", []string{"ab.o"}},
		{"12", []string{"1.c", "2.o"}},
		{"abc", []string{"ab.c", "c.o"}},
		{"a1b2", []string{"a1.c", "b2.o"}},
		{"1ab", []string{"1.c", "ab.o"}},
		{"1abc", []string{"1.c", "ab.c", "c.o"}},
		{"x/€€", []string{"x.d", "€.c", "€.o"}},
		{"x/9€", []string{"x.d", "9.c", "€.o"}},
		{"b/" + digits, append([]string{"b.d"}, append(slices.Clone(digitChunks), "5.o")...)},
		{"01/23", []string{"01.d", "2.c", "3.o"}},
		// 24 digit chunks of one byte, then the tail as one name.
		{strings.Repeat("5", 30), append(slices.Repeat([]string{"5.c"}, 24), "555555.o")},
		{long, append(slices.Repeat([]string{"xx.c"}, 12), strings.Repeat("x", 200)+".c", strings.Repeat("x", 200)+".c", strings.Repeat("x", 26)+".o")},
	}
	for _, tc := range tests {
		got := layoutTrie2.encodeKey(tc.key)
		if !slices.Equal(got, tc.want) {
			t.Errorf("encodeKey(%.40q) = %.80q, want %.80q", tc.key, got, tc.want)
		}
		back, ok := decodeNames(got)
		if !ok || back != tc.key {
			t.Errorf("decodeNames(encodeKey(%.40q)) = %.40q, %v", tc.key, back, ok)
		}
	}
}

// Names no key maps to do not decode: bookkeeping dirs, foreign files, and
// an object name anywhere but last.
func TestDecodeRejectsForeignNames(t *testing.T) {
	for _, names := range [][]string{
		{".tmp"}, {".locks"}, {"x.tmp"}, {".o"}, {"a"}, {"a.d"}, {"a.o", "b.o"}, {"a.c"}, {},
	} {
		if k, ok := decodeNames(names); ok {
			t.Errorf("decodeNames(%q) = %q, want rejection", names, k)
		}
	}
}

// Property: in either layout, for any valid key, decode(encode(k)) == k,
// every name fits NAME_MAX, and no name is a bookkeeping directory or a
// layout marker.
func TestEncodeKeyProperty(t *testing.T) {
	seg := rapid.OneOf(
		rapid.StringOfN(rapid.RuneFrom(nil, rapidRanges...), 1, 120, -1),
		rapid.StringMatching(`[0-9a-c€]{1,40}`), // digit runs mixed with letters
	)
	rapid.Check(t, func(t *rapid.T) {
		l := rapid.SampledFrom([]layout{layoutTrie1, layoutTrie2}).Draw(t, "layout")
		segs := rapid.SliceOfN(seg, 1, 4).Draw(t, "segs")
		for i, s := range segs {
			if s = strings.ReplaceAll(s, "/", "_"); s == "." || s == ".." {
				s += "_"
			}
			segs[i] = s
		}
		for len(segs) > 1 && len(strings.Join(segs, "/")) > objstore.MaxKeyBytes {
			segs = segs[:len(segs)-1] // 120 runes <= 480 bytes: one segment always fits
		}
		key := strings.Join(segs, "/")
		if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
			t.Fatalf("generator produced an invalid key: %v", err)
		}
		names := l.encodeKey(key)
		for _, n := range names {
			if len(n) > 255 || n == tmpDirName || n == lockDirName || n == markerTrie1 || n == markerTrie2 {
				t.Fatalf("bad name %q (%d bytes)", n, len(n))
			}
		}
		back, ok := decodeNames(names)
		if !ok || back != key {
			t.Fatalf("round trip %q -> %q -> %q", key, names, back)
		}
	})
}

// Printable ASCII incl. '.', plus 2-, 3- and 4-byte runes, so chunk cuts
// land inside multi-byte runes.
var rapidRanges = []*unicode.RangeTable{unicode.Latin, unicode.Han, unicode.Punct, unicode.So}
