package maintain

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
)

// RunPolicy is what Maintain does: recovery of abandoned sidecars, then
// compaction (per table, compact.Policy), then collection (Policy).
type RunPolicy struct {
	Compact compact.Policy
	Collect Policy
	// SkipCollect runs compaction only.
	SkipCollect bool
}

// RunReport is the outcome of one Maintain.
type RunReport struct {
	// Recovery is what the recovery sweep of abandoned sidecars did.
	Recovery kernel.RecoveryReport
	// IndexesRepaired lists, in branch order, the live branches whose head
	// commit index was missing and was rebuilt (kernel.Graph.RepairHeadIndex).
	IndexesRepaired []string
	// Compactions lists, per branch name, the tables compacted.
	Compactions map[string][]data.TableCompaction
	Collect     Report
}

// Maintain is the one call for a timer: resolve the sidecars abandoned past
// kernel.RecoveryLease (kernel.Graph.Recover, as a read-write Open does:
// a long-running process never reopens, and nothing else heals a sidecar
// of a branch deleted since, which pins its dead incarnation for every
// collection), rebuild every live head's missing commit index
// (kernel.Graph.RepairHeadIndex: a writer that crashed after its publish
// left none, and without it the collection counts that head's merge bases
// unknown), compact every live branch's tables that need it
// (data.Graph.Compact), then collect (Collect). A sidecar the sweep could
// not resolve, or an index it could not write, stays for the next run:
// its error is returned once the compaction and collection ran (they keep
// what it needs). It takes no lock: any number of maintainers and writers
// may run at once. A branch deleted meanwhile is skipped; a compaction that loses its retry budget to
// writers is skipped too (retryable; the next run tries again) — the
// collection still runs.
func Maintain(ctx context.Context, g *data.Graph, m *Maintainer, p RunPolicy) (RunReport, error) {
	rep := RunReport{Compactions: map[string][]data.TableCompaction{}}
	var rerr error
	if rep.Recovery, rerr = g.Kernel().Recover(ctx, kernel.RecoverOptions{}); rerr != nil {
		rerr = fmt.Errorf("maintain: recovery: %w", rerr)
	}
	return rep, errors.Join(rerr, repairCompactCollect(ctx, g, m, p, &rep))
}

// repairCompactCollect is Maintain after its recovery sweep: per live
// branch, rebuild its head's missing commit index, then compact; then
// collect. A failed index repair does not stop the rest: the first is
// returned once the collection ran.
func repairCompactCollect(ctx context.Context, g *data.Graph, m *Maintainer, p RunPolicy, rep *RunReport) error {
	branches, err := g.Kernel().ListBranches(ctx)
	if err != nil {
		return fmt.Errorf("maintain: %w", err)
	}
	var repairErr error
	for _, b := range branches {
		if err := repairHeadIndex(ctx, g.Kernel(), b, rep); err != nil && repairErr == nil {
			repairErr = err
		}
		cr, err := g.Compact(ctx, b, p.Compact)
		switch {
		case errors.Is(err, kernel.ErrBranchNotFound), errors.Is(err, kernel.ErrContention), errors.Is(err, kernel.ErrVersionMismatch):
			continue
		case err != nil:
			return errors.Join(repairErr, fmt.Errorf("maintain: %w", err))
		}
		if len(cr.Tables) > 0 {
			rep.Compactions[b.Name()] = cr.Tables
		}
	}
	return errors.Join(repairErr, collect(ctx, m, p, rep))
}

// repairHeadIndex rebuilds the missing commit index of b's head, noting it
// in rep; a branch deleted meanwhile is no failure.
func repairHeadIndex(ctx context.Context, k *kernel.Graph, b kernel.BranchRef, rep *RunReport) error {
	repaired, err := k.RepairHeadIndex(ctx, b)
	switch {
	case errors.Is(err, kernel.ErrBranchNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("maintain: %w", err)
	}
	if repaired {
		rep.IndexesRepaired = append(rep.IndexesRepaired, b.Name())
	}
	return nil
}

// collect runs the collection of Maintain unless p skips it.
func collect(ctx context.Context, m *Maintainer, p RunPolicy, rep *RunReport) error {
	var err error
	if p.SkipCollect {
		return nil
	}
	if rep.Collect, err = m.Collect(ctx, p.Collect); err != nil {
		return fmt.Errorf("maintain: %w", err)
	}
	return nil
}
