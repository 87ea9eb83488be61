package data

import (
	"strconv"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Hand-written encoders of the JSON a commit keeps in table-version
// metadata: byte for byte what json.Marshal emits for the same values
// (TestMetadataEncodersMatchEncodingJSON), without its reflection.

// appendFragmentInfo appends json.Marshal(f): rows, bytes, crc32c, min,
// max, and stats when there are any (Name and the embedded bytes are
// never part of it).
func appendFragmentInfo(b []byte, f *FragmentInfo) []byte {
	b = append(b, `{"rows":`...)
	b = strconv.AppendUint(b, f.Rows, 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendUint(b, f.Bytes, 10)
	b = append(b, `,"crc32c":`...)
	b = strconv.AppendUint(b, uint64(f.CRC32C), 10)
	b = append(b, `,"min":`...)
	b = format.AppendJSONString(b, f.MinID)
	b = append(b, `,"max":`...)
	b = format.AppendJSONString(b, f.MaxID)
	if len(f.Stats) > 0 {
		b = append(b, `,"stats":[`...)
		for i, cs := range f.Stats {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"col":`...)
			b = format.AppendJSONString(b, cs.Column)
			b = append(b, `,"nulls":`...)
			b = strconv.AppendUint(b, cs.Nulls, 10)
			if cs.Lo != nil {
				b = append(b, `,"lo":`...)
				b = format.AppendJSONString(b, *cs.Lo)
			}
			if cs.Hi != nil {
				b = append(b, `,"hi":`...)
				b = format.AppendJSONString(b, *cs.Hi)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendStrings appends json.Marshal(ss) of a non-nil list (an id delta).
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = format.AppendJSONString(b, s)
	}
	return append(b, ']')
}
