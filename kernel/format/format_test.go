package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/google/go-cmp/cmp"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Inverted versions sort newest-first and round-trip.
func TestInvertOrdersNewestFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := rapid.Uint64().Draw(t, "a"), rapid.Uint64().Draw(t, "b")
		ia, ib := Invert(a), Invert(b)
		if len(ia) != InvertedDigits {
			t.Fatalf("Invert(%d) = %q, not %d digits", a, ia, InvertedDigits)
		}
		if (a < b) != (ia > ib) {
			t.Fatalf("order: %d<%d but %q vs %q", a, b, ia, ib)
		}
		got, err := ParseInverted(ia)
		if err != nil || got != a {
			t.Fatalf("ParseInverted(%q) = %d, %v; want %d", ia, got, err, a)
		}
	})
}

func TestParseInvertedRejects(t *testing.T) {
	for _, s := range []string{"", "1", "0000000000000000000a", "99999999999999999999", "-0000000000000000001", "000000000000000000000"} {
		if _, err := ParseInverted(s); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseInverted(%q) = %v, want ErrCorrupt", s, err)
		}
	}
	if v, err := ParseInverted(Invert(math.MaxUint64)); err != nil || v != math.MaxUint64 {
		t.Fatalf("max: %d %v", v, err)
	}
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"main", true}, {"a", true}, {"feature-1.x_y", true}, {"A9", true}, {"_x", true},
		{strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
		{"", false}, {".hidden", false}, {"-x", false}, {"a/b", false}, {"a b", false},
		{"é", false}, {"a\x00", false}, {"..", false}, {".", false},
	} {
		err := ValidateName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) error %v does not match ErrInvalidName", tc.name, err)
		}
	}
}

func TestCheckStamp(t *testing.T) {
	for _, tc := range []struct {
		stamp  uint16
		ok     bool
		reason string
	}{
		// Stamps inside [Oldest, Current) (the v3 legacy format) and the
		// absent stamp belong to the migration work and are pinned there.
		{CurrentFormat, true, ""}, {CurrentFormat + 1, false, "newer"}, {math.MaxUint16, false, "newer"},
		{OldestSupportedFormat - 1, false, "too old"},
	} {
		err := CheckStamp(tc.stamp)
		if (err == nil) != tc.ok {
			t.Fatalf("CheckStamp(%d) = %v", tc.stamp, err)
		}
		if err == nil {
			continue
		}
		var u *UnsupportedFormatError
		if !errors.As(err, &u) || !errors.Is(err, ErrUnsupportedFormat) || u.Stamp != tc.stamp || !strings.Contains(u.Reason, tc.reason) {
			t.Fatalf("CheckStamp(%d) = %v, want *UnsupportedFormatError mentioning %q", tc.stamp, err, tc.reason)
		}
	}
}

// Every single-bit flip and every truncation of an envelope is detected.
func TestEnvelopeDetectsDamage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := Envelope{Stamp: rapid.Uint16().Draw(t, "stamp"), Kind: Kind(rapid.Byte().Draw(t, "kind")),
			Payload: rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "payload")}
		copy(e.Token[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "token"))
		b := EncodeEnvelope(e)
		got, err := DecodeEnvelope(b)
		if err != nil || got.Stamp != e.Stamp || got.Kind != e.Kind || got.Token != e.Token || !bytes.Equal(got.Payload, e.Payload) {
			t.Fatalf("round trip: %+v, %v", got, err)
		}
		bit := rapid.IntRange(0, len(b)*8-1).Draw(t, "bit")
		flipped := bytes.Clone(b)
		flipped[bit/8] ^= 1 << (bit % 8)
		if _, err := DecodeEnvelope(flipped); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit %d flip: %v, want ErrCorrupt", bit, err)
		}
		cut := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if _, err := DecodeEnvelope(b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v, want ErrCorrupt", cut, err)
		}
	})
}

func TestEnvelopeRejectsHugeLength(t *testing.T) {
	b := EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindManifest})
	binary.BigEndian.PutUint32(b[headerBytes-4:], MaxPayloadBytes+1)
	if _, err := DecodeEnvelope(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("got %v", err)
	}
}

func TestManifestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genManifest(t)
		var tok Token
		copy(tok[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "tok"))
		b, err := EncodeManifest(&m, tok)
		if err != nil {
			t.Fatalf("encode valid manifest: %v", err)
		}
		got, gotTok, err := DecodeManifest(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !cmp.Equal(got, m) || gotTok != tok {
			t.Fatalf("round trip:\n got %+v\nwant %+v\ndiff (-got +m):\n%s", got, m, cmp.Diff(got, m))
		}
		again, _ := EncodeManifest(&got, gotTok)
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encode differs")
		}
	})
}

func TestTableVersionRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tv := genTableVersion(t)
		b, err := EncodeTableVersion(&tv, Token{1})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		got, tok, err := DecodeTableVersion(b)
		if err != nil || tok != (Token{1}) || !cmp.Equal(got, tv) {
			t.Fatalf("round trip: %+v %v\nwant %+v\ndiff (-got +tv):\n%s", got, err, tv, cmp.Diff(got, tv))
		}
	})
}

// reframe wraps a raw payload in a valid envelope so that only the payload
// rules are under test.
func reframe(stamp uint16, kind Kind, payload string) []byte {
	return EncodeEnvelope(Envelope{Stamp: stamp, Kind: kind, Payload: []byte(payload)})
}

func validManifestJSON(t *testing.T) string {
	var m Manifest
	rapid.Check(t, func(rt *rapid.T) { m = genManifest(rt) })
	b, err := EncodeManifest(&m, Token{})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := DecodeEnvelope(b)
	return string(e.Payload)
}

func TestDecodeManifestRejects(t *testing.T) {
	good := validManifestJSON(t)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"foreign", []byte("PK\x03\x04 hello this is a zip file"), ErrCorrupt},
		{"wrong kind", reframe(CurrentFormat, KindTableVersion, good), ErrCorrupt},
		{"newer stamp", reframe(CurrentFormat+1, KindManifest, good), ErrUnsupportedFormat},
		{"not json", reframe(CurrentFormat, KindManifest, "{"), ErrCorrupt},
		{"trailing data", reframe(CurrentFormat, KindManifest, good+" {}"), ErrCorrupt},
		{"unknown field", reframe(CurrentFormat, KindManifest, `{"bogus":1,`+good[1:]), ErrCorrupt},
		{"whitespace", reframe(CurrentFormat, KindManifest, " "+good), ErrCorrupt},
		{"empty object", reframe(CurrentFormat, KindManifest, `{}`), ErrCorrupt},
		{"lowercase ulid", reframe(CurrentFormat, KindManifest, strings.ToLower(good)), ErrCorrupt},
	} {
		if _, _, err := DecodeManifest(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestValidateManifestRules(t *testing.T) {
	base := func() Manifest {
		id := ID{1}
		return Manifest{Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}},
			Commit: &Commit{ID: id, Kind: KindGenesis}, Head: id, Schema: strings.Repeat("a", 64), FormatStamp: CurrentFormat}
	}
	if m := base(); ValidateManifest(&m) != nil {
		t.Fatalf("base invalid: %v", ValidateManifest(&m))
	}
	for _, tc := range []struct {
		name string
		mut  func(m *Manifest)
	}{
		{"stamp", func(m *Manifest) { m.FormatStamp = 3 }},
		{"bad branch name", func(m *Manifest) { m.Branch.Name = "a/b" }},
		{"incarnation 0", func(m *Manifest) { m.Branch.Incarnation = 0 }},
		{"schema", func(m *Manifest) { m.Schema = "xyz" }},
		{"head mismatch", func(m *Manifest) { m.Head = ID{2} }},
		{"genesis at v1", func(m *Manifest) { m.Version = 1 }},
		{"commit at v0", func(m *Manifest) { m.Commit.Kind = KindCommit; m.Commit.Parents = []ID{{3}} }},
		{"unsorted tables", func(m *Manifest) {
			m.Tables = []TablePin{{Name: "b", Fork: ID{1}, Version: 1}, {Name: "a", Fork: ID{1}, Version: 1}}
		}},
		{"duplicate tables", func(m *Manifest) {
			m.Tables = []TablePin{{Name: "a", Fork: ID{1}, Version: 1}, {Name: "a", Fork: ID{1}, Version: 2}}
		}},
		{"table version 0", func(m *Manifest) { m.Tables = []TablePin{{Name: "a", Fork: ID{1}}} }},
		{"nil commit without fork", func(m *Manifest) { m.Commit = nil }},
		{"tombstone without delete commit", func(m *Manifest) { m.Tombstone = true }},
		{"self parent", func(m *Manifest) {
			m.Version = 1
			m.Commit.Kind = KindCommit
			m.Commit.Parents = []ID{m.Commit.ID}
		}},
		{"merge without merged_from", func(m *Manifest) {
			m.Version = 1
			m.Commit.Kind = KindMerge
			m.Commit.Parents = []ID{{3}, {4}}
		}},
		{"invalid utf8 actor", func(m *Manifest) { m.Commit.Actor = "\xff" }},
		{"unknown kind", func(m *Manifest) { m.Commit.Kind = "weird" }},
	} {
		m := base()
		tc.mut(&m)
		if err := ValidateManifest(&m); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: ValidateManifest = %v, want ErrCorrupt", tc.name, err)
		}
		if _, err := EncodeManifest(&m, Token{}); err == nil {
			t.Errorf("%s: EncodeManifest accepted an invalid manifest", tc.name)
		}
	}
}

func TestKeysLayout(t *testing.T) {
	k := NewKeys("g/root")
	fork := ID{0x01}
	if got := k.Manifest("main", 1, 0); got != "g/root/branches/main/18446744073709551614/18446744073709551615" {
		t.Fatalf("manifest key %q", got)
	}
	inc, v, err := k.ParseManifestKey("main", k.Manifest("main", 7, 42))
	if err != nil || inc != 7 || v != 42 {
		t.Fatalf("parse: %d %d %v", inc, v, err)
	}
	if _, _, err := k.ParseManifestKey("main", "g/root/branches/mainx/1/2"); err == nil {
		t.Fatal("parsed a key of another branch")
	}
	if got, err := k.ParseTableVersionKey("t", fork, k.TableVersion("t", fork, 5)); err != nil || got != 5 {
		t.Fatalf("table key: %d %v", got, err)
	}
	if NewKeys("").Schema("ab") != "schema/ab" || k.NamesPrefix() != "g/root/names/" || !strings.HasPrefix(k.TableForkPrefix("t", fork), "g/root/tables/t/") {
		t.Fatal("layout")
	}
	for _, p := range []string{k.SidecarPrefix(), k.AuditPrefix(), k.LegacyPrefix()} {
		if !strings.HasSuffix(p, "/") {
			t.Fatalf("reserved prefix %q", p)
		}
	}
	// A checksum algorithm change would silently orphan every object; pin it.
	if crc32.Checksum([]byte("123456789"), castagnoli) != 0xe3069283 {
		t.Fatal("checksum is not CRC32C")
	}
}
