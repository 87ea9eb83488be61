package data

import (
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// checkRecord is the fragment rule: t's schema, at least one row, and
// checkColumns; ids strictly ascending (sorted, unique).
func checkRecord(t *Table, rec arrow.Record) error {
	if !sameSchema(rec.Schema(), t.arrow) {
		return fmt.Errorf("record schema %v is not the schema of table %s", rec.Schema(), t.Name)
	}
	if rec.NumRows() < 1 {
		return fmt.Errorf("empty record")
	}
	if err := checkColumns(t, rec); err != nil {
		return err
	}
	ids := rec.Column(colID).(*array.String)
	for i := 1; i < ids.Len(); i++ {
		if ids.Value(i-1) >= ids.Value(i) {
			return fmt.Errorf("ids not strictly ascending at row %d (%q after %q)", i, ids.Value(i), ids.Value(i-1))
		}
	}
	return nil
}

// checkColumns verifies the structure of every column of a record whose
// fields match t: buffer bounds and offsets (so later reads cannot panic),
// valid keys in id/from/to, valid UTF-8 in string columns, and no null in a
// required column. It never panics, whatever the record's buffers hold.
func checkColumns(t *Table, rec arrow.Record) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed column buffers: %v", r)
		}
	}()
	if int(rec.NumCols()) != t.arrow.NumFields() {
		return fmt.Errorf("%d columns, want %d", rec.NumCols(), t.arrow.NumFields())
	}
	n := int(rec.NumRows())
	for c, f := range t.arrow.Fields() {
		col := rec.Column(c)
		if col.Len() != n {
			return fmt.Errorf("column %s has %d rows, want %d", f.Name, col.Len(), n)
		}
		if err := checkBuffers(col); err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		if !f.Nullable && nulls(col) > 0 {
			return fmt.Errorf("column %s: null in a required column", f.Name)
		}
		if c == colID || (t.Edge && c <= colTo) {
			if err := checkKeys(col.(*array.String)); err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
		} else if s, ok := col.(*array.String); ok {
			if err := checkUTF8(s); err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// nulls counts null slots from the validity bitmap itself, not the
// (possibly inconsistent) recorded null count.
func nulls(col arrow.Array) int {
	bm := col.NullBitmapBytes()
	if len(bm) == 0 {
		return 0
	}
	return col.Len() - bitutil.CountSetBits(bm, col.Data().Offset(), col.Len())
}

// checkBuffers verifies that the validity bitmap and value buffers are long
// enough and, for variable-width columns, that offsets are monotone and in
// bounds.
func checkBuffers(col arrow.Array) error {
	d := col.Data()
	n, off := d.Len(), d.Offset()
	if off < 0 || n < 0 {
		return fmt.Errorf("negative offset or length")
	}
	if n == 0 {
		return nil
	}
	if bm := col.NullBitmapBytes(); len(bm) > 0 && len(bm)*8 < off+n {
		return fmt.Errorf("validity bitmap too short")
	}
	switch a := col.(type) {
	case *array.String:
		return checkOffsets(a.ValueOffsets(), n, len(d.Buffers()[2].Bytes()))
	case *array.Binary:
		return checkOffsets(a.ValueOffsets(), n, len(d.Buffers()[2].Bytes()))
	case *array.Boolean:
		if len(d.Buffers()[1].Bytes())*8 < off+n {
			return fmt.Errorf("value bitmap too short")
		}
	case *array.Int32:
		if bufLen(d.Buffers()[1]) < (off+n)*4 {
			return fmt.Errorf("value buffer too short")
		}
	default: // fixed width 8 bytes: int64, float64, timestamp
		if bufLen(d.Buffers()[1]) < (off+n)*8 {
			return fmt.Errorf("value buffer too short")
		}
	}
	return nil
}

func bufLen(b *memory.Buffer) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

func checkOffsets(offs []int32, n, dataLen int) error {
	if len(offs) < n+1 {
		return fmt.Errorf("%d offsets for %d rows", len(offs), n)
	}
	if offs[0] < 0 {
		return fmt.Errorf("negative first offset")
	}
	for i := 1; i <= n; i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("offsets decrease at row %d", i)
		}
	}
	if int(offs[n]) > dataLen {
		return fmt.Errorf("offsets past the data buffer")
	}
	return nil
}

func checkKeys(s *array.String) error {
	for i := 0; i < s.Len(); i++ {
		if p := idProblem(s.Value(i)); p != "" {
			return fmt.Errorf("row %d: key %s", i, p)
		}
	}
	return nil
}

func checkUTF8(s *array.String) error {
	for i := 0; i < s.Len(); i++ {
		if s.IsValid(i) && !utf8.ValidString(s.Value(i)) {
			return fmt.Errorf("row %d: not valid UTF-8", i)
		}
	}
	return nil
}
