package data

import (
	"encoding/json"
	"fmt"
	"sort"
)

// The id index's delta (format 6, issue #32 d): a commit that only adds
// ids to a table whose version has a non-empty id index keeps the index's
// chunks by reference and lists the added ids inline in the new table
// version, under data.iddelta, instead of rewriting the id page they fall
// in and the chunk listing it (2 to 3 PUTs per one-row insert). The delta
// holds at most MaxIDDelta ids of at most MaxIDDeltaBytes bytes in all;
// the commit that would exceed either bound, and every commit that
// removes an id, folds the delta into the pages (the same incremental
// rewrite, with the delta's ids added). So the ids of a version are
// exactly its index's pages plus its delta, disjoint; the index refs count
// rows minus the delta's ids.
const (
	MaxIDDelta      = 32
	MaxIDDeltaBytes = 2048
	metaIDDeltaKey  = "data.iddelta"
)

// parseIDDelta reads the id delta of a table version's metadata (nil when
// absent): a non-empty JSON list of valid ids, strictly ascending, within
// the bounds.
func parseIDDelta(md map[string]string) ([]string, error) {
	raw, ok := md[metaIDDeltaKey]
	if !ok {
		return nil, nil
	}
	if len(raw) > MaxIDDeltaBytes+2*MaxIDDelta*(MaxIDBytes+2) {
		return nil, fmt.Errorf("id delta: %d bytes", len(raw))
	}
	ids, plain := plainStrings(raw)
	if !plain {
		if err := json.Unmarshal([]byte(raw), &ids); err != nil {
			return nil, fmt.Errorf("id delta: %v", err)
		}
	}
	if len(ids) == 0 || len(ids) > MaxIDDelta || deltaBytes(ids) > MaxIDDeltaBytes {
		return nil, fmt.Errorf("id delta: %d ids of %d bytes, want 1..%d of at most %d", len(ids), deltaBytes(ids), MaxIDDelta, MaxIDDeltaBytes)
	}
	for i, id := range ids {
		if p := idProblem(id); p != "" {
			return nil, fmt.Errorf("id delta: id %d %s", i, p)
		}
		if i > 0 && id <= ids[i-1] {
			return nil, fmt.Errorf("id delta: ids not strictly ascending at %d", i)
		}
	}
	if !plain { // a plain list is canonical by its form
		if b := appendStrings(make([]byte, 0, len(raw)), ids); string(b) != raw { // json.Marshal(ids) (jsonenc.go)
			return nil, fmt.Errorf("id delta is not in canonical form")
		}
	}
	return ids, nil
}

// plainStrings splits raw when it is a JSON list of strings in the
// canonical form no string of which needs an escape (`["a","b"]`, every
// byte between the quotes printable ASCII but for ", \\, <, > and &),
// the form every writer emits for ids of that kind: then ids is exactly
// what json.Unmarshal decodes and appendStrings(ids) is raw byte for
// byte. Anything else (an escape, another byte, spacing, an empty list)
// is plain=false, for the general decoder and the canonical check.
func plainStrings(raw string) (ids []string, plain bool) {
	if len(raw) < 4 || raw[:2] != `["` || raw[len(raw)-2:] != `"]` {
		return nil, false
	}
	in := raw[2 : len(raw)-2]
	start := 0
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c == '"' {
			if i+2 >= len(in) || in[i+1] != ',' || in[i+2] != '"' {
				return nil, false
			}
			ids = append(ids, in[start:i])
			i += 2
			start = i + 1
			continue
		}
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '<' || c == '>' || c == '&' {
			return nil, false
		}
	}
	return append(ids, in[start:]), true
}

// deltaBytes is the bytes of ids a delta is charged.
func deltaBytes(ids []string) int {
	n := 0
	for _, id := range ids {
		n += len(id)
	}
	return n
}

// inDelta reports whether id is in delta (sorted).
func inDelta(delta []string, id string) bool {
	i := sort.SearchStrings(delta, id)
	return i < len(delta) && delta[i] == id
}

// deltaFor returns the delta of a new version that adds added to a head
// whose delta is delta and removes nothing, and whether it fits the
// bounds; added and delta are disjoint (an insert of an existing id is
// refused before any build).
func deltaFor(delta, added []string) ([]string, bool) {
	if len(delta)+len(added) > MaxIDDelta || deltaBytes(delta)+deltaBytes(added) > MaxIDDeltaBytes {
		return nil, false
	}
	out := append(append([]string(nil), delta...), added...)
	sort.Strings(out)
	for i := 1; i < len(out); i++ {
		if out[i] == out[i-1] {
			panic(fmt.Sprintf("data: id %q added twice to an id delta", out[i]))
		}
	}
	return out, true
}

// foldDelta returns the changes to apply to the index pages when a commit
// folds delta: the ids it adds to the pages (the delta's ids it does not
// remove, then added) and those it removes from them (the removed ids not
// in the delta).
func foldDelta(delta, removed, added []string) (pageRemoved, pageAdded []string) {
	gone := setOf(removed)
	for _, id := range delta {
		if !gone[id] {
			pageAdded = append(pageAdded, id)
		}
	}
	pageAdded = append(pageAdded, added...)
	for _, id := range removed {
		if !inDelta(delta, id) {
			pageRemoved = append(pageRemoved, id)
		}
	}
	return pageRemoved, pageAdded
}

// idDeltaWrites is false only in tests that write the id index as format
// 5 did (every commit rewrites the pages).
var idDeltaWrites = true

// IDIndexDelta returns the id delta of a table version's metadata (nil
// when it has none), checked as a reader checks it: the ids the version
// holds beyond its id index's pages. verify adds them to the index's
// entries before comparing with the fragments.
func IDIndexDelta(md map[string]string) ([]string, error) {
	ids, err := parseIDDelta(md)
	if err != nil {
		return nil, corruptFragment(metaIDDeltaKey, "%v", err)
	}
	return ids, nil
}
