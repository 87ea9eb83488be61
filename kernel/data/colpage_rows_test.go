package data

import (
	"bytes"
	"fmt"
	"testing"
)

// TestEncodeRowsPageMatchesGather: a page encoded straight from rows is
// byte for byte the page of the gathered record — every column type
// (Person: string, int64, float64, bool, timestamp, bytes with nulls in
// different patterns and empty values; M: int32), rows of two records in
// mixed order, a null first, one row, a whole record — under both codecs
// (red if a value, a null, the bitmap or the header differs).
func TestEncodeRowsPageMatchesGather(t *testing.T) {
	cat := testCatalog(t)
	person, _ := cat.table("Person")
	m, _ := catalogOf(t, "node M { n: int32? }\n").table("M")
	int32Rows := func(n int) []Row {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{ID: fmt.Sprintf("m%03d", i), Props: map[string]any{}}
			if i%4 != 1 {
				rows[i].Props["n"] = int32(i*7919 - 400)
			}
		}
		return rows
	}
	for _, tc := range []struct {
		tb   *Table
		a, b []Row
	}{
		{person, sparsePeople(300), sparsePeople(40)},
		{m, int32Rows(50), int32Rows(9)},
	} {
		a, b := recordOf(t, tc.tb, tc.a), recordOf(t, tc.tb, tc.b)
		var mixed []rowSrc
		for i := range len(tc.a) {
			mixed = append(mixed, rowSrc{a, (i * 17) % len(tc.a)})
			if i%5 == 2 {
				mixed = append(mixed, rowSrc{b, i % len(tc.b)})
			}
		}
		whole := make([]rowSrc, len(tc.b))
		for i := range whole {
			whole[i] = rowSrc{b, i}
		}
		for _, sel := range [][]rowSrc{mixed, mixed[:1], mixed[3:40], whole, {{b, 0}, {a, 3}}} {
			for _, codec := range []Codec{CodecZstd, CodecPlain} {
				rec := gather(tc.tb, sel)
				want, err := encodePage(codec, tc.tb, rec)
				must(t, err)
				got, err := encodeRowsPage(codec, tc.tb, sel)
				must(t, err)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, %d rows, codec %v: the page from rows differs from the gathered page", tc.tb.Name, len(sel), codec)
				}
				rawWant, err := encodeColumns(tc.tb, rec)
				must(t, err)
				rawGot, err := encodeRowColumns(tc.tb, sel)
				must(t, err)
				if !bytes.Equal(rawGot, rawWant) {
					t.Fatalf("%s, %d rows: the column file from rows differs from the gathered one", tc.tb.Name, len(sel))
				}
				rec.Release()
			}
		}
		a.Release()
		b.Release()
	}
}
