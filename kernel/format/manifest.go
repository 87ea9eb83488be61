package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
)

// ID is a ULID: commit ids, incarnation ids (which double as table fork ids)
// and data-fragment ids. The zero ID means "none".
type ID = ulid.ULID

// Bounds on manifest contents, enforced by ValidateManifest on both encode
// and decode.
const (
	MaxActorBytes   = 256
	MaxMessageBytes = 64 << 10
	MaxTables       = 1 << 16
)

// CommitKind says how a commit came to be.
type CommitKind string

// The commit kinds. Values are part of the on-store format.
const (
	KindGenesis      CommitKind = "genesis"       // the first commit of a graph (main, version 0)
	KindCommit       CommitKind = "commit"        // an ordinary publish
	KindMerge        CommitKind = "merge"         // a publish with a merged parent
	KindRecovery     CommitKind = "recovery"      // reserved for the recovery issue
	KindBranchDelete CommitKind = "branch-delete" // the commit of a tombstone manifest
)

// BranchIdentity names one incarnation of a branch.
type BranchIdentity struct {
	Name          string `json:"name"`
	Incarnation   uint64 `json:"incarnation"`    // 1, 2, ... per name; key order
	IncarnationID ID     `json:"incarnation_id"` // fresh ULID; also the table fork id
}

// ForkPoint records where a branch incarnation was created from: the
// manifest (branch incarnation + version) whose table pins it copied, and the
// commit that was that manifest's head.
type ForkPoint struct {
	Branch          string `json:"branch"`
	Incarnation     uint64 `json:"incarnation"`
	IncarnationID   ID     `json:"incarnation_id"`
	ManifestVersion uint64 `json:"manifest_version"`
	CommitID        ID     `json:"commit_id"`
}

// TablePin is one table version visible in a manifest.
type TablePin struct {
	Name    string `json:"name"`
	Fork    ID     `json:"fork"`    // incarnation id of the fork holding the version
	Version uint64 `json:"version"` // >= 1
	Rows    uint64 `json:"rows"`
	// Attempt names a version keyed per write attempt (format 8; zero for
	// a counter-named version, omitted then): the pin is authoritative by
	// it, Version is its sequence number.
	Attempt ID `json:"attempt,omitzero"`
	// Riding is the canonical JSON payload of a named table version that
	// rides this manifest (format 11: no object holds it; docs/format.md
	// "v10->v11"), or empty. It is a string so that pins stay comparable:
	// two pins of one riding version carry the same bytes. Read it with
	// RidingVersion.
	Riding string `json:"riding,omitempty"`
}

// Ref returns the reference of the pinned table version.
func (p TablePin) Ref() TableRef {
	return TableRef{Fork: p.Fork, Version: p.Version, Attempt: p.Attempt, Rides: p.Riding != ""}
}

// ManifestRef locates one manifest: branch name, incarnation, version.
type ManifestRef struct {
	Branch      string `json:"branch"`
	Incarnation uint64 `json:"incarnation"`
	Version     uint64 `json:"version"`
}

// Commit is the lineage record carried inside a manifest.
type Commit struct {
	ID           ID         `json:"id"`
	Parents      []ID       `json:"parents,omitempty"` // first parent = previous head; second = merged parent
	Actor        string     `json:"actor"`
	Message      string     `json:"message"`
	TimeUnixNano int64      `json:"time_unix_nano"`
	Kind         CommitKind `json:"kind"`
	// MergedFrom locates the manifest holding Parents[1] (merge commits
	// only), so history walks follow merged parents in O(1).
	MergedFrom *ManifestRef `json:"merged_from,omitempty"`
}

// Manifest is one version of one branch incarnation: the table versions
// visible together, the branch head, and the commit that produced it.
type Manifest struct {
	Version     uint64         `json:"version"`
	Branch      BranchIdentity `json:"branch"`
	ForkOf      *ForkPoint     `json:"fork_of,omitempty"` // carried by every manifest of a forked incarnation
	Tombstone   bool           `json:"tombstone"`
	Tables      []TablePin     `json:"tables,omitempty"` // sorted by name, unique
	Commit      *Commit        `json:"commit,omitempty"` // nil only for a branch-create manifest (version 0 of a fork)
	Head        ID             `json:"head"`             // branch head commit after this manifest
	Schema      string         `json:"schema"`           // sha256 hex of the schema contract
	FormatStamp uint16         `json:"format_stamp"`
	// Legacy is set only on the migration manifest of a branch incarnation
	// that was written in format 3: the folded v3 lineage (see
	// stamp_legacy.go). Such a manifest adds no commit.
	Legacy *LegacyLineage `json:"legacy,omitempty"`
}

// Pin returns the pin of table and whether it is pinned.
func (m *Manifest) Pin(table string) (TablePin, bool) {
	lo, hi := 0, len(m.Tables)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.Tables[mid].Name < table {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(m.Tables) && m.Tables[lo].Name == table {
		return m.Tables[lo], true
	}
	return TablePin{}, false
}

// EncodeManifest validates m and returns its enveloped canonical bytes. An
// invalid manifest is a caller bug, reported as an error matching
// ErrCorrupt so the kernel can panic with the reason.
func EncodeManifest(m *Manifest, token Token) ([]byte, error) {
	if err := ValidateManifest(m); err != nil {
		return nil, err
	}
	if m.Legacy != nil { // the rare migration manifest: through its mirror
		payload, err := json.Marshal(m)
		if err != nil {
			return nil, corrupt("manifest", "marshal: %v", err)
		}
		return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindManifest, Token: token, Payload: payload}), nil
	}
	// json.Marshal(m)'s bytes, appended in place (jsonappend.go).
	return envelopeOf(CurrentFormat, KindManifest, token, 512+256*len(m.Tables)+RidingBytes(m.Tables), func(b []byte) []byte {
		b, _ = appendManifest(b, m)
		return b
	}), nil
}

// DecodeManifest decodes and validates an enveloped manifest. It returns the
// writer token with it.
func DecodeManifest(b []byte) (Manifest, Token, error) {
	e, err := openCurrent(b, KindManifest)
	if err != nil {
		return Manifest{}, Token{}, err
	}
	if !CurrentLayout(e.Stamp) {
		return Manifest{}, Token{}, legacyManifestError(e.Stamp)
	}
	var m Manifest
	if err := decodeManifestPayload(e.Payload, &m); err != nil {
		return Manifest{}, Token{}, err
	}
	if err := ValidateManifest(&m); err != nil {
		return Manifest{}, Token{}, err
	}
	if m.FormatStamp != e.Stamp {
		return Manifest{}, Token{}, corrupt("manifest", "format_stamp %d in an envelope stamped %d", m.FormatStamp, e.Stamp)
	}
	return m, e.Token, nil
}

// decodeManifestPayload decodes a manifest payload: by hand when it is in
// the canonical form (readCanonicalManifest, jsondecode.go: what it
// accepts is the encoding of what it returns, K11b), else by the general
// path, whose verdict and errors stand.
func decodeManifestPayload(payload []byte, m *Manifest) error {
	if v, ok := readCanonicalManifest(payload); ok {
		*m = v
		return nil
	}
	return decodeManifestPayloadStrict(payload, m)
}

// decodeManifestPayloadStrict is decodeCanonical for a manifest: the re-encode
// is the hand encoder's (appendManifest, which emits exactly what
// json.Marshal of the manifest does: K11a) without json.Marshal's
// compaction pass over it, a pass over every riding payload (format 11)
// on every manifest read.
func decodeManifestPayloadStrict(payload []byte, m *Manifest) error {
	// Manifest.UnmarshalJSON decodes strictly; calling it directly spares
	// an outer decoder's two scans of the payload (any byte it would have
	// refused, such as surrounding space, fails the re-encode below).
	if err := m.UnmarshalJSON(payload); err != nil {
		return corrupt("manifest", "payload: %v", err)
	}
	again, err := appendManifest(make([]byte, 0, len(payload)), m)
	if err != nil {
		return corrupt("manifest", "re-marshal: %v", err)
	}
	if !bytes.Equal(again, payload) {
		return corrupt("manifest", "payload is not in canonical form")
	}
	// TablePin.UnmarshalJSON keeps everything from a pin's riding key to
	// its last brace as the payload, so a payload followed by other
	// fields re-encodes to the same bytes. Each must be a table version
	// in canonical form, as the hand decoder requires of it (its full
	// checks against the pin come when it is read: RidingVersion).
	for i := range m.Tables {
		if r := m.Tables[i].Riding; r != "" {
			var t TableVersion
			if err := decodeTableVersionPayload([]byte(r), &t); err != nil {
				return corrupt("manifest", "table %q rides a payload that is not a table version: %v", m.Tables[i].Name, err)
			}
		}
	}
	return nil
}

// decodeCanonical strictly unmarshals payload into v and insists that
// re-encoding v reproduces payload byte for byte.
func decodeCanonical(what string, payload []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return corrupt(what, "payload: %v", err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		return corrupt(what, "re-marshal: %v", err)
	}
	if !bytes.Equal(again, payload) {
		return corrupt(what, "payload is not in canonical form")
	}
	return nil
}

// ValidateManifest checks every structural rule of a manifest (see
// docs/format.md). It does not compare against a predecessor; see
// lineage.CheckSuccessor for that.
func ValidateManifest(m *Manifest) error {
	bad := func(f string, a ...any) error { return corrupt("manifest", f, a...) }
	if m.FormatStamp < FormatV4 || m.FormatStamp > CurrentFormat {
		return bad("format_stamp %d, want %d..%d", m.FormatStamp, FormatV4, CurrentFormat)
	}
	if err := validateIdentity(m.Branch); err != nil {
		return bad("branch: %v", err)
	}
	if err := validateSchemaSum(m.Schema); err != nil {
		return bad("%v", err)
	}
	if m.ForkOf != nil {
		if err := validateForkPoint(m.ForkOf); err != nil {
			return bad("fork_of: %v", err)
		}
	}
	if err := ValidatePins(m.Tables); err != nil {
		return bad("%v", err)
	}
	if err := validateManifestCommit(m); err != nil {
		return bad("%v", err)
	}
	return nil
}

func validateIdentity(b BranchIdentity) error {
	if err := ValidateName(b.Name); err != nil {
		return err
	}
	if b.Incarnation == 0 {
		return fmt.Errorf("incarnation 0")
	}
	if b.IncarnationID == (ID{}) {
		return fmt.Errorf("zero incarnation_id")
	}
	return nil
}

func validateForkPoint(f *ForkPoint) error {
	if err := validateIdentity(BranchIdentity{Name: f.Branch, Incarnation: f.Incarnation, IncarnationID: f.IncarnationID}); err != nil {
		return err
	}
	if f.CommitID == (ID{}) {
		return fmt.Errorf("zero commit_id")
	}
	return nil
}

// IsSchemaSum reports whether s is a schema identity: 64 lowercase hex
// digits (the sha256 of a contract).
func IsSchemaSum(s string) bool { return validateSchemaSum(s) == nil }

func validateSchemaSum(s string) error {
	if len(s) != 64 {
		return fmt.Errorf("schema %q is not 64 hex digits", s)
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return fmt.Errorf("schema %q is not lowercase hex", s)
		}
	}
	return nil
}

// ValidatePins checks that pins are sorted by name, unique, well named and
// at versions >= 1 on a non-zero fork.
func ValidatePins(pins []TablePin) error {
	if len(pins) > MaxTables {
		return fmt.Errorf("%d tables exceeds %d", len(pins), MaxTables)
	}
	for i, p := range pins {
		if err := ValidateName(p.Name); err != nil {
			return fmt.Errorf("table %d: %v", i, err)
		}
		if p.Fork == (ID{}) || p.Version == 0 {
			return fmt.Errorf("table %q: zero fork or version", p.Name)
		}
		if i > 0 && pins[i-1].Name >= p.Name {
			return fmt.Errorf("tables not sorted and unique at %q", p.Name)
		}
		if p.Riding != "" {
			if err := checkRidingFrame(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateManifestCommit(m *Manifest) error {
	if m.Legacy != nil {
		return validateMigrationManifest(m)
	}
	if m.Commit == nil {
		if m.Version != 0 || m.ForkOf == nil || m.Tombstone {
			return fmt.Errorf("only the version-0 manifest of a forked incarnation may omit the commit")
		}
		if m.Head != m.ForkOf.CommitID {
			return fmt.Errorf("branch-create head %s is not the fork commit %s", m.Head, m.ForkOf.CommitID)
		}
		return nil
	}
	c := m.Commit
	if err := ValidateCommit(c); err != nil {
		return err
	}
	if m.Head != c.ID {
		return fmt.Errorf("head %s is not the commit id %s", m.Head, c.ID)
	}
	if (c.Kind == KindGenesis) != (m.Version == 0) {
		return fmt.Errorf("a genesis commit must be exactly the version-0 manifest (kind %q, version %d)", c.Kind, m.Version)
	}
	if c.Kind == KindGenesis && m.ForkOf != nil {
		return fmt.Errorf("genesis on a forked incarnation")
	}
	if (c.Kind == KindBranchDelete) != m.Tombstone {
		return fmt.Errorf("tombstone %v with commit kind %q", m.Tombstone, c.Kind)
	}
	return nil
}

// ValidateCommit checks one commit record on its own: id, kind, parent
// count, text bounds.
func ValidateCommit(c *Commit) error {
	if c.ID == (ID{}) {
		return fmt.Errorf("zero commit id")
	}
	n := parentCount(c.Kind)
	if n < 0 {
		return fmt.Errorf("unknown commit kind %q", c.Kind)
	}
	if len(c.Parents) != n {
		return fmt.Errorf("commit kind %q has %d parents, want %d", c.Kind, len(c.Parents), n)
	}
	for i, p := range c.Parents {
		if p == (ID{}) || p == c.ID {
			return fmt.Errorf("parent %d is zero or the commit itself", i)
		}
	}
	if n == 2 && c.Parents[0] == c.Parents[1] {
		return fmt.Errorf("merge parents are equal")
	}
	if (c.Kind == KindMerge) != (c.MergedFrom != nil) {
		return fmt.Errorf("merged_from must be set exactly on merge commits")
	}
	if c.MergedFrom != nil {
		if err := ValidateName(c.MergedFrom.Branch); err != nil || c.MergedFrom.Incarnation == 0 {
			return fmt.Errorf("merged_from: bad branch or incarnation")
		}
	}
	return ValidateText(c.Actor, c.Message)
}

// parentCount is the number of parents a commit kind has, or -1 for an
// unknown kind.
func parentCount(k CommitKind) int {
	switch k {
	case KindGenesis:
		return 0
	case KindCommit, KindRecovery, KindBranchDelete:
		return 1
	case KindMerge:
		return 2
	}
	return -1
}

// ValidateText checks the free-text fields of a commit: valid UTF-8 and
// within MaxActorBytes / MaxMessageBytes.
func ValidateText(actor, message string) error {
	if len(actor) > MaxActorBytes || !utf8.ValidString(actor) {
		return fmt.Errorf("actor: not valid UTF-8 of at most %d bytes", MaxActorBytes)
	}
	if len(message) > MaxMessageBytes || !utf8.ValidString(message) {
		return fmt.Errorf("message: not valid UTF-8 of at most %d bytes", MaxMessageBytes)
	}
	return nil
}
