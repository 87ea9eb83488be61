package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxFlatSegmentBytes is the longest path segment (the bytes between two
// '/') a flat key set may hold: the NAME_MAX of POSIX filesystems.
const MaxFlatSegmentBytes = 255

// ErrNotFlat is the kind of error CheckFlatKeys returns; match it with
// errors.Is.
var ErrNotFlat = errors.New("key set is not flat")

// CheckFlatKeys reports whether keys form a flat key set, one a backend that
// keeps keys as files and directories (RunOptions.FlatKeysOnly) can hold:
// no key is a proper path-prefix of another key at a '/' boundary ("a" and
// "a/b"; "a" and "ab" are fine) and no path segment is longer than
// MaxFlatSegmentBytes bytes. It returns nil for a flat set; otherwise an
// error wrapping ErrNotFlat that names the first offending key in the order
// given, and for a prefix the key below it (the least such key byte-wise).
// keys need not be sorted or unique, and are not modified.
func CheckFlatKeys(keys []string) error {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for _, k := range keys {
		if seg := longestSegment(k); len(seg) > MaxFlatSegmentBytes {
			return fmt.Errorf("%w: key %q has a %d-byte path segment (limit %d)",
				ErrNotFlat, short(k), len(seg), MaxFlatSegmentBytes)
		}
		if below, ok := keyBelow(sorted, k); ok {
			return fmt.Errorf("%w: key %q is a path-prefix of key %q",
				ErrNotFlat, short(k), short(below))
		}
	}
	return nil
}

// longestSegment returns the longest '/'-separated segment of key.
func longestSegment(key string) string {
	var longest string
	for seg := range strings.SplitSeq(key, "/") {
		if len(seg) > len(longest) {
			longest = seg
		}
	}
	return longest
}

// keyBelow returns the least key of sorted that starts with key+"/".
func keyBelow(sorted []string, key string) (string, bool) {
	dir := key + "/"
	i, _ := slices.BinarySearch(sorted, dir)
	if i < len(sorted) && strings.HasPrefix(sorted[i], dir) {
		return sorted[i], true
	}
	return "", false
}
