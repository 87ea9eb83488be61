// Package lineage holds the pure decisions of the kernel's publish and
// commit-graph paths: expectation checks, parent resolution, next-manifest
// construction with its successor invariants, branch-fork manifests and the
// merge base. Nothing here performs I/O, reads a clock or draws entropy;
// every function is a deterministic function of its arguments, which is what
// lets rapid test them directly.
package lineage

import (
	"errors"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// ErrInvalid matches a proposal that can never be valid whatever the loaded
// state (duplicate updates, a self-merge, ...): a caller bug, not a race.
var ErrInvalid = errors.New("lineage: invalid proposal")

// Expectation says "table must be pinned at Version in the loaded manifest"
// (Version 0: the table must not be pinned). A non-zero Attempt further
// requires the pin to name that attempt (format 8: a pin is authoritative
// by name, and unpublished attempts may share its sequence number).
type Expectation struct {
	Table   string
	Version uint64
	Attempt format.ID
}

// Mismatch is a failed expectation: Table was expected at Expected but the
// loaded manifest pins Actual (0 = not pinned).
type Mismatch struct {
	Table    string
	Expected uint64
	Actual   uint64
}

// CheckExpectations reports the first failed expectation in table-name order
// (so the answer does not depend on the caller's ordering), or ok=true when
// every expectation holds in m.
func CheckExpectations(m *format.Manifest, exp []Expectation) (mm Mismatch, ok bool) {
	sorted := append([]Expectation(nil), exp...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Table < sorted[j].Table })
	for _, e := range sorted {
		p, _ := m.Pin(e.Table)
		if got := pinnedVersion(m, e.Table); got != e.Version || (e.Attempt != (format.ID{}) && p.Attempt != e.Attempt) {
			return Mismatch{Table: e.Table, Expected: e.Version, Actual: got}, false
		}
	}
	return Mismatch{}, true
}

func pinnedVersion(m *format.Manifest, table string) uint64 {
	p, ok := m.Pin(table)
	if !ok {
		return 0
	}
	return p.Version
}

// ResolveParents returns the parents of a commit published on top of the
// just-loaded manifest m: m's head, then the merged parent if any. It is
// called on every publish attempt, so a retry after losing a race always
// re-parents onto the advanced head.
func ResolveParents(m *format.Manifest, merged *format.ID) ([]format.ID, error) {
	if m.Tombstone {
		return nil, fmt.Errorf("%w: cannot commit on a tombstoned incarnation", ErrInvalid)
	}
	if m.Head == (format.ID{}) {
		panic("lineage: ResolveParents: loaded manifest has a zero head")
	}
	if merged == nil {
		return []format.ID{m.Head}, nil
	}
	if *merged == m.Head || *merged == (format.ID{}) {
		return nil, fmt.Errorf("%w: merged parent %s is zero or the branch head itself", ErrInvalid, *merged)
	}
	return []format.ID{m.Head, *merged}, nil
}
