package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Writes named per attempt (format 8, docs/format.md "v7->v8"). A round
// writes each table's new version at a key of its own,
// R/tables/<table>/<fork>/a/<ulid> (the ULID minted for the round from the
// injected clock and entropy), numbered the pin's sequence number + 1, and
// publishes the manifest that pins it by that name. Nothing before the
// publish can be mistaken for published state: there is no table HEAD to
// discover (no LIST), nothing "above a pin", and no sidecar. A version no
// manifest pins is garbage the collector deletes under the grace rule
// (gc.KeepTableVersion: its ULID time + settle), never a state recovery
// rolls forward or back.

// writeRoundNamed is one attempt of a Write in format 8: build on the
// handle's view (or a loaded head), check strict bases and read
// expectations, write the new objects and one named version per table
// as one batch (commitNamedBatch), publish with
// expectations by name. A branch whose head is still stamped below 8 first
// has the sidecars of its incarnation swept (sweepBeforeNamed), so no
// counter-named write of the previous format is in flight when named ones
// begin.
func (g *Graph) writeRoundNamed(ctx context.Context, req *publishReq, writes []TableWrite, reads []readState, run *writeRun) (Commit, error) {
	b := req.branch
	head, fromView, err := g.viewHead(ctx, b)
	if err != nil {
		return Commit{}, err
	}
	if head.m.FormatStamp < format.FormatV8 {
		if err := g.sweepBeforeNamed(ctx, b); err != nil {
			return Commit{}, err
		}
		if head, err = g.liveHead(ctx, b); err != nil {
			return Commit{}, err
		}
		fromView = false
	}
	plans, err := g.prepareNamed(ctx, req, &head.m, writes, reads, run)
	if err != nil && fromView && viewRefusal(err) {
		// Computed on the handle's view, which may be stale: a refusal is
		// only returned once a loaded head confirms it (one head discovery).
		g.views.drop(b.incID, head.m.Version)
		if head, err = g.liveHead(ctx, b); err != nil {
			return Commit{}, err
		}
		plans, err = g.prepareNamed(ctx, req, &head.m, writes, reads, run)
	}
	if err != nil {
		return Commit{}, err
	}
	// The grace rule (docs/gc.md): a collector may delete an unpinned
	// named version (and its fragments) once older than the settle time,
	// so a write staged longer ago than the grace never publishes.
	if err := g.checkGrace(req); err != nil {
		return Commit{}, err
	}
	req.updates, req.exp, req.deferred = nil, nil, nil
	updates, err := g.commitNamedBatch(ctx, req, &head.m, plans, run.noRide || g.noRiding)
	if err != nil {
		return Commit{}, err
	}
	for i, p := range plans {
		req.updates = append(req.updates, updates[i])
		req.exp = append(req.exp, lineage.Expectation{Table: p.table, Version: p.pin.Version, Attempt: p.pin.Attempt})
		if err := g.fp.Hit(ctx, failpoint.AfterTableCommit); err != nil {
			return Commit{}, err
		}
	}
	for _, r := range reads {
		req.exp = append(req.exp, lineage.Expectation{Table: r.Table, Version: r.cur})
	}
	if err := g.fp.Hit(ctx, failpoint.BeforePublish); err != nil {
		return Commit{}, err
	}
	c, err := g.publish(ctx, *req)
	if errors.Is(err, errRidingOverBudget) && !objstore.IsAmbiguous(err) && !run.noRide {
		// Another write spent the riding budget on the head this one
		// built on: nothing of this round was published (the refusal is
		// definite), so the round is done again, every version an object.
		run.noRide = true
		if err := g.fp.Hit(ctx, failpoint.RidingRedo); err != nil {
			return Commit{}, err
		}
		return g.writeRoundNamed(ctx, req, writes, reads, run)
	}
	return c, err
}

// prepareNamed checks a round against the head manifest m (schema, clock
// skew, strict bases, read expectations) and plans every table's version:
// the pin's sequence number + 1, under a fresh attempt ULID. A strict table
// holds when its pin is BaseVersion or (following compactions) only
// content-preserving versions lie between.
func (g *Graph) prepareNamed(ctx context.Context, req *publishReq, m *format.Manifest, writes []TableWrite, reads []readState, run *writeRun) ([]plannedWrite, error) {
	if err := checkSchema(req, m); err != nil {
		return nil, err
	}
	if err := g.checkSkew(req, m); err != nil {
		return nil, err
	}
	pins := make([]TableRef, len(writes))
	for i, w := range writes {
		if p, ok := m.Pin(w.Table); ok {
			pins[i] = p.Ref()
		}
		if !w.Strict || pins[i].Version == w.BaseVersion {
			continue
		}
		holds := false
		if run.follow && pins[i].Version > w.BaseVersion {
			var err error
			if holds, err = g.PinSatisfied(ctx, w.Table, w.BaseVersion, pins[i]); err != nil {
				return nil, err
			}
		}
		if !holds {
			return nil, &VersionMismatchError{Table: w.Table, Expected: w.BaseVersion, Actual: pins[i].Version}
		}
	}
	if err := g.checkReads(ctx, m, reads, run.follow); err != nil {
		return nil, err
	}
	plans, err := g.planRound(ctx, m, writes, pins)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		if plans[i].attempt, err = g.mintID(); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// sweepBeforeNamed resolves every sidecar of b's incarnation, young ones
// too (the first write of a branch in format 8: a counter-named write of
// the previous format is either abandoned or a format-7 binary's, and
// writers are upgraded before named writes begin; every recovery action is
// fenced, so acting on a live one costs it its write, never safety).
func (g *Graph) sweepBeforeNamed(ctx context.Context, b BranchRef) error {
	if _, err := g.sweep(ctx, sweepScope{heal: true, wholeBranch: true, ignoreLease: true, branch: b.incID}); err != nil {
		return fmt.Errorf("sweep format-7 sidecars of %s before its first named write: %w", b, err)
	}
	return nil
}
