package format

import (
	"encoding/json"
	"strings"
)

// KindIncarnationFloor is the envelope kind of an incarnation floor
// (docs/gc.md rule 1a). Values are part of the on-store format: never
// renumber.
const KindIncarnationFloor Kind = 15

// IncarnationFloor is a lower bound on the incarnation number of any
// branch incarnation created from now on under a name that has no
// manifest: a collection writes it, create-only at
// Keys.IncarnationFloor(Floor), before it deletes the tombstone of a dead
// name (Floor = 1 + the highest incarnation number it deletes), so a
// re-created name never reuses an incarnation number. The newest floor
// (the first key under Keys.IncarnationFloorPrefix) is the one that counts.
type IncarnationFloor struct {
	Floor        uint64
	TimeUnixNano int64 // the writer's injected clock
}

type incarnationFloorJSON struct {
	Floor        fixedU64 `json:"floor"`
	TimeUnixNano int64    `json:"time_unix_nano"`
}

// MarshalJSON encodes f with a fixed-width counter.
func (f IncarnationFloor) MarshalJSON() ([]byte, error) {
	return json.Marshal(incarnationFloorJSON{fixedU64(f.Floor), f.TimeUnixNano})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (f *IncarnationFloor) UnmarshalJSON(data []byte) error {
	var s incarnationFloorJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*f = IncarnationFloor{uint64(s.Floor), s.TimeUnixNano}
	return nil
}

// EncodeIncarnationFloor returns the enveloped canonical bytes of f; a
// floor below 2 is refused (1 is every name's first incarnation anyway).
func EncodeIncarnationFloor(f *IncarnationFloor, token Token) ([]byte, error) {
	if f.Floor < 2 {
		return nil, corrupt("incarnation-floor", "floor %d below 2", f.Floor)
	}
	payload, err := json.Marshal(f)
	if err != nil {
		return nil, corrupt("incarnation-floor", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindIncarnationFloor, Token: token, Payload: payload}), nil
}

// DecodeIncarnationFloor decodes an enveloped incarnation floor.
func DecodeIncarnationFloor(b []byte) (IncarnationFloor, Token, error) {
	e, err := openCurrent(b, KindIncarnationFloor)
	if err != nil {
		return IncarnationFloor{}, Token{}, err
	}
	var f IncarnationFloor
	if err := decodeCanonical("incarnation-floor", e.Payload, &f); err != nil {
		return IncarnationFloor{}, Token{}, err
	}
	if f.Floor < 2 {
		return IncarnationFloor{}, Token{}, corrupt("incarnation-floor", "floor %d below 2", f.Floor)
	}
	return f, e.Token, nil
}

// IncarnationFloorPrefix lists the incarnation floors, highest first.
func (k Keys) IncarnationFloorPrefix() string { return k.join("incarnation-floor") + "/" }

// IncarnationFloor is the key of floor n: inverted, so LIST limit 1 of the
// prefix returns the highest.
func (k Keys) IncarnationFloor(n uint64) string { return k.join("incarnation-floor", Invert(n)) }

// ParseIncarnationFloorKey returns the floor a key names.
func (k Keys) ParseIncarnationFloorKey(key string) (uint64, error) {
	rest, ok := strings.CutPrefix(key, k.IncarnationFloorPrefix())
	if !ok || strings.Contains(rest, "/") {
		return 0, corrupt("key", "%q is not an incarnation floor", key)
	}
	n, err := ParseInverted(rest)
	if err != nil {
		return 0, err
	}
	if n < 2 {
		return 0, corrupt("key", "incarnation floor %q below 2", key)
	}
	return n, nil
}
