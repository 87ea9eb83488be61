package migrate

import (
	"encoding/json"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// PlanFold plans the v3->v4 migration of one branch incarnation whose newest
// manifest is the v3 manifest latest and whose legacy commit objects are
// commits (in any order; none = no legacy data). The plan is the single
// manifest the kernel publishes create-only at latest.Version+1: format
// stamp 4, latest's incarnation, fork point, schema and table pins
// unchanged, no new commit, and a legacy block holding every commit in
// ascending id order and the v3 head. Equal inputs give equal plans, so
// concurrent migrators all propose the same manifest (up to the writer
// token) and the result equals a single migration.
func PlanFold(latest *format.Manifest, commits []format.LegacyCommit) (format.Manifest, error) {
	if latest.FormatStamp != format.FormatV3 {
		return format.Manifest{}, fmt.Errorf("plan fold of %s#%d v%d (stamp %d): %w",
			latest.Branch.Name, latest.Branch.Incarnation, latest.Version, latest.FormatStamp, ErrNotLegacy)
	}
	lin, err := NewLineage(commits, latest.Version)
	if err != nil {
		return format.Manifest{}, err
	}
	head, err := lin.HeadOf(latest)
	if err != nil {
		return format.Manifest{}, err
	}
	return successor(latest, lin.Commits(), head)
}

// PlanStampOnly exists only for the planted bug "stamp-first": it plans a
// v4 manifest that carries the stamp and the head but, of the lineage, only
// the head commit itself. Publishing it before the backfill loses the rest
// of the lineage if the process stops in between.
func PlanStampOnly(latest *format.Manifest, commits []format.LegacyCommit) (format.Manifest, error) {
	full, err := PlanFold(latest, commits)
	if err != nil {
		return format.Manifest{}, err
	}
	var keep []format.LegacyCommit
	for _, c := range full.Legacy.Commits {
		if c.ID == full.Head {
			keep = append(keep, c)
		}
	}
	full.Legacy.Commits = keep
	return full, nil
}

// PlanBackfillAfterStamp exists only for the planted bug "stamp-first": the
// second publish, on top of the stamp-only manifest prev, with the full
// lineage.
func PlanBackfillAfterStamp(prev *format.Manifest, commits []format.LegacyCommit) (format.Manifest, error) {
	if prev.Legacy == nil {
		return format.Manifest{}, fmt.Errorf("backfill after stamp: %w", ErrNotLegacy)
	}
	lin, err := NewLineage(commits, prev.Version-1)
	if err != nil {
		return format.Manifest{}, err
	}
	return successor(prev, lin.Commits(), prev.Head)
}

// successor builds the migration manifest on top of prev.
func successor(prev *format.Manifest, commits []format.LegacyCommit, head format.ID) (format.Manifest, error) {
	m := format.Manifest{
		Version:     prev.Version + 1,
		Branch:      prev.Branch,
		Tables:      append([]format.TablePin(nil), prev.Tables...),
		Head:        head,
		Schema:      prev.Schema,
		FormatStamp: format.CurrentFormat,
		Legacy:      &format.LegacyLineage{Commits: cloneCommits(commits), Head: head},
	}
	if prev.ForkOf != nil {
		f := *prev.ForkOf
		m.ForkOf = &f
	}
	if len(m.Tables) == 0 {
		m.Tables = nil
	}
	if len(m.Legacy.Commits) == 0 {
		m.Legacy.Commits = nil
	}
	if err := format.ValidateManifest(&m); err != nil {
		return format.Manifest{}, fmt.Errorf("plan fold of %s#%d: %w", prev.Branch.Name, prev.Branch.Incarnation, err)
	}
	payload, err := json.Marshal(&m)
	if err != nil {
		return format.Manifest{}, fmt.Errorf("plan fold: marshal: %w", err)
	}
	if len(payload) > format.MaxPayloadBytes {
		return format.Manifest{}, fmt.Errorf("%w: %d bytes exceeds %d", ErrTooLarge, len(payload), format.MaxPayloadBytes)
	}
	return m, nil
}

// CheckFold asserts the invariants of a migration manifest next published
// on top of prev: valid on its own, version prev+1, same incarnation, fork
// point and schema, identical table pins, stamp 4, a legacy block and no
// commit. The kernel panics on a non-nil result (an internal bug).
func CheckFold(prev, next *format.Manifest) error {
	if err := format.ValidateManifest(next); err != nil {
		return err
	}
	switch {
	case next.Version != prev.Version+1:
		return fmt.Errorf("version %d does not follow %d", next.Version, prev.Version)
	case next.Branch != prev.Branch:
		return fmt.Errorf("incarnation changed")
	case (prev.ForkOf == nil) != (next.ForkOf == nil) || prev.ForkOf != nil && *prev.ForkOf != *next.ForkOf:
		return fmt.Errorf("fork point changed")
	case next.Schema != prev.Schema:
		return fmt.Errorf("schema changed")
	case next.FormatStamp != format.CurrentFormat || next.Legacy == nil || next.Commit != nil:
		return fmt.Errorf("not a migration manifest")
	case len(next.Tables) != len(prev.Tables):
		return fmt.Errorf("table pins changed")
	}
	for i := range prev.Tables {
		if prev.Tables[i] != next.Tables[i] {
			return fmt.Errorf("table pin %q changed", prev.Tables[i].Name)
		}
	}
	return nil
}
