package kernel_test

import (
	"context"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// failingBatches answers every batched read with a transient error for
// each key (single reads pass).
type failingBatches struct{ objstore.Store }

func (s failingBatches) GetMany(_ context.Context, keys []string) []objstore.GetResult {
	out := make([]objstore.GetResult, len(keys))
	for i, k := range keys {
		out[i].Err = objstore.NewError(objstore.OpGet, k, objstore.ErrTransient, nil)
	}
	return out
}

// TestColdMergeBaseReadsFoldsAhead: a cold handle's MergeBase of a branch
// that lagged main through many compactions reads the folds the search is
// about to expand ahead, in batches (lineage.ReachHint, objstore.GetMany):
// fewer sequential rounds than one read a request, the same answer; and
// when every batch fails, the loads read each fold singly and answer the
// same (the read-ahead's errors are dropped on purpose).
func TestColdMergeBaseReadsFoldsAhead(t *testing.T) {
	cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
	laggingBranch(t, cs, 40)
	var answers []string
	var rounds []uint64
	for _, through := range []objstore.Store{struct{ objstore.Store }{cs}, cs, failingBatches{cs}} {
		cold := coldHandle(t, through)
		r0 := cs.Rounds()
		base, err := cold.MergeBase(ctx, mustBranch(t, cold, "main"), mustBranch(t, cold, "feat"))
		if err != nil {
			t.Fatal(err)
		}
		answers, rounds = append(answers, base.ID.String()), append(rounds, cs.Rounds()-r0)
	}
	t.Logf("cold MergeBase rounds: one read a request %d, read ahead %d, read-ahead batches failing %d", rounds[0], rounds[1], rounds[2])
	if answers[1] != answers[0] || answers[2] != answers[0] {
		t.Fatalf("merge bases %v, want one answer", answers)
	}
	if rounds[1]*10 > rounds[0]*7 {
		t.Errorf("reading ahead took %d rounds against %d one read a request, want at most 0.7 of it", rounds[1], rounds[0])
	}
}
