package fs

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/graphkernel/graphkernel/objstore"
	"pgregory.net/rapid"
)

// The key mapping is injective and reversible, keeps every name under
// NAME_MAX, and gives a key and its extensions distinct kinds of names.
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
		{"a.d/b.o", []string{"a.d.d", "b.o.o"}},
		{".tmp", []string{".tmp.o"}},
		{".locks/x", []string{".locks.d", "x.o"}},
		{"..a/.b", []string{"..a.d", ".b.o"}},
		{long, []string{strings.Repeat("x", 200) + ".c", strings.Repeat("x", 200) + ".c", strings.Repeat("x", 50) + ".o"}},
		{long + "/k", []string{strings.Repeat("x", 200) + ".c", strings.Repeat("x", 200) + ".c", strings.Repeat("x", 50) + ".d", "k.o"}},
		{strings.Repeat("y", 200), []string{strings.Repeat("y", 200) + ".o"}},
		// 200 is not a rune boundary in a run of 3-byte runes: cut at 198.
		{euro, []string{strings.Repeat("€", 66) + ".c", strings.Repeat("€", 34) + ".o"}},
	}
	for _, tc := range tests {
		got := encodeKey(tc.key)
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

// Property: for any valid key, decode(encode(k)) == k, every name fits
// NAME_MAX, and no name is a bookkeeping directory.
func TestEncodeKeyProperty(t *testing.T) {
	seg := rapid.StringOfN(rapid.RuneFrom(nil, rapidRanges...), 1, 120, -1)
	rapid.Check(t, func(t *rapid.T) {
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
		names := encodeKey(key)
		for _, n := range names {
			if len(n) > 255 || n == tmpDirName || n == lockDirName {
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
