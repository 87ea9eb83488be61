package format

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
)

// Hand-written decoders of the canonical form of the objects every read
// decodes (manifest, commit index, table version: the last also as a
// riding payload, format 11). They are the inverse of the hand encoders
// (jsonappend.go): a reader walks the payload expecting exactly the bytes
// appendManifest, appendCommitIndex or appendTableVersion would emit for
// the value read so far — same keys in the same order, an optional field
// present exactly when the encoder emits it, counters of exactly
// CounterDigits digits, ids in their canonical text, numbers without a
// sign, zero or exponent the encoder would not write, strings of
// printable ASCII with only the escapes the encoder makes itself (\", \\,
// \u003c, \u003e, \u0026) — and declines on the first byte it does not
// expect. What it accepts is therefore the encoding of the value it
// returns, so the strict decode plus canonical re-encode of the general
// path (decodeCanonical, decodeManifestPayloadStrict) accepts it too and
// returns the same value; on a decline the caller runs the general path,
// whose verdict and errors stand. The readers skip that path's reflection,
// its scans and its re-encode and compare (K11a/K11b). Every loop reads at
// least one byte an iteration or stops: bounded by the payload's length.
// TestHandDecodersAreTheStrictPath and fuzz.FuzzHandDecoders check the
// property (CheckHandDecoders).

// canonReader reads a canonical payload. On the first unexpected byte it
// is bad and at the end of its input, so every later read fails at once.
type canonReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *canonReader) fail() {
	r.bad = true
	r.i = len(r.b)
}

// done reports whether the payload was read whole and as expected.
func (r *canonReader) done() bool { return !r.bad && r.i == len(r.b) }

// lit reads exactly s.
func (r *canonReader) lit(s string) {
	if !r.opt(s) {
		r.fail()
	}
}

// opt reads s if it comes next and reports whether it did.
func (r *canonReader) opt(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// escapes are the escapes appendString makes itself, with what they stand for.
var canonEscapes = [...]struct {
	esc string
	c   byte
}{{`\"`, '"'}, {`\\`, '\\'}, {`\u003c`, '<'}, {`\u003e`, '>'}, {`\u0026`, '&'}}

// escapeAt returns the length of the canonical escape at b's start and the
// byte it stands for, or 0.
func escapeAt(b []byte) (int, byte) {
	for _, e := range canonEscapes {
		if len(b) >= len(e.esc) && string(b[:len(e.esc)]) == e.esc {
			return len(e.esc), e.c
		}
	}
	return 0, 0
}

// Word-at-a-time tests of eight bytes (little-endian in a uint64).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroByte is non-zero if and only if some byte of x is zero.
func zeroByte(x uint64) uint64 { return (x - ones) & ^x & highs }

// skipPlainWords returns the first i' >= i, i'-i a multiple of 8, at which
// fewer than eight bytes are left or some byte of b[i':i'+8] is not
// plainJSON (printable ASCII but for ", \, <, > and &), testing eight
// bytes at a time: the terms are non-zero when some byte is below 0x20,
// above 0x7f, or one of the five (a subtraction's borrow only flags a
// byte above one that is). TestPlainWords compares it with plainJSON.
func skipPlainWords(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i : i+8])
		if ((x-ones*0x20)&^x&highs)|(x&highs)|
			zeroByte(x^(ones*'"'))|zeroByte(x^(ones*'\\'))|zeroByte(x^(ones*'<'))|zeroByte(x^(ones*'>'))|zeroByte(x^(ones*'&')) != 0 {
			break
		}
	}
	return i
}

// str reads a string appendString emits without encoding/json's help
// (printable ASCII, its own escapes) and returns it if keep.
func (r *canonReader) str(keep bool) string {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		r.fail()
		return ""
	}
	start := r.i + 1
	escaped := false
	i := start
	for i < len(r.b) {
		i = skipPlainWords(r.b, i)
		if i >= len(r.b) {
			break
		}
		c := r.b[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c == '"' {
			break
		}
		n, _ := escapeAt(r.b[i:])
		if n == 0 {
			r.fail()
			return ""
		}
		escaped = true
		i += n
	}
	if i >= len(r.b) {
		r.fail()
		return ""
	}
	r.i = i + 1
	if !keep {
		return ""
	}
	if !escaped {
		return string(r.b[start:i])
	}
	out := make([]byte, 0, i-start)
	for j := start; j < i; j++ {
		if r.b[j] != '\\' {
			out = append(out, r.b[j])
			continue
		}
		n, c := escapeAt(r.b[j:i])
		out = append(out, c)
		j += n - 1
	}
	return string(out)
}

// id reads an id in its canonical text (appendID), decoded by the very
// method encoding/json calls on it.
func (r *canonReader) id() ID {
	var id ID
	if len(r.b)-r.i < 28 || r.b[r.i] != '"' || r.b[r.i+27] != '"' {
		r.fail()
		return id
	}
	text := r.b[r.i+1 : r.i+27]
	var again [26]byte
	if id.UnmarshalText(text) != nil || id.MarshalTextTo(again[:]) != nil || string(again[:]) != string(text) {
		r.fail()
		return ID{}
	}
	r.i += 28
	return id
}

// nonZeroID reads an id the encoder omits when zero.
func (r *canonReader) nonZeroID() ID {
	id := r.id()
	if id.IsZero() {
		r.fail()
	}
	return id
}

// fixed reads a fixed-width counter (appendFixed; fixedU64.UnmarshalJSON's rules).
func (r *canonReader) fixed() uint64 {
	if len(r.b)-r.i < CounterDigits+2 || r.b[r.i] != '"' || r.b[r.i+CounterDigits+1] != '"' {
		r.fail()
		return 0
	}
	var v uint64
	for _, c := range r.b[r.i+1 : r.i+CounterDigits+1] {
		if c < '0' || c > '9' {
			r.fail()
			return 0
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			r.fail()
			return 0
		}
		v = v*10 + d
	}
	r.i += CounterDigits + 2
	return v
}

// nonZeroFixed reads a counter the encoder omits when zero.
func (r *canonReader) nonZeroFixed() uint64 {
	v := r.fixed()
	if v == 0 {
		r.fail()
	}
	return v
}

func (r *canonReader) boolean() bool {
	if r.opt("true") {
		return true
	}
	r.lit("false")
	return false
}

// number returns the bytes of the JSON number that comes next as far as
// the encoder writes one (sign and digits; a fraction or exponent is left
// for the next read to refuse).
func (r *canonReader) number() []byte {
	j := r.i
	for j < len(r.b) && (r.b[j] >= '0' && r.b[j] <= '9' || r.b[j] == '-') {
		j++
	}
	n := r.b[r.i:j]
	r.i = j
	return n
}

// int64v reads an int64 as strconv.AppendInt writes it.
func (r *canonReader) int64v() int64 {
	n := r.number()
	neg := len(n) > 0 && n[0] == '-'
	digits := n
	if neg {
		digits = n[1:]
	}
	var u uint64
	for _, c := range digits {
		if c < '0' || c > '9' || u > (1<<63)/10 {
			r.fail()
			return 0
		}
		u = u*10 + uint64(c-'0')
	}
	if u > 1<<63 || !neg && u > 1<<63-1 {
		r.fail()
		return 0
	}
	v := int64(u)
	if neg {
		v = -v // -(1<<63) wraps to itself
	}
	var buf [24]byte
	if string(strconv.AppendInt(buf[:0], v, 10)) != string(n) {
		r.fail()
		return 0
	}
	return v
}

// uint16v reads a uint16 as strconv.AppendUint writes it.
func (r *canonReader) uint16v() uint16 {
	n := r.number()
	var u uint64
	for _, c := range n {
		if c < '0' || c > '9' || u > 1<<16 {
			r.fail()
			return 0
		}
		u = u*10 + uint64(c-'0')
	}
	if u > 1<<16-1 {
		r.fail()
		return 0
	}
	var buf [8]byte
	if string(strconv.AppendUint(buf[:0], u, 10)) != string(n) {
		r.fail()
		return 0
	}
	return uint16(u)
}

// ids reads a non-empty array of ids after its opening bracket.
func (r *canonReader) ids() []ID {
	out := make([]ID, 0, 2)
	for {
		out = append(out, r.id())
		if !r.opt(",") {
			break
		}
	}
	r.lit("]")
	return out
}

func (r *canonReader) branchIdentity() BranchIdentity {
	var v BranchIdentity
	r.lit(`{"name":`)
	v.Name = r.str(true)
	r.lit(`,"incarnation":`)
	v.Incarnation = r.fixed()
	r.lit(`,"incarnation_id":`)
	v.IncarnationID = r.id()
	r.lit("}")
	return v
}

func (r *canonReader) forkPoint() *ForkPoint {
	v := &ForkPoint{}
	r.lit(`{"branch":`)
	v.Branch = r.str(true)
	r.lit(`,"incarnation":`)
	v.Incarnation = r.fixed()
	r.lit(`,"incarnation_id":`)
	v.IncarnationID = r.id()
	r.lit(`,"manifest_version":`)
	v.ManifestVersion = r.fixed()
	r.lit(`,"commit_id":`)
	v.CommitID = r.id()
	r.lit("}")
	return v
}

func (r *canonReader) manifestRef() ManifestRef {
	var v ManifestRef
	r.lit(`{"branch":`)
	v.Branch = r.str(true)
	r.lit(`,"incarnation":`)
	v.Incarnation = r.fixed()
	r.lit(`,"version":`)
	v.Version = r.fixed()
	r.lit("}")
	return v
}

// tablePin reads a pin. Its riding payload is kept as its bytes, as
// TablePin.UnmarshalJSON keeps them; the reader takes only one in the
// canonical form of a table version (what RidingPayload writes), which is
// valid JSON as the general path's scan requires.
func (r *canonReader) tablePin() TablePin {
	var v TablePin
	r.lit(`{"name":`)
	v.Name = r.str(true)
	r.lit(`,"fork":`)
	v.Fork = r.id()
	r.lit(`,"version":`)
	v.Version = r.fixed()
	r.lit(`,"rows":`)
	v.Rows = r.fixed()
	if r.opt(`,"attempt":`) {
		v.Attempt = r.nonZeroID()
	}
	if r.opt(`,"riding":`) {
		start := r.i
		r.tableVersion(false)
		if !r.bad {
			v.Riding = string(r.b[start:r.i])
		}
	}
	r.lit("}")
	return v
}

func (r *canonReader) commit() *Commit {
	v := &Commit{}
	r.lit(`{"id":`)
	v.ID = r.id()
	if r.opt(`,"parents":[`) {
		v.Parents = r.ids()
	}
	r.lit(`,"actor":`)
	v.Actor = r.str(true)
	r.lit(`,"message":`)
	v.Message = r.str(true)
	r.lit(`,"time_unix_nano":`)
	v.TimeUnixNano = r.int64v()
	r.lit(`,"kind":`)
	v.Kind = CommitKind(r.str(true))
	if r.opt(`,"merged_from":`) {
		ref := r.manifestRef()
		v.MergedFrom = &ref
	}
	r.lit("}")
	return v
}

// manifest reads what appendManifest emits for a manifest without a
// legacy block (a migration manifest goes through its mirror: declined).
func (r *canonReader) manifest() Manifest {
	var m Manifest
	r.lit(`{"version":`)
	m.Version = r.fixed()
	r.lit(`,"branch":`)
	m.Branch = r.branchIdentity()
	if r.opt(`,"fork_of":`) {
		m.ForkOf = r.forkPoint()
	}
	r.lit(`,"tombstone":`)
	m.Tombstone = r.boolean()
	if r.opt(`,"tables":[`) {
		for {
			m.Tables = append(m.Tables, r.tablePin())
			if !r.opt(",") {
				break
			}
		}
		r.lit("]")
	}
	if r.opt(`,"commit":`) {
		m.Commit = r.commit()
	}
	r.lit(`,"head":`)
	m.Head = r.id()
	r.lit(`,"schema":`)
	m.Schema = r.str(true)
	r.lit(`,"format_stamp":`)
	m.FormatStamp = r.uint16v()
	r.lit("}")
	return m
}

func (r *canonReader) tableRef() *TableRef {
	v := &TableRef{}
	r.lit(`{"fork":`)
	v.Fork = r.id()
	r.lit(`,"version":`)
	v.Version = r.fixed()
	if r.opt(`,"attempt":`) {
		v.Attempt = r.nonZeroID()
	}
	v.Rides = r.opt(`,"rides":true`)
	r.lit("}")
	return v
}

// tableVersion reads what appendTableVersion emits; with keep false it
// only reads it (a riding payload inside a manifest: its strings are not
// built).
func (r *canonReader) tableVersion(keep bool) TableVersion {
	var t TableVersion
	r.lit(`{"table":`)
	t.Table = r.str(keep)
	r.lit(`,"fork":`)
	t.Fork = r.id()
	r.lit(`,"version":`)
	t.Version = r.fixed()
	if r.opt(`,"fragments":[`) {
		for {
			f := r.str(keep)
			if keep {
				t.Fragments = append(t.Fragments, f)
			}
			if !r.opt(",") {
				break
			}
		}
		r.lit("]")
	}
	r.lit(`,"rows":`)
	t.Rows = r.fixed()
	if r.opt(`,"metadata":[`) {
		for {
			var kv KV
			r.lit(`{"key":`)
			kv.Key = r.str(keep)
			r.lit(`,"value":`)
			kv.Value = r.str(keep)
			r.lit("}")
			if keep {
				t.Metadata = append(t.Metadata, kv)
			}
			if !r.opt(",") {
				break
			}
		}
		r.lit("]")
	}
	if r.opt(`,"based_on":`) {
		t.BasedOn = r.tableRef()
	}
	t.ContentPreserving = r.opt(`,"content_preserving":true`)
	if r.opt(`,"attempt":`) {
		t.Attempt = r.nonZeroID()
	}
	r.lit("}")
	return t
}

func (r *canonReader) reachEntries() []ReachEntry {
	var out []ReachEntry
	for {
		var e ReachEntry
		r.lit(`{"branch":`)
		e.Branch = r.str(true)
		r.lit(`,"incarnation":`)
		e.Incarnation = r.fixed()
		r.lit(`,"version":`)
		e.Version = r.fixed()
		if r.opt(`,"gen":`) {
			e.Gen = r.nonZeroFixed()
		}
		r.lit("}")
		out = append(out, e)
		if !r.opt(",") {
			break
		}
	}
	r.lit("]")
	return out
}

func (r *canonReader) commitIndex() CommitIndex {
	var x CommitIndex
	r.lit(`{"id":`)
	x.ID = r.id()
	r.lit(`,"at":`)
	x.At = r.manifestRef()
	r.lit(`,"complete":`)
	x.Complete = r.boolean()
	if r.opt(`,"reach":[`) {
		x.Reach = r.reachEntries()
	}
	if r.opt(`,"gen":`) {
		x.Gen = r.nonZeroFixed()
	}
	if r.opt(`,"folds":[`) {
		x.Folds = r.reachEntries()
	}
	r.lit("}")
	return x
}

// readCanonicalManifest is the hand decoder of a manifest payload: the
// manifest, or false to send the payload to the general path.
func readCanonicalManifest(payload []byte) (Manifest, bool) {
	r := canonReader{b: payload}
	m := r.manifest()
	if !r.done() {
		return Manifest{}, false
	}
	return m, true
}

// readCanonicalCommitIndex is readCanonicalManifest for a commit index.
func readCanonicalCommitIndex(payload []byte) (CommitIndex, bool) {
	r := canonReader{b: payload}
	x := r.commitIndex()
	if !r.done() {
		return CommitIndex{}, false
	}
	return x, true
}

// readCanonicalTableVersion is readCanonicalManifest for a table version.
func readCanonicalTableVersion(payload []byte) (TableVersion, bool) {
	r := canonReader{b: payload}
	t := r.tableVersion(true)
	if !r.done() {
		return TableVersion{}, false
	}
	return t, true
}

// decodeCommitIndexPayload decodes a commit index payload: by hand when
// canonical, else by the general path (its verdict and errors).
func decodeCommitIndexPayload(payload []byte, x *CommitIndex) error {
	if v, ok := readCanonicalCommitIndex(payload); ok {
		*x = v
		return nil
	}
	return decodeCanonical("commit-index", payload, x)
}

// decodeTableVersionPayload is decodeCommitIndexPayload for a table
// version (an object's payload or a riding one).
func decodeTableVersionPayload(payload []byte, t *TableVersion) error {
	if v, ok := readCanonicalTableVersion(payload); ok {
		*t = v
		return nil
	}
	return decodeCanonical("table-version", payload, t)
}

// CheckHandDecoders is the differential property of the hand decoders of
// canonical payloads (jsondecode.go), for tests in and outside the package
// (fuzz.FuzzHandDecoders): on payload, read as a manifest, a commit index
// and a table version, each hand decoder either declines or returns a
// value deep-equal to the general path's (strict encoding/json decode and
// canonical re-encode), which must then accept the payload too. It returns
// the first disagreement, or nil; accepted says which kinds the hand
// decoders accepted.
func CheckHandDecoders(payload []byte) (accepted []Kind, err error) {
	m, ok := readCanonicalManifest(payload)
	if accepted, err = agrees(accepted, KindManifest, "manifest", payload, m, ok, decodeManifestPayloadStrict); err != nil {
		return accepted, err
	}
	x, ok := readCanonicalCommitIndex(payload)
	if accepted, err = agrees(accepted, KindCommitIndex, "commit index", payload, x, ok, func(p []byte, x *CommitIndex) error {
		return decodeCanonical("commit-index", p, x)
	}); err != nil {
		return accepted, err
	}
	t, ok := readCanonicalTableVersion(payload)
	return agrees(accepted, KindTableVersion, "table version", payload, t, ok, func(p []byte, t *TableVersion) error {
		return decodeCanonical("table-version", p, t)
	})
}

// agrees is CheckHandDecoders for one kind: hand is what its hand decoder
// read (ok: it accepted payload), general its general path.
func agrees[T any](accepted []Kind, kind Kind, what string, payload []byte, hand T, ok bool, general func([]byte, *T) error) ([]Kind, error) {
	if !ok {
		return accepted, nil
	}
	accepted = append(accepted, kind)
	var want T
	if err := general(payload, &want); err != nil {
		return accepted, fmt.Errorf("%s: the hand decoder accepts what the general path refuses (%v): %q", what, err, payload)
	}
	if !reflect.DeepEqual(hand, want) {
		return accepted, fmt.Errorf("%s: hand %+v, general %+v: %q", what, hand, want, payload)
	}
	return accepted, nil
}
