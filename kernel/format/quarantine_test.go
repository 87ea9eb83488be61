package format

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A quarantine record round-trips with the sidecar's bytes, and refuses a
// record without a reason, an op or the bytes.
func TestQuarantineRules(t *testing.T) {
	base := func() Quarantine {
		return Quarantine{Op: idN(1), Reason: "disk fault", Actor: "quarantine", TimeUnixNano: 5, Sidecar: []byte{0, 1, 2, 0xff}}
	}
	q := base()
	b, err := EncodeQuarantine(&q, Token{3})
	if err != nil {
		t.Fatal(err)
	}
	got, tok, err := DecodeQuarantine(b)
	if err != nil || tok != (Token{3}) {
		t.Fatalf("decode: %v", err)
	}
	if d := cmp.Diff(q, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		name    string
		breakIt func(q *Quarantine)
	}{
		{"zero op", func(q *Quarantine) { q.Op = ID{} }},
		{"no reason", func(q *Quarantine) { q.Reason = "" }},
		{"no bytes", func(q *Quarantine) { q.Sidecar = nil }},
		{"reason too long", func(q *Quarantine) { q.Reason = string(make([]byte, MaxQuarantineReason+1)) }},
	} {
		q := base()
		tc.breakIt(&q)
		if err := ValidateQuarantine(&q); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: accepted (%v)", tc.name, err)
		}
	}
}

// ProbeSidecarScope reads branch and tables from a sound frame whose
// payload still parses (a newer format), and nothing from a damaged frame
// or another kind.
func TestProbeSidecarScope(t *testing.T) {
	s := Sidecar{Op: idN(1), CommitID: idN(2), Branch: BranchIdentity{Name: "feat", Incarnation: 1, IncarnationID: idN(3)},
		WriterKind: "write", Tables: []SidecarTable{{Table: "a", Fork: idN(3), Expected: 1, Commit: 2, Token: TokenHex(Token{1})}}}
	good, err := EncodeSidecar(&s, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := DecodeEnvelope(good)
	env.Stamp = CurrentFormat + 1
	newer := EncodeEnvelope(env)
	if scope, ok := ProbeSidecarScope(newer); !ok || scope.Branch != idN(3) || len(scope.Tables) != 1 || scope.Tables[0] != "a" {
		t.Fatalf("newer-format probe: %+v %v", scope, ok)
	}
	damaged := append([]byte(nil), good...)
	damaged[len(damaged)/2] ^= 0x40
	if _, ok := ProbeSidecarScope(damaged); ok {
		t.Fatal("a damaged frame showed a scope")
	}
	env.Kind = KindAudit
	if _, ok := ProbeSidecarScope(EncodeEnvelope(env)); ok {
		t.Fatal("another kind showed a scope")
	}
	env.Kind, env.Payload = KindSidecar, []byte(`{"branch":{},"tables":[]}`)
	if _, ok := ProbeSidecarScope(EncodeEnvelope(env)); ok {
		t.Fatal("an empty scope was taken for a scope")
	}
}
