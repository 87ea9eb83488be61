package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
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

// batchKeys records the keys of every batched read under prefix.
type batchKeys struct {
	objstore.Store
	prefix string
	keys   []string
}

func (s *batchKeys) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	for _, k := range keys {
		if strings.HasPrefix(k, s.prefix) {
			s.keys = append(s.keys, k)
		}
	}
	return objstore.GetMany(ctx, s.Store, keys)
}

// staleAheadIndex builds a branch that lagged main through 40 compactions,
// finds a commit X whose index a cold MergeBase reads ahead, and overwrites
// that index with a stale one: the index of another commit Z (a parent of
// main's head, not X) under X's id, as a publish
// attempt that lost its slot leaves one naming a manifest that does not
// hold its commit. It returns the store, X and main's head.
func staleAheadIndex(t *testing.T) (objstore.Store, kernel.CommitID, kernel.Commit) {
	t.Helper()
	store := sim.New(sim.Config{Seed: 1})
	_, head, _ := laggingBranch(t, store, 40)
	keys := format.NewKeys(root)
	rec := &batchKeys{Store: store, prefix: keys.CommitIndexPrefix()}
	cold := coldHandle(t, rec)
	if _, err := cold.MergeBase(ctx, mustBranch(t, cold, "main"), mustBranch(t, cold, "feat")); err != nil {
		t.Fatal(err)
	}
	if len(rec.keys) == 0 {
		t.Fatal("the cold MergeBase read no commit index ahead")
	}
	x, err := ulid.ParseStrict(strings.TrimPrefix(rec.keys[0], rec.prefix))
	if err != nil {
		t.Fatal(err)
	}
	z := head.Parents[0]
	if z == x {
		z = head.Parents[1]
	}
	obj, err := store.Get(ctx, keys.CommitIndex(z))
	if err != nil {
		t.Fatal(err)
	}
	stale, tok, err := format.DecodeCommitIndex(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	stale.ID = x
	b, err := format.EncodeCommitIndex(&stale, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, keys.CommitIndex(x), b, objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	return store, x, head
}

// readAheadAnswers is what a cold handle reading through store answers
// after a cold MergeBase of main and feat (which reads ahead): that merge
// base, and the merge base of x with main's head (x itself: an ancestor).
func readAheadAnswers(t *testing.T, store objstore.Store, x kernel.CommitID, head kernel.Commit) (string, string) {
	t.Helper()
	cold := coldHandle(t, store)
	base, err := cold.MergeBase(ctx, mustBranch(t, cold, "main"), mustBranch(t, cold, "feat"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := cold.MergeBaseOf(ctx, x, head.ID)
	if err != nil {
		t.Fatal(err)
	}
	return base.ID.String(), own.ID.String()
}

// TestReadAheadRejectsAStaleIndex: the merge-base search's read-ahead
// accepts a commit index only as a single read would (acceptIndex: the
// manifest it names must hold its commit), so a stale index it fetched is
// never cached: a cold handle that read it ahead answers as one whose
// batches all fail (which reads each fold singly), and the merge base of
// the stale index's commit X with main's head is X. Planted bug
// read-ahead-trusts-index caches it unverified
// (TestPlantedReadAheadTrustsAStaleIndex).
func TestReadAheadRejectsAStaleIndex(t *testing.T) {
	store, x, head := staleAheadIndex(t)
	base, own := readAheadAnswers(t, store, x, head)
	singlyBase, singlyOwn := readAheadAnswers(t, failingBatches{store}, x, head)
	if base != singlyBase || own != singlyOwn || own != x.String() {
		t.Fatalf("read ahead: merge base %s, of %s and the head %s; read singly: %s, %s; want the same, and %s", base, x, own, singlyBase, singlyOwn, x)
	}
}
