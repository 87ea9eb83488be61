package maintain

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
)

// RunPolicy is what Maintain does: compaction (per table, compact.Policy)
// and then collection (Policy).
type RunPolicy struct {
	Compact compact.Policy
	Collect Policy
	// SkipCollect runs compaction only.
	SkipCollect bool
}

// RunReport is the outcome of one Maintain.
type RunReport struct {
	// Compactions lists, per branch name, the tables compacted.
	Compactions map[string][]data.TableCompaction
	Collect     Report
}

// Maintain is the one call for a timer: compact every live branch's tables
// that need it (data.Graph.Compact), then collect (Collect). It takes no
// lock: any number of maintainers and writers may run at once. A branch
// deleted meanwhile is skipped; a compaction that loses its retry budget to
// writers is skipped too (retryable; the next run tries again) — the
// collection still runs.
func Maintain(ctx context.Context, g *data.Graph, m *Maintainer, p RunPolicy) (RunReport, error) {
	rep := RunReport{Compactions: map[string][]data.TableCompaction{}}
	branches, err := g.Kernel().ListBranches(ctx)
	if err != nil {
		return rep, fmt.Errorf("maintain: %w", err)
	}
	for _, b := range branches {
		cr, err := g.Compact(ctx, b, p.Compact)
		switch {
		case errors.Is(err, kernel.ErrBranchNotFound), errors.Is(err, kernel.ErrContention), errors.Is(err, kernel.ErrVersionMismatch):
			continue
		case err != nil:
			return rep, fmt.Errorf("maintain: %w", err)
		}
		if len(cr.Tables) > 0 {
			rep.Compactions[b.Name()] = cr.Tables
		}
	}
	if p.SkipCollect {
		return rep, nil
	}
	if rep.Collect, err = m.Collect(ctx, p.Collect); err != nil {
		return rep, fmt.Errorf("maintain: %w", err)
	}
	return rep, nil
}
