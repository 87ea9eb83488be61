package format

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on table-version contents.
const (
	MaxFragments         = 1 << 20
	MaxFragmentBytes     = 512
	MaxMetadataEntries   = 4096
	MaxMetadataKeyBytes  = 256
	MaxMetadataValueByte = 64 << 10
)

// KV is one metadata entry. Metadata is a list sorted by key (unique), never
// a map, so its encoding is deterministic.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TableRef names one table version on one fork. The zero TableRef means
// "no version". Attempt is zero for a counter-named version (formats <= 7,
// key R/tables/<table>/<fork>/<inv(version)>) and the write attempt's ULID
// for a version named per attempt (format 8, R/tables/<table>/<fork>/a/<ulid>):
// Version is then the pin's sequence number (the previous pin's + 1), which
// several unpublished attempts may share; the attempt tells them apart.
type TableRef struct {
	Fork    ID     `json:"fork"`
	Version uint64 `json:"version"`
	Attempt ID     `json:"attempt,omitzero"`
	// Rides marks a named version that rides the manifests pinning it
	// (format 11): it has no object, and is read from a pin's Riding
	// (Graph.ReadPinned), never by key. It is part of the version's
	// identity: every reference to such a version carries it.
	Rides bool `json:"rides,omitempty"`
}

// Named reports whether r names a version keyed per write attempt.
func (r TableRef) Named() bool { return r.Attempt != (ID{}) }

// TableVersion is one immutable version of one table on one fork.
type TableVersion struct {
	Table     string    `json:"table"`
	Fork      ID        `json:"fork"`
	Version   uint64    `json:"version"`
	Fragments []string  `json:"fragments,omitempty"` // opaque data-fragment names, in order
	Rows      uint64    `json:"rows"`
	Metadata  []KV      `json:"metadata,omitempty"`
	BasedOn   *TableRef `json:"based_on,omitempty"` // the version the content was built from
	// ContentPreserving marks a maintenance version (a compaction): it
	// holds exactly the rows of BasedOn, in other fragments. A strict
	// writer's pin of BasedOn is satisfied by it (lineage.PinSatisfied).
	// Requires BasedOn; omitted when false.
	ContentPreserving bool `json:"content_preserving,omitempty"`
	// Attempt is the write attempt's ULID of a version named per attempt
	// (format 8): its key is R/tables/<table>/<fork>/a/<attempt>. Zero for
	// a counter-named version; omitted then.
	Attempt ID `json:"attempt,omitzero"`
	// Rides is set on a version read from (or written as) a pin's Riding
	// (format 11). It is not encoded: the same payload is a version's
	// whether it rides or not, and the pin says which.
	Rides bool `json:"-"`
}

// Ref returns the reference naming t.
func (t *TableVersion) Ref() TableRef {
	return TableRef{Fork: t.Fork, Version: t.Version, Attempt: t.Attempt, Rides: t.Rides}
}

// EncodeTableVersion validates t and returns its enveloped canonical bytes.
func EncodeTableVersion(t *TableVersion, token Token) ([]byte, error) {
	if err := ValidateTableVersion(t); err != nil {
		return nil, err
	}
	// MarshalJSON's bytes (the fixed-width mirror's json.Marshal), appended
	// in place after the envelope's header (jsonappend.go): json.Marshal(t)
	// would scan and copy them once more (its compaction of a Marshaler's
	// output), and a payload built apart would be copied into the frame,
	// each a pass over a version's embedded fragments (format 9) on every
	// commit.
	return envelopeOf(CurrentFormat, KindTableVersion, token, tableVersionBytes(t), func(b []byte) []byte {
		return appendTableVersion(b, t)
	}), nil
}

// DecodeTableVersion decodes and validates an enveloped table version.
func DecodeTableVersion(b []byte) (TableVersion, Token, error) {
	e, err := openCurrent(b, KindTableVersion)
	if err != nil {
		return TableVersion{}, Token{}, err
	}
	var t TableVersion
	if err := decodeTableVersionPayload(e.Payload, &t); err != nil {
		return TableVersion{}, Token{}, err
	}
	if err := ValidateTableVersion(&t); err != nil {
		return TableVersion{}, Token{}, err
	}
	return t, e.Token, nil
}

// ValidateTableVersion checks the structural rules of a table version.
func ValidateTableVersion(t *TableVersion) error {
	bad := func(f string, a ...any) error { return corrupt("table-version", f, a...) }
	if err := ValidateName(t.Table); err != nil {
		return bad("%v", err)
	}
	if t.Fork == (ID{}) || t.Version == 0 {
		return bad("zero fork or version")
	}
	if t.BasedOn != nil && (t.BasedOn.Fork == (ID{}) || t.BasedOn.Version == 0 || t.BasedOn.Version >= t.Version) {
		return bad("based_on must name a non-zero version below %d", t.Version)
	}
	if t.ContentPreserving && t.BasedOn == nil {
		return bad("a content-preserving version must name the version it preserves (based_on)")
	}
	if err := validateFragments(t.Fragments); err != nil {
		return bad("%v", err)
	}
	if err := validateMetadata(t.Metadata); err != nil {
		return bad("%v", err)
	}
	return nil
}

func validateFragments(fs []string) error {
	if len(fs) > MaxFragments {
		return fmt.Errorf("%d fragments exceeds %d", len(fs), MaxFragments)
	}
	for i, f := range fs {
		if len(f) == 0 || len(f) > MaxFragmentBytes || !utf8.ValidString(f) {
			return fmt.Errorf("fragment %d: not 1..%d bytes of valid UTF-8", i, MaxFragmentBytes)
		}
	}
	return nil
}

func validateMetadata(md []KV) error {
	if len(md) > MaxMetadataEntries {
		return fmt.Errorf("%d metadata entries exceeds %d", len(md), MaxMetadataEntries)
	}
	for i, kv := range md {
		if len(kv.Key) == 0 || len(kv.Key) > MaxMetadataKeyBytes || !utf8.ValidString(kv.Key) {
			return fmt.Errorf("metadata key %d: not 1..%d bytes of valid UTF-8", i, MaxMetadataKeyBytes)
		}
		if len(kv.Value) > MaxMetadataValueByte || !utf8.ValidString(kv.Value) {
			return fmt.Errorf("metadata %q: value not valid UTF-8 of at most %d bytes", kv.Key, MaxMetadataValueByte)
		}
		if i > 0 && md[i-1].Key >= kv.Key {
			return fmt.Errorf("metadata not sorted and unique at %q", kv.Key)
		}
	}
	return nil
}

// EncodeSchema envelopes the raw schema-contract bytes.
func EncodeSchema(contract []byte, token Token) []byte {
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindSchema, Token: token, Payload: contract})
}

// DecodeSchema returns the contract bytes of an enveloped schema object.
func DecodeSchema(b []byte) ([]byte, Token, error) {
	e, err := openCurrent(b, KindSchema)
	if err != nil {
		return nil, Token{}, err
	}
	return e.Payload, e.Token, nil
}

// EncodeNameMarker envelopes the branch-name index marker of name.
func EncodeNameMarker(name string, token Token) []byte {
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindNameMarker, Token: token, Payload: []byte(name)})
}
