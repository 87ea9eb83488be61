package format

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A roll-back plan round-trips with its token, and each structural rule
// refuses a plan that breaks it.
func TestRecoveryPlanRules(t *testing.T) {
	base := func() RecoveryPlan {
		return RecoveryPlan{Op: idN(1), Gen: 1, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)},
			Commit: idN(9), Slot: 7, Tables: []PlanTable{
				{Table: "a", Fork: idN(2), PinFork: idN(2), Pin: 3, Restore: 5},
				{Table: "b", Fork: idN(2), Restore: 1},
				{Table: "c", Fork: idN(2), PinFork: idN(2), Pin: 4},
			}}
	}
	p := base()
	b, err := EncodeRecoveryPlan(&p, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	got, tok, err := DecodeRecoveryPlan(b)
	if err != nil || tok != (Token{1}) {
		t.Fatalf("decode: %v (token %v)", err, tok)
	}
	if d := cmp.Diff(p, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if _, _, err := DecodeRecoveryPlan(mustEncodeAuditForKind(t)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an audit record decoded as a plan: %v", err)
	}
	if _, err := EncodeRecoveryPlan(&p, Token{}); err != nil {
		t.Fatal(err) // encoding does not judge the token ...
	}
	zb, _ := EncodeRecoveryPlan(&p, Token{})
	if _, _, err := DecodeRecoveryPlan(zb); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a plan without a token decoded: %v", err) // ... decoding does: restores are matched by it
	}
	for _, tc := range []struct {
		name    string
		breakIt func(p *RecoveryPlan)
	}{
		{"zero op", func(p *RecoveryPlan) { p.Op = ID{} }},
		{"zero commit", func(p *RecoveryPlan) { p.Commit = ID{} }},
		{"generation 0", func(p *RecoveryPlan) { p.Gen = 0 }},
		{"slot 0", func(p *RecoveryPlan) { p.Slot = 0 }},
		{"no tables", func(p *RecoveryPlan) { p.Tables = nil }},
		{"unsorted tables", func(p *RecoveryPlan) { p.Tables[0], p.Tables[1] = p.Tables[1], p.Tables[0] }},
		{"zero fork", func(p *RecoveryPlan) { p.Tables[0].Fork = ID{} }},
		{"pin version without pin fork", func(p *RecoveryPlan) { p.Tables[0].PinFork = ID{} }},
		{"restore not above the pin", func(p *RecoveryPlan) { p.Tables[0].Restore = 3 }},
		{"bad branch", func(p *RecoveryPlan) { p.Branch.Name = "" }},
	} {
		p := base()
		tc.breakIt(&p)
		if err := ValidateRecoveryPlan(&p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: accepted (%v)", tc.name, err)
		}
	}
}

func mustEncodeAuditForKind(t *testing.T) []byte {
	t.Helper()
	a := Audit{Op: idN(1), Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(2)}, WriterKind: "write",
		Actor: "alice", Decision: DecisionRollBack, RecoveryCommit: idN(9),
		Tables: []AuditTable{{Table: "a", Fork: idN(2), FromPinned: 3, FromHead: 4, To: 5}}}
	b, err := EncodeAudit(&a, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
