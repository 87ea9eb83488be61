package data

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Reading old fragments through property defaults and widenings (docs/
// format.md "Schema evolution"): a fragment written before a property
// existed has no column for it and reads the property's default
// (schema.Property.Default) in every row, or null without one; a fragment
// written while a property was int32 holds an int32 column that reads
// widened to int64. Nothing is rewritten.

// missingColumn is column c of a fragment of n rows that lacks it: the
// property's default in every row, else all null (a key column, or a
// required property without a default, cannot be missing: an error).
func (t *Table) missingColumn(c, n int) (arrow.Array, error) {
	f := t.disk.Field(c)
	if c < t.firstProp() {
		return nil, fmt.Errorf("fragment of %s lacks key column %q", t.Name, f.Name)
	}
	p := t.Props[c-t.firstProp()]
	v, ok := p.DefaultValue()
	if !ok {
		if !f.Nullable {
			return nil, fmt.Errorf("fragment of %s lacks column %q, which has no default and cannot read as null", t.Name, f.Name)
		}
		return array.MakeArrayOfNull(goAlloc, f.Type, n), nil
	}
	b := array.NewBuilder(goAlloc, f.Type)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		appendValue(b, p.Kind, v)
	}
	return b.NewArray(), nil
}

// widens reports whether a fragment column of type from reads as a table
// column of type to by widening (schema.Widens: int32 -> int64).
func widens(from, to arrow.DataType) bool {
	return arrow.TypeEqual(from, arrow.PrimitiveTypes.Int32) && arrow.TypeEqual(to, arrow.PrimitiveTypes.Int64)
}

// widenInt32 returns an int64 copy of an int32 array (nulls kept); the
// caller releases it.
func widenInt32(a arrow.Array) arrow.Array {
	src := a.(*array.Int32)
	b := array.NewInt64Builder(goAlloc)
	defer b.Release()
	b.Reserve(src.Len())
	for i := 0; i < src.Len(); i++ {
		if src.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(int64(src.Value(i)))
	}
	return b.NewArray()
}
