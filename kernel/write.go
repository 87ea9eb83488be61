package kernel

import (
	"context"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// TableWrite is one table's part of a Write.
type TableWrite struct {
	Table string
	// Strict requires the table HEAD to equal BaseVersion (the version the
	// caller read), or BaseVersion to be the published pin and every
	// version above it to repeat the pinned content (recovery's restore
	// versions and fences); otherwise Write fails with
	// *VersionMismatchError.
	// Non-strict writes rebase: Build is re-run on the currently published
	// version and the new version is the live HEAD+1.
	Strict      bool
	BaseVersion uint64
	// Build returns the new content given the currently published version
	// of the table (the zero TableVersion, with Table set, if unpinned). It
	// may run more than once (once per rebase round) and must not have side
	// effects beyond writing immutable data fragments.
	Build func(pinned TableVersion) (TableContent, error)
}

// Write commits one new version of every touched table and publishes them
// together in one commit, with an expectation per table that its pin is
// still the one Build saw. Non-strict tables that lose a race are rebuilt
// and retried (bounded by the retry budget); a strict table's mismatch is
// returned to the caller. The commit id and writer token are minted once.
//
// Crash safety (kernel/sidecar.go): each round makes a recovery sidecar
// durable before any table HEAD moves and deletes it after the publish. A
// Write that gives up resolves its own sidecar first, so a returned failure
// is never made visible later; if recovery published the write meanwhile,
// Write returns that (recovery) commit as its success. A failure whose
// sidecar could not be resolved is ambiguous (*OutcomeUnknownError, or a
// *ContentionError with Ambiguous set).
func (g *Graph) Write(ctx context.Context, b BranchRef, writes []TableWrite, intent LineageIntent) (Commit, error) {
	return g.WriteAs(ctx, WriterKindWrite, b, writes, intent)
}

// WriteAs is Write recording kind (1..64 bytes of [a-z0-9-], e.g. "txn" for
// the data plane's transactions) as the writer kind of its sidecars and of
// any audit record recovery writes for them.
func (g *Graph) WriteAs(ctx context.Context, kind string, b BranchRef, writes []TableWrite, intent LineageIntent) (Commit, error) {
	if err := g.checkWritable("write"); err != nil {
		return Commit{}, err
	}
	if err := format.ValidateWriterKind(kind); err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w: %v", b, ErrInvalidArgument, err)
	}
	sorted, err := sortWrites(writes)
	if err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w", b, err)
	}
	req, err := g.newPublishReq(ctx, b, nil, intent, nil)
	if err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w", b, err)
	}
	run := &writeRun{kind: kind}
	var last error
	for round := 0; round < g.budget; round++ {
		if round > 0 {
			if err := g.backoff(ctx, round); err != nil {
				return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
			}
		}
		c, err := g.writeRound(ctx, &req, sorted, run)
		if err == nil {
			return c, nil
		}
		mm, ok := isMismatch(err)
		if !ok || strictTable(sorted, mm.Table) {
			return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
		}
		// A non-strict table lost a race: rebuild on the new pin. The
		// round's sidecar is dead (pins never go back, so it can never roll
		// forward): if the write gives up before the next round's sidecar,
		// abandonWrite undoes it rather than leaving it as an unknown outcome.
		run.lost = run.own != nil
		last = err
	}
	return g.abandonWrite(ctx, run, &ContentionError{Op: "write on " + b.String(), Attempts: g.budget, CommitID: req.commit.ID, Last: last})
}

func sortWrites(writes []TableWrite) ([]TableWrite, error) {
	sorted := append([]TableWrite(nil), writes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Table < sorted[j].Table })
	for i, w := range sorted {
		if err := format.ValidateName(w.Table); err != nil {
			return nil, err
		}
		if w.Build == nil {
			return nil, fmt.Errorf("%w: table %q has no Build", ErrInvalidArgument, w.Table)
		}
		if i > 0 && sorted[i-1].Table == w.Table {
			return nil, fmt.Errorf("%w: table %q written twice", ErrInvalidArgument, w.Table)
		}
	}
	return sorted, nil
}

func strictTable(writes []TableWrite, table string) bool {
	for _, w := range writes {
		if w.Table == table {
			return w.Strict
		}
	}
	return false
}

// writeRound is one attempt: heal abandoned writes on the tables first,
// load the head, check strict bases, build every table's content, make the
// round's sidecar durable, commit one version per table, publish with
// expectations, delete the sidecar.
func (g *Graph) writeRound(ctx context.Context, req *publishReq, writes []TableWrite, run *writeRun) (Commit, error) {
	b := req.branch
	if err := g.healFirst(ctx, b, writes); err != nil { // recovery: heal abandoned writes on these tables first
		return Commit{}, err
	}
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return Commit{}, err
	}
	heads := make([]TableRef, len(writes))
	for i, w := range writes {
		if heads[i], err = g.tableHead(ctx, b, &head.m, w.Table); err != nil {
			return Commit{}, err
		}
		if w.Strict && heads[i].Version != w.BaseVersion {
			// A HEAD above the pin that only repeats the pinned content (a
			// restore or fence left by recovery) is no newer state.
			if same, err := g.headRepeatsPin(ctx, &head.m, w.Table, w.BaseVersion, heads[i]); err != nil || !same {
				if err != nil {
					return Commit{}, err
				}
				return Commit{}, &VersionMismatchError{Table: w.Table, Expected: w.BaseVersion, Actual: heads[i].Version}
			}
		}
	}
	plans, err := g.planRound(ctx, &head.m, writes, heads)
	if err != nil {
		return Commit{}, err
	}
	// Recovery: the sidecar is durable before any table HEAD moves.
	if err := g.beginSidecar(ctx, run, req, head, plans); err != nil {
		return Commit{}, err
	}
	if err := g.fp.Hit(ctx, failpoint.AfterSidecarWrite); err != nil {
		return Commit{}, err
	}
	req.updates, req.exp = nil, nil
	run.wrote = true
	for _, p := range plans {
		u, err := g.commitPlanned(ctx, b, p)
		if err != nil {
			return Commit{}, err
		}
		req.updates = append(req.updates, u)
		req.exp = append(req.exp, lineage.Expectation{Table: p.table, Version: p.pin.Version})
		if err := g.fp.Hit(ctx, failpoint.AfterTableCommit); err != nil {
			return Commit{}, err
		}
	}
	if err := g.fp.Hit(ctx, failpoint.BeforePublish); err != nil {
		return Commit{}, err
	}
	c, err := g.publish(ctx, *req)
	if mm, ok := isMismatch(err); ok {
		// Lost — unless a recoverer published this very write meanwhile.
		if rc, published, perr := g.ownPublished(ctx, run, mm); perr != nil || published {
			if published {
				g.retireSidecar(ctx, run.own)
				run.own = nil
			}
			return rc, perr
		}
	}
	if err != nil {
		return Commit{}, err
	}
	if err := g.fp.Hit(ctx, failpoint.AfterPublishBeforeSidecarDelete); err != nil {
		return Commit{}, err
	}
	g.retireSidecar(ctx, run.own)
	run.own = nil
	return c, nil
}
