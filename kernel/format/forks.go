package format

import (
	"encoding/json"
	"strings"

	"github.com/oklog/ulid/v2"
)

// KindForkIndex is the envelope kind of the fork index: a fork marker or
// the graph's fork-index flag (told apart by their keys and payload
// shapes). Values are part of the on-store format: never renumber.
const KindForkIndex Kind = 11

// ForkMarker records that a branch create forked incarnation Source into
// the incarnation ChildIncarnationID of branch Child. A create writes it at
// Keys.ForkMarker(Source, Child, ChildIncarnationID) before its version-0
// manifest, so every landed create (after the graph's fork index was made
// complete, see ForkIndexFlag) has its marker; the marker is named by that
// manifest (fork_of.incarnation_id, branch name, incarnation_id).
//
// A marker never proves a dependent: its create may never have landed, or
// its child may have been deleted since. Readers verify each one against
// the child's live head manifest. Only the absence of a marker under a
// source is relied on, and only once the graph carries ForkIndexFlag.
type ForkMarker struct {
	Source             ID     `json:"source"`
	Child              string `json:"child"`
	ChildIncarnationID ID     `json:"child_incarnation_id"`
}

// EncodeForkMarker validates x and returns its enveloped canonical bytes.
func EncodeForkMarker(x *ForkMarker, token Token) ([]byte, error) {
	if err := ValidateForkMarker(x); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(x)
	if err != nil {
		return nil, corrupt("fork-marker", "marshal: %v", err)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindForkIndex, Token: token, Payload: payload}), nil
}

// DecodeForkMarker decodes and validates an enveloped fork marker.
func DecodeForkMarker(b []byte) (ForkMarker, Token, error) {
	e, err := openCurrent(b, KindForkIndex)
	if err != nil {
		return ForkMarker{}, Token{}, err
	}
	var x ForkMarker
	if err := decodeCanonical("fork-marker", e.Payload, &x); err != nil {
		return ForkMarker{}, Token{}, err
	}
	if err := ValidateForkMarker(&x); err != nil {
		return ForkMarker{}, Token{}, err
	}
	return x, e.Token, nil
}

// ValidateForkMarker checks a marker's rules: non-zero ids, a valid child
// name, and a child incarnation other than its source.
func ValidateForkMarker(x *ForkMarker) error {
	bad := func(f string, a ...any) error { return corrupt("fork-marker", f, a...) }
	if x.Source == (ID{}) || x.ChildIncarnationID == (ID{}) {
		return bad("zero incarnation id")
	}
	if x.Source == x.ChildIncarnationID {
		return bad("incarnation %s forked from itself", x.Source)
	}
	if err := ValidateName(x.Child); err != nil {
		return bad("child: %v", err)
	}
	return nil
}

// ForkIndexFlag says the graph's fork markers are complete: every live
// forked incarnation has its marker. Init writes it; a read-write open of
// a graph without it (one written before fork markers) backfills the
// markers of every live fork and then writes it, create-only. Without the
// flag the dependents check of a branch delete scans every branch name.
type ForkIndexFlag struct {
	// Backfilled counts the markers the writer backfilled (0 from Init).
	Backfilled uint64
	// TimeUnixNano is the writer's injected clock when it wrote the flag.
	TimeUnixNano int64
}

type forkIndexFlagJSON struct {
	Backfilled   fixedU64 `json:"backfilled"`
	TimeUnixNano int64    `json:"time_unix_nano"`
}

// MarshalJSON encodes f with a fixed-width counter.
func (f ForkIndexFlag) MarshalJSON() ([]byte, error) {
	return json.Marshal(forkIndexFlagJSON{fixedU64(f.Backfilled), f.TimeUnixNano})
}

// UnmarshalJSON strictly decodes what MarshalJSON emits.
func (f *ForkIndexFlag) UnmarshalJSON(data []byte) error {
	var s forkIndexFlagJSON
	if err := strictUnmarshal(data, &s); err != nil {
		return err
	}
	*f = ForkIndexFlag{uint64(s.Backfilled), s.TimeUnixNano}
	return nil
}

// EncodeForkIndexFlag returns the enveloped canonical bytes of f.
func EncodeForkIndexFlag(f *ForkIndexFlag, token Token) []byte {
	payload, err := json.Marshal(f)
	if err != nil {
		panic("format: marshal fork-index flag: " + err.Error()) // a struct of two numbers
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindForkIndex, Token: token, Payload: payload})
}

// DecodeForkIndexFlag decodes an enveloped fork-index flag.
func DecodeForkIndexFlag(b []byte) (ForkIndexFlag, Token, error) {
	e, err := openCurrent(b, KindForkIndex)
	if err != nil {
		return ForkIndexFlag{}, Token{}, err
	}
	var f ForkIndexFlag
	if err := decodeCanonical("fork-index-flag", e.Payload, &f); err != nil {
		return ForkIndexFlag{}, Token{}, err
	}
	return f, e.Token, nil
}

// ForkIndexFlagKey is the key of the graph's fork-index flag
// (R/forks-complete: a sibling of the R/forks/ segment, never under it).
func (k Keys) ForkIndexFlagKey() string { return k.join("forks-complete") }

// ForkMarkersPrefix lists the fork markers of source incarnation src,
// sorted by child name, then child incarnation id.
func (k Keys) ForkMarkersPrefix(src ID) string { return k.join("forks", src.String()) + "/" }

// ForkMarker is the key of the marker of the fork of src into incarnation
// childInc of branch child: R/forks/<src>/<child>/<childInc>.
func (k Keys) ForkMarker(src ID, child string, childInc ID) string {
	return k.join("forks", src.String(), child, childInc.String())
}

// ParseForkMarkerKey returns the child name and incarnation id of a key
// under ForkMarkersPrefix(src).
func (k Keys) ParseForkMarkerKey(src ID, key string) (string, ID, error) {
	rest, ok := strings.CutPrefix(key, k.ForkMarkersPrefix(src))
	if !ok {
		return "", ID{}, corrupt("key", "%q is not under %q", key, k.ForkMarkersPrefix(src))
	}
	child, inc, ok := strings.Cut(rest, "/")
	if !ok || ValidateName(child) != nil {
		return "", ID{}, corrupt("key", "fork marker key %q does not name a child branch", key)
	}
	id, err := ulid.ParseStrict(inc)
	if err != nil || id.String() != inc {
		return "", ID{}, corrupt("key", "fork marker key %q does not end in an incarnation id", key)
	}
	return child, id, nil
}
