package format

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func genSidecar(t *rapid.T) Sidecar {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "edges", "n.1", "t_2"}), 1, 5, rapid.ID[string]).Draw(t, "tables")
	sortStrings(names)
	s := Sidecar{
		Op: genID(t, "op"), Branch: BranchIdentity{Name: genName(t, "branch"), Incarnation: rapid.Uint64Range(1, 9).Draw(t, "inc"), IncarnationID: genID(t, "incid")},
		Actor: genText(t, "actor", 20), Message: genText(t, "message", 40),
		WriterKind:      rapid.SampledFrom([]string{"write", "txn", "recovery-rollback"}).Draw(t, "kind"),
		CreatedUnixNano: rapid.Int64().Draw(t, "created"), CommitID: genID(t, "commit"),
		BaseManifest: rapid.Uint64().Draw(t, "base"),
	}
	for _, n := range names {
		exp := rapid.Uint64Range(0, 1<<40).Draw(t, "expected")
		var tok Token
		copy(tok[:], rapid.SliceOfN(rapid.Byte(), TokenBytes, TokenBytes).Draw(t, "token"))
		s.Tables = append(s.Tables, SidecarTable{Table: n, Fork: genID(t, "fork"), Expected: exp,
			Commit: exp + rapid.Uint64Range(1, 9).Draw(t, "delta"), Token: TokenHex(tok)})
	}
	return s
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Sidecars round-trip canonically, carry their token, and any damaged byte
// is ErrCorrupt.
func TestSidecarRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSidecar(t)
		var tok Token
		tok[0] = 7
		b, err := EncodeSidecar(&s, tok)
		if err != nil {
			t.Fatalf("encode %+v: %v", s, err)
		}
		got, gotTok, err := DecodeSidecar(b)
		if err != nil || gotTok != tok || got.Op != s.Op || len(got.Tables) != len(s.Tables) || got.Tables[0] != s.Tables[0] || got.Message != s.Message {
			t.Fatalf("round trip: %+v %v", got, err)
		}
		i := rapid.IntRange(0, len(b)-1).Draw(t, "flip")
		bad := append([]byte(nil), b...)
		bad[i] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
		if _, _, err := DecodeSidecar(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("damaged byte %d decoded: %v", i, err)
		}
	})
}

// A sidecar (or audit) stamped by another format is refused with the typed
// format error — newer: upgrade; older: recovery objects never existed
// there — and a sidecar is never decoded as another kind.
func TestRecoveryObjectsRefuseOtherStamps(t *testing.T) {
	s := Sidecar{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "write",
		CommitID: idN(3), Tables: []SidecarTable{{Table: "a", Fork: idN(2), Expected: 1, Commit: 2, Token: strings.Repeat("ab", TokenBytes)}}}
	good, err := EncodeSidecar(&s, Token{})
	if err != nil {
		t.Fatal(err)
	}
	for _, stamp := range []uint16{CurrentFormat + 1, OldestSupportedFormat, 0, 9999} {
		env, _ := DecodeEnvelope(good)
		env.Stamp = stamp
		_, _, err := DecodeSidecar(EncodeEnvelope(env))
		var ue *UnsupportedFormatError
		if !errors.As(err, &ue) || ue.Stamp != stamp {
			t.Errorf("stamp %d: %v", stamp, err)
		}
		_, _, err = DecodeAudit(EncodeEnvelope(Envelope{Stamp: stamp, Kind: KindAudit, Payload: []byte("{}")}))
		if !errors.As(err, &ue) {
			t.Errorf("audit stamp %d: %v", stamp, err)
		}
	}
	if _, _, err := DecodeAudit(good); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a sidecar decoded as an audit: %v", err)
	}
	if _, _, err := DecodeManifest(good); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a sidecar decoded as a manifest: %v", err)
	}
}

func idN(n byte) ID {
	var id ID
	id[15] = n
	return id
}

// The structural rules of a sidecar.
func TestValidateSidecarRules(t *testing.T) {
	base := func() Sidecar {
		return Sidecar{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "write", CommitID: idN(3),
			Tables: []SidecarTable{
				{Table: "a", Fork: idN(2), Expected: 0, Commit: 1, Token: strings.Repeat("01", TokenBytes)},
				{Table: "b", Fork: idN(2), Expected: 4, Commit: 5, Token: strings.Repeat("02", TokenBytes)},
			}}
	}
	if s := base(); ValidateSidecar(&s) != nil {
		t.Fatalf("valid sidecar rejected: %v", ValidateSidecar(&s))
	}
	for name, breakIt := range map[string]func(s *Sidecar){
		"zero op":            func(s *Sidecar) { s.Op = ID{} },
		"zero commit":        func(s *Sidecar) { s.CommitID = ID{} },
		"no tables":          func(s *Sidecar) { s.Tables = nil },
		"unsorted":           func(s *Sidecar) { s.Tables[0], s.Tables[1] = s.Tables[1], s.Tables[0] },
		"duplicate":          func(s *Sidecar) { s.Tables[1].Table = "a" },
		"commit not above":   func(s *Sidecar) { s.Tables[1].Commit = 4 },
		"zero fork":          func(s *Sidecar) { s.Tables[0].Fork = ID{} },
		"short token":        func(s *Sidecar) { s.Tables[0].Token = "abcd" },
		"non-hex token":      func(s *Sidecar) { s.Tables[0].Token = strings.Repeat("zz", TokenBytes) },
		"bad writer kind":    func(s *Sidecar) { s.WriterKind = "Write!" },
		"empty writer kind":  func(s *Sidecar) { s.WriterKind = "" },
		"bad table name":     func(s *Sidecar) { s.Tables[0].Table = "../x" },
		"incarnation 0":      func(s *Sidecar) { s.Branch.Incarnation = 0 },
		"invalid utf8 actor": func(s *Sidecar) { s.Actor = "\xff" },
	} {
		s := base()
		breakIt(&s)
		if err := ValidateSidecar(&s); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
		if _, err := EncodeSidecar(&s, Token{}); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// The structural rules of an audit record, and its round trip.
func TestAuditRules(t *testing.T) {
	base := func() Audit {
		return Audit{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "write",
			Actor: "alice", Decision: DecisionRollBack, RecoveryCommit: idN(9),
			Tables: []AuditTable{{Table: "a", Fork: idN(2), FromPinned: 3, FromHead: 4, To: 5}}}
	}
	a := base()
	b, err := EncodeAudit(&a, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	if got, tok, err := DecodeAudit(b); err != nil || tok != (Token{1}) || got.Tables[0] != a.Tables[0] || got.Decision != a.Decision {
		t.Fatalf("round trip %+v %v", got, err)
	}
	for name, breakIt := range map[string]func(a *Audit){
		"unknown decision":            func(a *Audit) { a.Decision = "maybe" },
		"roll-back without commit":    func(a *Audit) { a.RecoveryCommit = ID{} },
		"discard with a commit":       func(a *Audit) { a.Decision = DecisionDiscard },
		"converged roll-back":         func(a *Audit) { a.Converged = true },
		"no tables":                   func(a *Audit) { a.Tables = nil },
		"zero op":                     func(a *Audit) { a.Op = ID{} },
		"zero fork":                   func(a *Audit) { a.Tables[0].Fork = ID{} },
		"converged discard":           func(a *Audit) { a.Decision, a.RecoveryCommit, a.Converged = DecisionDiscard, ID{}, true },
		"roll-forward without commit": func(a *Audit) { a.Decision, a.RecoveryCommit = DecisionRollForward, ID{} },
	} {
		a := base()
		breakIt(&a)
		if err := ValidateAudit(&a); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	d := base()
	d.Decision, d.RecoveryCommit = DecisionDiscard, ID{}
	if err := ValidateAudit(&d); err != nil {
		t.Errorf("discard rejected: %v", err)
	}
}

// Sidecar and audit keys: one op id per key, parse back, no key a
// path-prefix of another.
func TestRecoveryKeys(t *testing.T) {
	k := NewKeys("r/g")
	op := idN(0xab)
	op[0] = 0x01
	if got := k.Sidecar(op); got != "r/g/sidecars/"+op.String() || !strings.HasPrefix(got, k.SidecarPrefix()) {
		t.Fatalf("sidecar key %q", got)
	}
	if back, err := k.ParseSidecarKey(k.Sidecar(op)); err != nil || back != op {
		t.Fatalf("parse %v %v", back, err)
	}
	for _, bad := range []string{"r/g/sidecars/", "r/g/sidecars/xyz", "r/g/audit/" + op.String(), "r/g/sidecars/" + strings.ToLower(op.String())} {
		if _, err := k.ParseSidecarKey(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseSidecarKey(%q) = %v", bad, err)
		}
	}
	if a := k.Audit(op); a != k.AuditOpPrefix(op)+"record" || !strings.HasPrefix(a, k.AuditPrefix()) {
		t.Fatalf("audit key %q", a)
	}
}

// Decoding arbitrary bytes as a sidecar or audit never panics; whatever
// decodes re-encodes to the same bytes.
func FuzzDecodeSidecar(f *testing.F) {
	s := Sidecar{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "write",
		CommitID: idN(3), Tables: []SidecarTable{{Table: "a", Fork: idN(2), Expected: 1, Commit: 2, Token: strings.Repeat("ab", TokenBytes)}}}
	good, _ := EncodeSidecar(&s, Token{})
	a := Audit{Op: idN(1), Branch: s.Branch, WriterKind: "write", Decision: DecisionDiscard, Tables: []AuditTable{{Table: "a", Fork: idN(2)}}}
	audit, _ := EncodeAudit(&a, Token{})
	f.Add(good)
	f.Add(audit)
	f.Add([]byte("GKOB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, tok, err := DecodeSidecar(b); err == nil {
			again, err := EncodeSidecar(&s, tok)
			if err != nil || string(again) != string(b) {
				t.Fatalf("decoded sidecar does not re-encode: %v", err)
			}
		}
		if a, tok, err := DecodeAudit(b); err == nil {
			again, err := EncodeAudit(&a, tok)
			if err != nil || string(again) != string(b) {
				t.Fatalf("decoded audit does not re-encode: %v", err)
			}
		}
	})
}
