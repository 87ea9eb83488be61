package data

import (
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// MaxIDBytes bounds every key: node and edge ids and edge endpoints are
// 1..MaxIDBytes bytes of valid UTF-8.
const MaxIDBytes = 256

// goAlloc is the one allocator of the package: Go-managed memory, no cgo,
// no background work.
var goAlloc = memory.NewGoAllocator()

// Row is one node or edge as the Go API writes and reads it. From and To are
// used by edge types only. Props maps property names to values; an absent
// key or a nil value is null. The Go type of a value must match the
// property's kind exactly: string, int64 (int is accepted), float64, bool,
// time.Time (stored as UTC nanoseconds, years 1678..2261) or []byte.
type Row struct {
	ID    string
	From  string
	To    string
	Props map[string]any
}

// Timestamp range representable as int64 nanoseconds since the epoch.
var (
	minTimestamp = time.Unix(0, -1<<63).UTC()
	maxTimestamp = time.Unix(0, 1<<63-1).UTC()
)

// idProblem returns why id is not a valid key, or "".
func idProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case len(id) > MaxIDBytes:
		return fmt.Sprintf("is %d bytes, more than %d", len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return "is not valid UTF-8"
	}
	return ""
}

// checkRowShape checks one row against t: the keys, unknown properties, each
// value's Go type, and required properties. It returns the row's estimated
// size in bytes for the transaction byte bound.
func checkRowShape(t *Table, r *Row) (int, error) {
	if p := idProblem(r.ID); p != "" {
		return 0, reject(ErrInvalidRow, t.Name, r.ID, schema.ColID, "id %s", p)
	}
	size := rowOverhead + len(r.ID) + 4 + validityBytes(t) // value and offset, null bits
	if t.Edge {
		for _, end := range [2]struct{ col, v string }{{schema.ColFrom, r.From}, {schema.ColTo, r.To}} {
			if p := idProblem(end.v); p != "" {
				return 0, reject(ErrInvalidRow, t.Name, r.ID, end.col, "endpoint %s", p)
			}
			size += len(end.v) + 4
		}
	} else if r.From != "" || r.To != "" {
		return 0, reject(ErrInvalidRow, t.Name, r.ID, "", "From/To set on a node type")
	}
	if err := checkUnknownProps(t, r); err != nil {
		return 0, err
	}
	for _, p := range t.Props {
		n, err := checkValue(t, r.ID, p, r.Props[p.Name])
		if err != nil {
			return 0, err
		}
		size += n
	}
	return size, nil
}

// checkUnknownProps rejects properties the type does not have; the first
// unknown name in sorted order is reported, so the error is deterministic.
func checkUnknownProps(t *Table, r *Row) error {
	var unknown []string
	for name := range r.Props { //detlint:ordered collects names that are sorted next
		if i, ok := t.column(name); !ok || i < t.firstProp() {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return reject(ErrInvalidRow, t.Name, r.ID, unknown[0], "no such property on type %s", t.Name)
}

// checkValue checks one property value and returns its size estimate.
func checkValue(t *Table, id string, p schema.Property, v any) (int, error) {
	if v == nil {
		if p.Required {
			return 0, reject(ErrInvalidRow, t.Name, id, p.Name, "required %s property is missing or null", p.Kind)
		}
		return nullBytes(p.Kind), nil
	}
	bad := func(why string) error {
		return reject(ErrInvalidRow, t.Name, id, p.Name, "%s property: %s", p.Kind, why)
	}
	switch p.Kind {
	case schema.String:
		s, ok := v.(string)
		if !ok {
			return 0, bad(fmt.Sprintf("got Go type %T, want string", v))
		}
		if !utf8.ValidString(s) {
			return 0, bad("not valid UTF-8")
		}
		return len(s) + 4, nil
	case schema.Int64:
		switch v.(type) {
		case int64, int:
			return 8, nil
		}
		return 0, bad(fmt.Sprintf("got Go type %T, want int64", v))
	case schema.Int32:
		if _, ok := int32Of(v); !ok {
			return 0, bad(fmt.Sprintf("got %T %v, want an int32 (int32, or int or int64 in range)", v, v))
		}
		return 4, nil
	case schema.Float64:
		if _, ok := v.(float64); !ok {
			return 0, bad(fmt.Sprintf("got Go type %T, want float64", v))
		}
		return 8, nil
	case schema.Bool:
		if _, ok := v.(bool); !ok {
			return 0, bad(fmt.Sprintf("got Go type %T, want bool", v))
		}
		return 1, nil
	case schema.Timestamp:
		ts, ok := v.(time.Time)
		if !ok {
			return 0, bad(fmt.Sprintf("got Go type %T, want time.Time", v))
		}
		if ts.Before(minTimestamp) || ts.After(maxTimestamp) {
			return 0, bad(fmt.Sprintf("%v is outside %v..%v", ts, minTimestamp, maxTimestamp))
		}
		return 8, nil
	case schema.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return 0, bad(fmt.Sprintf("got Go type %T, want []byte", v))
		}
		return len(b) + 4, nil
	}
	panic(fmt.Sprintf("data: property %s.%s has unchecked kind %v", t.Name, p.Name, p.Kind))
}

// buildRecord turns rows that passed checkRowShape into one record with t's
// schema, in the given order. The caller owns the record.
func buildRecord(t *Table, rows []Row) arrow.Record {
	b := array.NewRecordBuilder(goAlloc, t.arrow)
	defer b.Release()
	b.Reserve(len(rows))
	appendRowValues(b, t, rows)
	return b.NewRecord()
}

// appendRowValues appends rows (checked against t) to a builder of t's schema.
func appendRowValues(b *array.RecordBuilder, t *Table, rows []Row) {
	ids := b.Field(colID).(*array.StringBuilder)
	for i := range rows {
		ids.Append(rows[i].ID)
	}
	if t.Edge {
		from, to := b.Field(colFrom).(*array.StringBuilder), b.Field(colTo).(*array.StringBuilder)
		for i := range rows {
			from.Append(rows[i].From)
			to.Append(rows[i].To)
		}
	}
	for j, p := range t.Props {
		fb := b.Field(t.firstProp() + j)
		for i := range rows {
			appendValue(fb, p.Kind, rows[i].Props[p.Name])
		}
	}
}

func appendValue(fb array.Builder, k schema.Kind, v any) {
	if v == nil {
		fb.AppendNull()
		return
	}
	switch k {
	case schema.String:
		fb.(*array.StringBuilder).Append(v.(string))
	case schema.Int64:
		if i, ok := v.(int); ok {
			v = int64(i)
		}
		fb.(*array.Int64Builder).Append(v.(int64))
	case schema.Int32:
		n, _ := int32Of(v)
		fb.(*array.Int32Builder).Append(n)
	case schema.Float64:
		fb.(*array.Float64Builder).Append(v.(float64))
	case schema.Bool:
		fb.(*array.BooleanBuilder).Append(v.(bool))
	case schema.Timestamp:
		fb.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(time.Time).UnixNano()))
	case schema.Bytes:
		fb.(*array.BinaryBuilder).Append(v.([]byte))
	default:
		panic(fmt.Sprintf("data: append of unchecked kind %v", k))
	}
}

// rowAt converts row i of a record with t's schema back to a Row. Strings
// and byte slices are copied, so the Row outlives the record.
func rowAt(t *Table, rec arrow.Record, i int) Row {
	r := Row{ID: cloneString(rec.Column(colID).(*array.String).Value(i))}
	if t.Edge {
		r.From = cloneString(rec.Column(colFrom).(*array.String).Value(i))
		r.To = cloneString(rec.Column(colTo).(*array.String).Value(i))
	}
	if len(t.Props) > 0 {
		r.Props = make(map[string]any, len(t.Props))
	}
	for j, p := range t.Props {
		col := rec.Column(t.firstProp() + j)
		if col.IsNull(i) {
			continue
		}
		r.Props[p.Name] = valueAt(col, p.Kind, i)
	}
	return r
}

func valueAt(col arrow.Array, k schema.Kind, i int) any {
	switch k {
	case schema.String:
		return cloneString(col.(*array.String).Value(i))
	case schema.Int64:
		return col.(*array.Int64).Value(i)
	case schema.Int32:
		return col.(*array.Int32).Value(i)
	case schema.Float64:
		return col.(*array.Float64).Value(i)
	case schema.Bool:
		return col.(*array.Boolean).Value(i)
	case schema.Timestamp:
		return time.Unix(0, int64(col.(*array.Timestamp).Value(i))).UTC()
	case schema.Bytes:
		return append([]byte{}, col.(*array.Binary).Value(i)...)
	}
	panic(fmt.Sprintf("data: read of unchecked kind %v", k))
}

// cloneString copies s, which may alias an Arrow buffer.
func cloneString(s string) string { return string(append([]byte(nil), s...)) }
