// Package compact is the pure core of compaction: given the row counts of a
// table version's fragments, in order, and a policy, it plans which runs of
// consecutive small fragments to rewrite as one fragment each. It performs
// no I/O; the driver is data.Graph.Compact.
//
// A plan never changes a table's rows, only how they are split into
// fragments, and it is idempotent: planning again on the result of a plan
// finds nothing to do (so a compaction with nothing to do publishes
// nothing).
package compact

import "fmt"

// Defaults of Policy.
const (
	// DefaultTargetRows is the largest fragment a compaction writes; it
	// equals data.MaxFragmentRows, the copy-on-write granularity, so a
	// compacted table costs an update no more than a freshly written one.
	DefaultTargetRows = 1 << 13
	// DefaultMinFragments is how many small fragments a table needs before
	// rewriting them is worth a commit.
	DefaultMinFragments = 4
	// MaxTargetRows bounds TargetRows (and so the memory of one rewrite).
	MaxTargetRows = 1 << 20
)

// Policy says when and how far to compact.
type Policy struct {
	// TargetRows: fragments with fewer rows are small, and a rewritten
	// fragment holds at most this many rows. 0 means DefaultTargetRows.
	TargetRows uint64
	// MinFragments: a table with fewer small fragments is left alone.
	// 0 means DefaultMinFragments.
	MinFragments int
}

// WithDefaults fills zero fields and checks bounds.
func (p Policy) WithDefaults() (Policy, error) {
	if p.TargetRows == 0 {
		p.TargetRows = DefaultTargetRows
	}
	if p.MinFragments == 0 {
		p.MinFragments = DefaultMinFragments
	}
	if p.TargetRows < 2 || p.TargetRows > MaxTargetRows || p.MinFragments < 2 {
		return Policy{}, fmt.Errorf("compact: policy %+v: want TargetRows in [2, %d] and MinFragments >= 2", p, MaxTargetRows)
	}
	return p, nil
}

// Group is a run of consecutive fragments [First, First+Count) rewritten
// as one fragment; Count >= 2.
type Group struct {
	First, Count int
	Rows         uint64
}

// Plan returns the groups to rewrite, in order and disjoint, or nil when
// there is nothing worth doing: fewer than p.MinFragments small fragments,
// or no two adjacent small fragments fit one target fragment together.
// p must have passed WithDefaults. Groups are formed greedily left to
// right over runs of small fragments, each as long as its rows fit
// p.TargetRows.
func Plan(rows []uint64, p Policy) []Group {
	small := 0
	for _, r := range rows {
		if r < p.TargetRows {
			small++
		}
	}
	if small < p.MinFragments {
		return nil
	}
	var out []Group
	cur := Group{First: -1}
	flush := func() {
		if cur.Count >= 2 {
			out = append(out, cur)
		}
		cur = Group{First: -1}
	}
	for i, r := range rows {
		if r >= p.TargetRows {
			flush()
			continue
		}
		if cur.First >= 0 && cur.Rows+r > p.TargetRows {
			flush()
		}
		if cur.First < 0 {
			cur = Group{First: i}
		}
		cur.Count++
		cur.Rows += r
	}
	flush()
	return out
}

// Apply returns the row counts of the fragments after the plan: what a
// driver's result must have, and what Plan sees when run again.
func Apply(rows []uint64, groups []Group) []uint64 {
	var out []uint64
	i := 0
	for _, g := range groups {
		out = append(out, rows[i:g.First]...)
		out = append(out, g.Rows)
		i = g.First + g.Count
	}
	return append(out, rows[i:]...)
}
