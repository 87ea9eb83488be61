package data

import (
	"bytes"
	"testing"
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
