package data

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// TestGatherWholeRecord: gathering every row of one record of the table's
// schema, in order, retains that record (no copy, issue #28.2); any other
// selection (a prefix, rows reordered, rows of two records) is a copy, and
// both encode to the same fragment bytes (red if the reuse changes what is
// written, or if gather stops reusing).
func TestGatherWholeRecord(t *testing.T) {
	tb, _ := testCatalog(t).table("Person")
	a, b := recordOf(t, tb, sparsePeople(40)), recordOf(t, tb, sparsePeople(3))
	defer a.Release()
	defer b.Release()
	all := make([]rowSrc, a.NumRows())
	for i := range all {
		all[i] = rowSrc{a, i}
	}
	got := gather(tb, all)
	if got != a {
		t.Fatalf("gather of every row of one record copied it")
	}
	copied := gather(tb, append([]rowSrc(nil), all...)[:39])
	if copied == a {
		t.Fatal("gather of a prefix returned the record itself")
	}
	copied.Release()
	swapped := append([]rowSrc(nil), all...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	mixed := append(append([]rowSrc(nil), all...), rowSrc{b, 0})
	for _, c := range []struct {
		name string
		rows []rowSrc
	}{{"swapped", swapped}, {"two records", mixed}} {
		rec := gather(tb, c.rows)
		if rec == a || rec == b {
			t.Fatalf("%s: gather returned a source record", c.name)
		}
		rec.Release()
	}
	reused, _, err := EncodeFragmentWith(tb, got, DefaultCodec())
	must(t, err)
	got.Release()
	full := gatherCopy(tb, all)
	defer full.Release()
	want, _, err := EncodeFragmentWith(tb, full, DefaultCodec())
	must(t, err)
	if !bytes.Equal(reused, want) {
		t.Fatal("the retained record encodes to other bytes than its copy")
	}
}

// TestGatherStringsMatchesBuilder: gatherStrings gives the array a
// builder's appends give — values, nulls (none, some, a null first), over
// rows of two records in mixed order (red if an offset, a validity bit or
// the null count goes wrong).
func TestGatherStringsMatchesBuilder(t *testing.T) {
	tb, _ := catalogOf(t, "node N { s: string? }").table("N")
	people := func(n int) []Row {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{ID: fmt.Sprintf("n%03d", i), Props: map[string]any{}}
			if i%3 != 0 {
				rows[i].Props["s"] = strings.Repeat("x", i%5)
			}
		}
		return rows
	}
	a, b := recordOf(t, tb, people(50)), recordOf(t, tb, people(7))
	defer a.Release()
	defer b.Release()
	var rows []rowSrc
	for i := range 50 {
		rows = append(rows, rowSrc{a, (i * 17) % 50})
		if i%7 == 3 {
			rows = append(rows, rowSrc{b, i % 7})
		}
	}
	for c, f := range tb.arrow.Fields() {
		if kindOf(tb, c) != schema.String {
			continue
		}
		for _, sel := range [][]rowSrc{rows, rows[:1], rows[1:3], rows[5:9], {{a, 1}, {a, 2}, {a, 3}, {b, 4}}, nil} {
			got := gatherStrings(sel, c)
			bld := array.NewStringBuilder(goAlloc)
			copyColumn(bld, schema.String, c, sel)
			want := bld.NewArray()
			if !array.Equal(got, want) || got.NullN() != want.NullN() {
				t.Fatalf("column %s over %d rows: got %v, want %v", f.Name, len(sel), got, want)
			}
			got.Release()
			want.Release()
			bld.Release()
		}
	}
}

// TestKeyPrefixOrder: whenever two keys' prefixes differ, they order the
// keys as the strings do (what sortChanges relies on), for keys that share
// prefixes, are shorter than 8 bytes, hold zero bytes or bytes >= 0x80
// (red if the prefix ever disagrees with the string order).
func TestKeyPrefixOrder(t *testing.T) {
	keys := []string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgg\xff",
		"\xff", "\xff\xff\xff\xff\xff\xff\xff\xff", "p0000001", "p00000010", "p0000002", "é", "e\xcc\x81"}
	for _, ka := range keys {
		for _, kb := range keys {
			pa, pb := keyPrefix(ka), keyPrefix(kb)
			if pa != pb && cmp.Compare(pa, pb) != cmp.Compare(ka, kb) {
				t.Fatalf("prefixes of %q and %q order them %d, the strings %d", ka, kb, cmp.Compare(pa, pb), cmp.Compare(ka, kb))
			}
		}
	}
}

// TestSortChangesStable: sortChanges orders changes by (key, id) and keeps
// the input order of equal (key, id) pairs (a replaced edge's removal
// before its addition), as a stable sort does (red if it is not stable or
// misorders keys sharing a prefix).
func TestSortChangesStable(t *testing.T) {
	src := rowSrc{}
	var in []adjChange
	for i := range 200 {
		k := fmt.Sprintf("p%08d", (i*7919)%5)
		ch := adjChange{key: k, id: fmt.Sprintf("e%d", (i*31)%3)}
		if i%2 == 1 {
			ch.src = &src // an addition; even ones are removals
		}
		in = append(in, ch)
	}
	got := append([]adjChange(nil), in...)
	sortChanges(got)
	want := append([]adjChange(nil), in...)
	slices.SortStableFunc(want, func(a, b adjChange) int { return compareKeyID(a.key, a.id, b.key, b.id) })
	for i := range want {
		if got[i].key != want[i].key || got[i].id != want[i].id || (got[i].src == nil) != (want[i].src == nil) {
			t.Fatalf("at %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
