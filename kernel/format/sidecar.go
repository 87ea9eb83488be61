package format

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Bounds on sidecar and audit contents.
const (
	// MaxWriterKindBytes bounds a writer kind ("write", "txn", ...).
	MaxWriterKindBytes = 64
	// MaxSidecarTables bounds the tables one sidecar may name.
	MaxSidecarTables = MaxTables
)

// Sidecar is the recovery record a writer makes durable (create-only, at
// Keys.Sidecar(Op)) before any table HEAD moves, and deletes after its
// publish. It names everything the open-time sweep needs to decide, without
// the writer, whether the write rolls forward or back: the branch
// incarnation, the commit the writer meant to publish, and for each table
// the version pinned when the write was planned and the version the write
// commits, with the writer token that version will carry (so a version
// someone else wrote at the same number is never mistaken for ours).
type Sidecar struct {
	Op              ID             `json:"op"`
	Branch          BranchIdentity `json:"branch"`
	Actor           string         `json:"actor"`
	Message         string         `json:"message"`
	WriterKind      string         `json:"writer_kind"`
	CreatedUnixNano int64          `json:"created_unix_nano"`
	CommitID        ID             `json:"commit_id"`     // the id the writer's own publish carries
	BaseManifest    uint64         `json:"base_manifest"` // the branch manifest version the write was planned on
	Tables          []SidecarTable `json:"tables"`        // sorted by table, unique
	// Reads are the tables the write read but does not write, at the
	// versions its publish expects (sorted by table, unique, none of them
	// in Tables; absent when none). Recovery rolls forward only while every
	// read is still pinned at its version.
	Reads []SidecarRead `json:"reads,omitempty"`
	// MergedParent is the merged parent of the write's commit (a merge;
	// absent otherwise). Recovery never rolls such a write forward (a
	// recovery commit has one parent): it rolls it back.
	MergedParent *ID `json:"merged_parent,omitempty"`
}

// SidecarRead is one read expectation of a sidecar's write.
type SidecarRead struct {
	Table   string `json:"table"`
	Version uint64 `json:"version"` // the pinned version the publish expects (0: unpinned)
}

// SidecarTable is one table of a sidecar.
type SidecarTable struct {
	Table    string `json:"table"`
	Fork     ID     `json:"fork"`     // the fork the version is committed on
	Expected uint64 `json:"expected"` // the pinned version the write builds on (0: unpinned)
	Commit   uint64 `json:"commit"`   // the version the write commits on Fork
	Token    string `json:"token"`    // hex of the writer token that version carries
}

// TokenOf returns the decoded writer token of t.
func (t SidecarTable) TokenOf() (Token, error) {
	var tok Token
	b, err := hex.DecodeString(t.Token)
	if err != nil || len(b) != TokenBytes {
		return tok, corrupt("sidecar", "table %q: token %q is not %d hex bytes", t.Table, t.Token, TokenBytes)
	}
	copy(tok[:], b)
	return tok, nil
}

// TokenHex renders a writer token for a SidecarTable.
func TokenHex(t Token) string { return hex.EncodeToString(t[:]) }

// Table returns the entry of table and whether the sidecar names it.
func (s *Sidecar) Table(table string) (SidecarTable, bool) {
	for _, t := range s.Tables {
		if t.Table == table {
			return t, true
		}
	}
	return SidecarTable{}, false
}

// EncodeSidecar validates s and returns its enveloped canonical bytes.
func EncodeSidecar(s *Sidecar, token Token) ([]byte, error) {
	if err := ValidateSidecar(s); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, corrupt("sidecar", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindSidecar, Token: token, Payload: payload}), nil
}

// DecodeSidecar decodes and validates an enveloped sidecar. A sidecar whose
// stamp is outside 4..CurrentFormat is refused with *UnsupportedFormatError (a newer
// writer's sidecar must be kept, never misread); bad bytes are ErrCorrupt.
func DecodeSidecar(b []byte) (Sidecar, Token, error) {
	e, err := openRecovery(b, KindSidecar)
	if err != nil {
		return Sidecar{}, Token{}, err
	}
	var s Sidecar
	if err := decodeCanonical("sidecar", e.Payload, &s); err != nil {
		return Sidecar{}, Token{}, err
	}
	if err := ValidateSidecar(&s); err != nil {
		return Sidecar{}, Token{}, err
	}
	return s, e.Token, nil
}

// openRecovery opens the envelope of a sidecar or audit record: frame and
// checksum first (ErrCorrupt), then kind, then a stamp of format 4 (when
// recovery objects appeared) to CurrentFormat (the same layout).
func openRecovery(b []byte, want Kind) (Envelope, error) {
	e, err := DecodeEnvelope(b)
	if err != nil {
		return Envelope{}, err
	}
	if e.Kind != want {
		return Envelope{}, corrupt(want.String(), "envelope kind %d (%s)", e.Kind, e.Kind)
	}
	if e.Stamp < FormatV4 || e.Stamp > CurrentFormat {
		if err := CheckStamp(e.Stamp); err != nil {
			return Envelope{}, err
		}
		return Envelope{}, &UnsupportedFormatError{Stamp: e.Stamp, Oldest: OldestSupportedFormat, Current: CurrentFormat,
			Reason: fmt.Sprintf("a %s is never written at a format older than %d", want, CurrentFormat)}
	}
	return e, nil
}

// ValidateSidecar checks the structural rules of a sidecar.
func ValidateSidecar(s *Sidecar) error {
	bad := func(f string, a ...any) error { return corrupt("sidecar", f, a...) }
	if s.Op == (ID{}) || s.CommitID == (ID{}) {
		return bad("zero op or commit id")
	}
	if err := validateIdentity(s.Branch); err != nil {
		return bad("branch: %v", err)
	}
	if err := ValidateText(s.Actor, s.Message); err != nil {
		return bad("%v", err)
	}
	if err := validateWriterKind(s.WriterKind); err != nil {
		return bad("%v", err)
	}
	if len(s.Tables) == 0 || len(s.Tables) > MaxSidecarTables {
		return bad("%d tables not in 1..%d", len(s.Tables), MaxSidecarTables)
	}
	for i, t := range s.Tables {
		if err := ValidateName(t.Table); err != nil {
			return bad("table %d: %v", i, err)
		}
		if i > 0 && s.Tables[i-1].Table >= t.Table {
			return bad("tables not sorted and unique at %q", t.Table)
		}
		if t.Fork == (ID{}) || t.Commit <= t.Expected {
			return bad("table %q: zero fork or commit %d not above expected %d", t.Table, t.Commit, t.Expected)
		}
		if _, err := t.TokenOf(); err != nil {
			return err
		}
	}
	if len(s.Reads) > MaxSidecarTables {
		return bad("%d reads, more than %d", len(s.Reads), MaxSidecarTables)
	}
	for i, r := range s.Reads {
		if err := ValidateName(r.Table); err != nil {
			return bad("read %d: %v", i, err)
		}
		if i > 0 && s.Reads[i-1].Table >= r.Table {
			return bad("reads not sorted and unique at %q", r.Table)
		}
		if _, written := s.Table(r.Table); written {
			return bad("table %q is both written and read", r.Table)
		}
	}
	return nil
}

// ValidateWriterKind checks a writer kind: 1..MaxWriterKindBytes bytes of
// [a-z0-9-].
func ValidateWriterKind(k string) error { return validateWriterKind(k) }

func validateWriterKind(k string) error {
	if len(k) == 0 || len(k) > MaxWriterKindBytes {
		return fmt.Errorf("writer kind %q: length not in 1..%d", k, MaxWriterKindBytes)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("writer kind %q: byte %d not in [a-z0-9-]", k, i)
		}
	}
	return nil
}
