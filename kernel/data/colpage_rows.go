package data

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Adjacency pages straight from rows (issue #28.2): a bulk commit writes
// every page it builds from rows of several records (staged records and
// the pages it rewrites). Gathering those rows into a new Arrow record
// only to encode it as a column file copied every string twice (counted,
// then copied) before the encoder read it a third time; encodeRowsPage
// reads each value once into a slice (strings as headers, their bytes
// stay where they are) and hands the slices to the column file's own
// encoders, so the bytes are those of encodePage(gather(rows)).

// encodeRowsPage returns encodePage(c, t, gather(t, rows)): the stored
// bytes of the adjacency page holding rows (t's Arrow schema), in order.
// Under the column-file encoding it encodes from rows directly;
// otherwise it gathers.
func encodeRowsPage(c Codec, t *Table, rows []rowSrc) ([]byte, error) {
	if c.resolve() != CodecZstd || format.CurrentFormat < FormatColumnPages {
		rec := gather(t, rows)
		defer rec.Release()
		return encodePage(c, t, rec)
	}
	buf, err := encodeRowColumns(t, rows)
	if err != nil {
		return nil, err
	}
	return compressIPC(c, buf), nil
}

// encodeRowColumns is encodeColumns(t, gather(t, rows)), byte for byte.
func encodeRowColumns(t *Table, rows []rowSrc) ([]byte, error) {
	fields := t.disk.Fields()
	b, err := appendColumnHeader([]byte(colPageMagic), fields, len(rows))
	if err != nil {
		return nil, err
	}
	for c, f := range fields {
		sec := encodeRowsColumn(rows, c, f.Type)
		b = binary.AppendUvarint(b, uint64(len(sec)))
		b = append(b, sec...)
	}
	return b, nil
}

// appendColumnHeader appends a column file's row and column counts and
// each column's name, type tag and nullability.
func appendColumnHeader(b []byte, fields []arrow.Field, rows int) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(rows))
	b = binary.AppendUvarint(b, uint64(len(fields)))
	for _, f := range fields {
		tag, ok := colTag(f.Type)
		if !ok {
			return nil, fmt.Errorf("column %q: type %v has no column encoding", f.Name, f.Type)
		}
		b = binary.AppendUvarint(b, uint64(len(f.Name)))
		b = append(b, f.Name...)
		b = append(b, tag, boolByte(f.Nullable))
	}
	return b, nil
}

// encodeRowsColumn is encodeColumn of column c (type dt) of the rows
// gathered: the null count, the validity bitmap when it is not zero, the
// values (a null as empty or zero).
func encodeRowsColumn(rows []rowSrc, c int, dt arrow.DataType) []byte {
	n := len(rows)
	switch dt.ID() {
	case arrow.STRING:
		vals, b := rowValues(rows, c, (*array.String).Value)
		return appendFrontCoded(b, n, func(i int) string { return vals[i] })
	case arrow.BINARY:
		vals, b := rowValues(rows, c, (*array.Binary).Value)
		return appendFrontCoded(b, n, func(i int) string { return string(vals[i]) })
	case arrow.INT64:
		vals, b := rowValues(rows, c, (*array.Int64).Value)
		return appendScaledDeltas(b, n, func(i int) int64 { return vals[i] })
	case arrow.INT32:
		vals, b := rowValues(rows, c, (*array.Int32).Value)
		return appendScaledDeltas(b, n, func(i int) int64 { return int64(vals[i]) })
	case arrow.TIMESTAMP:
		vals, b := rowValues(rows, c, (*array.Timestamp).Value)
		return appendScaledDeltas(b, n, func(i int) int64 { return int64(vals[i]) })
	case arrow.FLOAT64:
		vals, b := rowValues(rows, c, (*array.Float64).Value)
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	case arrow.BOOL:
		vals, b := rowValues(rows, c, (*array.Boolean).Value)
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, v := range vals {
			if v {
				bitutil.SetBit(bm, i)
			}
		}
		return append(b, bm...)
	}
	panic(fmt.Sprintf("data: column encoding of %v (colTag admitted it)", dt))
}

// rowValues reads column c (array type A) of each row once: the values
// (the zero value where null) and the section's start, the uvarint null
// count and, when it is not zero, the validity bitmap (LSB first).
func rowValues[A arrow.Array, V any](rows []rowSrc, c int, value func(A, int) V) ([]V, []byte) {
	vals := make([]V, len(rows))
	var valid []byte
	nulls := 0
	var last arrow.Record
	var col A
	for i, r := range rows {
		if r.rec != last {
			last, col = r.rec, r.rec.Column(c).(A)
		}
		if col.IsNull(r.row) {
			if valid == nil {
				valid = make([]byte, bitutil.BytesForBits(int64(len(rows))))
				bitutil.SetBitsTo(valid, 0, int64(i), true)
			}
			nulls++
			continue
		}
		if valid != nil {
			bitutil.SetBit(valid, i)
		}
		vals[i] = value(col, r.row)
	}
	b := binary.AppendUvarint(nil, uint64(nulls))
	return vals, append(b, valid...)
}
