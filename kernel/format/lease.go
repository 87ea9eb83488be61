package format

import "encoding/json"

// KindLease is the envelope kind of a snapshot lease (docs/gc.md). Values
// are part of the on-store format: never renumber.
const KindLease Kind = 12

// Lease pins one snapshot (the manifest at Snapshot) against garbage
// collection until ExpiresUnixNano (the writer's injected clock). Written
// create-only at Keys.Lease(ID) (the ULID is minted from the pinning
// process's clock and entropy), deleted by Release or, once expired, by a
// collection. Never rewritten.
type Lease struct {
	ID              ID          `json:"id"`
	Snapshot        ManifestRef `json:"snapshot"`
	Actor           string      `json:"actor"`
	ExpiresUnixNano int64       `json:"expires_unix_nano"`
	// Through makes a history lease (a change-feed consumer's,
	// maintain.PinFeed): it holds Snapshot and every later manifest of
	// Snapshot's incarnation, not only Snapshot.
	Through bool `json:"through,omitempty"`
}

// EncodeLease validates l and returns its enveloped canonical bytes.
func EncodeLease(l *Lease, token Token) ([]byte, error) {
	if err := ValidateLease(l); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(l)
	if err != nil {
		return nil, corrupt("lease", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindLease, Token: token, Payload: payload}), nil
}

// DecodeLease decodes and validates an enveloped lease. A lease of another
// format is *UnsupportedFormatError (a collector keeps what it names).
func DecodeLease(b []byte) (Lease, Token, error) {
	e, err := openRecovery(b, KindLease)
	if err != nil {
		return Lease{}, Token{}, err
	}
	var l Lease
	if err := decodeCanonical("lease", e.Payload, &l); err != nil {
		return Lease{}, Token{}, err
	}
	if err := ValidateLease(&l); err != nil {
		return Lease{}, Token{}, err
	}
	return l, e.Token, nil
}

// ValidateLease checks the structural rules of a lease.
func ValidateLease(l *Lease) error {
	bad := func(f string, a ...any) error { return corrupt("lease", f, a...) }
	if l.ID == (ID{}) {
		return bad("zero id")
	}
	if err := ValidateName(l.Snapshot.Branch); err != nil || l.Snapshot.Incarnation == 0 {
		return bad("snapshot %+v: a branch name and an incarnation >= 1 are required", l.Snapshot)
	}
	if err := ValidateText(l.Actor, ""); err != nil {
		return bad("%v", err)
	}
	return nil
}
