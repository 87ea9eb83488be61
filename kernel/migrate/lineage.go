package migrate

import (
	"errors"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// ErrNoLineage: a v3 incarnation has neither a legacy commit nor a fork
// point, so it has no head (its genesis commit, v3's second write, was never
// stored). It matches format.ErrCorrupt: nothing can be folded or read.
var ErrNoLineage = fmt.Errorf("migrate: v3 branch incarnation has no legacy lineage and no fork point: %w", format.ErrCorrupt)

// ErrNotLegacy: a fold was asked of a manifest that is not format 3.
var ErrNotLegacy = errors.New("migrate: manifest is not a v3 manifest")

// ErrTooLarge: the folded lineage would not fit in one manifest
// (format.MaxPayloadBytes or format.MaxLegacyCommits). Nothing is written.
var ErrTooLarge = errors.New("migrate: legacy lineage too large to fold into one manifest")

// Lineage is an immutable, indexed view of the legacy lineage of one branch
// incarnation. Slices it returns must not be modified.
type Lineage struct {
	byID     []format.LegacyCommit // ascending id
	byRecent []format.LegacyCommit // v3 head rule order: newest first
}

// NewLineage validates commits (each valid, ids unique, none claiming a
// manifest version above latest, at most format.MaxLegacyCommits) and
// indexes a copy of them. Invalid input matches format.ErrCorrupt.
func NewLineage(commits []format.LegacyCommit, latest uint64) (*Lineage, error) {
	if len(commits) > format.MaxLegacyCommits {
		return nil, fmt.Errorf("%w: %d legacy commits exceeds %d", ErrTooLarge, len(commits), format.MaxLegacyCommits)
	}
	l := &Lineage{byID: cloneCommits(commits)}
	sort.Slice(l.byID, func(i, j int) bool { return l.byID[i].ID.Compare(l.byID[j].ID) < 0 })
	for i := range l.byID {
		c := &l.byID[i]
		if err := format.ValidateLegacyCommit(c); err != nil {
			return nil, fmt.Errorf("legacy lineage: %v: %w", err, format.ErrCorrupt)
		}
		if i > 0 && l.byID[i-1].ID == c.ID {
			return nil, fmt.Errorf("legacy lineage: commit %s twice: %w", c.ID, format.ErrCorrupt)
		}
		if c.ManifestVersion > latest {
			return nil, fmt.Errorf("legacy lineage: commit %s claims manifest version %d beyond the newest %d: %w",
				c.ID, c.ManifestVersion, latest, format.ErrCorrupt)
		}
	}
	l.byRecent = cloneCommits(l.byID)
	sort.Slice(l.byRecent, func(i, j int) bool { return l.byRecent[i].NewerThan(&l.byRecent[j]) })
	return l, nil
}

func cloneCommits(cs []format.LegacyCommit) []format.LegacyCommit {
	out := make([]format.LegacyCommit, len(cs))
	for i, c := range cs {
		c.Parents = append([]format.ID(nil), c.Parents...)
		out[i] = c
	}
	return out
}

// Len returns the number of legacy commits.
func (l *Lineage) Len() int { return len(l.byID) }

// Commits returns every legacy commit in ascending id order (the fold's
// deterministic order).
func (l *Lineage) Commits() []format.LegacyCommit { return l.byID }

// Find returns the commit with id.
func (l *Lineage) Find(id format.ID) (format.LegacyCommit, bool) {
	i := sort.Search(len(l.byID), func(i int) bool { return l.byID[i].ID.Compare(id) >= 0 })
	if i < len(l.byID) && l.byID[i].ID == id {
		return l.byID[i], true
	}
	return format.LegacyCommit{}, false
}

// UpTo returns the commits published at manifest version v or earlier,
// newest first under the v3 head rule (manifest version descending, then id
// descending): the history of the incarnation as seen from version v.
func (l *Lineage) UpTo(v uint64) []format.LegacyCommit {
	i := sort.Search(len(l.byRecent), func(i int) bool { return l.byRecent[i].ManifestVersion <= v })
	return l.byRecent[i:]
}

// HeadAt returns the v3 head as of manifest version v: the newest commit of
// UpTo(v). ok=false when there is none (the head is then the fork commit).
func (l *Lineage) HeadAt(v uint64) (format.ID, bool) {
	if s := l.UpTo(v); len(s) > 0 {
		return s[0].ID, true
	}
	return format.ID{}, false
}

// HeadOf returns the head of the v3 incarnation whose manifest m (any
// version) is: HeadAt(m.Version), else m's fork commit, else ErrNoLineage.
func (l *Lineage) HeadOf(m *format.Manifest) (format.ID, error) {
	if h, ok := l.HeadAt(m.Version); ok {
		return h, nil
	}
	if m.ForkOf != nil {
		return m.ForkOf.CommitID, nil
	}
	return format.ID{}, fmt.Errorf("%s#%d at version %d: %w", m.Branch.Name, m.Branch.Incarnation, m.Version, ErrNoLineage)
}
