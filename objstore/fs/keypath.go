package fs

import (
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

// finalChunkBytes is the chunk length of a key's final segment. The final
// segment is where history grows (the kernel's inverted 20-digit version
// numbers), so it is stored as a trie of short chunk directories: every
// directory on the way to an object holds at most the distinct
// finalChunkBytes-byte continuations (100 for decimal digits), and a
// List(prefix, limit 1) reads a bounded number of entries however many
// versions sit beside the head.
const finalChunkBytes = 2

// finalTrieBytes bounds the trie part of a final segment (12 levels); the
// rest of a longer final segment is chunked by chunkMaxBytes like any
// other segment, so a long key stays a shallow path. The kernel's
// history-ordered final segments (20-digit inverted versions) lie within it.
const finalTrieBytes = 24

// encodeKey maps a valid key to the names of its path below the store
// root: every non-final segment becomes a directory "<seg>.d", the final
// segment a file "<seg>.o". A non-final segment longer than chunkMaxBytes is
// split at rune boundaries into directories "<chunk>.c" followed by its
// tail. The final segment's first finalTrieBytes are first split into trie
// directories "<chunk>.c" of finalChunkBytes each (one whole rune if a
// rune is longer), always leaving a non-empty tail, then the rest as above.
// The mapping is injective: decodeNames(encodeKey(k)) == k.
func encodeKey(key string) []string {
	segs := strings.Split(key, "/")
	names := make([]string, 0, len(segs))
	for i, seg := range segs {
		if i == len(segs)-1 {
			// Trie part: short chunks while the segment is longer than one.
			for used := 0; used < finalTrieBytes && len(seg) > finalChunkBytes; {
				cut := finalChunkBytes
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
