package format

import (
	"strings"
)

// KindCommitIndex is the envelope kind of a commit index, the lineage aid
// of one commit. Values are part of the on-store format: never renumber.
const KindCommitIndex Kind = 10

// MaxReachEntries bounds the explicit entries of a commit index's reach
// (legacy flat reaches included). A writer compacts its reach into folds
// long before (kernel.Options.ReachEntries, default 64).
const MaxReachEntries = 1024

// MaxReachFolds bounds the folds of a commit index's reach.
const MaxReachFolds = 64

// ReachEntry is one position of a reach: a manifest and the generation of
// its head commit (0: unknown, an entry copied from a legacy index).
type ReachEntry struct {
	ManifestRef
	Gen uint64 `json:"gen,omitempty"`
}

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
// manifest version. The full reach is Reach (explicit entries, sorted by
// branch then incarnation, the commit's own location included) plus the
// full reach of every manifest in Folds, recursively (docs/format.md,
// "Commit index reach"). Gen is the commit's generation, greater than
// every ancestor's. It is derived from the reaches of the manifest the
// commit builds on and of its merged parent (lineage.JoinReach), so it
// rides no second source of truth. Complete is false when some input had
// no reach (history from before this aid, a legacy segment); Reach is then
// empty. A legacy index (Complete, Gen 0) has a flat Reach and no folds.
type CommitIndex struct {
	ID       ID           `json:"id"`
	At       ManifestRef  `json:"at"`
	Complete bool         `json:"complete"`
	Reach    []ReachEntry `json:"reach,omitempty"`
	Gen      uint64       `json:"gen,omitempty"`
	Folds    []ReachEntry `json:"folds,omitempty"`
}

// EncodeCommitIndex validates x and returns its enveloped canonical bytes.
func EncodeCommitIndex(x *CommitIndex, token Token) ([]byte, error) {
	if err := ValidateCommitIndex(x); err != nil {
		return nil, err
	}
	payload := appendCommitIndex(make([]byte, 0, 256+128*(len(x.Reach)+len(x.Folds))), x) // json.Marshal(x)'s bytes (jsonappend.go)
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
	if err := decodeCommitIndexPayload(e.Payload, &x); err != nil {
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
		if len(x.Reach) != 0 || len(x.Folds) != 0 || x.Gen != 0 {
			return bad("an incomplete index carries %d reach entries, %d folds, gen %d", len(x.Reach), len(x.Folds), x.Gen)
		}
		return nil
	}
	if err := validateFolds(x); err != nil {
		return err
	}
	if len(x.Reach) == 0 || len(x.Reach) > MaxReachEntries {
		return bad("reach of %d entries not in 1..%d", len(x.Reach), MaxReachEntries)
	}
	own := false
	for i, r := range x.Reach {
		if err := validRef(r.ManifestRef); err != nil {
			return bad("reach[%d]: %v", i, err)
		}
		if i > 0 && CompareIncarnation(x.Reach[i-1].ManifestRef, r.ManifestRef) >= 0 {
			return bad("reach[%d] is not sorted after reach[%d]", i, i-1)
		}
		if x.Gen == 0 && r.Gen != 0 {
			return bad("reach[%d] of a legacy index carries gen %d", i, r.Gen)
		}
		if r.Gen > x.Gen {
			return bad("reach[%d] has gen %d above the commit's %d", i, r.Gen, x.Gen)
		}
		if r.Branch == x.At.Branch && r.Incarnation == x.At.Incarnation {
			if r.Version != x.At.Version || r.Gen != x.Gen {
				return bad("reach names its own incarnation at v%d gen %d, the commit is at v%d gen %d", r.Version, r.Gen, x.At.Version, x.Gen)
			}
			own = true
		}
	}
	if !own {
		return bad("reach does not name the commit's own incarnation")
	}
	return nil
}

// validateFolds checks a complete index's folds: none in a legacy index
// (Gen 0), at most MaxReachFolds, sorted and unique by incarnation, each of
// a known gen below the commit's.
func validateFolds(x *CommitIndex) error {
	bad := func(f string, a ...any) error { return corrupt("commit-index", f, a...) }
	if x.Gen == 0 && len(x.Folds) != 0 {
		return bad("a legacy index (gen 0) carries %d folds", len(x.Folds))
	}
	if len(x.Folds) > MaxReachFolds {
		return bad("%d folds exceed %d", len(x.Folds), MaxReachFolds)
	}
	for i, f := range x.Folds {
		if err := validRef(f.ManifestRef); err != nil {
			return bad("folds[%d]: %v", i, err)
		}
		if f.Gen == 0 || f.Gen >= x.Gen {
			return bad("folds[%d] has gen %d, not in 1..%d", i, f.Gen, x.Gen-1)
		}
		if i > 0 && CompareIncarnation(x.Folds[i-1].ManifestRef, f.ManifestRef) >= 0 {
			return bad("folds[%d] is not sorted after folds[%d]", i, i-1)
		}
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
