package fs

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/graphkernel/graphkernel/objstore"
	"pgregory.net/rapid"
)

// The trie1 key mapping is injective and reversible, keeps every name
// under NAME_MAX, and gives a key and its extensions distinct kinds of
// names.
func TestEncodeKeyTable(t *testing.T) {
	long := strings.Repeat("x", 450)
	euro := strings.Repeat("€", 100) // 300 bytes of 3-byte runes
	tests := []encodeCase{
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
	checkEncodeKeys(t, layoutTrie1, tests)
}

// The trie2 mapping cuts the trie part's first 12 bytes into 2-byte
// chunks as trie1 does, then a chunk that starts with an ASCII digit to
// one byte and any other to two (one whole rune if longer), so children of
// one directory may mix widths; it is as reversible as trie1.
func TestEncodeKeyTableTrie2(t *testing.T) {
	long := strings.Repeat("x", 450)
	tests := []encodeCase{
		{"a", []string{"a.o"}},
		{"7", []string{"7.o"}},
		{"ab", []string{"ab.o"}},
		{"12", []string{"12.o"}},
		{"123", []string{"12.c", "3.o"}},
		{"abc", []string{"ab.c", "c.o"}},
		{"a1b2", []string{"a1.c", "b2.o"}},
		{"1abc", []string{"1a.c", "bc.o"}},
		{"x/€€", []string{"x.d", "€.c", "€.o"}},
		{"x/9€", []string{"x.d", "9.c", "€.o"}},
		{"01/23", []string{"01.d", "23.o"}},
		// 6 two-byte levels over the leading 12 digits, 7 one-digit ones.
		{"b/18446744073709551615", []string{"b.d", "18.c", "44.c", "67.c", "44.c", "07.c", "37.c",
			"0.c", "9.c", "5.c", "5.c", "1.c", "6.c", "1.c", "5.o"}},
		// From byte 12 on: a digit is one byte, a letter leads two.
		{"abcdefghijkl1a2b3", []string{"ab.c", "cd.c", "ef.c", "gh.c", "ij.c", "kl.c", "1.c", "a2.c", "b3.o"}},
		// Offsets count bytes: a cut back to a rune boundary and a whole
		// 3-byte rune reach byte 12 after 6 chunks here...
		{"a€bcdefghi12345", []string{"a.c", "€.c", "bc.c", "de.c", "fg.c", "hi.c", "1.c", "2.c", "3.c", "4.c", "5.o"}},
		// ...and a 2-byte chunk starting at byte 11 crosses it.
		{"ab€€€1234", []string{"ab.c", "€.c", "€.c", "€.c", "12.c", "3.c", "4.o"}},
		// 24 bytes of trie (6 two-byte chunks, 12 one-digit), then the tail.
		{strings.Repeat("5", 30), append(append(slices.Repeat([]string{"55.c"}, 6), slices.Repeat([]string{"5.c"}, 12)...), "555555.o")},
		{long, append(slices.Repeat([]string{"xx.c"}, 12), strings.Repeat("x", 200)+".c", strings.Repeat("x", 200)+".c", strings.Repeat("x", 26)+".o")},
	}
	checkEncodeKeys(t, layoutTrie2, tests)
}

// The trie3 mapping is trie2's but for ULID-shaped final segments (26
// characters of Crockford's base32, the first at most '7'): their trie
// part is the first 7 characters (2, 2, 2 and 1), the other 19 the
// object's name. A near-ULID (27 characters, a lower-case or non-Crockford
// letter, a first character past '7') and every number, even one of 26
// digits, map as in trie2.
func TestEncodeKeyTableTrie3(t *testing.T) {
	ulidPath := []string{"01.c", "JG.c", "JF.c", "G.c", "R48VKRYADDJY7NRAJWJ.o"}
	tests := []encodeCase{
		{"01JGJFGR48VKRYADDJY7NRAJWJ", ulidPath},
		{"g/data/Person/01JGJFGR48VKRYADDJY7NRAJWJ", append([]string{"g.d", "data.d", "Person.d"}, ulidPath...)},
		// A ULID as a non-final segment is a plain directory.
		{"audit/01JGJFGR48VKRYADDJY7NRAJWJ/record", []string{"audit.d", "01JGJFGR48VKRYADDJY7NRAJWJ.d", "re.c", "co.c", "rd.o"}},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", []string{"7Z.c", "ZZ.c", "ZZ.c", "Z.c", "ZZZZZZZZZZZZZZZZZZZ.o"}},
		{"0000000000000000000000000A", []string{"00.c", "00.c", "00.c", "0.c", "000000000000000000A.o"}},
		// Not ULID-shaped: trie2's cut.
		{"01JGJFGR48VKRYADDJY7NRAJW", []string{"01.c", "JG.c", "JF.c", "GR.c", "48.c", "VK.c", "RY.c", "AD.c", "DJ.c", "Y7.c", "NR.c", "AJ.c", "W.o"}},
		{"01JGJFGR48VKRYADDJY7NRAJWJX", []string{"01.c", "JG.c", "JF.c", "GR.c", "48.c", "VK.c", "RY.c", "AD.c", "DJ.c", "Y7.c", "NR.c", "AJ.c", "WJX.o"}},
		{"01jgjfgr48vkryaddjy7nrajwj", []string{"01.c", "jg.c", "jf.c", "gr.c", "48.c", "vk.c", "ry.c", "ad.c", "dj.c", "y7.c", "nr.c", "aj.c", "wj.o"}},
		{"01JGJFGR48VKRYADDJY7NRAJWI", []string{"01.c", "JG.c", "JF.c", "GR.c", "48.c", "VK.c", "RY.c", "AD.c", "DJ.c", "Y7.c", "NR.c", "AJ.c", "WI.o"}},
		{"81JGJFGR48VKRYADDJY7NRAJWJ", []string{"81.c", "JG.c", "JF.c", "GR.c", "48.c", "VK.c", "RY.c", "AD.c", "DJ.c", "Y7.c", "NR.c", "AJ.c", "WJ.o"}},
		// Numbers (all digits) as trie2, even 26 of them: 6 two-digit and
		// then one-digit levels.
		{"b/18446744073709551615", []string{"b.d", "18.c", "44.c", "67.c", "44.c", "07.c", "37.c",
			"0.c", "9.c", "5.c", "5.c", "1.c", "6.c", "1.c", "5.o"}},
		{strings.Repeat("5", 26), append(append(slices.Repeat([]string{"55.c"}, 6), slices.Repeat([]string{"5.c"}, 12)...), "55.o")},
	}
	checkEncodeKeys(t, layoutTrie3, tests)
}

// Property: trie3 maps every segment that is not ULID-shaped exactly as
// trie2 does (so roots of either layout share the version tries' cost),
// and a ULID-shaped one to 5 names whatever its bytes.
func TestTrie3IsTrie2ButULIDs(t *testing.T) {
	seg := rapid.OneOf(
		rapid.StringOfN(rapid.RuneFrom(nil, rapidRanges...), 1, 60, -1),
		rapid.StringMatching(`[0-9A-Z]{1,40}`),
		ulidish(),
	)
	rapid.Check(t, func(t *rapid.T) {
		s := strings.ReplaceAll(seg.Draw(t, "seg"), "/", "_")
		key := "p/" + s
		if objstore.ValidateKey(objstore.OpPut, key) != nil {
			t.Skip("invalid key")
		}
		got3, got2 := layoutTrie3.encodeKey(key), layoutTrie2.encodeKey(key)
		if isULIDShaped(s) {
			if len(got3) != 6 {
				t.Fatalf("ULID %q: trie3 names %q", s, got3)
			}
		} else if !slices.Equal(got3, got2) {
			t.Fatalf("%q: trie3 %q, trie2 %q", s, got3, got2)
		}
	})
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

// Property: in every layout, for any valid key, decode(encode(k)) == k,
// every name fits NAME_MAX, no name is a bookkeeping directory or a
// layout marker, and every trie chunk has its layout's width (see
// checkTrieWidths).
func TestEncodeKeyProperty(t *testing.T) {
	seg := rapid.OneOf(
		rapid.StringOfN(rapid.RuneFrom(nil, rapidRanges...), 1, 120, -1),
		rapid.StringMatching(`[0-9a-c€]{1,40}`), // digit runs mixed with letters
		ulidish(), // ULIDs and near-ULIDs
	)
	rapid.Check(t, func(t *rapid.T) {
		l := rapid.SampledFrom(allLayouts).Draw(t, "layout")
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
			if len(n) > 255 || n == tmpDirName || n == lockDirName || n == markerTrie1 || n == markerTrie2 || n == markerTrie3 {
				t.Fatalf("bad name %q (%d bytes)", n, len(n))
			}
		}
		back, ok := decodeNames(names)
		if !ok || back != key {
			t.Fatalf("round trip %q -> %q -> %q", key, names, back)
		}
		checkTrieWidths(t, l, names)
	})
}

// checkTrieWidths checks the final segment's trie chunks (the ".c" names
// after the last ".d" one, within its first finalTrieBytes) against the
// width w the layout gives each (in trie2 and trie3 1 for a digit at byte
// trie2WideBytes or later, else 2): a chunk is w bytes, or shorter only
// because the next rune would cross w, or one whole rune longer than w.
// In trie3 a ULID-shaped segment is exactly 4 chunks of 2, 2, 2 and 1
// bytes and a 19-byte object name.
func checkTrieWidths(t *rapid.T, l layout, names []string) {
	first := 0
	for i, n := range names {
		if strings.HasSuffix(n, sufDir) {
			first = i + 1
		}
	}
	final, _ := decodeNames(append([]string{"x.d"}, names[first:]...))
	if final = strings.TrimPrefix(final, "x/"); l == layoutTrie3 && isULIDShaped(final) {
		want := []string{final[0:2] + sufChunk, final[2:4] + sufChunk, final[4:6] + sufChunk, final[6:7] + sufChunk, final[7:] + sufObj}
		if !slices.Equal(names[first:], want) {
			t.Fatalf("trie3 ULID %q: names %q, want %q", final, names[first:], want)
		}
		return
	}
	used := 0
	for i, n := range names[first:] {
		body, ok := strings.CutSuffix(n, sufChunk)
		if !ok || used >= finalTrieBytes {
			return
		}
		w := finalChunkBytes
		if l >= layoutTrie2 && used >= trie2WideBytes && body[0] >= '0' && body[0] <= '9' {
			w = 1
		}
		next, _, _ := decodeName(names[first+i+1])
		_, size := utf8.DecodeRuneInString(next)
		ok = len(body) == w ||
			(len(body) < w && len(body)+size > w) ||
			(len(body) > w && utf8.RuneCountInString(body) == 1)
		if !ok {
			t.Fatalf("layout %d: chunk %q at byte %d of %q, want width %d", l, body, used, names, w)
		}
		used += len(body)
	}
}

// Printable ASCII incl. '.', plus 2-, 3- and 4-byte runes, so chunk cuts
// land inside multi-byte runes.
var rapidRanges = []*unicode.RangeTable{unicode.Latin, unicode.Han, unicode.Punct, unicode.So}

// encodeCase is a key and the names a layout maps it to.
type encodeCase struct {
	key  string
	want []string
}

// checkEncodeKeys checks that l maps each case's key to its names and
// that decodeNames maps them back.
func checkEncodeKeys(t *testing.T, l layout, tests []encodeCase) {
	t.Helper()
	for _, tc := range tests {
		got := l.encodeKey(tc.key)
		if !slices.Equal(got, tc.want) {
			t.Errorf("encodeKey(%.40q) = %.80q, want %.80q", tc.key, got, tc.want)
		}
		back, ok := decodeNames(got)
		if !ok || back != tc.key {
			t.Errorf("decodeNames(encodeKey(%.40q)) = %.40q, %v", tc.key, back, ok)
		}
	}
}
