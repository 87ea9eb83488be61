package format

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// The one guard accepts exactly [OldestSupportedFormat, CurrentFormat]
// (absent = oldest) and refuses outside it with typed, distinguishable
// errors.
func TestStampGuardBounds(t *testing.T) {
	for _, tc := range []struct {
		stamp          uint16
		ok, new, old   bool
		reasonContains string
	}{
		{stamp: CurrentFormat, ok: true},
		{stamp: OldestSupportedFormat, ok: true},
		{stamp: 0, ok: true}, // absent reads as the oldest supported
		{stamp: CurrentFormat + 1, new: true, reasonContains: "upgrade"},
		{stamp: math.MaxUint16, new: true, reasonContains: "upgrade"},
		{stamp: OldestSupportedFormat - 1, old: true, reasonContains: "migrate forward with an older release"},
		{stamp: 1, old: true, reasonContains: "migrate forward with an older release"},
	} {
		err := CheckStamp(tc.stamp)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckStamp(%d) = %v, want nil", tc.stamp, err)
			}
			continue
		}
		var u *UnsupportedFormatError
		if !errors.As(err, &u) || !errors.Is(err, ErrUnsupportedFormat) {
			t.Fatalf("CheckStamp(%d) = %v, want *UnsupportedFormatError", tc.stamp, err)
		}
		if u.TooNew() != tc.new || u.TooOld() != tc.old || !strings.Contains(u.Reason, tc.reasonContains) {
			t.Errorf("CheckStamp(%d): TooNew=%v TooOld=%v reason %q", tc.stamp, u.TooNew(), u.TooOld(), u.Reason)
		}
	}
	for s := 0; s <= math.MaxUint16; s++ {
		in := EffectiveStamp(uint16(s)) >= OldestSupportedFormat && EffectiveStamp(uint16(s)) <= CurrentFormat
		if (CheckStamp(uint16(s)) == nil) != in {
			t.Fatalf("CheckStamp(%d) disagrees with the range", s)
		}
	}
}

func v3Fixture() V3Manifest {
	return V3Manifest{Version: 2, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}},
		Tables: []TablePin{{Name: "a", Fork: ID{9}, Version: 2, Rows: 3}}, Schema: strings.Repeat("b", 64)}
}

// A v3 manifest round-trips, with a present or an absent stamp, and reads
// through DecodeManifestAnyStamp as a lineage-less FormatV3 manifest; the
// v4 decoder refuses it.
func TestV3ManifestCodec(t *testing.T) {
	for _, stamp := range []uint16{FormatV3, 0} {
		v := v3Fixture()
		b, err := EncodeV3Manifest(&v, Token{1}, stamp)
		if err != nil {
			t.Fatal(err)
		}
		got, tok, err := DecodeV3Manifest(b)
		if err != nil || tok != (Token{1}) || got.Version != 2 || len(got.Tables) != 1 {
			t.Fatalf("DecodeV3Manifest = %+v, %v", got, err)
		}
		m, _, err := DecodeManifestAnyStamp(b)
		if err != nil || m.FormatStamp != FormatV3 || m.Commit != nil || m.Head != (ID{}) || m.Tables[0] != v.Tables[0] {
			t.Fatalf("DecodeManifestAnyStamp = %+v, %v", m, err)
		}
		if _, _, err := DecodeManifest(b); !errors.Is(err, ErrUnsupportedFormat) {
			t.Fatalf("DecodeManifest of a v3 manifest = %v", err)
		}
	}
	v := v3Fixture()
	good, _ := EncodeV3Manifest(&v, Token{}, FormatV3)
	e, _ := DecodeEnvelope(good)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"too new", EncodeEnvelope(Envelope{Stamp: CurrentFormat + 1, Kind: KindManifest, Payload: e.Payload}), ErrUnsupportedFormat},
		{"too old", EncodeEnvelope(Envelope{Stamp: 2, Kind: KindManifest, Payload: e.Payload}), ErrUnsupportedFormat},
		{"v4 payload under a v3 stamp", EncodeEnvelope(Envelope{Stamp: FormatV3, Kind: KindManifest, Payload: []byte(`{"version":0}`)}), ErrCorrupt},
		{"wrong kind", EncodeEnvelope(Envelope{Stamp: FormatV3, Kind: KindLegacyCommit, Payload: e.Payload}), ErrCorrupt},
		{"non-canonical", EncodeEnvelope(Envelope{Stamp: FormatV3, Kind: KindManifest, Payload: append([]byte(" "), e.Payload...)}), ErrCorrupt},
	} {
		if _, _, err := DecodeManifestAnyStamp(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	bad := v3Fixture()
	bad.FormatStamp = 4
	if _, err := EncodeV3Manifest(&bad, Token{}, FormatV3); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("payload stamp 4 accepted: %v", err)
	}
	if _, err := EncodeV3Manifest(&v, Token{}, CurrentFormat); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("envelope stamp 4 accepted: %v", err)
	}
}

func TestLegacyCommitCodec(t *testing.T) {
	c := LegacyCommit{ID: ID{5}, Parents: []ID{{4}, {3}}, Actor: "ann", Message: "m", TimeUnixNano: 7, ManifestVersion: 3}
	b, err := EncodeLegacyCommit(&c, Token{2}, FormatV3)
	if err != nil {
		t.Fatal(err)
	}
	got, tok, err := DecodeLegacyCommit(b)
	if err != nil || tok != (Token{2}) || got.ID != c.ID || got.Kind() != KindMerge || got.Actor != "ann" {
		t.Fatalf("DecodeLegacyCommit = %+v, %v", got, err)
	}
	if again, _ := EncodeLegacyCommit(&got, tok, FormatV3); !bytes.Equal(again, b) {
		t.Fatal("legacy commit encoding is not canonical")
	}
	e, _ := DecodeEnvelope(b)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"v4 stamp", EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindLegacyCommit, Payload: e.Payload}), ErrCorrupt},
		{"too new", EncodeEnvelope(Envelope{Stamp: CurrentFormat + 1, Kind: KindLegacyCommit, Payload: e.Payload}), ErrUnsupportedFormat},
		{"self parent", EncodeEnvelope(Envelope{Stamp: FormatV3, Kind: KindLegacyCommit,
			Payload: []byte(`{"id":"05000000000000000000000000","parents":["05000000000000000000000000"],"actor":"","message":"","time_unix_nano":0,"manifest_version":1}`)}), ErrCorrupt},
		{"unknown field", EncodeEnvelope(Envelope{Stamp: FormatV3, Kind: KindLegacyCommit, Payload: []byte(`{"bogus":1}`)}), ErrCorrupt},
	} {
		if _, _, err := DecodeLegacyCommit(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		parents []ID
		kind    CommitKind
	}{{nil, KindGenesis}, {[]ID{{1}}, KindCommit}, {[]ID{{1}, {2}}, KindMerge}} {
		if k := (&LegacyCommit{Parents: tc.parents}).Kind(); k != tc.kind {
			t.Errorf("Kind(%d parents) = %s", len(tc.parents), k)
		}
	}
}

// The v3 head rule: highest manifest version, ties by highest id.
func TestLegacyHeadRule(t *testing.T) {
	cs := []LegacyCommit{{ID: ID{1}, ManifestVersion: 0}, {ID: ID{9}, ManifestVersion: 1}, {ID: ID{4}, ManifestVersion: 2}, {ID: ID{3}, ManifestVersion: 2}}
	if h, ok := LegacyHead(cs); !ok || h != (ID{4}) {
		t.Fatalf("LegacyHead = %s, %v", h, ok)
	}
	if _, ok := LegacyHead(nil); ok {
		t.Fatal("head of no commits")
	}
}

func migrationManifest() Manifest {
	g := LegacyCommit{ID: ID{1}, Actor: "init", ManifestVersion: 0}
	c := LegacyCommit{ID: ID{2}, Parents: []ID{{1}}, Actor: "a", ManifestVersion: 1}
	return Manifest{Version: 2, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}},
		Head: ID{2}, Schema: strings.Repeat("a", 64), FormatStamp: CurrentFormat,
		Legacy: &LegacyLineage{Commits: []LegacyCommit{g, c}, Head: ID{2}}}
}

func TestMigrationManifestRules(t *testing.T) {
	m := migrationManifest()
	b, err := EncodeManifest(&m, Token{3})
	if err != nil {
		t.Fatalf("valid migration manifest refused: %v", err)
	}
	got, _, err := DecodeManifest(b)
	if err != nil || got.Legacy == nil || len(got.Legacy.Commits) != 2 || got.Commit != nil {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		mut  func(m *Manifest)
	}{
		{"with a commit", func(m *Manifest) { m.Commit = &Commit{ID: ID{7}, Parents: []ID{{2}}, Kind: KindCommit}; m.Head = ID{7} }},
		{"tombstone", func(m *Manifest) { m.Tombstone = true }},
		{"version 0", func(m *Manifest) { m.Version = 0 }},
		{"head differs from block", func(m *Manifest) { m.Head = ID{1} }},
		{"head not the v3 head", func(m *Manifest) { m.Head, m.Legacy.Head = ID{1}, ID{1} }},
		{"unsorted", func(m *Manifest) { m.Legacy.Commits[0], m.Legacy.Commits[1] = m.Legacy.Commits[1], m.Legacy.Commits[0] }},
		{"duplicate", func(m *Manifest) { m.Legacy.Commits[1] = m.Legacy.Commits[0] }},
		{"commit not older", func(m *Manifest) { m.Legacy.Commits[1].ManifestVersion = 2 }},
		{"empty without fork", func(m *Manifest) { m.Legacy.Commits = nil }},
		{"three parents", func(m *Manifest) { m.Legacy.Commits[1].Parents = []ID{{1}, {5}, {6}} }},
	} {
		m := migrationManifest()
		tc.mut(&m)
		if err := ValidateManifest(&m); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: ValidateManifest = %v, want ErrCorrupt", tc.name, err)
		}
	}
	// A forked incarnation with no own commits folds to the fork commit.
	m = migrationManifest()
	m.Legacy.Commits = nil
	m.ForkOf = &ForkPoint{Branch: "main", Incarnation: 1, IncarnationID: ID{8}, ManifestVersion: 4, CommitID: ID{2}}
	m.Branch.Name = "feature"
	if err := ValidateManifest(&m); err != nil {
		t.Fatalf("empty fold onto the fork commit refused: %v", err)
	}
}

func TestLegacyCommitKeys(t *testing.T) {
	k := NewKeys("r")
	id := ID{1, 2, 3}
	key := k.LegacyCommit("feat", 2, id)
	if !strings.HasPrefix(key, k.LegacyPrefix()) || !strings.HasPrefix(key, k.LegacyCommitsPrefix("feat", 2)) {
		t.Fatalf("key %q outside the legacy prefixes", key)
	}
	if got, err := k.ParseLegacyCommitKey("feat", 2, key); err != nil || got != id {
		t.Fatalf("parse = %s, %v", got, err)
	}
	for _, bad := range []string{key + "x", k.LegacyCommitsPrefix("feat", 2) + strings.ToLower(id.String()), k.LegacyCommit("feat", 3, id)} {
		if _, err := k.ParseLegacyCommitKey("feat", 2, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseLegacyCommitKey(%q) = %v", bad, err)
		}
	}
}

// The legacy decoders are total: arbitrary bytes never panic.
func FuzzDecodeLegacy(f *testing.F) {
	v := v3Fixture()
	b, _ := EncodeV3Manifest(&v, Token{}, FormatV3)
	f.Add(b)
	c := LegacyCommit{ID: ID{5}, Parents: []ID{{4}}, ManifestVersion: 1}
	b, _ = EncodeLegacyCommit(&c, Token{}, FormatV3)
	f.Add(b)
	m := migrationManifest()
	b, _ = EncodeManifest(&m, Token{})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, _, err := DecodeManifestAnyStamp(b); err == nil && m.FormatStamp == CurrentFormat {
			if err := ValidateManifest(&m); err != nil {
				t.Fatalf("accepted an invalid manifest: %v", err)
			}
		}
		_, _, _ = DecodeLegacyCommit(b)
	})
}
