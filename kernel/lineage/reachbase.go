package lineage

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// MaxReachLoads bounds the reaches one ReachMergeBase loads (fold
// expansions, candidates and domination checks together).
const MaxReachLoads = 1 << 14

var (
	// ErrReachTooDeep: a merge base needed more than MaxReachLoads loads.
	ErrReachTooDeep = errors.New("lineage: merge base needs too many reach loads")
	// ErrReachMissing: a manifest the merge base needs was collected.
	ErrReachMissing = errors.New("lineage: a manifest the merge base needs is gone")
	// ErrNoCommonAncestor: the two reaches share no commit.
	ErrNoCommonAncestor = errors.New("lineage: no common ancestor")
)

// ReachError is a merge base that cannot be answered: Err is
// ErrReachTooDeep or ErrReachMissing (then At is the manifest gone).
type ReachError struct {
	At  format.ManifestRef
	Err error
}

func (e *ReachError) Error() string {
	return fmt.Sprintf("%v (%s#%d v%d)", e.Err, e.At.Branch, e.At.Incarnation, e.At.Version)
}

func (e *ReachError) Unwrap() error { return e.Err }

// ReachLoader loads the verified reach of manifest at (Reach.ForManifest of
// its head commit's index). found=false means the manifest (or its head
// commit's manifest) is gone: collected. Any error is passed through.
type ReachLoader func(at format.ManifestRef) (r Reach, found bool, err error)

// ReachHint is told, before the search loads one of them, the folds it
// will expand unless the other side covers them first (every uncovered
// fold, each named once, in gen order, highest first, and only when there
// are two or more): a loader may read them ahead in one batch. It decides
// nothing, and the search's answer never depends on it.
type ReachHint func(ats []format.ManifestRef)

// ReachMergeBaseHinted is ReachMergeBase telling hint (nil: nobody) the
// folds it is about to expand.
func ReachMergeBaseHinted(a, b Reach, load ReachLoader, hint ReachHint) (Reach, error) {
	return reachMergeBase(a, b, load, true, hint)
}

// ReachMergeBase returns the reach of the manifest holding the best common
// ancestor of the head commits of a and b, exactly lineage.MergeBase's
// answer over the full commit graph (docs/format.md, "Commit index reach",
// with the proof): the common ancestor no other common ancestor descends
// from, the greatest id among several (criss-cross). It loads only the
// folds it must expand, the candidates it accepts and the folds a
// domination check opens. Errors: ErrNoCommonAncestor, a *ReachError
// (ErrReachMissing: a manifest it needs is collected; ErrReachTooDeep), or
// the loader's.
func ReachMergeBase(a, b Reach, load ReachLoader) (Reach, error) {
	return reachMergeBase(a, b, load, true, nil)
}

// ReachMergeBaseOpenAll is ReachMergeBase without leaving any fold
// unopened (no outsideOther): it loads a superset of what ReachMergeBase
// loads for the same pair. The collector's merge-base keep (docs/gc.md
// rule 3b) runs it, so what it keeps for a live pair does not depend on
// the shortcut (gc.TestMergeBaseKeepKeepsWhatMergeBaseNeeds: the
// shortcut's smaller loads left a later merge of a pair without a
// manifest it then needed).
func ReachMergeBaseOpenAll(a, b Reach, load ReachLoader) (Reach, error) {
	return reachMergeBase(a, b, load, false, nil)
}

// ReachMergeBaseOpenAllHinted is ReachMergeBaseOpenAll telling hint (nil:
// nobody) the folds it is about to expand.
func ReachMergeBaseOpenAllHinted(a, b Reach, load ReachLoader, hint ReachHint) (Reach, error) {
	return reachMergeBase(a, b, load, false, hint)
}

func reachMergeBase(a, b Reach, load ReachLoader, shortcut bool, hint ReachHint) (Reach, error) {
	s := &search{load: load, loaded: map[format.ManifestRef]loadResult{}, noShortcut: !shortcut, hint: hint}
	s.loaded[a.At] = loadResult{r: a, found: true}
	s.loaded[b.At] = loadResult{r: b, found: true}
	sa, sb := newSide(a), newSide(b)
	switch {
	case !shortcut:
	case sa.holds(b.HeadAt):
		return b, nil // b's head commit is an ancestor of a's: the one best common ancestor
	case sb.holds(a.HeadAt):
		return a, nil
	}
	if err := s.expand(sa, sb); err != nil {
		return Reach{}, err
	}
	accepted, err := s.accept(candidates(sa, sb))
	if err != nil {
		return Reach{}, err
	}
	for _, x := range [2]*side{sa, sb} {
		for _, d := range x.missing {
			if err := s.mustReach(accepted, d, x.parent); err != nil {
				return Reach{}, err
			}
		}
	}
	if len(accepted) == 0 {
		return Reach{}, ErrNoCommonAncestor
	}
	best := accepted[0]
	for _, u := range accepted[1:] {
		if u.ID.Compare(best.ID) > 0 {
			best = u
		}
	}
	return best, nil
}

// side is one head's partial knowledge: known ⊆ its reach, and its reach
// = known ∪ the reaches of folds ∪ the reaches of missing.
type side struct {
	known    []format.ReachEntry
	folds    []format.ReachEntry // not expanded
	expanded []format.ReachEntry // expanded folds
	missing  []format.ReachEntry // collected folds, set aside
	// outside are folds no common ancestor needs (outsideOther): left
	// unexpanded and not candidates.
	outside []format.ReachEntry
	// parent maps each fold to the manifest (an expanded fold, or the
	// head) whose reach named it first: R(fold) ⊆ R(parent).
	parent map[format.ManifestRef]format.ReachEntry
	// foldAt holds, per incarnation, the highest position of any fold
	// this side ever named (unexpanded, expanded, set aside or outside):
	// a fold's own position lies in the side's reach, and so does every
	// earlier version of its incarnation.
	foldAt []format.ReachEntry
	// named holds the folds in folds, expanded or missing (not outside):
	// each is opened once per side.
	named map[format.ReachEntry]bool
}

func newSide(r Reach) *side {
	x := &side{known: slices.Clone(r.Explicit), folds: slices.Clone(r.Folds), parent: map[format.ManifestRef]format.ReachEntry{},
		named: map[format.ReachEntry]bool{}}
	for _, f := range r.Folds {
		x.parent[f.ManifestRef] = r.Entry()
		x.named[f] = true
	}
	x.foldAt = mergeEntries(nil, r.Folds)
	return x
}

// holds reports that position at lies in x's reach as far as x's partial
// knowledge shows: a known position, or at or below (in its incarnation)
// a fold x named. A fold of the other side that x holds is covered: its
// whole reach is common, so it is a candidate and never needs opening
// (docs/format.md, "Commit index reach", step 2).
func (x *side) holds(at format.ManifestRef) bool {
	return covers(x.known, at) || covers(x.foldAt, at)
}

type loadResult struct {
	r     Reach
	found bool
}

// search is one merge base computation.
type search struct {
	load   ReachLoader
	loaded map[format.ManifestRef]loadResult
	loads  int
	// noShortcut opens every uncovered fold (ReachMergeBaseOpenAll).
	noShortcut bool
	// hint (nil: none) is told the uncovered folds before a load;
	// hinted holds those it was told of.
	hint   ReachHint
	hinted map[format.ManifestRef]bool
}

// get loads at once per computation, within MaxReachLoads.
func (s *search) get(at format.ManifestRef) (Reach, bool, error) {
	if l, ok := s.loaded[at]; ok {
		return l.r, l.found, nil
	}
	if s.loads++; s.loads > MaxReachLoads {
		return Reach{}, false, &ReachError{At: at, Err: ErrReachTooDeep}
	}
	r, found, err := s.load(at)
	if err != nil {
		return Reach{}, false, err
	}
	if found && (r.At != at || r.Gen == 0) {
		panic(fmt.Sprintf("lineage: reach loader answered %v (gen %d) for %v", r.At, r.Gen, at))
	}
	s.loaded[at] = loadResult{r: r, found: found}
	return r, found, nil
}

// expand opens uncovered folds, highest gen first, until every fold left
// on either side lies in the other side's known positions.
func (s *search) expand(a, b *side) error {
	for step := 0; ; step++ {
		if step > MaxReachLoads {
			return &ReachError{At: a.known[0].ManifestRef, Err: ErrReachTooDeep}
		}
		if !s.noShortcut {
			setOutside(a, b)
			setOutside(b, a)
		}
		x, i := pickUncovered(a, b)
		if x == nil {
			return nil
		}
		s.hintUncovered(a, b)
		q := x.folds[i]
		x.folds = slices.Delete(x.folds, i, i+1)
		r, found, err := s.get(q.ManifestRef)
		if err != nil {
			return err
		}
		if !found {
			x.missing = append(x.missing, q)
			continue
		}
		x.known = insertEntries(x.known, r.Explicit)
		x.expanded = append(x.expanded, q)
		for _, f := range r.Folds {
			// Each fold is opened once per side. (A fold below an
			// expanded one of its incarnation is not dropped: the
			// expanded one may reach it only through that very fold.)
			if !x.named[f] {
				x.named[f] = true
				x.folds = append(x.folds, f)
				x.foldAt = insertEntries(x.foldAt, []format.ReachEntry{f})
				if _, ok := x.parent[f.ManifestRef]; !ok {
					x.parent[f.ManifestRef] = q
				}
			}
		}
	}
}

// hintUncovered tells s.hint the uncovered folds of both sides it has not
// told of and the search has not loaded, highest gen first, when there
// are two or more.
func (s *search) hintUncovered(a, b *side) {
	if s.hint == nil {
		return
	}
	var fs []format.ReachEntry
	for _, p := range [2][2]*side{{a, b}, {b, a}} {
		for _, f := range p[0].folds {
			if _, ok := s.loaded[f.ManifestRef]; !ok && !s.hinted[f.ManifestRef] && !p[1].holds(f.ManifestRef) {
				fs = append(fs, f)
			}
		}
	}
	if len(fs) < 2 {
		return
	}
	slices.SortFunc(fs, func(x, y format.ReachEntry) int { return compareGenPos(y, x) })
	fs = slices.CompactFunc(fs, func(x, y format.ReachEntry) bool { return x.ManifestRef == y.ManifestRef })
	if s.hinted == nil {
		s.hinted = map[format.ManifestRef]bool{}
	}
	ats := make([]format.ManifestRef, len(fs))
	for i, f := range fs {
		ats[i] = f.ManifestRef
		s.hinted[f.ManifestRef] = true
	}
	s.hint(ats)
}

// setOutside moves y's uncovered folds that outsideOther proves hold no
// common ancestor of their own out of y.folds.
func setOutside(y, x *side) {
	y.folds = slices.DeleteFunc(y.folds, func(f format.ReachEntry) bool {
		if x.holds(f.ManifestRef) || !outsideOther(f, x, y) {
			return false
		}
		y.outside = append(y.outside, f)
		delete(y.named, f)
		return true
	})
}

// outsideOther reports that fold f of side y need not be opened: every
// fold of the other side x is covered by y's known positions (so common:
// a candidate that dominates whatever common ancestor lies in its reach),
// and every known position of x that y does not know is version 1 of its
// incarnation (its only earlier position, the commit-less version 0,
// stands for a commit of another incarnation that x knows or folds; not
// so main#1, whose version 0 is the genesis commit) with
// a gen f's reach cannot hold (a position of f's reach other than f has a
// lower gen). Then a common ancestor in f's reach is in x's reach only as
// a position y knows or under a covered fold of x: f adds no candidate.
// This keeps the merge base of a branch forked a moment ago from opening
// its source's older history (the branch-per-change cycle).
func outsideOther(f format.ReachEntry, x, y *side) bool {
	if f.Gen == 0 {
		return false
	}
	for _, g := range x.folds {
		if !covers(y.known, g.ManifestRef) {
			return false
		}
	}
	if len(x.missing) != 0 {
		return false
	}
	for _, e := range x.known {
		if covers(y.known, e.ManifestRef) {
			continue
		}
		if e.Version != 1 || isGenesisIncarnation(e.ManifestRef) || e.Gen == 0 || e.Gen < f.Gen || e.Gen == f.Gen && e.ManifestRef == f.ManifestRef {
			return false
		}
	}
	return true
}

// isGenesisIncarnation: at is a position of main#1, the incarnation whose
// version 0 holds the genesis commit.
func isGenesisIncarnation(at format.ManifestRef) bool {
	return at.Branch == format.MainBranch && at.Incarnation == 1
}

// pickUncovered returns the side and index of the uncovered fold with the
// highest gen (ties by position, so the order is deterministic).
func pickUncovered(a, b *side) (*side, int) {
	var bestSide *side
	best := -1
	for _, p := range [2][2]*side{{a, b}, {b, a}} {
		x, other := p[0], p[1]
		for i, f := range x.folds {
			if other.holds(f.ManifestRef) {
				continue
			}
			if best < 0 || compareGenPos(f, bestSide.folds[best]) > 0 {
				bestSide, best = x, i
			}
		}
	}
	return bestSide, best
}

// compareGenPos orders entries by gen, then position.
func compareGenPos(a, b format.ReachEntry) int {
	if c := cmp.Compare(a.Gen, b.Gen); c != 0 {
		return c
	}
	if c := format.CompareIncarnation(a.ManifestRef, b.ManifestRef); c != 0 {
		return c
	}
	return cmp.Compare(a.Version, b.Version)
}

// candidates are the positions whose head commits include every best
// common ancestor: per incarnation both sides know, the lower position,
// and every fold left unexpanded (all covered). No duplicates.
func candidates(a, b *side) []format.ReachEntry {
	var out []format.ReachEntry
	for _, e := range a.known {
		if o, ok := lookup(b.known, e.ManifestRef); ok {
			if o.Version < e.Version {
				e = o
			}
			if e.Version == 0 && e.Gen > 1 {
				// A commit-less version 0 (only the genesis, gen 1,
				// holds a commit at version 0): its fork commit is
				// known to both sides in its own incarnation.
				continue
			}
			out = append(out, e)
		}
	}
	out = append(out, a.folds...)
	out = append(out, b.folds...)
	slices.SortFunc(out, func(x, y format.ReachEntry) int { return compareGenPos(y, x) })
	return slices.CompactFunc(out, func(x, y format.ReachEntry) bool { return x.ManifestRef == y.ManifestRef })
}

// accept decides the candidates, highest gen first: one an accepted
// candidate reaches is dominated, any other is a best common ancestor
// (loaded; a collected one is ErrReachMissing). Candidates of unknown gen
// (legacy entries) are loaded first for theirs.
func (s *search) accept(cands []format.ReachEntry) ([]Reach, error) {
	for i, c := range cands {
		if c.Gen != 0 {
			continue
		}
		r, found, err := s.get(c.ManifestRef)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &ReachError{At: c.ManifestRef, Err: ErrReachMissing} // undecidable without it
		}
		cands[i].Gen = r.Gen
	}
	slices.SortStableFunc(cands, func(x, y format.ReachEntry) int { return compareGenPos(y, x) })
	var accepted []Reach
	root := false // a collected candidate of gen 1 at version 0 was skipped
	for _, t := range cands {
		dominated, err := s.anyReaches(accepted, t)
		if err != nil {
			return nil, err
		}
		if dominated {
			continue
		}
		r, found, err := s.get(t.ManifestRef)
		if err != nil {
			return nil, err
		}
		if !found && t.Version == 0 && t.Gen == 1 {
			root = true // the genesis, or a fork of it: every commit descends from the genesis
			continue
		}
		if !found {
			return nil, &ReachError{At: t.ManifestRef, Err: ErrReachMissing}
		}
		if r.HeadAt != r.At {
			// A commit-less version 0 stands for its fork commit: an
			// accepted candidate may reach that commit, not the position.
			head := format.ReachEntry{ManifestRef: r.HeadAt, Gen: r.Gen}
			if dominated, err = s.anyReaches(accepted, head); err != nil || dominated {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		if !slices.ContainsFunc(accepted, func(u Reach) bool { return u.ID == r.ID }) {
			accepted = append(accepted, r)
		}
	}
	if root && len(accepted) == 0 {
		return nil, &ReachError{At: format.ManifestRef{Branch: format.MainBranch, Incarnation: 1}, Err: ErrReachMissing}
	}
	return accepted, nil
}

// mustReach is nil when some accepted reach contains d (a fold set aside
// as collected: whatever it held is dominated), else ErrReachMissing. It
// suffices that an accepted reach contains a manifest on d's parent chain
// (the expanded folds that named it, up to the head): R(d) lies within
// each of their reaches. So a collected fold below a reached one needs no
// manifest of its own (docs/format.md, "Commit index reach", step 5).
func (s *search) mustReach(accepted []Reach, d format.ReachEntry, parent map[format.ManifestRef]format.ReachEntry) error {
	for x, steps := d, 0; steps <= len(parent); steps++ {
		ok, err := s.anyReaches(accepted, x)
		if err != nil && !errors.Is(err, ErrReachMissing) {
			return err
		}
		if ok {
			return nil
		}
		p, has := parent[x.ManifestRef]
		if !has {
			break
		}
		x = p
	}
	return &ReachError{At: d.ManifestRef, Err: ErrReachMissing}
}

func (s *search) anyReaches(us []Reach, t format.ReachEntry) (bool, error) {
	for _, u := range us {
		ok, err := s.reaches(u, t, map[format.ManifestRef]bool{})
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// reaches reports whether reach u contains position t: u's explicit
// entries, else recursively the folds of u whose gen is at least t's (a
// fold of lower gen cannot hold t; gen 0 is unknown, never pruned). True
// only on a path of loaded reaches; false with ErrReachMissing when no
// such path shows t but a collected fold on the way might hold it (the
// answer is unknown).
func (s *search) reaches(u Reach, t format.ReachEntry, seen map[format.ManifestRef]bool) (bool, error) {
	var missing error
	if covers(u.Explicit, t.ManifestRef) {
		return true, nil
	}
	for _, f := range u.Folds {
		if f.Gen != 0 && t.Gen != 0 && f.Gen < t.Gen || seen[f.ManifestRef] {
			continue
		}
		seen[f.ManifestRef] = true
		if f.Incarnation == t.Incarnation && f.Branch == t.Branch && f.Version >= t.Version {
			return true, nil
		}
		r, found, err := s.get(f.ManifestRef)
		if err != nil {
			return false, err
		}
		if !found {
			// Unknown through this fold; another fold may still show it.
			missing = cmp.Or(missing, error(&ReachError{At: f.ManifestRef, Err: ErrReachMissing}))
			continue
		}
		ok, err := s.reaches(r, t, seen)
		switch {
		case ok:
			return true, nil
		case errors.Is(err, ErrReachMissing):
			missing = cmp.Or(missing, err)
		case err != nil:
			return false, err
		}
	}
	return false, missing
}
