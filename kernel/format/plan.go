package format

import (
	"encoding/json"
)

// KindRecoveryPlan is the envelope kind of a recovery plan. Values are part
// of the on-store format: never renumber.
const KindRecoveryPlan Kind = 8

// RecoveryPlan is the one roll-back plan of one abandoned write (op),
// written create-only at Keys.RecoveryPlan(Op) before any restore version
// is written. Every recoverer of the op follows the plan stored there, so
// however many race they write the same restores (carrying the plan's
// envelope token) and publish the same commit (id Commit) at the same
// manifest version (Slot), and at most one recovery commit can land. A plan
// whose slot or a restore version was taken by someone else can never land
// (slots and versions are written once): it is dead, and is replaced by a
// compare-and-swap with a plan of the next generation.
type RecoveryPlan struct {
	Op     ID             `json:"op"`
	Gen    uint32         `json:"gen"` // 1 for the first plan; +1 per replacement
	Branch BranchIdentity `json:"branch"`
	// Commit is the id of the plan's recovery commit.
	Commit ID `json:"commit"`
	// Slot is the manifest version the recovery commit must be published
	// at: one above the head the plan was made on.
	Slot   uint64      `json:"slot"`
	Tables []PlanTable `json:"tables"` // the sidecar's tables, sorted by table
}

// PlanTable is one table's part of a plan: the pin it had on the head the
// plan was made on, and the restore version the plan writes (0: none).
type PlanTable struct {
	Table   string `json:"table"`
	Fork    ID     `json:"fork"`     // the sidecar's fork of the table
	PinFork ID     `json:"pin_fork"` // zero: unpinned
	Pin     uint64 `json:"pin"`      // 0: unpinned
	Restore uint64 `json:"restore"`  // 0: no restore; else the version written on Fork
	// PinAttempt names the pinned version when it is keyed per write
	// attempt (format 8); zero (omitted) for a counter-named pin.
	PinAttempt ID `json:"pin_attempt,omitzero"`
}

// PinRef returns the reference of the table's pin on the plan's head.
func (t PlanTable) PinRef() TableRef {
	return TableRef{Fork: t.PinFork, Version: t.Pin, Attempt: t.PinAttempt}
}

// Pinned reports whether the table was pinned on the plan's head.
func (t PlanTable) Pinned() bool { return t.PinFork != (ID{}) }

// EncodeRecoveryPlan validates p and returns its enveloped canonical bytes;
// the token is the one every restore version of the plan carries.
func EncodeRecoveryPlan(p *RecoveryPlan, token Token) ([]byte, error) {
	if err := ValidateRecoveryPlan(p); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, corrupt("recovery-plan", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindRecoveryPlan, Token: token, Payload: payload}), nil
}

// DecodeRecoveryPlan decodes and validates an enveloped plan.
func DecodeRecoveryPlan(b []byte) (RecoveryPlan, Token, error) {
	e, err := openRecovery(b, KindRecoveryPlan)
	if err != nil {
		return RecoveryPlan{}, Token{}, err
	}
	var p RecoveryPlan
	if err := decodeCanonical("recovery-plan", e.Payload, &p); err != nil {
		return RecoveryPlan{}, Token{}, err
	}
	if err := ValidateRecoveryPlan(&p); err != nil {
		return RecoveryPlan{}, Token{}, err
	}
	if e.Token.IsZero() {
		return RecoveryPlan{}, Token{}, corrupt("recovery-plan", "zero token")
	}
	return p, e.Token, nil
}

// ValidateRecoveryPlan checks the structural rules of a plan.
func ValidateRecoveryPlan(p *RecoveryPlan) error {
	bad := func(f string, a ...any) error { return corrupt("recovery-plan", f, a...) }
	if p.Op == (ID{}) || p.Commit == (ID{}) {
		return bad("zero op or commit id")
	}
	if p.Gen == 0 {
		return bad("generation 0")
	}
	if err := validateIdentity(p.Branch); err != nil {
		return bad("branch: %v", err)
	}
	if p.Slot == 0 {
		return bad("slot 0 (a recovery commit never lands on a branch-create manifest)")
	}
	if len(p.Tables) == 0 || len(p.Tables) > MaxSidecarTables {
		return bad("%d tables not in 1..%d", len(p.Tables), MaxSidecarTables)
	}
	for i, t := range p.Tables {
		if err := ValidateName(t.Table); err != nil {
			return bad("table %d: %v", i, err)
		}
		if i > 0 && p.Tables[i-1].Table >= t.Table {
			return bad("tables not sorted and unique at %q", t.Table)
		}
		if t.Fork == (ID{}) {
			return bad("table %q: zero fork", t.Table)
		}
		if t.Pinned() != (t.Pin > 0) {
			return bad("table %q: pin fork and pin version disagree", t.Table)
		}
		if t.Restore != 0 && t.Restore <= t.Pin && t.PinFork == t.Fork {
			return bad("table %q: restore %d not above pin %d", t.Table, t.Restore, t.Pin)
		}
	}
	return nil
}
