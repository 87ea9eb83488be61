package data

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// MaxFragmentRows bounds the rows of a fragment a commit writes. It is
// also the granularity of copy-on-write: an update or delete of one row
// rewrites the one fragment holding it, and a diff or merge reads the
// fragments that differ, so their cost is bounded by this, never by the
// table's size.
const MaxFragmentRows = 1 << 13

// builtFragment is one entry of a new table version: an existing fragment
// kept as is (keep != nil), or the content of a new fragment (rec).
type builtFragment struct {
	keep *FragmentInfo
	rec  arrow.Record
	// from is the HEAD fragment this one keeps or rewrites, -1 for new
	// rows (the tail): a paged head's untouched chunks are kept by ref
	// through it (fragContentTree).
	from int
}

// builtTable is the new content of one table: the fragment list in order and
// the row count.
type builtTable struct {
	frags []builtFragment
	rows  uint64
}

func (b builtTable) release() {
	for _, f := range b.frags {
		if f.rec != nil {
			f.rec.Release()
		}
	}
}

// rowSrc is one row of a new fragment: a record and a row index.
type rowSrc struct {
	rec arrow.Record
	row int
}

// mergeCount returns how many trailing fragments of frags a commit adding
// newRows rows merges with them. The rule (a binary counter) merges the
// previous fragment while it has no more rows than everything merged so far
// and the result fits one fragment, so the trailing fragments at least
// double in size going backwards: a table holds at most about
// log2(MaxFragmentRows) small fragments however many small commits it got,
// and each row is rewritten O(log) times.
func mergeCount(frags []FragmentInfo, newRows uint64) int {
	if newRows == 0 {
		return 0
	}
	acc, k := newRows, 0
	for k < len(frags) {
		prev := frags[len(frags)-1-k].Rows
		if prev > acc || acc+prev > MaxFragmentRows {
			break
		}
		acc += prev
		k++
	}
	return k
}

// buildTable computes the new content of a planned table from its HEAD
// view: fragments holding replaced or deleted ids are rewritten without
// changing any existing file (copy-on-write), new ids go to new fragments
// sorted by id, and the trailing small fragments merge with the new rows
// (mergeCount). Every fragment it needs must be loaded in p.head.
func buildTable(p *tablePlan) builtTable {
	head := p.head
	touched := touchedFragments(p)
	merge := mergeCount(head.frags, uint64(len(p.inserts)))
	out := builtTable{}
	var tail []rowSrc
	for i := range head.frags {
		inTail := i >= len(head.frags)-merge
		if !head.fragKnown(i) && (touched[i] || inTail) {
			panic(fmt.Sprintf("data: fragment %d of %s is rewritten but its chunk was not read", i, p.t.Name))
		}
		switch {
		case !touched[i] && !inTail:
			out.frags = append(out.frags, builtFragment{keep: &head.frags[i], from: i}) // an unknown info (paged, its chunk unread) counts below
			out.rows += head.frags[i].Rows
		case inTail:
			tail = append(tail, survivors(p, i)...)
		default:
			if rows := survivors(p, i); len(rows) > 0 {
				out.frags = append(out.frags, builtFragment{rec: gather(p.t, rows), from: i})
				out.rows += uint64(len(rows))
			}
		}
	}
	for _, ref := range p.inserts {
		w := p.st.writes[ref.w]
		tail = append(tail, rowSrc{w.rec, ref.row})
	}
	sort.SliceStable(tail, func(a, b int) bool { return srcID(tail[a]) < srcID(tail[b]) })
	for len(tail) > 0 {
		n := min(len(tail), MaxFragmentRows)
		out.frags = append(out.frags, builtFragment{rec: gather(p.t, tail[:n]), from: -1})
		out.rows += uint64(n)
		tail = tail[n:]
	}
	out.rows += head.unknownRows()
	checkBuilt(p, out)
	return out
}

// touchedFragments marks the HEAD fragments holding a replaced or deleted id.
func touchedFragments(p *tablePlan) map[int]bool {
	touched := map[int]bool{}
	for _, ids := range [2][]string{keys(p.replace), keys(p.deletes)} {
		for _, id := range ids {
			ref, ok := p.head.lookup(id)
			if !ok {
				panic(fmt.Sprintf("data: planned id %q of %s is not in its HEAD view", id, p.t.Name))
			}
			touched[ref.frag] = true
		}
	}
	return touched
}

// survivors lists the rows of HEAD fragment i after the plan: deleted rows
// dropped, replaced rows taken from the pending write, in id order.
func survivors(p *tablePlan, i int) []rowSrc {
	rec := p.head.recs[i]
	if rec == nil {
		panic(fmt.Sprintf("data: fragment %s of %s must be loaded to be rewritten", p.head.frags[i].Name, p.t.Name))
	}
	ids := rec.Column(colID).(*array.String)
	out := make([]rowSrc, 0, ids.Len())
	for r := 0; r < ids.Len(); r++ {
		id := ids.Value(r)
		if p.deletes[id] {
			continue
		}
		if ref, ok := p.replace[id]; ok {
			out = append(out, rowSrc{p.st.writes[ref.w].rec, ref.row})
			continue
		}
		out = append(out, rowSrc{rec, r})
	}
	return out
}

func srcID(s rowSrc) string { return s.rec.Column(colID).(*array.String).Value(s.row) }

// checkBuilt asserts the row arithmetic of a build: the new row count is
// the HEAD's minus deletions plus insertions.
func checkBuilt(p *tablePlan, b builtTable) {
	want := p.head.rows - uint64(len(p.deletes)) + uint64(len(p.inserts))
	if b.rows != want {
		panic(fmt.Sprintf("data: build of %s has %d rows, want %d (head %d - deleted %d + inserted %d)",
			p.t.Name, b.rows, want, p.head.rows, len(p.deletes), len(p.inserts)))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m { //detlint:ordered collects keys that are sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gather builds one record with t's schema from rows of records that have
// t's schema, in the given order.
func gather(t *Table, rows []rowSrc) arrow.Record {
	if rec := wholeRecord(t, rows); rec != nil {
		rec.Retain()
		return rec
	}
	return gatherCopy(t, rows)
}

// gatherCopy is gather copying the values into a new record.
func gatherCopy(t *Table, rows []rowSrc) arrow.Record {
	cols := make([]arrow.Array, t.arrow.NumFields())
	for c, f := range t.arrow.Fields() {
		if kindOf(t, c) == schema.String {
			cols[c] = gatherStrings(rows, c)
			continue
		}
		b := array.NewBuilder(goAlloc, f.Type)
		b.Reserve(len(rows))
		copyColumn(b, kindOf(t, c), c, rows)
		cols[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(t.arrow, cols, int64(len(rows)))
	for _, col := range cols {
		col.Release()
	}
	return rec
}

// wholeRecord returns the record rows are, when they are every row of one
// record built with t's Arrow schema (the same *arrow.Schema), in order:
// gather then retains it instead of copying (issue #28.2: a bulk load
// whose input is sorted by id stages its rows in records of
// MaxFragmentRows rows that are its fragments exactly). Else nil.
func wholeRecord(t *Table, rows []rowSrc) arrow.Record {
	if len(rows) == 0 {
		return nil
	}
	rec := rows[0].rec
	if rec == nil || rec.Schema() != t.arrow || rec.NumRows() != int64(len(rows)) {
		return nil
	}
	for i, r := range rows {
		if r.rec != rec || r.row != i {
			return nil
		}
	}
	return rec
}

// kindOf returns the schema kind of column c (key columns are strings).
func kindOf(t *Table, c int) schema.Kind {
	if c < t.firstProp() {
		return schema.String
	}
	return t.Props[c-t.firstProp()].Kind
}

// copyColumn appends column c of rows to fb (kind k): the builder's type
// and each source record's column are looked up once, not per value.
func copyColumn(fb array.Builder, k schema.Kind, c int, rows []rowSrc) {
	switch k {
	case schema.String:
		b := fb.(*array.StringBuilder)
		n := 0
		eachValue(rows, c, func(a *array.String, i int) { n += a.ValueLen(i) })
		b.ReserveData(n)
		copyValues(rows, c, b, func(a *array.String, i int) { b.Append(a.Value(i)) })
	case schema.Int64:
		b := fb.(*array.Int64Builder)
		copyValues(rows, c, b, func(a *array.Int64, i int) { b.Append(a.Value(i)) })
	case schema.Int32:
		b := fb.(*array.Int32Builder)
		copyValues(rows, c, b, func(a *array.Int32, i int) { b.Append(a.Value(i)) })
	case schema.Float64:
		b := fb.(*array.Float64Builder)
		copyValues(rows, c, b, func(a *array.Float64, i int) { b.Append(a.Value(i)) })
	case schema.Bool:
		b := fb.(*array.BooleanBuilder)
		copyValues(rows, c, b, func(a *array.Boolean, i int) { b.Append(a.Value(i)) })
	case schema.Timestamp:
		b := fb.(*array.TimestampBuilder)
		copyValues(rows, c, b, func(a *array.Timestamp, i int) { b.Append(a.Value(i)) })
	case schema.Bytes:
		b := fb.(*array.BinaryBuilder)
		n := 0
		eachValue(rows, c, func(a *array.Binary, i int) { n += a.ValueLen(i) })
		b.ReserveData(n)
		copyValues(rows, c, b, func(a *array.Binary, i int) { b.Append(a.Value(i)) })
	default:
		panic(fmt.Sprintf("data: copy of unchecked kind %v", k))
	}
}

// copyValues appends column c of rows to b: a null as a null, else
// through add (the column's concrete array type A).
func copyValues[A arrow.Array](rows []rowSrc, c int, b array.Builder, add func(A, int)) {
	var last arrow.Record
	var col A
	for _, r := range rows {
		if r.rec != last {
			last, col = r.rec, r.rec.Column(c).(A)
		}
		if col.IsNull(r.row) {
			b.AppendNull()
			continue
		}
		add(col, r.row)
	}
}

// eachValue calls fn for each non-null value of column c of rows.
func eachValue[A arrow.Array](rows []rowSrc, c int, fn func(A, int)) {
	var last arrow.Record
	var col A
	for _, r := range rows {
		if r.rec != last {
			last, col = r.rec, r.rec.Column(c).(A)
		}
		if !col.IsNull(r.row) {
			fn(col, r.row)
		}
	}
}
