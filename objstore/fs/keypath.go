package fs

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Name suffixes. Every name a key maps to ends in exactly one of these, so a
// key "a" (file "a.o") and a key "a/b" (directory "a.d") coexist, and no key
// can name the bookkeeping directories ".tmp" and ".locks".
const (
	sufDir   = ".d" // a non-final key segment: the segment, then '/'
	sufChunk = ".c" // a leading chunk of a long segment: no separator follows
	sufObj   = ".o" // the final segment: an object file
	sufLen   = 2
)

// chunkMaxBytes bounds one file-name chunk of a segment. With its suffix a
// name stays well under NAME_MAX (255 bytes on every common filesystem),
// so a 1024-byte single-segment key is still storable.
const chunkMaxBytes = 200

// layout is a root's key-to-path mapping, named by the marker directory
// in the root (see checkLayout). Every layout shares every rule but one:
// how the trie part of a key's final segment is cut into chunks.
type layout uint8

const (
	// layoutTrie1 cuts the trie part into 2-byte chunks: a leaf-level
	// directory of decimal versions holds up to 100 entries.
	layoutTrie1 layout = 1
	// layoutTrie2 cuts the trie part's first trie2WideBytes bytes as
	// trie1 does (2-byte chunks) and, from there on, a chunk that starts
	// with an ASCII decimal digit to 1 byte, any other to 2: the leading
	// digits of a version, which history leaves constant, cost few
	// directories, and the trailing ones, which vary, sit at most 10 to a
	// directory, so a head lookup reads a few entries per level however
	// many versions sit beside the head.
	layoutTrie2 layout = 2
	// layoutTrie3 is trie2 except for a final segment shaped like a ULID
	// (isULIDShaped): its trie part is its first ulidTrieBytes characters
	// (the time to 2^15 ms) in chunks of 2, 2, 2 and 1, and its other 19
	// characters (the rest of the time and the 16 random ones) are the
	// object's name. A fresh ULID-named object thus lands in the directory
	// of its 32.8-second window, which exists after the window's first
	// write, instead of making 8-14 directories of its own. Every other
	// segment (the kernel's versions among them) maps exactly as in trie2.
	// New roots get it.
	layoutTrie3 layout = 3
)

// newestLayout is the layout Open gives an empty root.
const newestLayout = layoutTrie3

// Layout markers: an empty directory in the root names its layout.
const (
	markerPrefix = ".layout-"
	markerTrie1  = markerPrefix + "trie1"
	markerTrie2  = markerPrefix + "trie2"
	markerTrie3  = markerPrefix + "trie3"
)

// marker is the name of the layout's marker directory.
func (l layout) marker() string {
	switch l {
	case layoutTrie1:
		return markerTrie1
	case layoutTrie2:
		return markerTrie2
	case layoutTrie3:
		return markerTrie3
	}
	panic(fmt.Sprintf("fs: unknown layout %d", l))
}

// layoutOf maps a marker name to its layout (ok=false for an unknown one).
func layoutOf(marker string) (layout, bool) {
	switch marker {
	case markerTrie1:
		return layoutTrie1, true
	case markerTrie2:
		return layoutTrie2, true
	case markerTrie3:
		return layoutTrie3, true
	}
	return 0, false
}

// finalChunkBytes is the chunk length of a key's final segment. The final
// segment is where history grows (the kernel's inverted 20-digit version
// numbers), so it is stored as a trie of short chunk directories: every
// directory on the way to an object holds at most the distinct
// chunk continuations (100 two-digit ones in trie1 and in trie2's first
// 12 bytes, 10 one-digit ones in the rest of trie2), and a List(prefix, limit 1) reads a bounded number of entries
// however many versions sit beside the head.
const finalChunkBytes = 2

// finalTrieBytes bounds the trie part of a final segment (12 two-byte
// levels in trie1; 6 two-byte and up to 12 one-digit levels in trie2); the rest of a longer final segment is chunked
// by chunkMaxBytes like any other segment, so a long key stays a shallow
// path. The kernel's history-ordered final segments (20-digit inverted
// versions) lie within it.
const finalTrieBytes = 24

// trie2WideBytes is how many leading bytes of the trie part trie2 cuts
// into finalChunkBytes chunks before switching to the digit rule. The
// kernel's 20-digit inverted versions thus take 6 two-byte levels and 8
// one-byte ones; up to 10^8 versions only the one-byte levels vary.
const trie2WideBytes = 12

// ULID shape (trie3): 26 characters of Crockford's base32 alphabet, the
// first at most '7' (a 48-bit millisecond time in the first 10, 80 random
// bits in the last 16), as github.com/oklog/ulid writes them.
const (
	ulidLen      = 26
	ulidAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	// ulidTrieBytes is the trie part of a ULID-shaped segment in trie3:
	// the first 7 characters fix the time's bits above 2^15 ms, so one
	// leaf directory holds the objects of one 32.8-second window.
	ulidTrieBytes = 7
)

// isULIDShaped reports whether seg looks like a ULID's canonical string.
// It is a pure function of the bytes: any 26-character name of the
// alphabet qualifies, whoever made it, except one of digits only (a
// number keeps trie2's digit trie, so sequential numbers of any width
// stay flat to look up; a real ULID is all digits with odds below 10^-8).
func isULIDShaped(seg string) bool {
	if len(seg) != ulidLen || seg[0] < '0' || seg[0] > '7' {
		return false
	}
	letters := false
	for i := 1; i < len(seg); i++ {
		c := seg[i]
		if strings.IndexByte(ulidAlphabet, c) < 0 {
			return false
		}
		letters = letters || c > '9'
	}
	return letters
}

// trieBytes is how many leading bytes of the final segment seg the layout
// stores as a trie: ulidTrieBytes for a ULID-shaped segment in trie3,
// finalTrieBytes otherwise (a shorter segment keeps a non-empty tail).
func (l layout) trieBytes(seg string) int {
	if l == layoutTrie3 && isULIDShaped(seg) {
		return ulidTrieBytes
	}
	return finalTrieBytes
}

// chunkWidth is the byte length the layout gives a trie chunk starting
// at seg[0], used bytes into a trie part of limit bytes: in trie2 and
// trie3, 1 for an ASCII digit once used >= trie2WideBytes; in trie3 never
// past a ULID's limit (its 7th character is a chunk of its own);
// otherwise finalChunkBytes.
func (l layout) chunkWidth(seg string, used, limit int) int {
	if l >= layoutTrie2 && used >= trie2WideBytes && seg[0] >= '0' && seg[0] <= '9' {
		return 1
	}
	if limit < finalTrieBytes {
		return min(finalChunkBytes, limit-used)
	}
	return finalChunkBytes
}

// encodeKey maps a valid key to the names of its path below the store
// root: every non-final segment becomes a directory "<seg>.d", the final
// segment a file "<seg>.o". A non-final segment longer than chunkMaxBytes is
// split at rune boundaries into directories "<chunk>.c" followed by its
// tail. The final segment's first trieBytes are first split into trie
// directories "<chunk>.c" of chunkWidth bytes each (cut back to a rune
// boundary, or one whole rune if a rune is longer), always leaving a
// non-empty tail, then the rest as above. For each layout the mapping is
// injective: decodeNames(l.encodeKey(k)) == k.
func (l layout) encodeKey(key string) []string {
	segs := strings.Split(key, "/")
	names := make([]string, 0, len(segs))
	for i, seg := range segs {
		if i == len(segs)-1 {
			// Trie part: short chunks while the segment is longer than one.
			limit := l.trieBytes(seg)
			for used := 0; used < limit && len(seg) > l.chunkWidth(seg, used, limit); {
				cut := l.chunkWidth(seg, used, limit)
				for cut > 0 && !utf8.RuneStart(seg[cut]) {
					cut--
				}
				if cut == 0 {
					_, cut = utf8.DecodeRuneInString(seg)
					if cut >= len(seg) {
						break
					}
				}
				names = append(names, seg[:cut]+sufChunk)
				seg, used = seg[cut:], used+cut
			}
		}
		for len(seg) > chunkMaxBytes {
			cut := chunkMaxBytes
			for cut > 0 && !utf8.RuneStart(seg[cut]) {
				cut--
			}
			names = append(names, seg[:cut]+sufChunk)
			seg = seg[cut:]
		}
		if i == len(segs)-1 {
			names = append(names, seg+sufObj)
		} else {
			names = append(names, seg+sufDir)
		}
	}
	return names
}

// decodeName returns the key bytes a directory entry contributes and its
// suffix kind, or ok=false for a name no key maps to (bookkeeping entries,
// foreign files).
func decodeName(name string) (frag string, kind string, ok bool) {
	if len(name) <= sufLen {
		return "", "", false
	}
	body, suf := name[:len(name)-sufLen], name[len(name)-sufLen:]
	switch suf {
	case sufDir:
		return body + "/", sufDir, true
	case sufChunk, sufObj:
		return body, suf, true
	}
	return "", "", false
}

// decodeNames inverts encodeKey. ok is false unless names is a sequence of
// directory names ending in one object name.
func decodeNames(names []string) (key string, ok bool) {
	var b strings.Builder
	for i, n := range names {
		frag, kind, ok := decodeName(n)
		if !ok || (kind == sufObj) != (i == len(names)-1) {
			return "", false
		}
		b.WriteString(frag)
	}
	return b.String(), len(names) > 0
}
