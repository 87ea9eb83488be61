package gc

import (
	"errors"
	"fmt"
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// ErrReachUnknown is what a MergeBaseKeep loader answers for a manifest
// whose reach it cannot read (no complete, verified commit index): the
// pair that needs it is counted as unknown, not guessed.
var ErrReachUnknown = errors.New("gc: reach unknown")

// MaxBaseChecks bounds the work of one MergeBaseKeep call: live pairs
// plus reach loads. Past it the call stops and falls back (exact false).
const MaxBaseChecks = 1 << 22

// maxBaseChecks is MaxBaseChecks, lowered by a test of the fallback.
var maxBaseChecks = MaxBaseChecks

// BaseKeep is the outcome of MergeBaseKeep.
type BaseKeep struct {
	// Keep: the manifests to keep as roots, sorted by incarnation, then
	// version descending.
	Keep []format.ManifestRef
	// Unknown counts live pairs whose merge base needed a reach that
	// could not be read, or a manifest already collected.
	Unknown int
	// Exact is false when the work passed MaxBaseChecks: Keep then also
	// holds every position and fold every live head's reach names.
	Exact bool
}

// PairMemo remembers, across collections, which manifests one live pair's
// merge-base search loaded (MergeBaseKeep). The search is a pure function
// of the two heads (immutable manifests) and of its loads, which are
// verified reaches of immutable manifests: replaying its list gives the
// same keep as running it again, provided every manifest on the list is
// still there (a memo must answer ok only then; one gone means the pair
// must be searched again, to count it unknown).
type PairMemo interface {
	// Pair returns the manifests the search of heads a and b loaded.
	Pair(a, b format.ManifestRef) (loaded []format.ManifestRef, ok bool)
	// SetPair records them (a search whose every load was readable).
	SetPair(a, b format.ManifestRef, loaded []format.ManifestRef)
}

// MergeBaseKeep returns what rule 3b keeps (docs/gc.md): for every pair of
// live heads, every manifest lineage.ReachMergeBase loads to answer the
// pair's merge base — the folds it expands, the candidates it accepts
// (the base among them) and the folds its domination checks open — and
// for each, and for each live head, the manifest holding its head commit. A MergeBase of the pair
// reads exactly those, so after the collection it answers as before.
// load is the collector's verified loader (ErrReachUnknown for a manifest
// without a readable reach); an error other than a pair's unknown or
// missing reach is returned as is. memo (nil: none) replays a pair
// searched before with the same heads instead of searching it again, so
// a collection searches only the pairs whose heads moved.
func MergeBaseKeep(heads []lineage.Reach, load lineage.ReachLoader, memo PairMemo) (BaseKeep, error) {
	return MergeBaseKeepHinted(heads, load, memo, nil)
}

// MergeBaseKeepHinted is MergeBaseKeep whose searches tell hint (nil:
// nobody) the folds they are about to expand (lineage.ReachHint), so the
// loader may read them ahead; what it keeps does not depend on hint.
func MergeBaseKeepHinted(heads []lineage.Reach, load lineage.ReachLoader, memo PairMemo, hint lineage.ReachHint) (BaseKeep, error) {
	kept := map[format.ManifestRef]bool{}
	work := 0
	var pair []format.ManifestRef // the current pair's loads
	rec := func(at format.ManifestRef) (lineage.Reach, bool, error) {
		if work++; work > maxBaseChecks {
			return lineage.Reach{}, false, errTooMuch
		}
		r, found, err := load(at)
		if err == nil && found {
			kept[r.At], kept[r.HeadAt] = true, true
			pair = append(pair, r.At, r.HeadAt)
		}
		return r, found, err
	}
	for _, h := range heads {
		kept[h.HeadAt] = true // a commit-less head's fork commit: reading the head's index verifies it there
	}
	out := BaseKeep{Exact: true}
	for i := range heads {
		for j := i + 1; j < len(heads); j++ {
			if work++; work > maxBaseChecks {
				return fallback(heads, kept), nil
			}
			a, b := heads[i].At, heads[j].At
			if memo != nil {
				if loaded, ok := memo.Pair(a, b); ok {
					for _, at := range loaded {
						kept[at] = true
					}
					continue
				}
			}
			pair = pair[:0]
			_, err := lineage.ReachMergeBaseOpenAllHinted(heads[i], heads[j], rec, hint)
			switch {
			case errors.Is(err, errTooMuch):
				return fallback(heads, kept), nil
			case err == nil, errors.Is(err, lineage.ErrNoCommonAncestor):
				if memo != nil {
					memo.SetPair(a, b, sortedRefs(setOf(pair)))
				}
			case errors.Is(err, ErrReachUnknown), errors.Is(err, lineage.ErrReachMissing), errors.Is(err, lineage.ErrReachTooDeep):
				out.Unknown++
			default:
				return BaseKeep{}, fmt.Errorf("merge base of live heads %v and %v: %w", a, b, err)
			}
		}
	}
	out.Keep = sortedRefs(kept)
	return out, nil
}

func setOf(refs []format.ManifestRef) map[format.ManifestRef]bool {
	s := make(map[format.ManifestRef]bool, len(refs))
	for _, r := range refs {
		s[r] = true
	}
	return s
}

var errTooMuch = errors.New("gc: merge-base work past MaxBaseChecks")

// fallback keeps what was recorded plus every position and fold the live
// heads' reaches name (if in doubt, keep).
func fallback(heads []lineage.Reach, kept map[format.ManifestRef]bool) BaseKeep {
	for _, h := range heads {
		for _, e := range h.Explicit {
			kept[e.ManifestRef] = true
		}
		for _, f := range h.Folds {
			kept[f.ManifestRef] = true
		}
	}
	return BaseKeep{Keep: sortedRefs(kept), Exact: false}
}

func sortedRefs(set map[format.ManifestRef]bool) []format.ManifestRef {
	out := make([]format.ManifestRef, 0, len(set))
	for r := range set { //detlint:ordered sorted next
		out = append(out, r)
	}
	slices.SortFunc(out, compareTip)
	return out
}

// compareTip orders by incarnation, then version descending.
func compareTip(a, b format.ManifestRef) int {
	if c := format.CompareIncarnation(a, b); c != 0 {
		return c
	}
	switch {
	case a.Version > b.Version:
		return -1
	case a.Version < b.Version:
		return 1
	}
	return 0
}
