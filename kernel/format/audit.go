package format

import (
	"encoding/json"
)

// AuditDecision is what recovery did with one sidecar.
type AuditDecision string

// The audit decisions. Values are part of the on-store format.
const (
	// DecisionRollForward: the sidecar's versions are visible — published
	// by recovery's own commit, or (Converged) found already published by
	// the writer or by a concurrent recoverer.
	DecisionRollForward AuditDecision = "roll-forward"
	// DecisionRollBack: the write never became visible; every table HEAD
	// that ran ahead of its pin was restored to the pinned content by a new
	// version, and one recovery commit was published.
	DecisionRollBack AuditDecision = "roll-back"
	// DecisionDiscard: the sidecar's branch incarnation no longer exists;
	// nothing was published.
	DecisionDiscard AuditDecision = "discard"
)

// Audit is the one durable record of one recovery action, written
// create-only at Keys.Audit(Op) after the action's publish and before the
// sidecar is deleted, so a second record for the same sidecar is impossible.
type Audit struct {
	Op         ID             `json:"op"`
	Branch     BranchIdentity `json:"branch"`
	WriterKind string         `json:"writer_kind"`
	Actor      string         `json:"actor"` // the original writer's actor
	Decision   AuditDecision  `json:"decision"`
	// Converged: the intent was found already satisfied (no publish by
	// this recoverer); RecoveryCommit then names the commit that published
	// it.
	Converged      bool         `json:"converged"`
	RecoveryCommit ID           `json:"recovery_commit"` // zero only for discard
	Tables         []AuditTable `json:"tables"`          // sorted by table
	TimeUnixNano   int64        `json:"time_unix_nano"`
}

// AuditTable is one table's part of an audit record: the pin and HEAD the
// recoverer observed (from) and the version pinned after the action (to).
type AuditTable struct {
	Table      string `json:"table"`
	Fork       ID     `json:"fork"`
	FromPinned uint64 `json:"from_pinned"`
	FromHead   uint64 `json:"from_head"`
	To         uint64 `json:"to"`
}

// EncodeAudit validates a and returns its enveloped canonical bytes.
func EncodeAudit(a *Audit, token Token) ([]byte, error) {
	if err := ValidateAudit(a); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return nil, corrupt("audit", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindAudit, Token: token, Payload: payload}), nil
}

// DecodeAudit decodes and validates an enveloped audit record.
func DecodeAudit(b []byte) (Audit, Token, error) {
	e, err := openRecovery(b, KindAudit)
	if err != nil {
		return Audit{}, Token{}, err
	}
	var a Audit
	if err := decodeCanonical("audit", e.Payload, &a); err != nil {
		return Audit{}, Token{}, err
	}
	if err := ValidateAudit(&a); err != nil {
		return Audit{}, Token{}, err
	}
	return a, e.Token, nil
}

// ValidateAudit checks the structural rules of an audit record.
func ValidateAudit(a *Audit) error {
	bad := func(f string, args ...any) error { return corrupt("audit", f, args...) }
	if a.Op == (ID{}) {
		return bad("zero op")
	}
	if err := validateIdentity(a.Branch); err != nil {
		return bad("branch: %v", err)
	}
	if err := validateWriterKind(a.WriterKind); err != nil {
		return bad("%v", err)
	}
	if err := ValidateText(a.Actor, ""); err != nil {
		return bad("%v", err)
	}
	switch a.Decision {
	case DecisionRollForward, DecisionRollBack:
		if a.RecoveryCommit == (ID{}) {
			return bad("decision %q without a recovery commit", a.Decision)
		}
	case DecisionDiscard:
		if a.RecoveryCommit != (ID{}) || a.Converged {
			return bad("a discard has no commit and does not converge")
		}
	default:
		return bad("unknown decision %q", a.Decision)
	}
	if a.Converged && a.Decision != DecisionRollForward {
		return bad("only a roll-forward converges")
	}
	if len(a.Tables) == 0 || len(a.Tables) > MaxSidecarTables {
		return bad("%d tables not in 1..%d", len(a.Tables), MaxSidecarTables)
	}
	for i, t := range a.Tables {
		if err := ValidateName(t.Table); err != nil {
			return bad("table %d: %v", i, err)
		}
		if i > 0 && a.Tables[i-1].Table >= t.Table {
			return bad("tables not sorted and unique at %q", t.Table)
		}
		if t.Fork == (ID{}) {
			return bad("table %q: zero fork", t.Table)
		}
	}
	return nil
}
