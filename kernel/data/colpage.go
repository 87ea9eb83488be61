package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Columnar adjacency pages (format 7, docs/format.md "Adjacency index",
// "Page encoding"). An adjacency page carries whole edge rows twice over
// (out and in), so its encoding is most of a graph's bytes on the store.
// Format 7 writes a page as the column file below, inside one zstd frame
// (or plain when zstd does not pay, exactly as a fragment): per column
// the string lengths apart from their bytes, strings front-coded against
// the previous row, integers and timestamps divided by their common scale
// and stored as zigzag varint deltas, so
// zstd sees sorted keys and ids as the small numbers they are. Fragments
// stay Arrow IPC (D7: a fragment is an Arrow file any tool reads); pages
// are the index's own objects. Arrow IPC pages of earlier builds read
// unchanged beside column pages.

// FormatColumnPages is the first format stamp whose builds write adjacency
// pages as column files under the zstd codec. Every build of an older
// stamp refuses the stamp (format.CheckStamp: TooNew) before it reads any
// page of a branch carrying it; nothing is rewritten (the v6->v7 step).
const FormatColumnPages = 7

// colPageMagic starts every column file: "gkcol" and its version, 1.
const colPageMagic = "gkcol\x01"

// Column type tags of a column file.
const (
	colString    byte = 0
	colInt64     byte = 1
	colFloat64   byte = 2
	colBool      byte = 3
	colTimestamp byte = 4
	colBinary    byte = 5
	colInt32     byte = 6
)

// colTag maps an Arrow type of a table's disk schema to its tag.
func colTag(dt arrow.DataType) (byte, bool) {
	switch {
	case arrow.TypeEqual(dt, arrow.BinaryTypes.String):
		return colString, true
	case arrow.TypeEqual(dt, arrow.PrimitiveTypes.Int64):
		return colInt64, true
	case arrow.TypeEqual(dt, arrow.PrimitiveTypes.Int32):
		return colInt32, true
	case arrow.TypeEqual(dt, arrow.PrimitiveTypes.Float64):
		return colFloat64, true
	case arrow.TypeEqual(dt, arrow.FixedWidthTypes.Boolean):
		return colBool, true
	case arrow.TypeEqual(dt, TimestampType):
		return colTimestamp, true
	case arrow.TypeEqual(dt, arrow.BinaryTypes.Binary):
		return colBinary, true
	}
	return 0, false
}

// tagType is colTag's inverse.
func tagType(tag byte) (arrow.DataType, bool) {
	switch tag {
	case colString:
		return arrow.BinaryTypes.String, true
	case colInt64:
		return arrow.PrimitiveTypes.Int64, true
	case colInt32:
		return arrow.PrimitiveTypes.Int32, true
	case colFloat64:
		return arrow.PrimitiveTypes.Float64, true
	case colBool:
		return arrow.FixedWidthTypes.Boolean, true
	case colTimestamp:
		return TimestampType, true
	case colBinary:
		return arrow.BinaryTypes.Binary, true
	}
	return nil, false
}

// encodePage returns the stored bytes of adjacency page rec of table t
// under codec c: a column file in one zstd frame (compressIPC's rules)
// under the zstd codec in a build writing at least FormatColumnPages, else
// the Arrow IPC file as before. Deterministic.
func encodePage(c Codec, t *Table, rec arrow.Record) ([]byte, error) {
	if c.resolve() != CodecZstd || format.CurrentFormat < FormatColumnPages {
		buf, err := encodeIPC(t, rec)
		if err != nil {
			return nil, err
		}
		return compressIPC(c, buf), nil
	}
	buf, err := encodeColumns(t, rec)
	if err != nil {
		return nil, err
	}
	return compressIPC(c, buf), nil
}

// encodeColumns writes rec (t's schema) as a column file of t's storage
// columns: the magic, uvarint rows and columns, per column its name
// (uvarint length, bytes), type tag and nullability, then per column a
// section (uvarint length, bytes): the uvarint null count, the validity
// bitmap when it is not zero, then the values (nulls as empty or zero).
func encodeColumns(t *Table, rec arrow.Record) ([]byte, error) {
	disk := t.toDisk(rec)
	defer disk.Release()
	fields := disk.Schema().Fields()
	b, err := appendColumnHeader([]byte(colPageMagic), fields, int(disk.NumRows()))
	if err != nil {
		return nil, err
	}
	for i := range fields {
		sec := encodeColumn(disk.Column(i))
		b = binary.AppendUvarint(b, uint64(len(sec)))
		b = append(b, sec...)
	}
	return b, nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// encodeColumn is one column's section.
func encodeColumn(a arrow.Array) []byte {
	n := a.Len()
	b := binary.AppendUvarint(nil, uint64(a.NullN()))
	if a.NullN() > 0 {
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if a.IsValid(i) {
				bitutil.SetBit(bm, i)
			}
		}
		b = append(b, bm...)
	}
	switch a := a.(type) {
	case *array.String:
		return appendFrontCoded(b, n, func(i int) string { return zeroIfNull(a, i, a.Value) })
	case *array.Binary:
		return appendFrontCoded(b, n, func(i int) string { return string(zeroIfNull(a, i, a.Value)) })
	case *array.Int64:
		return appendScaledDeltas(b, n, func(i int) int64 { return zeroIfNull(a, i, a.Value) })
	case *array.Int32:
		return appendScaledDeltas(b, n, func(i int) int64 { return int64(zeroIfNull(a, i, a.Value)) })
	case *array.Timestamp:
		return appendScaledDeltas(b, n, func(i int) int64 { return int64(zeroIfNull(a, i, a.Value)) })
	case *array.Float64:
		for i := range n {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(zeroIfNull(a, i, a.Value)))
		}
		return b
	case *array.Boolean:
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if a.IsValid(i) && a.Value(i) {
				bitutil.SetBit(bm, i)
			}
		}
		return append(b, bm...)
	}
	panic(fmt.Sprintf("data: column encoding of %T (colTag admitted it)", a))
}

// zeroIfNull is value(i), or the zero value where a is null (a null slot
// is encoded as empty or zero: one encoding per page).
func zeroIfNull[V any](a arrow.Array, i int, value func(int) V) V {
	var zero V
	if a.IsNull(i) {
		return zero
	}
	return value(i)
}

// maxSharedPrefix bounds the prefix a front-coded string takes from the
// previous one, so that n strings decode to at most maxSharedPrefix*n
// bytes more than their encoded suffixes: a forged file cannot make a
// reader build quadratically many bytes.
const maxSharedPrefix = 255

// appendFrontCoded appends n strings: per string the uvarint length of
// the prefix it shares with the previous one (maximal, at most
// maxSharedPrefix) and the uvarint
// length of its rest, then every rest, concatenated.
func appendFrontCoded(b []byte, n int, value func(int) string) []byte {
	var tails []byte
	prev := ""
	for i := range n {
		s := value(i)
		k := 0
		for k < len(prev) && k < len(s) && k < maxSharedPrefix && prev[k] == s[k] {
			k++
		}
		b = binary.AppendUvarint(b, uint64(k))
		b = binary.AppendUvarint(b, uint64(len(s)-k))
		tails = append(tails, s[k:]...)
		prev = s
	}
	return append(b, tails...)
}

// appendScaledDeltas appends n integers as their scale, uvarint (the
// greatest common divisor of their absolute values, 1 when that is 0 or
// past math.MaxInt64), then appendDeltas of each divided by it. Timestamps
// truncated to the second share the scale 10^9, so their deltas take 4-5
// bytes instead of 8-9 (and zstd cannot find those trailing zeros inside
// a varint).
func appendScaledDeltas(b []byte, n int, value func(int) int64) []byte {
	g := intScale(n, value)
	b = binary.AppendUvarint(b, g)
	return appendDeltas(b, n, func(i int) int64 { return value(i) / int64(g) })
}

// intScale is the scale of n integers (appendScaledDeltas): the greatest
// common divisor of their absolute values, or 1 when that is 0 or does
// not fit an int64 (only math.MinInt64 and zeros).
func intScale(n int, value func(int) int64) uint64 {
	var g uint64
	for i := range n {
		v := value(i)
		u := uint64(v)
		if v < 0 {
			u = -u // two's complement: math.MinInt64 becomes 2^63
		}
		for u != 0 {
			g, u = u, g%u
		}
	}
	if g == 0 || g > math.MaxInt64 {
		return 1
	}
	return g
}

// appendDeltas appends n integers as zigzag varints of their difference
// from the previous one (the first from 0), wrapping.
func appendDeltas(b []byte, n int, value func(int) int64) []byte {
	var prev int64
	for i := range n {
		v := value(i)
		b = binary.AppendVarint(b, v-prev)
		prev = v
	}
	return b
}

// isColumnFile reports whether raw (a page's bytes after the zstd frame)
// is a column file.
func isColumnFile(raw []byte) bool { return bytes.HasPrefix(raw, []byte(colPageMagic)) }

// colReader reads a column file with every length checked against the
// bytes left before use.
type colReader struct {
	b   []byte
	err error
}

func (r *colReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *colReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("column file: bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *colReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("column file: bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *colReader) bytes(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("column file: %s of %d bytes past the end (%d left)", what, n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// maxColumns bounds the columns of a column file (a table's storage
// columns, retired ones included, are far fewer).
const maxColumns = 1 << 12

// decodeColumns decodes column file raw of table t holding exactly rows
// rows into a record of t's schema (an older layout projected through
// t.fromDisk, as an Arrow page's). Every count and length is checked
// against the bytes left before anything is allocated for it, so a
// forged file is an error, never a panic or an allocation beyond a small
// multiple of len(raw) (rows is at most len(raw): every row takes at
// least one byte of some column).
func decodeColumns(t *Table, raw []byte, rows uint64) (arrow.Record, error) {
	r := &colReader{b: raw[len(colPageMagic):]}
	n := r.uvarint("row count")
	ncols := r.uvarint("column count")
	if r.err == nil && (n != rows || n == 0 || n > uint64(len(raw)) || ncols == 0 || ncols > maxColumns || ncols > uint64(len(r.b))) {
		r.fail("column file: %d rows (want %d) and %d columns in %d bytes", n, rows, ncols, len(raw))
	}
	if r.err != nil {
		return nil, r.err
	}
	fields := make([]arrow.Field, 0, ncols)
	for range ncols {
		name := string(r.bytes(r.uvarint("name length"), "column name"))
		hdr := r.bytes(2, "column type")
		if r.err != nil {
			return nil, r.err
		}
		dt, ok := tagType(hdr[0])
		if !ok || hdr[1] > 1 {
			return nil, fmt.Errorf("column file: column %q: bad type %d or nullability %d", name, hdr[0], hdr[1])
		}
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: hdr[1] == 1})
	}
	md := t.disk.Metadata()
	schema := arrow.NewSchema(fields, &md)
	cols := make([]arrow.Array, 0, ncols)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, f := range fields {
		sec := r.bytes(r.uvarint("section length"), "column section")
		if r.err != nil {
			return nil, r.err
		}
		a, err := decodeColumn(f, sec, int(n))
		if err != nil {
			return nil, fmt.Errorf("column file: column %q: %v", f.Name, err)
		}
		cols = append(cols, a)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("column file: %d bytes after the last column", len(r.b))
	}
	rec := array.NewRecord(schema, cols, int64(n))
	return t.fromDisk(rec)
}

// decodeColumn decodes one section of n values of field f.
func decodeColumn(f arrow.Field, sec []byte, n int) (arrow.Array, error) {
	r := &colReader{b: sec}
	nulls := r.uvarint("null count")
	var valid []byte
	if r.err == nil && nulls > uint64(n) {
		r.fail("%d nulls in %d rows", nulls, n)
	}
	if r.err == nil && nulls > 0 {
		if !f.Nullable {
			r.fail("nulls in a non-nullable column")
		}
		valid = r.bytes(uint64(bitutil.BytesForBits(int64(n))), "validity bitmap")
	}
	if r.err != nil {
		return nil, r.err
	}
	if valid != nil && uint64(n)-nulls != uint64(bitutil.CountSetBits(valid, 0, n)) {
		return nil, fmt.Errorf("validity bitmap counts %d nulls, header %d", n-bitutil.CountSetBits(valid, 0, n), nulls)
	}
	isNull := func(i int) bool { return valid != nil && !bitutil.BitIsSet(valid, i) }
	var a arrow.Array
	switch f.Type.ID() {
	case arrow.STRING, arrow.BINARY:
		vals, err := readFrontCoded(r, n)
		if err == nil {
			err = nullsHoldNothing(n, isNull, func(i int) bool { return vals[i] != "" })
		}
		if err != nil {
			return nil, err
		}
		if f.Type.ID() == arrow.STRING {
			bld := array.NewStringBuilder(goAlloc)
			defer bld.Release()
			for i, v := range vals {
				appendOrNull(bld, isNull(i), func() { bld.Append(v) })
			}
			a = bld.NewArray()
		} else {
			bld := array.NewBinaryBuilder(goAlloc, arrow.BinaryTypes.Binary)
			defer bld.Release()
			for i, v := range vals {
				appendOrNull(bld, isNull(i), func() { bld.Append([]byte(v)) })
			}
			a = bld.NewArray()
		}
	case arrow.INT32:
		vals, err := readScaledDeltas(r, n)
		if err == nil {
			err = nullsHoldNothing(n, isNull, func(i int) bool { return vals[i] != 0 })
		}
		for i := 0; err == nil && i < len(vals); i++ {
			if vals[i] < math.MinInt32 || vals[i] > math.MaxInt32 {
				err = fmt.Errorf("int32 column holds %d, out of range", vals[i])
			}
		}
		if err != nil {
			return nil, err
		}
		bld := array.NewInt32Builder(goAlloc)
		defer bld.Release()
		for i, v := range vals {
			appendOrNull(bld, isNull(i), func() { bld.Append(int32(v)) })
		}
		a = bld.NewArray()
	case arrow.INT64, arrow.TIMESTAMP:
		vals, err := readScaledDeltas(r, n)
		if err == nil {
			err = nullsHoldNothing(n, isNull, func(i int) bool { return vals[i] != 0 })
		}
		if err != nil {
			return nil, err
		}
		if r.err != nil {
			return nil, r.err
		}
		if f.Type.ID() == arrow.INT64 {
			bld := array.NewInt64Builder(goAlloc)
			defer bld.Release()
			for i, v := range vals {
				appendOrNull(bld, isNull(i), func() { bld.Append(v) })
			}
			a = bld.NewArray()
		} else {
			bld := array.NewTimestampBuilder(goAlloc, TimestampType)
			defer bld.Release()
			for i, v := range vals {
				appendOrNull(bld, isNull(i), func() { bld.Append(arrow.Timestamp(v)) })
			}
			a = bld.NewArray()
		}
	case arrow.FLOAT64:
		raw := r.bytes(uint64(n)*8, "float values")
		if r.err == nil {
			r.err = nullsHoldNothing(n, isNull, func(i int) bool { return binary.LittleEndian.Uint64(raw[8*i:]) != 0 })
		}
		if r.err != nil {
			return nil, r.err
		}
		bld := array.NewFloat64Builder(goAlloc)
		defer bld.Release()
		for i := range n {
			bits := binary.LittleEndian.Uint64(raw[8*i:])
			appendOrNull(bld, isNull(i), func() { bld.Append(math.Float64frombits(bits)) })
		}
		a = bld.NewArray()
	case arrow.BOOL:
		bm := r.bytes(uint64(bitutil.BytesForBits(int64(n))), "bool values")
		if r.err == nil {
			r.err = nullsHoldNothing(n, isNull, func(i int) bool { return bitutil.BitIsSet(bm, i) })
		}
		if r.err != nil {
			return nil, r.err
		}
		bld := array.NewBooleanBuilder(goAlloc)
		defer bld.Release()
		for i := range n {
			v := bitutil.BitIsSet(bm, i)
			appendOrNull(bld, isNull(i), func() { bld.Append(v) })
		}
		a = bld.NewArray()
	default:
		return nil, fmt.Errorf("type %v", f.Type)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the values", len(r.b))
	}
	if r.err != nil {
		a.Release()
		return nil, r.err
	}
	return a, nil
}

// appendOrNull appends a null or the value; decodeColumn has checked
// that a null slot's encoded value is empty or zero (one encoding per
// page) before building.
func appendOrNull(b array.Builder, null bool, appendValue func()) {
	if null {
		b.AppendNull()
		return
	}
	appendValue()
}

// nullsHoldNothing checks that every null slot of n values is encoded as
// empty or zero.
func nullsHoldNothing(n int, isNull, nonZero func(int) bool) error {
	for i := range n {
		if isNull(i) && nonZero(i) {
			return fmt.Errorf("null slot %d holds a value", i)
		}
	}
	return nil
}

// readScaledDeltas reads n integers (appendScaledDeltas): the scale must
// be the one the writer computes (intScale of the values), every scaled
// value times the scale must fit an int64, so each page has exactly one
// encoding.
func readScaledDeltas(r *colReader, n int) ([]int64, error) {
	g := r.uvarint("integer scale")
	if r.err == nil && (g == 0 || g > math.MaxInt64) {
		r.fail("integer scale %d", g)
	}
	if r.err == nil && uint64(n) > uint64(len(r.b)) {
		r.fail("%d integers in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	scale := int64(g)
	vals := make([]int64, n)
	var prev int64
	for i := range vals {
		prev += r.varint("integer")
		if prev > math.MaxInt64/scale || prev < math.MinInt64/scale {
			r.fail("integer %d times scale %d overflows", prev, scale)
		}
		vals[i] = prev * scale
	}
	if r.err == nil && intScale(n, func(i int) int64 { return vals[i] }) != g {
		r.fail("integer scale %d, the values' is %d", g, intScale(n, func(i int) int64 { return vals[i] }))
	}
	return vals, r.err
}

// readFrontCoded reads n front-coded strings (appendFrontCoded).
func readFrontCoded(r *colReader, n int) ([]string, error) {
	if uint64(n)*2 > uint64(len(r.b)) {
		return nil, fmt.Errorf("%d strings in %d bytes", n, len(r.b))
	}
	shared, tails := make([]uint64, n), make([]uint64, n)
	var total uint64
	for i := range n {
		shared[i], tails[i] = r.uvarint("shared length"), r.uvarint("suffix length")
		if r.err == nil && tails[i] > uint64(len(r.b)) {
			r.fail("suffix of %d bytes past the end", tails[i])
		}
		total += tails[i]
	}
	if r.err == nil && total != uint64(len(r.b)) {
		r.fail("suffixes of %d bytes, %d left", total, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	var prevLen, built uint64
	for i := range n {
		if shared[i] > prevLen || shared[i] > maxSharedPrefix {
			return nil, fmt.Errorf("string %d shares %d bytes of a %d-byte predecessor (at most %d)", i, shared[i], prevLen, maxSharedPrefix)
		}
		prevLen = shared[i] + tails[i]
		if built += prevLen; built > MaxRawFragmentBytes {
			return nil, fmt.Errorf("strings of more than %d bytes", MaxRawFragmentBytes)
		}
	}
	out := make([]string, n)
	prev := ""
	for i := range n {
		s := prev[:shared[i]] + string(r.bytes(tails[i], "suffix"))
		out[i], prev = s, s
	}
	return out, r.err
}

// decodeColumnsSafe is decodeColumns with any panic (as decodeIPC does
// for arrow's; none is known) turned into an error.
func decodeColumnsSafe(t *Table, raw []byte, rows uint64) (rec arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, fmt.Errorf("malformed column file: %v", p)
		}
	}()
	return decodeColumns(t, raw, rows)
}

// decodePageRecord decodes the stored bytes b of adjacency page ref
// (already checked against its size and CRC) into a record of t holding
// ref.Rows rows: the zstd frame unwrapped as a fragment's (storedIPC,
// bounded), then a column file through decodeColumns or an Arrow IPC file
// through decodeIPC. Any failure matches ErrCorruptFragment; the caller
// checks the columns (checkPage).
func decodePageRecord(t *Table, ref adjRef, b []byte) (arrow.Record, error) {
	raw, err := storedIPC(b)
	if err != nil {
		return nil, corruptFragment(ref.Name, "%v", err)
	}
	var rec arrow.Record
	if isColumnFile(raw) {
		rec, err = decodeColumnsSafe(t, raw, ref.Rows)
	} else {
		rec, err = decodeIPC(t, raw)
	}
	if err != nil {
		return nil, corruptFragment(ref.Name, "%v", err)
	}
	if uint64(rec.NumRows()) != ref.Rows {
		rec.Release()
		return nil, corruptFragment(ref.Name, "%d rows, want %d", rec.NumRows(), ref.Rows)
	}
	return rec, nil
}
