package format

import (
	"encoding/json"
	"strings"
)

// KindCommitIndex is the envelope kind of a commit index, the lineage aid
// of one commit. Values are part of the on-store format: never renumber.
const KindCommitIndex Kind = 10

// MaxReachEntries bounds the incarnations a commit index's reach names. A
// commit whose ancestry spans more incarnations gets an index without a
// reach (Complete false), and lookups that need one walk the manifests.
const MaxReachEntries = 1024

// CommitIndex is the lineage aid of one commit, written at
// Keys.CommitIndex(ID) by every publish attempt before its manifest write
// (overwritten by the next attempt, which targets a higher slot). It is
// never authoritative: a reader uses it only after the manifest at At shows
// commit ID, and every answer it speeds up is also derivable by walking the
// manifests, which is what readers do when it is missing or stale.
//
// Reach summarises the commit's ancestry. The first-parent chain of one
// incarnation is linear, so the ancestors of a commit are, for each
// incarnation it reaches, every commit of that incarnation up to some
// manifest version. Reach lists those (branch, incarnation, highest
// version) triples, sorted by branch then incarnation, the commit's own
// location included. It is derived from the reaches of the manifest the
// commit builds on and of its merged parent (lineage.JoinReach), so it
// rides no second source of truth. Complete is false when some input had
// no reach (history from before this aid, a legacy segment) or the join
// exceeds MaxReachEntries; Reach is then empty.
type CommitIndex struct {
	ID       ID            `json:"id"`
	At       ManifestRef   `json:"at"`
	Complete bool          `json:"complete"`
	Reach    []ManifestRef `json:"reach,omitempty"`
}

// EncodeCommitIndex validates x and returns its enveloped canonical bytes.
func EncodeCommitIndex(x *CommitIndex, token Token) ([]byte, error) {
	if err := ValidateCommitIndex(x); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(x)
	if err != nil {
		return nil, corrupt("commit-index", "marshal: %v", err)
	}
	if len(payload) > MaxPayloadBytes {
		return nil, corrupt("commit-index", "payload of %d bytes exceeds %d", len(payload), MaxPayloadBytes)
	}
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindCommitIndex, Token: token, Payload: payload}), nil
}

// DecodeCommitIndex decodes and validates an enveloped commit index.
func DecodeCommitIndex(b []byte) (CommitIndex, Token, error) {
	e, err := openCurrent(b, KindCommitIndex)
	if err != nil {
		return CommitIndex{}, Token{}, err
	}
	var x CommitIndex
	if err := decodeCanonical("commit-index", e.Payload, &x); err != nil {
		return CommitIndex{}, Token{}, err
	}
	if err := ValidateCommitIndex(&x); err != nil {
		return CommitIndex{}, Token{}, err
	}
	return x, e.Token, nil
}

// ValidateCommitIndex checks the structural rules of a commit index: a
// non-zero id, valid locations, and a complete reach that is sorted,
// unique, bounded and names At at exactly its version.
func ValidateCommitIndex(x *CommitIndex) error {
	bad := func(f string, a ...any) error { return corrupt("commit-index", f, a...) }
	if x.ID == (ID{}) {
		return bad("zero id")
	}
	if err := validRef(x.At); err != nil {
		return bad("at: %v", err)
	}
	if !x.Complete {
		if len(x.Reach) != 0 {
			return bad("an incomplete index carries %d reach entries", len(x.Reach))
		}
		return nil
	}
	if len(x.Reach) == 0 || len(x.Reach) > MaxReachEntries {
		return bad("reach of %d entries not in 1..%d", len(x.Reach), MaxReachEntries)
	}
	own := false
	for i, r := range x.Reach {
		if err := validRef(r); err != nil {
			return bad("reach[%d]: %v", i, err)
		}
		if i > 0 && CompareIncarnation(x.Reach[i-1], r) >= 0 {
			return bad("reach[%d] is not sorted after reach[%d]", i, i-1)
		}
		if r.Branch == x.At.Branch && r.Incarnation == x.At.Incarnation {
			if r.Version != x.At.Version {
				return bad("reach names its own incarnation at v%d, the commit is at v%d", r.Version, x.At.Version)
			}
			own = true
		}
	}
	if !own {
		return bad("reach does not name the commit's own incarnation")
	}
	return nil
}

func validRef(r ManifestRef) error {
	if err := ValidateName(r.Branch); err != nil {
		return err
	}
	if r.Incarnation == 0 {
		return corrupt("commit-index", "incarnation 0")
	}
	return nil
}

// CompareIncarnation orders manifest refs by branch, then incarnation,
// ignoring the version: the order of a reach.
func CompareIncarnation(a, b ManifestRef) int {
	if c := strings.Compare(a.Branch, b.Branch); c != 0 {
		return c
	}
	switch {
	case a.Incarnation < b.Incarnation:
		return -1
	case a.Incarnation > b.Incarnation:
		return 1
	}
	return 0
}
