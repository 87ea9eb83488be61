package data

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// MaxStatBytes bounds a string or bytes bound recorded in a fragment's
// column statistics: a longer minimum is stored as its prefix (still a
// lower bound), a longer maximum is not stored (no upper bound).
const MaxStatBytes = 64

// ColumnStats are one column's statistics in a fragment: the null count and
// bounds on the non-null values (Lo <= every value <= Hi), each in the
// column kind's text form (see statText). A bound is absent when unknown: a
// float column holding a NaN has none, a string longer than MaxStatBytes no
// Hi. They let a filtered scan skip fragments without fetching them.
type ColumnStats struct {
	Column string  `json:"col"`
	Nulls  uint64  `json:"nulls"`
	Lo     *string `json:"lo,omitempty"`
	Hi     *string `json:"hi,omitempty"`
}

// statColumns are the columns with statistics: every property (id has
// MinID/MaxID). An edge table's from and to get none: every cold lookup
// reads the table version, so its per-fragment metadata stays lean, and
// questions by endpoint go through the adjacency index.
func statColumns(t *Table) []int {
	var cols []int
	for c := t.firstProp(); c < t.arrow.NumFields(); c++ { // NumFields: Fields() copies the slice
		cols = append(cols, c)
	}
	return cols
}

// columnStats computes the statistics of every stat column of rec.
func columnStats(t *Table, rec arrow.Record) []ColumnStats {
	var out []ColumnStats
	for _, c := range statColumns(t) {
		out = append(out, oneColumnStats(t, c, rec.Column(c)))
	}
	return out
}

func oneColumnStats(t *Table, c int, col arrow.Array) ColumnStats {
	k := kindOf(t, c)
	cs := ColumnStats{Column: t.storageName(c)}
	var lo, hi *pred.Value
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			cs.Nulls++
			continue
		}
		v := cellValue(k, col, i)
		if k == schema.Float64 && math.IsNaN(v.F) {
			return ColumnStats{Column: cs.Column, Nulls: uint64(nulls(col))}
		}
		if lo == nil || pred.Compare(v, *lo) < 0 {
			lo = &v
		}
		if hi == nil || pred.Compare(v, *hi) > 0 {
			w := v
			hi = &w
		}
	}
	if lo != nil {
		s := statText(*lo, true)
		cs.Lo = &s
	}
	if hi != nil && len(hi.S) <= MaxStatBytes {
		s := statText(*hi, false)
		cs.Hi = &s
	}
	return cs
}

// cellValue returns the non-null cell i of col as a pred value.
func cellValue(k schema.Kind, col arrow.Array, i int) pred.Value {
	switch k {
	case schema.String:
		return pred.Value{Kind: k, S: col.(*array.String).Value(i)}
	case schema.Bytes:
		return pred.Value{Kind: k, S: string(col.(*array.Binary).Value(i))}
	case schema.Int64:
		return pred.Value{Kind: k, I: col.(*array.Int64).Value(i)}
	case schema.Int32: // predicates and statistics see int32 as int64
		return pred.Value{Kind: schema.Int64, I: int64(col.(*array.Int32).Value(i))}
	case schema.Timestamp:
		return pred.Value{Kind: k, I: int64(col.(*array.Timestamp).Value(i))}
	case schema.Float64:
		return pred.Value{Kind: k, F: col.(*array.Float64).Value(i)}
	case schema.Bool:
		return pred.Value{Kind: k, B: col.(*array.Boolean).Value(i)}
	}
	panic(fmt.Sprintf("data: cell of unchecked kind %v", k))
}

// statText encodes a bound: decimal int64 and timestamp nanoseconds, the
// shortest round-tripping float, "false"/"true", strings as themselves and
// bytes as hex; strings and bytes cut to MaxStatBytes (a cut minimum is a
// prefix, so still a lower bound; strings cut at a rune boundary).
func statText(v pred.Value, lower bool) string {
	switch v.Kind {
	case schema.String:
		s := v.S
		if lower && len(s) > MaxStatBytes {
			s = s[:MaxStatBytes]
			for len(s) > 0 && !utf8.ValidString(s) {
				s = s[:len(s)-1]
			}
		}
		return s
	case schema.Bytes:
		s := v.S
		if lower && len(s) > MaxStatBytes {
			s = s[:MaxStatBytes]
		}
		return hex.EncodeToString([]byte(s))
	case schema.Int64, schema.Timestamp:
		return strconv.FormatInt(v.I, 10)
	case schema.Float64:
		return strconv.FormatFloat(v.F, 'g', -1, 64)
	case schema.Bool:
		return strconv.FormatBool(v.B)
	}
	panic(fmt.Sprintf("data: stat of unchecked kind %v", v.Kind))
}

// parseStat decodes a bound written by statText.
func parseStat(k schema.Kind, s string) (pred.Value, error) {
	k = predKind(k)
	v := pred.Value{Kind: k}
	var err error
	switch k {
	case schema.String:
		if len(s) > MaxStatBytes || !utf8.ValidString(s) {
			err = fmt.Errorf("string bound of %d bytes or not UTF-8", len(s))
		}
		v.S = s
	case schema.Bytes:
		var b []byte
		b, err = hex.DecodeString(s)
		if len(b) > MaxStatBytes {
			err = fmt.Errorf("bytes bound of %d bytes", len(b))
		}
		v.S = string(b)
	case schema.Int64, schema.Timestamp:
		v.I, err = strconv.ParseInt(s, 10, 64)
	case schema.Float64:
		v.F, err = strconv.ParseFloat(s, 64)
		if err == nil && math.IsNaN(v.F) {
			err = fmt.Errorf("NaN bound")
		}
	case schema.Bool:
		v.B, err = strconv.ParseBool(s)
	}
	if err == nil && statText(v, true) != s {
		err = fmt.Errorf("bound %q is not in canonical form", s)
	}
	return v, err
}

// fragStats are the decoded statistics of one fragment, by column index.
type fragStats map[int]pred.ColStats

// decodeStats checks a fragment's statistics against its table: known stat
// columns (by storage name; a retired column's are skipped: a fragment
// written before a schema change may list them, in its own column order),
// each at most once, canonical bounds with
// Lo <= Hi, at most rows nulls, no bound on an all-null column.
func decodeStats(t *Table, info FragmentInfo) (fragStats, error) {
	out := fragStats{}
	seen := map[int]bool{} // an evolved table's old fragments may list columns in another order
	for _, cs := range info.Stats {
		c, ok := t.storageColumn(cs.Column)
		if !ok && t.retired[cs.Column] {
			continue // a dropped property's statistics: nothing reads them
		}
		if !ok || seen[c] || c < t.firstProp() {
			return nil, fmt.Errorf("stats of column %q: unknown, repeated or out of order", cs.Column)
		}
		seen[c] = true
		st := pred.ColStats{Nulls: cs.Nulls}
		for _, b := range []struct {
			s   *string
			dst **pred.Value
		}{{cs.Lo, &st.Lo}, {cs.Hi, &st.Hi}} {
			if b.s == nil {
				continue
			}
			v, err := parseStat(kindOf(t, c), *b.s)
			if err != nil {
				return nil, fmt.Errorf("stats of column %q: %v", cs.Column, err)
			}
			*b.dst = &v
		}
		if cs.Nulls > info.Rows || (cs.Nulls == info.Rows && (st.Lo != nil || st.Hi != nil)) ||
			(st.Lo != nil && st.Hi != nil && pred.Compare(*st.Lo, *st.Hi) > 0) {
			return nil, fmt.Errorf("stats of column %q are not sane", cs.Column)
		}
		out[c] = st
	}
	return out, nil
}

// predColumns are the columns a predicate on t may name: id, from and to of
// an edge table, and every property.
func predColumns(t *Table) []pred.Column {
	cols := make([]pred.Column, len(t.arrow.Fields()))
	for c, f := range t.arrow.Fields() {
		cols[c] = pred.Column{Name: f.Name, Kind: predKind(kindOf(t, c)), Index: c}
	}
	return cols
}

// mayMatch reports whether fragment info may hold a row matching b: the id
// range bounds the id column, the recorded statistics the others.
func mayMatch(b *pred.Bound, info FragmentInfo, st fragStats) bool {
	return b.MayMatch(info.Rows, func(c int) (pred.ColStats, bool) {
		if c == colID {
			lo, hi := pred.Value{Kind: schema.String, S: info.MinID}, pred.Value{Kind: schema.String, S: info.MaxID}
			return pred.ColStats{Lo: &lo, Hi: &hi}, true
		}
		cs, ok := st[c]
		return cs, ok
	})
}
