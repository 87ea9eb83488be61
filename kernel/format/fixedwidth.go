package format

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Fixed-width counters.
//
// Every uint64 counter in a payload (version numbers, incarnations, row
// counts, manifest versions) is encoded as a JSON string of exactly
// CounterDigits zero-padded decimal digits, e.g. "00000000000000000042", so
// the size of an object does not depend on how deep the history behind it
// is. The Go fields stay uint64: each struct with counters has a
// MarshalJSON/UnmarshalJSON pair that goes through a private shadow struct
// (same fields, same order, counters as fixedU64). Decoding is strict: a
// counter that is not exactly CounterDigits digits in quotes, or exceeds
// math.MaxUint64, is rejected, and unknown fields are rejected at every
// level (decodeCanonical additionally insists on byte-exact re-encoding).

// CounterDigits is the width of an encoded counter: the decimal digits of
// math.MaxUint64.
const CounterDigits = 20

// fixedU64 is a uint64 encoded as a quoted CounterDigits-digit decimal.
type fixedU64 uint64

// MarshalJSON emits the quoted, zero-padded CounterDigits-digit decimal.
func (f fixedU64) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(make([]byte, 0, CounterDigits+2), "\"%020d\"", uint64(f)), nil
}

// UnmarshalJSON accepts exactly what MarshalJSON emits.
func (f *fixedU64) UnmarshalJSON(b []byte) error {
	if len(b) != CounterDigits+2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("counter %.40q is not a quoted %d-digit decimal", b, CounterDigits)
	}
	var v uint64
	for _, c := range b[1 : len(b)-1] {
		if c < '0' || c > '9' {
			return fmt.Errorf("counter %q is not a quoted %d-digit decimal", b, CounterDigits)
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return fmt.Errorf("counter %q exceeds the uint64 range", b)
		}
		v = v*10 + d
	}
	*f = fixedU64(v)
	return nil
}

// strictUnmarshal decodes one JSON value into v, rejecting unknown fields
// (json.Unmarshal inside an UnmarshalJSON would not inherit the outer
// decoder's DisallowUnknownFields) and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after a JSON value")
	}
	return nil
}

type branchIdentityJSON struct {
	Name          string   `json:"name"`
	Incarnation   fixedU64 `json:"incarnation"`
	IncarnationID ID       `json:"incarnation_id"`
}

// MarshalJSON encodes b with a fixed-width incarnation.
func (b BranchIdentity) MarshalJSON() ([]byte, error) {
	return appendBranchIdentity(nil, b), nil // json.Marshal of branchIdentityJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (b *BranchIdentity) UnmarshalJSON(data []byte) error {
	var s branchIdentityJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*b = BranchIdentity{s.Name, uint64(s.Incarnation), s.IncarnationID}
	return nil
}

type forkPointJSON struct {
	Branch          string   `json:"branch"`
	Incarnation     fixedU64 `json:"incarnation"`
	IncarnationID   ID       `json:"incarnation_id"`
	ManifestVersion fixedU64 `json:"manifest_version"`
	CommitID        ID       `json:"commit_id"`
}

// MarshalJSON encodes f with fixed-width counters.
func (f ForkPoint) MarshalJSON() ([]byte, error) {
	return appendForkPoint(nil, f), nil // json.Marshal of forkPointJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (f *ForkPoint) UnmarshalJSON(data []byte) error {
	var s forkPointJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*f = ForkPoint{s.Branch, uint64(s.Incarnation), s.IncarnationID, uint64(s.ManifestVersion), s.CommitID}
	return nil
}

type tablePinJSON struct {
	Name    string   `json:"name"`
	Fork    ID       `json:"fork"`
	Version fixedU64 `json:"version"`
	Rows    fixedU64 `json:"rows"`
	Attempt ID       `json:"attempt,omitzero"` // omitted for a counter-named version (older objects decode byte-exactly)
	// Riding is the payload of a version riding the manifest (format 11),
	// a JSON object; omitted for one with an object of its own.
	Riding json.RawMessage `json:"riding,omitempty"`
}

// MarshalJSON encodes p with fixed-width counters.
func (p TablePin) MarshalJSON() ([]byte, error) {
	return appendTablePin(nil, p), nil // json.Marshal of tablePinJSON (jsonappend.go)
}

// ridingKey opens a pin's riding payload in its JSON. Inside a JSON string
// a quote is escaped, so the first occurrence in a pin's bytes is the key.
const ridingKey = `,"riding":`

// UnmarshalJSON strictly decodes what MarshalJSON emits. A riding payload
// (format 11, the pin's last field) is split off before the decode, so
// its bytes, often most of the manifest's, are not scanned once more by
// the decoder; the enclosing decode has checked they are valid JSON. A
// payload followed by other fields is split off whole and re-encodes to
// the same bytes, so decodeManifestPayloadStrict checks that each is a
// table version in canonical form (the hand decoder, jsondecode.go,
// reads a pin in one pass and requires the same).
func (p *TablePin) UnmarshalJSON(data []byte) error {
	var s tablePinJSON
	var riding []byte
	if i := bytes.Index(data, []byte(ridingKey)); i >= 0 && len(data) > i+len(ridingKey)+1 && data[len(data)-1] == '}' {
		riding = data[i+len(ridingKey) : len(data)-1]
		data = append(append([]byte(nil), data[:i]...), '}')
	}
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	if riding != nil {
		if s.Riding != nil {
			return fmt.Errorf("riding twice")
		}
		s.Riding = riding
	}
	*p = TablePin{s.Name, s.Fork, uint64(s.Version), uint64(s.Rows), s.Attempt, string(s.Riding)}
	return nil
}

type manifestRefJSON struct {
	Branch      string   `json:"branch"`
	Incarnation fixedU64 `json:"incarnation"`
	Version     fixedU64 `json:"version"`
}

// MarshalJSON encodes r with fixed-width counters.
func (r ManifestRef) MarshalJSON() ([]byte, error) {
	return appendManifestRef(nil, r), nil // json.Marshal of manifestRefJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (r *ManifestRef) UnmarshalJSON(data []byte) error {
	var s manifestRefJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*r = ManifestRef{s.Branch, uint64(s.Incarnation), uint64(s.Version)}
	return nil
}

// manifestJSON mirrors Manifest field for field; keep the two in step.
type manifestJSON struct {
	Version     fixedU64       `json:"version"`
	Branch      BranchIdentity `json:"branch"`
	ForkOf      *ForkPoint     `json:"fork_of,omitempty"`
	Tombstone   bool           `json:"tombstone"`
	Tables      []TablePin     `json:"tables,omitempty"`
	Commit      *Commit        `json:"commit,omitempty"`
	Head        ID             `json:"head"`
	Schema      string         `json:"schema"`
	FormatStamp uint16         `json:"format_stamp"`
	Legacy      *LegacyLineage `json:"legacy,omitempty"`
}

// MarshalJSON encodes m with a fixed-width version.
func (m Manifest) MarshalJSON() ([]byte, error) {
	return appendManifest(nil, &m) // json.Marshal of manifestJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (m *Manifest) UnmarshalJSON(data []byte) error {
	var s manifestJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*m = Manifest{uint64(s.Version), s.Branch, s.ForkOf, s.Tombstone, s.Tables, s.Commit, s.Head, s.Schema, s.FormatStamp, s.Legacy}
	return nil
}

type tableRefJSON struct {
	Fork    ID       `json:"fork"`
	Version fixedU64 `json:"version"`
	Attempt ID       `json:"attempt,omitzero"`
	Rides   bool     `json:"rides,omitempty"`
}

// MarshalJSON encodes r with a fixed-width version.
func (r TableRef) MarshalJSON() ([]byte, error) {
	return appendTableRef(nil, r), nil // json.Marshal of tableRefJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (r *TableRef) UnmarshalJSON(data []byte) error {
	var s tableRefJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*r = TableRef{s.Fork, uint64(s.Version), s.Attempt, s.Rides}
	return nil
}

// tableVersionJSON mirrors TableVersion field for field.
type tableVersionJSON struct {
	Table     string    `json:"table"`
	Fork      ID        `json:"fork"`
	Version   fixedU64  `json:"version"`
	Fragments []string  `json:"fragments,omitempty"`
	Rows      fixedU64  `json:"rows"`
	Metadata  []KV      `json:"metadata,omitempty"`
	BasedOn   *TableRef `json:"based_on,omitempty"`
	// ContentPreserving is omitted when false, so older objects decode
	// byte-exactly.
	ContentPreserving bool `json:"content_preserving,omitempty"`
	Attempt           ID   `json:"attempt,omitzero"`
}

// MarshalJSON encodes t with fixed-width counters.
func (t TableVersion) MarshalJSON() ([]byte, error) {
	return appendTableVersion(make([]byte, 0, tableVersionBytes(&t)), &t), nil // json.Marshal of tableVersionJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (t *TableVersion) UnmarshalJSON(data []byte) error {
	var s tableVersionJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*t = TableVersion{Table: s.Table, Fork: s.Fork, Version: uint64(s.Version), Fragments: s.Fragments,
		Rows: uint64(s.Rows), Metadata: s.Metadata, BasedOn: s.BasedOn, ContentPreserving: s.ContentPreserving, Attempt: s.Attempt}
	return nil
}

// sidecarJSON mirrors Sidecar field for field.
type sidecarJSON struct {
	Op              ID             `json:"op"`
	Branch          BranchIdentity `json:"branch"`
	Actor           string         `json:"actor"`
	Message         string         `json:"message"`
	WriterKind      string         `json:"writer_kind"`
	CreatedUnixNano int64          `json:"created_unix_nano"`
	CommitID        ID             `json:"commit_id"`
	BaseManifest    fixedU64       `json:"base_manifest"`
	Tables          []SidecarTable `json:"tables"`
	Reads           []SidecarRead  `json:"reads,omitempty"`
	MergedParent    *ID            `json:"merged_parent,omitempty"`
}

// MarshalJSON encodes s with fixed-width counters.
func (s Sidecar) MarshalJSON() ([]byte, error) {
	return json.Marshal(sidecarJSON{s.Op, s.Branch, s.Actor, s.Message, s.WriterKind, s.CreatedUnixNano, s.CommitID,
		fixedU64(s.BaseManifest), s.Tables, s.Reads, s.MergedParent})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (s *Sidecar) UnmarshalJSON(data []byte) error {
	var j sidecarJSON
	if err := strictUnmarshal(data, &j); err != nil {
		return err
	}
	*s = Sidecar{j.Op, j.Branch, j.Actor, j.Message, j.WriterKind, j.CreatedUnixNano, j.CommitID, uint64(j.BaseManifest), j.Tables, j.Reads, j.MergedParent}
	return nil
}

type sidecarReadJSON struct {
	Table   string   `json:"table"`
	Version fixedU64 `json:"version"`
}

// MarshalJSON encodes r with a fixed-width version.
func (r SidecarRead) MarshalJSON() ([]byte, error) {
	return json.Marshal(sidecarReadJSON{r.Table, fixedU64(r.Version)})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (r *SidecarRead) UnmarshalJSON(data []byte) error {
	var s sidecarReadJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*r = SidecarRead{s.Table, uint64(s.Version)}
	return nil
}

type sidecarTableJSON struct {
	Table    string   `json:"table"`
	Fork     ID       `json:"fork"`
	Expected fixedU64 `json:"expected"`
	Commit   fixedU64 `json:"commit"`
	Token    string   `json:"token"`
}

// MarshalJSON encodes t with fixed-width counters.
func (t SidecarTable) MarshalJSON() ([]byte, error) {
	return json.Marshal(sidecarTableJSON{t.Table, t.Fork, fixedU64(t.Expected), fixedU64(t.Commit), t.Token})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (t *SidecarTable) UnmarshalJSON(data []byte) error {
	var s sidecarTableJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*t = SidecarTable{s.Table, s.Fork, uint64(s.Expected), uint64(s.Commit), s.Token}
	return nil
}

type auditTableJSON struct {
	Table      string   `json:"table"`
	Fork       ID       `json:"fork"`
	FromPinned fixedU64 `json:"from_pinned"`
	FromHead   fixedU64 `json:"from_head"`
	To         fixedU64 `json:"to"`
}

// MarshalJSON encodes t with fixed-width counters.
func (t AuditTable) MarshalJSON() ([]byte, error) {
	return json.Marshal(auditTableJSON{t.Table, t.Fork, fixedU64(t.FromPinned), fixedU64(t.FromHead), fixedU64(t.To)})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (t *AuditTable) UnmarshalJSON(data []byte) error {
	var s auditTableJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*t = AuditTable{s.Table, s.Fork, uint64(s.FromPinned), uint64(s.FromHead), uint64(s.To)}
	return nil
}

type legacyCommitJSON struct {
	ID              ID       `json:"id"`
	Parents         []ID     `json:"parents,omitempty"`
	Actor           string   `json:"actor"`
	Message         string   `json:"message"`
	TimeUnixNano    int64    `json:"time_unix_nano"`
	ManifestVersion fixedU64 `json:"manifest_version"`
}

// MarshalJSON encodes c with a fixed-width manifest version.
func (c LegacyCommit) MarshalJSON() ([]byte, error) {
	return json.Marshal(legacyCommitJSON{c.ID, c.Parents, c.Actor, c.Message, c.TimeUnixNano, fixedU64(c.ManifestVersion)})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (c *LegacyCommit) UnmarshalJSON(data []byte) error {
	var s legacyCommitJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*c = LegacyCommit{s.ID, s.Parents, s.Actor, s.Message, s.TimeUnixNano, uint64(s.ManifestVersion)}
	return nil
}

// v3ManifestJSON mirrors V3Manifest field for field.
type v3ManifestJSON struct {
	Version     fixedU64       `json:"version"`
	Branch      BranchIdentity `json:"branch"`
	ForkOf      *ForkPoint     `json:"fork_of,omitempty"`
	Tables      []TablePin     `json:"tables,omitempty"`
	Schema      string         `json:"schema"`
	FormatStamp uint16         `json:"format_stamp,omitempty"`
}

// MarshalJSON encodes v with a fixed-width version.
func (v V3Manifest) MarshalJSON() ([]byte, error) {
	return json.Marshal(v3ManifestJSON{fixedU64(v.Version), v.Branch, v.ForkOf, v.Tables, v.Schema, v.FormatStamp})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (v *V3Manifest) UnmarshalJSON(data []byte) error {
	var s v3ManifestJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*v = V3Manifest{uint64(s.Version), s.Branch, s.ForkOf, s.Tables, s.Schema, s.FormatStamp}
	return nil
}

type reachEntryJSON struct {
	Branch      string    `json:"branch"`
	Incarnation fixedU64  `json:"incarnation"`
	Version     fixedU64  `json:"version"`
	Gen         *fixedU64 `json:"gen,omitempty"`
}

func fromOpt(f *fixedU64) (uint64, error) {
	if f == nil {
		return 0, nil
	}
	if *f == 0 {
		return 0, fmt.Errorf("an explicit zero counter (omitted when zero)")
	}
	return uint64(*f), nil
}

// MarshalJSON encodes e with fixed-width counters; gen is omitted when 0.
func (e ReachEntry) MarshalJSON() ([]byte, error) {
	return appendReachEntry(nil, e), nil // json.Marshal of reachEntryJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (e *ReachEntry) UnmarshalJSON(data []byte) error {
	var s reachEntryJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	gen, err := fromOpt(s.Gen)
	if err != nil {
		return err
	}
	*e = ReachEntry{ManifestRef{s.Branch, uint64(s.Incarnation), uint64(s.Version)}, gen}
	return nil
}

// commitIndexJSON mirrors CommitIndex field for field; keep the two in step.
type commitIndexJSON struct {
	ID       ID           `json:"id"`
	At       ManifestRef  `json:"at"`
	Complete bool         `json:"complete"`
	Reach    []ReachEntry `json:"reach,omitempty"`
	Gen      *fixedU64    `json:"gen,omitempty"`
	Folds    []ReachEntry `json:"folds,omitempty"`
}

// MarshalJSON encodes x with a fixed-width gen, omitted when 0 (a legacy
// or incomplete index).
func (x CommitIndex) MarshalJSON() ([]byte, error) {
	return appendCommitIndex(nil, &x), nil // json.Marshal of commitIndexJSON (jsonappend.go)
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (x *CommitIndex) UnmarshalJSON(data []byte) error {
	var s commitIndexJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	gen, err := fromOpt(s.Gen)
	if err != nil {
		return err
	}
	*x = CommitIndex{s.ID, s.At, s.Complete, s.Reach, gen, s.Folds}
	return nil
}
