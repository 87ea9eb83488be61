package data

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Bulk building of the adjacency index (issue #28.2): a commit sorts its
// changes of a direction by (key, id) once, so each rewritten page merges
// its sorted rows with its sorted changes in one pass and is cut without
// sorting again, and whole-table builds sort on precomputed keys. The rows,
// their order and so every byte written are what sorting each page's rows
// gave before.

// compareKeyID orders (key, id) pairs.
func compareKeyID(ka, ia, kb, ib string) int {
	if c := cmp.Compare(ka, kb); c != 0 {
		return c
	}
	return cmp.Compare(ia, ib)
}

// sortChanges sorts changes by (key, id), stably (a replaced edge whose
// key stays has its removal and its addition at the same (key, id)).
func sortChanges(changes []adjChange) {
	type keyed struct {
		pre uint64
		at  int
	}
	order := make([]keyed, len(changes))
	for i := range changes {
		order[i] = keyed{keyPrefix(changes[i].key), i}
	}
	// Unstable sort made stable by the position as the last key; whole
	// keys are compared only when their prefixes are equal (keyPrefix).
	slices.SortFunc(order, func(a, b keyed) int {
		if c := cmp.Compare(a.pre, b.pre); c != 0 {
			return c
		}
		ca, cb := &changes[a.at], &changes[b.at]
		if c := compareKeyID(ca.key, ca.id, cb.key, cb.id); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	sorted := make([]adjChange, len(changes))
	for i, k := range order {
		sorted[i] = changes[k.at]
	}
	copy(changes, sorted)
}

// keyedRow is a row with its sort key and id looked up once.
type keyedRow struct {
	key, id string
	src     rowSrc
}

// keyPrefix is the first 8 bytes of s big-endian, zero-padded: for
// strings a and b, keyPrefix(a) < keyPrefix(b) implies a < b (at the
// first byte where the prefixes differ, a's byte is smaller, or a ended
// and b's byte is not zero), so sortChanges compares whole strings only
// when the prefixes are equal.
func keyPrefix(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// sortRows sorts rows by (key column col, id) on keys looked up once per
// row rather than per comparison.
func sortRows(rows []rowSrc, col int) {
	keyed := make([]keyedRow, len(rows))
	for i, r := range rows {
		keyed[i] = keyedRow{key: srcStr(r, col), id: srcID(r), src: r}
	}
	slices.SortFunc(keyed, func(a, b keyedRow) int { return compareKeyID(a.key, a.id, b.key, b.id) })
	for i := range keyed {
		rows[i] = keyed[i].src
	}
}

// checkSortedRows panics unless rows are sorted strictly by (key column
// col, id): writeSortedPages's precondition, which a page's refs and every
// reader rely on.
func checkSortedRows(rows []rowSrc, col int) {
	for i := 1; i < len(rows); i++ {
		if compareKeyID(srcStr(rows[i-1], col), srcID(rows[i-1]), srcStr(rows[i], col), srcID(rows[i])) >= 0 {
			panic(fmt.Sprintf("data: adjacency rows out of (key, id) order at %d", i))
		}
	}
}

// mergePage returns the rows of page rec (sorted by (key, id) in
// direction d) whose ids are not in gone, merged in (key, id) order with
// the rows the page's changes add (changes sorted by (key, id); a removal
// carries no row).
func mergePage(rec arrow.Record, d adjDir, changes []adjChange, gone map[string]bool) []rowSrc {
	keys, ids := rec.Column(d.col()).(*array.String), rec.Column(colID).(*array.String)
	n := ids.Len()
	out := make([]rowSrc, 0, n+len(changes))
	i := 0
	for _, ch := range changes {
		if ch.src == nil {
			continue
		}
		for ; i < n && compareKeyID(keys.Value(i), ids.Value(i), ch.key, ch.id) < 0; i++ {
			if !gone[ids.Value(i)] {
				out = append(out, rowSrc{rec, i})
			}
		}
		out = append(out, *ch.src)
	}
	for ; i < n; i++ {
		if !gone[ids.Value(i)] {
			out = append(out, rowSrc{rec, i})
		}
	}
	return out
}
