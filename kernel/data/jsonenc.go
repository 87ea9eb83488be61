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

// parsePlainInfo decodes info JSON raw when it is exactly what
// appendFragmentInfo emits for some info without escapes (every string
// printable ASCII needing none): it parses that form and keeps the result
// only if re-encoding it gives raw byte for byte, so what it returns is
// what json.Unmarshal returns for raw. ok=false: raw is anything else, for
// json.Unmarshal.
func parsePlainInfo(raw string) (f FragmentInfo, ok bool) {
	p := plainParser{s: raw, ok: true}
	p.lit(`{"rows":`)
	f.Rows = p.uint()
	p.lit(`,"bytes":`)
	f.Bytes = p.uint()
	p.lit(`,"crc32c":`)
	crc := p.uint()
	f.CRC32C = uint32(crc)
	p.lit(`,"min":`)
	f.MinID = p.str()
	p.lit(`,"max":`)
	f.MaxID = p.str()
	if p.ok && p.peek(`,"stats":[`) {
		p.lit(`,"stats":[`)
		for p.ok {
			var cs ColumnStats
			p.lit(`{"col":`)
			cs.Column = p.str()
			p.lit(`,"nulls":`)
			cs.Nulls = p.uint()
			if p.ok && p.peek(`,"lo":`) {
				p.lit(`,"lo":`)
				lo := p.str()
				cs.Lo = &lo
			}
			if p.ok && p.peek(`,"hi":`) {
				p.lit(`,"hi":`)
				hi := p.str()
				cs.Hi = &hi
			}
			p.lit(`}`)
			f.Stats = append(f.Stats, cs)
			if !p.ok || !p.peek(`,`) {
				break
			}
			p.lit(`,`)
		}
		p.lit(`]`)
	}
	p.lit(`}`)
	if !p.ok || p.i != len(raw) || crc > 0xffffffff || string(appendFragmentInfo(make([]byte, 0, len(raw)), &f)) != raw {
		return FragmentInfo{}, false
	}
	return f, true
}

// plainParser reads the escape-free canonical JSON parsePlainInfo accepts;
// ok turns false at the first byte out of that form.
type plainParser struct {
	s  string
	i  int
	ok bool
}

func (p *plainParser) peek(lit string) bool {
	return len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit
}

func (p *plainParser) lit(lit string) {
	if !p.ok || !p.peek(lit) {
		p.ok = false
		return
	}
	p.i += len(lit)
}

// uint reads a decimal of at most 20 digits (a wider or overflowing one
// fails the re-encoding check).
func (p *plainParser) uint() uint64 {
	var v uint64
	j := p.i
	for j < len(p.s) && j-p.i < 20 && p.s[j] >= '0' && p.s[j] <= '9' {
		v = v*10 + uint64(p.s[j]-'0')
		j++
	}
	if j == p.i {
		p.ok = false
	}
	p.i = j
	return v
}

// str reads a string whose bytes need no escape.
func (p *plainParser) str() string {
	if !p.ok || p.i >= len(p.s) || p.s[p.i] != '"' {
		p.ok = false
		return ""
	}
	j := p.i + 1
	for j < len(p.s) && p.s[j] != '"' {
		if c := p.s[j]; c < 0x20 || c >= 0x80 || c == '\\' || c == '<' || c == '>' || c == '&' {
			p.ok = false
			return ""
		}
		j++
	}
	if j == len(p.s) {
		p.ok = false
		return ""
	}
	out := p.s[p.i+1 : j]
	p.i = j + 1
	return out
}
