package format

import (
	"encoding/json"
)

// KindQuarantine is the envelope kind of a quarantine record. Values are
// part of the on-store format: never renumber.
const KindQuarantine Kind = 9

// MaxQuarantineReason bounds an operator's reason, in bytes.
const MaxQuarantineReason = 1024

// Quarantine is the record of a sidecar recovery could not read (corrupt,
// or of a newer format) that an operator moved aside: written create-only
// at Keys.Quarantine(Op) before the sidecar is deleted, holding the
// sidecar's bytes exactly as they were, so nothing is lost.
type Quarantine struct {
	Op           ID     `json:"op"`
	Reason       string `json:"reason"`
	Actor        string `json:"actor"`
	TimeUnixNano int64  `json:"time_unix_nano"`
	Sidecar      []byte `json:"sidecar"` // the sidecar object's bytes, as stored
}

// EncodeQuarantine validates q and returns its enveloped canonical bytes.
func EncodeQuarantine(q *Quarantine, token Token) ([]byte, error) {
	if err := ValidateQuarantine(q); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(q)
	if err != nil {
		return nil, corrupt("quarantine", "marshal: %v", err)
	}
	if len(payload) > MaxPayloadBytes {
		return nil, corrupt("quarantine", "payload of %d bytes exceeds %d", len(payload), MaxPayloadBytes)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindQuarantine, Token: token, Payload: payload}), nil
}

// DecodeQuarantine decodes and validates an enveloped quarantine record.
func DecodeQuarantine(b []byte) (Quarantine, Token, error) {
	e, err := openRecovery(b, KindQuarantine)
	if err != nil {
		return Quarantine{}, Token{}, err
	}
	var q Quarantine
	if err := decodeCanonical("quarantine", e.Payload, &q); err != nil {
		return Quarantine{}, Token{}, err
	}
	if err := ValidateQuarantine(&q); err != nil {
		return Quarantine{}, Token{}, err
	}
	return q, e.Token, nil
}

// ValidateQuarantine checks the structural rules of a quarantine record.
func ValidateQuarantine(q *Quarantine) error {
	bad := func(f string, a ...any) error { return corrupt("quarantine", f, a...) }
	if q.Op == (ID{}) {
		return bad("zero op")
	}
	if q.Reason == "" || len(q.Reason) > MaxQuarantineReason {
		return bad("reason of %d bytes not in 1..%d", len(q.Reason), MaxQuarantineReason)
	}
	if err := ValidateText(q.Actor, q.Reason); err != nil {
		return bad("%v", err)
	}
	if len(q.Sidecar) == 0 {
		return bad("no sidecar bytes")
	}
	return nil
}

// SidecarScope is what a sidecar that does not decode still shows of its
// scope: its branch incarnation and tables.
type SidecarScope struct {
	Branch ID
	Tables []string
}

// ProbeSidecarScope reads the scope of a sidecar that DecodeSidecar refuses,
// where its body allows it: a sound frame (checksum) of kind sidecar whose
// payload still parses as JSON naming a branch incarnation and at least one
// table (a newer format that kept those fields). ok=false: the scope is
// unknown (a corrupt frame or an unrecognisable payload), so the sidecar
// could concern any write.
func ProbeSidecarScope(b []byte) (scope SidecarScope, ok bool) {
	e, err := DecodeEnvelope(b)
	if err != nil || e.Kind != KindSidecar {
		return SidecarScope{}, false
	}
	var probe struct {
		Branch struct {
			IncarnationID ID `json:"incarnation_id"`
		} `json:"branch"`
		Tables []struct {
			Table string `json:"table"`
		} `json:"tables"`
	}
	if json.Unmarshal(e.Payload, &probe) != nil || probe.Branch.IncarnationID == (ID{}) || len(probe.Tables) == 0 {
		return SidecarScope{}, false
	}
	scope.Branch = probe.Branch.IncarnationID
	for _, t := range probe.Tables {
		if t.Table == "" {
			return SidecarScope{}, false
		}
		scope.Tables = append(scope.Tables, t.Table)
	}
	return scope, true
}
