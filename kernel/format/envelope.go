package format

import (
	"encoding/binary"
	"hash/crc32"
	"io"
)

// CurrentFormat is the format stamp this build writes. Format 5 is format
// 4's layout plus paged fragment infos (a data-plane table version may list
// fragment chunks instead of inline infos; docs/format.md, "Paged fragment
// infos"): a format-4 binary would misread such a version, so it must
// refuse the graph, which the stamp on every object it reads makes it do.
// Format 6 adds the id index's delta (a table version may list ids beyond
// its id index's pages; docs/format.md, "v5->v6"), which a format-5 binary
// would miss (taking an existing id for absent), so it refuses stamp 6.
// Format 7 is format 6 plus compact index pages (id pages and adjacency
// chunks as one zstd frame, adjacency pages as column files;
// docs/format.md, "v6->v7"): a format-6 binary would report them corrupt,
// so it must refuse the graph the same way.
// Format 8 names new table versions per write attempt
// (R/tables/<table>/<fork>/a/<ulid>, pinned by name; docs/format.md,
// "v7->v8"): a format-7 binary would not find such a version under its
// counter key, so it refuses stamp 8.
// Format 9 embeds small fragments in their table version (metadata
// data.embed.<name>: the fragment's stored bytes, no object;
// docs/format.md, "v8->v9"): a format-8 binary would look for such a
// fragment's object and report it reclaimed, so it refuses stamp 9.
// Format 10 pages index refs (an index direction past a few chunks is
// listed through ref chunks; docs/format.md "v9->v10"): a format-9 binary
// would read a ref chunk as a chunk of pages and report it corrupt, so it
// refuses stamp 10.
// Format 11 lets a named table version ride the manifest that pins it (the
// pin's "riding" holds the version's payload and no object exists;
// docs/format.md "v10->v11"): a format-10 binary would look for the
// version's object and report it reclaimed, so it refuses stamp 11.
// Format 12 writes index chunks in binary (docs/format.md "v11->v12"): a
// format-11 binary would fail to decode such a chunk's payload as JSON and
// report it corrupt, so it refuses stamp 12.
// Format 13 lets a small edge insert ride its table version as an
// adjacency delta instead of rewriting index pages (docs/format.md
// "v12->v13"): a format-12 binary would ignore the delta and miss those
// edges in every index lookup, so it refuses stamp 13.
const CurrentFormat uint16 = 13

// OldestSupportedFormat is the oldest stamp this build may ever read (the
// floor). Stamps in [OldestSupportedFormat, CurrentFormat) need migration.
const OldestSupportedFormat uint16 = 3

// Magic opens every enveloped object.
const Magic = "GKOB"

// MaxPayloadBytes bounds the payload of one object (64 MiB). Larger length
// fields are rejected before any allocation.
const MaxPayloadBytes = 64 << 20

// TokenBytes is the size of a writer token.
const TokenBytes = 16

// headerBytes = magic(4) + stamp(2) + kind(1) + token(16) + length(4).
const headerBytes = 4 + 2 + 1 + TokenBytes + 4

// checksumBytes is the CRC32C trailer.
const checksumBytes = 4

// Kind says which payload an envelope carries.
type Kind uint8

// Object kinds. Values are part of the on-store format: never renumber.
const (
	KindSchema       Kind = 1 // raw schema-contract bytes
	KindManifest     Kind = 2 // Manifest JSON
	KindTableVersion Kind = 3 // TableVersion JSON
	KindSidecar      Kind = 4 // reserved for the recovery issue
	KindAudit        Kind = 5 // reserved for the recovery issue
	KindNameMarker   Kind = 6 // branch-name index marker; payload = the name
	KindLegacyCommit Kind = 7 // v3 legacy commit object (LegacyCommit JSON); format 3 only
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindSchema:
		return "schema"
	case KindManifest:
		return "manifest"
	case KindTableVersion:
		return "table-version"
	case KindSidecar:
		return "sidecar"
	case KindAudit:
		return "audit"
	case KindNameMarker:
		return "name-marker"
	case KindLegacyCommit:
		return "legacy-commit"
	case KindRecoveryPlan:
		return "recovery-plan"
	case KindQuarantine:
		return "quarantine"
	case KindLease:
		return "lease"
	case KindCollection:
		return "collection"
	case KindCommitIndex:
		return "commit-index"
	case KindForkIndex:
		return "fork-index"
	case KindAdjacencyChunk:
		return "adjacency-chunk"
	case KindIncarnationFloor:
		return "incarnation-floor"
	}
	return "unknown"
}

// Token is the unique writer token of one written object. Identity questions
// ("did MY write land?") compare tokens, never ETags.
type Token [TokenBytes]byte

// IsZero reports whether t is the zero token (never minted).
func (t Token) IsZero() bool { return t == Token{} }

// NewToken reads a token from entropy. It fails only if entropy fails.
func NewToken(entropy io.Reader) (Token, error) {
	var t Token
	_, err := io.ReadFull(entropy, t[:])
	return t, err
}

// Envelope is a decoded object frame.
type Envelope struct {
	Stamp   uint16
	Kind    Kind
	Token   Token
	Payload []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeEnvelope frames e. It panics if the payload exceeds MaxPayloadBytes
// (a caller bug: payloads are bounded before they are built).
func EncodeEnvelope(e Envelope) []byte {
	if len(e.Payload) > MaxPayloadBytes {
		panic("format: EncodeEnvelope: payload exceeds MaxPayloadBytes")
	}
	out := make([]byte, 0, headerBytes+len(e.Payload)+checksumBytes)
	out = append(out, Magic...)
	out = binary.BigEndian.AppendUint16(out, e.Stamp)
	out = append(out, byte(e.Kind))
	out = append(out, e.Token[:]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(e.Payload)))
	out = append(out, e.Payload...)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// envelopeOf frames the payload appendPayload appends, built in place
// after the header (no copy of the payload): the bytes of EncodeEnvelope
// of it, which it panics on as EncodeEnvelope does. size is a capacity
// hint for the payload.
func envelopeOf(stamp uint16, kind Kind, token Token, size int, appendPayload func([]byte) []byte) []byte {
	out := make([]byte, 0, headerBytes+size+checksumBytes)
	out = append(out, Magic...)
	out = binary.BigEndian.AppendUint16(out, stamp)
	out = append(out, byte(kind))
	out = append(out, token[:]...)
	out = append(out, 0, 0, 0, 0) // the payload's length, set below
	out = appendPayload(out)
	n := len(out) - headerBytes
	if n > MaxPayloadBytes {
		panic("format: EncodeEnvelope: payload exceeds MaxPayloadBytes")
	}
	binary.BigEndian.PutUint32(out[headerBytes-4:headerBytes], uint32(n))
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// DecodeEnvelope checks the frame and checksum of b. It does not judge the
// stamp (see CheckStamp) or the payload. The returned Payload aliases b.
func DecodeEnvelope(b []byte) (Envelope, error) {
	if len(b) < headerBytes+checksumBytes {
		return Envelope{}, corrupt("envelope", "%d bytes is shorter than the minimum %d", len(b), headerBytes+checksumBytes)
	}
	if string(b[:4]) != Magic {
		return Envelope{}, corrupt("envelope", "bad magic %q", b[:4])
	}
	n := binary.BigEndian.Uint32(b[headerBytes-4 : headerBytes])
	if n > MaxPayloadBytes {
		return Envelope{}, corrupt("envelope", "payload length %d exceeds %d", n, MaxPayloadBytes)
	}
	if uint64(len(b)) != uint64(headerBytes)+uint64(n)+checksumBytes {
		return Envelope{}, corrupt("envelope", "length %d does not match payload length %d", len(b), n)
	}
	body := b[:len(b)-checksumBytes]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(b[len(body):]); got != want {
		return Envelope{}, corrupt("envelope", "checksum %08x, want %08x", got, want)
	}
	var e Envelope
	e.Stamp = binary.BigEndian.Uint16(b[4:6])
	e.Kind = Kind(b[6])
	copy(e.Token[:], b[7:7+TokenBytes])
	e.Payload = b[headerBytes : headerBytes+int(n)]
	return e, nil
}

// openCurrent decodes the envelope of an object that must be of kind want at
// a stamp CheckStamp accepts.
func openCurrent(b []byte, want Kind) (Envelope, error) {
	e, err := DecodeEnvelope(b)
	if err != nil {
		return Envelope{}, err
	}
	if e.Kind != want {
		return Envelope{}, corrupt(want.String(), "envelope kind %d (%s)", e.Kind, e.Kind)
	}
	if err := CheckStamp(e.Stamp); err != nil {
		return Envelope{}, err
	}
	return e, nil
}
