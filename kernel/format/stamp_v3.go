package format

import (
	"encoding/json"
	"strings"

	"github.com/oklog/ulid/v2"
)

// V3Manifest is the payload of a format-3 manifest: the table pins of one
// version of one branch incarnation, and nothing about lineage (v3 kept
// commits in separate legacy commit objects). It is stored at the same key
// as a v4 manifest, in an envelope stamped 3 (or 0: absent).
type V3Manifest struct {
	Version     uint64         `json:"version"`
	Branch      BranchIdentity `json:"branch"`
	ForkOf      *ForkPoint     `json:"fork_of,omitempty"` // carried by every manifest of a forked incarnation
	Tables      []TablePin     `json:"tables,omitempty"`  // sorted by name, unique
	Schema      string         `json:"schema"`
	FormatStamp uint16         `json:"format_stamp,omitempty"` // absent or 3
}

// Manifest returns the in-memory form the kernel reads a v3 manifest as: a
// Manifest with FormatStamp FormatV3, no commit, no legacy block and a zero
// head (the head comes from the legacy lineage).
func (v *V3Manifest) Manifest() Manifest {
	m := Manifest{Version: v.Version, Branch: v.Branch, Tables: append([]TablePin(nil), v.Tables...),
		Schema: v.Schema, FormatStamp: FormatV3}
	if v.ForkOf != nil {
		f := *v.ForkOf
		m.ForkOf = &f
	}
	if len(m.Tables) == 0 {
		m.Tables = nil
	}
	return m
}

// ValidateV3Manifest checks the structural rules of a v3 manifest.
func ValidateV3Manifest(v *V3Manifest) error {
	bad := func(f string, a ...any) error { return corrupt("v3 manifest", f, a...) }
	if v.FormatStamp != 0 && v.FormatStamp != FormatV3 {
		return bad("format_stamp %d in a v3 manifest", v.FormatStamp)
	}
	if err := validateIdentity(v.Branch); err != nil {
		return bad("branch: %v", err)
	}
	if err := validateSchemaSum(v.Schema); err != nil {
		return bad("%v", err)
	}
	if v.ForkOf != nil {
		if err := validateForkPoint(v.ForkOf); err != nil {
			return bad("fork_of: %v", err)
		}
	}
	if err := ValidatePins(v.Tables); err != nil {
		return bad("%v", err)
	}
	return nil
}

// checkV3Stamp accepts an envelope stamp that reads as format 3.
func checkV3Stamp(what string, stamp uint16) error {
	if err := CheckStamp(stamp); err != nil {
		return err
	}
	if EffectiveStamp(stamp) != FormatV3 {
		return corrupt(what, "envelope stamp %d: %s objects exist only in format %d", stamp, what, FormatV3)
	}
	return nil
}

// EncodeV3Manifest validates v and envelopes it with stamp (FormatV3, or 0
// for an absent stamp). It exists for the v3 fixture writer (test support):
// this build never writes format 3 otherwise.
func EncodeV3Manifest(v *V3Manifest, token Token, stamp uint16) ([]byte, error) {
	if err := ValidateV3Manifest(v); err != nil {
		return nil, err
	}
	if EffectiveStamp(stamp) != FormatV3 {
		return nil, corrupt("v3 manifest", "stamp %d is not format %d", stamp, FormatV3)
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return nil, corrupt("v3 manifest", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: stamp, Kind: KindManifest, Token: token, Payload: payload}), nil
}

// DecodeV3Manifest decodes and validates an enveloped v3 manifest.
func DecodeV3Manifest(b []byte) (V3Manifest, Token, error) {
	e, err := DecodeEnvelope(b)
	if err != nil {
		return V3Manifest{}, Token{}, err
	}
	if e.Kind != KindManifest {
		return V3Manifest{}, Token{}, corrupt("v3 manifest", "envelope kind %d (%s)", e.Kind, e.Kind)
	}
	if err := checkV3Stamp("v3 manifest", e.Stamp); err != nil {
		return V3Manifest{}, Token{}, err
	}
	var v V3Manifest
	if err := decodeCanonical("v3 manifest", e.Payload, &v); err != nil {
		return V3Manifest{}, Token{}, err
	}
	if err := ValidateV3Manifest(&v); err != nil {
		return V3Manifest{}, Token{}, err
	}
	return v, e.Token, nil
}

// DecodeManifestAnyStamp decodes a manifest of any format this build reads:
// it applies the stamp guard (CheckStamp) to the envelope, then decodes a
// v4 manifest with DecodeManifest or a v3 one with DecodeV3Manifest (read as
// V3Manifest.Manifest: FormatStamp FormatV3, no commit, zero head).
func DecodeManifestAnyStamp(b []byte) (Manifest, Token, error) {
	e, err := DecodeEnvelope(b)
	if err != nil {
		return Manifest{}, Token{}, err
	}
	if e.Kind != KindManifest {
		return Manifest{}, Token{}, corrupt("manifest", "envelope kind %d (%s)", e.Kind, e.Kind)
	}
	if err := CheckStamp(e.Stamp); err != nil {
		return Manifest{}, Token{}, err
	}
	switch EffectiveStamp(e.Stamp) {
	case FormatV4, FormatV5, FormatV6, FormatV7, FormatV8, FormatV9, FormatV10, FormatV11, FormatV12, CurrentFormat:
		return DecodeManifest(b)
	case FormatV3:
		v, tok, err := DecodeV3Manifest(b)
		if err != nil {
			return Manifest{}, Token{}, err
		}
		return v.Manifest(), tok, nil
	}
	return Manifest{}, Token{}, &UnsupportedFormatError{Stamp: e.Stamp, Oldest: OldestSupportedFormat,
		Current: CurrentFormat, Reason: "no manifest decoder for this supported stamp (build bug)"}
}

// EncodeLegacyCommit validates c and envelopes it as a legacy commit object
// with stamp (FormatV3, or 0 for absent). Test support, like
// EncodeV3Manifest.
func EncodeLegacyCommit(c *LegacyCommit, token Token, stamp uint16) ([]byte, error) {
	if err := ValidateLegacyCommit(c); err != nil {
		return nil, corrupt("legacy commit", "%v", err)
	}
	if EffectiveStamp(stamp) != FormatV3 {
		return nil, corrupt("legacy commit", "stamp %d is not format %d", stamp, FormatV3)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return nil, corrupt("legacy commit", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: stamp, Kind: KindLegacyCommit, Token: token, Payload: payload}), nil
}

// DecodeLegacyCommit decodes and validates an enveloped legacy commit.
func DecodeLegacyCommit(b []byte) (LegacyCommit, Token, error) {
	e, err := DecodeEnvelope(b)
	if err != nil {
		return LegacyCommit{}, Token{}, err
	}
	if e.Kind != KindLegacyCommit {
		return LegacyCommit{}, Token{}, corrupt("legacy commit", "envelope kind %d (%s)", e.Kind, e.Kind)
	}
	if err := checkV3Stamp("legacy commit", e.Stamp); err != nil {
		return LegacyCommit{}, Token{}, err
	}
	var c LegacyCommit
	if err := decodeCanonical("legacy commit", e.Payload, &c); err != nil {
		return LegacyCommit{}, Token{}, err
	}
	if err := ValidateLegacyCommit(&c); err != nil {
		return LegacyCommit{}, Token{}, corrupt("legacy commit", "%v", err)
	}
	return c, e.Token, nil
}

// LegacyCommitsPrefix lists the legacy commit objects of one v3 branch
// incarnation: R/legacy/commits/<branch>/<inv(incarnation)>/.
func (k Keys) LegacyCommitsPrefix(branch string, inc uint64) string {
	return k.join("legacy", "commits", branch, Invert(inc)) + "/"
}

// LegacyCommit is the key of the legacy commit object id of one v3 branch
// incarnation.
func (k Keys) LegacyCommit(branch string, inc uint64, id ID) string {
	return k.join("legacy", "commits", branch, Invert(inc), id.String())
}

// ParseLegacyCommitKey returns the commit id of a key under
// LegacyCommitsPrefix(branch, inc).
func (k Keys) ParseLegacyCommitKey(branch string, inc uint64, key string) (ID, error) {
	rest, ok := strings.CutPrefix(key, k.LegacyCommitsPrefix(branch, inc))
	if !ok {
		return ID{}, corrupt("key", "%q is not under %q", key, k.LegacyCommitsPrefix(branch, inc))
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil || id.String() != rest {
		return ID{}, corrupt("key", "legacy commit key %q: bad id: %v", key, err)
	}
	return id, nil
}
