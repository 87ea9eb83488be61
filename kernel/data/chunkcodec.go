package data

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Index chunks in binary (format 12, docs/format.md "Binary index
// chunks"). A chunk of an adjacency or id index lists refs of up to
// WriteFanout pages or chunks; as JSON each ref costs about 43 bytes after
// zstd (its field names, a 26-character name, three keys spelled out;
// binary: 36), and a lookup or a one-row commit at 10^7 edges reads and
// writes a chunk a level. The binary payload front-codes the keys against their
// neighbours and stores names as their 16 bytes:
//
//	magic    "\x00gkc" (JSON opens with '{', a zstd frame with 0x28)
//	table    uvarint length, bytes
//	dir      uvarint length, bytes
//	level    uvarint
//	count    uvarint, 1..maxChunkRefs
//	count refs, each:
//	  name   16 bytes (the ULID)
//	  lo     front-coded against the previous ref's hi ("" for the first)
//	  lo_id  front-coded against the previous ref's lo_id
//	  hi     front-coded against this ref's lo
//	  rows   uvarint
//	  bytes  uvarint
//	  crc32c 4 bytes, little-endian
//
// A front-coded string is uvarint shared-prefix length, uvarint suffix
// length, suffix bytes; every key is valid UTF-8 of at most MaxIDBytes.
// Every ref's level is the chunk's less one (0 under a level-0 chunk), as
// the JSON form must say. Nothing may follow the last ref. The payload is
// stored as a zstd frame when that is smaller, as JSON payloads are.
const (
	// FormatBinaryChunks is the first format whose writers encode index
	// chunks in binary; readers read both forms.
	FormatBinaryChunks = 12
	// minBinaryRefBytes is the fewest bytes one binary ref takes: a
	// decoder bounds a declared count by it before allocating.
	minBinaryRefBytes = ulidBytes + 3*2 + 1 + 1 + 4
	ulidBytes         = 16
)

var chunkBinaryMagic = []byte("\x00gkc")

// errChunkBinary marks a binary chunk payload that breaks the layout.
var errChunkBinary = errors.New("binary index chunk")

// encodeChunkPayload returns the payload of chunk c: binary, or JSON when
// asJSON is set (a handle writing the layout of formats 7 to 11:
// Options.JSONIndexChunks). A ref that cannot be encoded (a name
// that is not a ULID, a key longer than MaxIDBytes, a level other than
// the chunk's less one) is an internal bug: it panics.
func encodeChunkPayload(c adjChunk, asJSON bool) []byte {
	if asJSON || format.CurrentFormat < FormatBinaryChunks {
		p, err := json.Marshal(c)
		if err != nil {
			panic(fmt.Sprintf("data: marshal adjacency chunk: %v", err))
		}
		return p
	}
	b := appendChunkHeader(chunkBinaryMagic, c.Table, c.Dir, c.Level, len(c.Pages))
	prev := adjRef{}
	for _, r := range c.Pages {
		id, err := ulid.ParseStrict(r.Name)
		if err != nil || id.String() != r.Name || r.Level != max(c.Level-1, 0) || len(r.LoKey) > MaxIDBytes || len(r.LoID) > MaxIDBytes || len(r.HiKey) > MaxIDBytes {
			panic(fmt.Sprintf("data: adjacency ref %+v cannot be encoded in a chunk of level %d", r, c.Level))
		}
		b = append(b, id[:]...)
		b = appendKeyAfter(b, prev.HiKey, r.LoKey)
		b = appendKeyAfter(b, prev.LoID, r.LoID)
		b = appendKeyAfter(b, r.LoKey, r.HiKey)
		b = binary.AppendUvarint(b, r.Rows)
		b = binary.AppendUvarint(b, r.Bytes)
		b = binary.LittleEndian.AppendUint32(b, r.CRC32C)
		prev = r
	}
	return b
}

// decodeChunkPayload decodes a chunk payload of either form (JSON, every
// format; binary, format 12). It checks the form only; decodeChunk checks
// the refs against the chunk's own ref. It never panics and allocates at
// most in proportion to len(p).
func decodeChunkPayload(p []byte) (adjChunk, error) {
	if !bytes.HasPrefix(p, chunkBinaryMagic) {
		var c adjChunk
		err := json.Unmarshal(p, &c)
		return c, err
	}
	d := chunkDecoder{b: p[len(chunkBinaryMagic):]}
	var c adjChunk
	var n uint64
	c.Table, c.Dir, c.Level, n = d.header(0, maxIndexLevels, maxChunkRefs, minBinaryRefBytes)
	if d.err != nil {
		return adjChunk{}, d.err
	}
	c.Pages = make([]adjRef, 0, n)
	prev := adjRef{}
	for i := uint64(0); i < n && d.err == nil; i++ {
		r := adjRef{Level: max(c.Level-1, 0)}
		r.Name = d.name()
		r.LoKey = d.frontCoded(prev.HiKey)
		r.LoID = d.frontCoded(prev.LoID)
		r.HiKey = d.frontCoded(r.LoKey)
		r.Rows, r.Bytes, r.CRC32C = d.uvarint(), d.uvarint(), d.uint32()
		c.Pages = append(c.Pages, r)
		prev = r
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last ref", len(d.b))
	}
	if d.err != nil {
		return adjChunk{}, d.err
	}
	return c, nil
}

// appendChunkHeader starts a binary chunk payload: magic, table, dir,
// level and the count of refs that follow.
func appendChunkHeader(magic []byte, table, dir string, level, refs int) []byte {
	b := make([]byte, 0, len(magic)+16+len(table)+refs*40)
	b = append(b, magic...)
	b = appendLenString(b, table)
	b = appendLenString(b, dir)
	b = binary.AppendUvarint(b, uint64(level))
	return binary.AppendUvarint(b, uint64(refs))
}

func appendLenString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendKeyAfter(b []byte, prev, s string) []byte {
	n := 0
	for n < len(prev) && n < len(s) && prev[n] == s[n] {
		n++
	}
	b = binary.AppendUvarint(b, uint64(n))
	return appendLenString(b, s[n:])
}

// chunkDecoder reads a binary chunk payload; the first failure sticks.
type chunkDecoder struct {
	b   []byte
	err error
}

// header reads a binary chunk's table, dir, level and ref count after
// its magic: a level in [minLevel, maxLevel] and 1..maxRefs refs, no more
// than the bytes left can hold at minRef bytes each (checked before the
// caller allocates).
func (d *chunkDecoder) header(minLevel, maxLevel, maxRefs, minRef int) (table, dir string, level int, refs uint64) {
	table, dir = d.string(format.MaxPayloadBytes), d.string(format.MaxPayloadBytes)
	l, n := d.uvarint(), d.uvarint()
	if d.err == nil && (l < uint64(minLevel) || l > uint64(maxLevel) || n == 0 || n > uint64(maxRefs) || n > uint64(len(d.b)/minRef)) {
		d.fail("level %d, %d refs in %d bytes", l, n, len(d.b))
	}
	return table, dir, int(l), n
}

func (d *chunkDecoder) fail(f string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errChunkBinary, fmt.Sprintf(f, args...))
	}
	d.b = nil
}

func (d *chunkDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *chunkDecoder) take(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail("%d bytes past the end", n)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// string reads a length-prefixed string of at most limit bytes.
func (d *chunkDecoder) string(limit int) string {
	n := d.uvarint()
	if d.err == nil && n > uint64(limit) {
		d.fail("a string of %d bytes", n)
	}
	return string(d.take(n))
}

func (d *chunkDecoder) name() string {
	raw := d.take(ulidBytes)
	if d.err != nil {
		return ""
	}
	var id ulid.ULID // every 16 bytes are a ULID; its String is canonical
	copy(id[:], raw)
	return id.String()
}

// frontCoded reads a key sharing a prefix with prev: valid UTF-8 of at
// most MaxIDBytes.
func (d *chunkDecoder) frontCoded(prev string) string {
	shared := d.uvarint()
	suffix := d.string(MaxIDBytes)
	if d.err != nil {
		return ""
	}
	if shared > uint64(len(prev)) || shared+uint64(len(suffix)) > MaxIDBytes {
		d.fail("key of %d shared and %d more bytes after a key of %d", shared, len(suffix), len(prev))
		return ""
	}
	s := prev[:shared] + suffix
	if !utf8.ValidString(s) {
		d.fail("key %q is not UTF-8", s)
		return ""
	}
	return s
}

func (d *chunkDecoder) uint32() uint32 {
	raw := d.take(4)
	if d.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(raw)
}

// IndexChunkRefs decodes the payload of an index chunk (format.
// OpenAdjacencyChunk's result) of either form and returns its level and
// each ref it lists in its JSON form (the form DecodeIndexPage and verify
// read), in order. It checks the form only, as AdjacencyChunkEntries
// does; a malformed payload matches format.ErrCorrupt.
func IndexChunkRefs(payload []byte) (level int, refs []json.RawMessage, err error) {
	c, err := decodeChunkPayload(payload)
	if err != nil {
		return 0, nil, fmt.Errorf("index chunk payload: %v: %w", err, format.ErrCorrupt)
	}
	refs = make([]json.RawMessage, len(c.Pages))
	for i, r := range c.Pages {
		if refs[i], err = json.Marshal(r); err != nil {
			panic(fmt.Sprintf("data: marshal adjacency ref: %v", err))
		}
	}
	return c.Level, refs, nil
}

// IndexChunkForm reports the payload form of a stored index chunk (an
// adjacency or id index chunk, level-0 or ref chunk): binary (format 12)
// or JSON (formats 7 to 11); ok=false for anything else under R/adj/ (a
// page, a fragment chunk or fragment ref chunk, an object that does not
// decode). The simulator counts the forms of the graphs it leaves.
func IndexChunkForm(b []byte) (binaryForm, ok bool) {
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return false, false
	}
	c, err := decodeChunkPayload(payload)
	if err != nil || c.Dir == dirFrag {
		return false, false
	}
	return bytes.HasPrefix(payload, chunkBinaryMagic), true
}

// Fragment ref chunks in binary (format 12, docs/format.md "Binary index
// chunks"): the same frame as an index chunk's under magic "\x00gkf", each
// ref
//
//	name   16 bytes (the ULID)
//	min    front-coded against the previous ref's max ("" for the first)
//	max    front-coded against this ref's min
//	frags  uvarint
//	rows   uvarint
//	bytes  uvarint
//	crc32c 4 bytes, little-endian
//
// and every ref's level the chunk's less one. Fragment chunks (level 0,
// the infos) stay JSON.
var fragRefBinaryMagic = []byte("\x00gkf")

// minBinaryFragRefBytes is the fewest bytes one binary fragment ref takes.
const minBinaryFragRefBytes = ulidBytes + 2*2 + 1 + 1 + 1 + 4

// encodeFragRefChunkPayload returns the payload of fragment ref chunk c:
// binary, or JSON when asJSON is set (Options.JSONIndexChunks). A ref that
// cannot be encoded is an internal bug: it panics.
func encodeFragRefChunkPayload(c fragRefChunk, asJSON bool) []byte {
	if asJSON || format.CurrentFormat < FormatBinaryChunks {
		p, err := json.Marshal(c)
		if err != nil {
			panic(fmt.Sprintf("data: marshal fragment ref chunk: %v", err))
		}
		return p
	}
	b := appendChunkHeader(fragRefBinaryMagic, c.Table, c.Dir, c.Level, len(c.Refs))
	prevMax := ""
	for _, r := range c.Refs {
		id, err := ulid.ParseStrict(r.Name)
		if err != nil || id.String() != r.Name || r.Level != c.Level-1 || len(r.Min) > MaxIDBytes || len(r.Max) > MaxIDBytes {
			panic(fmt.Sprintf("data: fragment ref %+v cannot be encoded in a ref chunk of level %d", r, c.Level))
		}
		b = append(b, id[:]...)
		b = appendKeyAfter(b, prevMax, r.Min)
		b = appendKeyAfter(b, r.Min, r.Max)
		b = binary.AppendUvarint(b, r.Frags)
		b = binary.AppendUvarint(b, r.Rows)
		b = binary.AppendUvarint(b, r.Bytes)
		b = binary.LittleEndian.AppendUint32(b, r.CRC32C)
		prevMax = r.Max
	}
	return b
}

// decodeFragRefChunkPayload decodes a fragment ref chunk payload of either
// form (JSON, formats 10 and 11; binary, format 12). It checks the form
// only; checkFragRefChunk checks the refs. It never panics and allocates
// at most in proportion to len(p).
func decodeFragRefChunkPayload(p []byte) (fragRefChunk, error) {
	if !bytes.HasPrefix(p, fragRefBinaryMagic) {
		var c fragRefChunk
		err := json.Unmarshal(p, &c)
		return c, err
	}
	d := chunkDecoder{b: p[len(fragRefBinaryMagic):]}
	var c fragRefChunk
	var n uint64
	c.Table, c.Dir, c.Level, n = d.header(1, maxFragLevels, FragRefChunkRefs, minBinaryFragRefBytes)
	if d.err != nil {
		return fragRefChunk{}, d.err
	}
	c.Refs = make([]fragChunkRef, 0, n)
	prevMax := ""
	for i := uint64(0); i < n && d.err == nil; i++ {
		r := fragChunkRef{Level: c.Level - 1}
		r.Name = d.name()
		r.Min = d.frontCoded(prevMax)
		r.Max = d.frontCoded(r.Min)
		r.Frags, r.Rows, r.Bytes, r.CRC32C = d.uvarint(), d.uvarint(), d.uvarint(), d.uint32()
		c.Refs = append(c.Refs, r)
		prevMax = r.Max
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last fragment ref", len(d.b))
	}
	if d.err != nil {
		return fragRefChunk{}, d.err
	}
	return c, nil
}
