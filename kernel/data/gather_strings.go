package data

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// gatherStrings copies string column c of rows into one array, writing
// its offsets and bytes directly (issue #28.2: a builder's per-value
// Append was most of a bulk commit's adjacency page gathering). The array
// holds the values and nulls copyColumn's would.
func gatherStrings(rows []rowSrc, c int) arrow.Array {
	n := 0
	eachValue(rows, c, func(a *array.String, i int) { n += a.ValueLen(i) })
	offsets := make([]int32, len(rows)+1)
	bytes := make([]byte, 0, n)
	var valid []byte
	nulls := 0
	var last arrow.Record
	var col *array.String
	for i, r := range rows {
		if r.rec != last {
			last, col = r.rec, r.rec.Column(c).(*array.String)
		}
		if col.IsNull(r.row) {
			if valid == nil {
				valid = make([]byte, bitutil.BytesForBits(int64(len(rows))))
				bitutil.SetBitsTo(valid, 0, int64(i), true)
			}
			nulls++
		} else {
			if valid != nil {
				bitutil.SetBit(valid, i)
			}
			bytes = append(bytes, col.Value(r.row)...)
		}
		offsets[i+1] = int32(len(bytes))
	}
	var validity *memory.Buffer
	if valid != nil {
		validity = memory.NewBufferBytes(valid)
	}
	data := array.NewData(arrow.BinaryTypes.String, len(rows),
		[]*memory.Buffer{validity, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(bytes)},
		nil, nulls, 0)
	defer data.Release()
	return array.NewStringData(data)
}
