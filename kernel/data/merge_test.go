package data

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

func mustMerge(t *testing.T, f *mergeFixture, src, tgt kernel.BranchRef, want merge.Outcome) MergeResult {
	t.Helper()
	res, err := f.merge(src, tgt, MergeOptions{})
	if err != nil || res.Outcome != want {
		t.Fatalf("merge %s into %s: %v %v, want %v", src.Name(), tgt.Name(), res.Outcome, err, want)
	}
	return res
}

func hasRow(t *testing.T, f *mergeFixture, b kernel.BranchRef, typ, id string) bool {
	t.Helper()
	return len(f.state(b)[typ][id].ID) > 0
}

// A branch whose changes net to zero (an edge added, then removed) is
// still merged: a two-parent commit with no table change, after which the
// source is already merged.
func TestMergeNetZeroBranch(t *testing.T) {
	for _, targetMoved := range []bool{false, true} {
		f := newMergeFixture(t)
		src := f.branch("feature", f.main)
		opNetZero.do(t, f, src, true)
		want := merge.FastForward
		if targetMoved {
			opSetA.do(t, f, f.main, false)
			want = merge.Merged
		}
		before := f.state(f.main)
		res := mustMerge(t, f, src, f.main, want)
		if len(res.Commit.Parents) != 2 || res.Commit.Parents[1] != res.Source || len(res.Changes) != 0 {
			t.Fatalf("net-zero merge commit %+v changes %v, want two parents and no change", res.Commit, res.Changes)
		}
		if d := sameState(f.state(f.main), before); d != "" {
			t.Fatalf("net-zero merge changed the target: %s", d)
		}
		mustMerge(t, f, src, f.main, merge.AlreadyUpToDate)
	}
}

// Merging sibling branches one after the other never brings back an edge
// the first merge deleted: the second sibling never touched the edge, so
// against the base it is unchanged there and the target's delete stands.
// A two-way merge (source against target, no base) brings it back.
func TestSiblingMergesNeverResurrectDeletedEdge(t *testing.T) {
	f := newMergeFixture(t)
	a := f.branch("a", f.main)
	b := f.branch("b", f.main)
	opRmEdge.do(t, f, a, true)
	opAddNode.do(t, f, b, true)
	mustMerge(t, f, a, f.main, merge.FastForward)
	if hasRow(t, f, f.main, "Knows", "k1") {
		t.Fatal("first merge did not delete k1")
	}
	mustMerge(t, f, b, f.main, merge.Merged)
	if hasRow(t, f, f.main, "Knows", "k1") {
		t.Fatal("the sibling merge brought the deleted edge k1 back")
	}
	// And back the other way: main into b, then b into main again.
	mustMerge(t, f, f.main, b, merge.FastForward)
	if hasRow(t, f, b, "Knows", "k1") {
		t.Fatal("merging main into b kept k1")
	}
	mustMerge(t, f, b, f.main, merge.FastForward)
	if hasRow(t, f, f.main, "Knows", "k1") {
		t.Fatal("merging b back into main brought k1 back")
	}
}

// A merge base reachable only through a merge commit whose other parent
// lives on a third branch is found: x's commit reaches the target only as
// the merged parent of the target's merge of x. With the older base the
// source's edit of x's row would be a divergent insert.
func TestMergeBaseThroughThirdBranchMerge(t *testing.T) {
	f := newMergeFixture(t)
	x := f.branch("x", f.main)
	xc := f.commit(x, func(tx *Txn) error {
		return tx.Insert("Person", Row{ID: "xena", Props: map[string]any{"name": "Xena"}})
	})
	tgt := f.branch("target", f.main)
	mustMerge(t, f, x, tgt, merge.FastForward)
	src, err := f.g.Kernel().CreateBranchAt(ctx, "source", xc.ID)
	must(t, err)
	f.commit(src, func(tx *Txn) error {
		return tx.Update("Person", Row{ID: "xena", Props: map[string]any{"name": "Xena", "age": int64(30)}})
	})
	opSetB.do(t, f, tgt, false)
	res := mustMerge(t, f, src, tgt, merge.Merged)
	if res.Base != xc.ID {
		t.Fatalf("merge base %s, want x's commit %s", res.Base, xc.ID)
	}
	if got := f.state(tgt)["Person"]["xena"]; got.Props["age"] != int64(30) {
		t.Fatalf("xena on target %+v, want the source's age", got)
	}
}

// A fast-forward is a two-parent merge commit on the target's own chain,
// never a pointer move: the target's head is not the source's, its first
// parent is the old target head, and the next merge is up to date.
func TestFastForwardIsATwoParentCommit(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opSetA.do(t, f, src, true)
	old, _ := f.g.Kernel().Head(ctx, f.main)
	res := mustMerge(t, f, src, f.main, merge.FastForward)
	c := res.Commit
	if c.Kind != format.KindMerge || len(c.Parents) != 2 || c.Parents[0] != old.ID || c.Parents[1] != res.Source || c.ID == res.Source || c.Branch != "main" {
		t.Fatalf("fast-forward commit %+v, want a merge commit on main with parents %s, %s", c, old.ID, res.Source)
	}
	if d := sameState(f.state(f.main), f.state(src)); d != "" {
		t.Fatalf("after a fast-forward the target differs from the source: %s", d)
	}
	mustMerge(t, f, src, f.main, merge.AlreadyUpToDate)
}

// After a fast-forward into a branch that has its own child branch, the
// child stays readable, keeps its content, and can itself merge.
func TestFastForwardKeepsChildBranchReadable(t *testing.T) {
	f := newMergeFixture(t)
	child := f.branch("child", f.main)
	f.commit(child, func(tx *Txn) error { return tx.Insert("Person", Row{ID: "cid", Props: map[string]any{"name": "Cid"}}) })
	before := f.state(child)
	src := f.branch("feature", f.main)
	opRmEdge.do(t, f, src, true)
	mustMerge(t, f, src, f.main, merge.FastForward)
	if d := sameState(f.state(child), before); d != "" {
		t.Fatalf("child changed by the parent's fast-forward: %s", d)
	}
	mustMerge(t, f, f.main, child, merge.Merged)
	if hasRow(t, f, child, "Knows", "k1") || !hasRow(t, f, child, "Person", "cid") {
		t.Fatal("child did not take main's merge")
	}
}

// A conflicting merge, and any dry run, leave the whole store byte for byte
// unchanged, and list every conflict.
func TestConflictingMergeLeavesTargetUnchanged(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opSetA.do(t, f, src, true)
	opMoveEdge.do(t, f, src, true)
	opSetA.do(t, f, f.main, false)
	opRmEdge.do(t, f, f.main, false)
	before := storeBytes(t, f.store)
	for _, dry := range []bool{false, true} {
		res, err := f.merge(src, f.main, MergeOptions{DryRun: dry})
		want := []conflictKey{dvuK1, duAge}
		if got := conflictKeys(t, err); !sameConflicts(got, want) || len(res.Conflicts) != 2 {
			t.Fatalf("dry=%v conflicts %v, want %v", dry, got, want)
		}
		if !strings.Contains(err.Error(), "2 conflict(s)") {
			t.Fatalf("error text %q", err)
		}
	}
	after := storeBytes(t, f.store)
	if len(after) != len(before) {
		t.Fatalf("store has %d objects after a conflicting merge, %d before", len(after), len(before))
	}
	for k, v := range before { //detlint:ordered compares every key
		if after[k] != v {
			t.Fatalf("object %s changed", k)
		}
	}
	// A clean dry run writes nothing either and reports the outcome.
	g := newMergeFixture(t)
	s := g.branch("feature", g.main)
	opAddNode.do(t, g, s, true)
	pre := storeBytes(t, g.store)
	res, err := g.merge(s, g.main, MergeOptions{DryRun: true})
	if err != nil || res.Outcome != merge.FastForward || res.Changes["Person"] != 1 || res.Commit.ID != (kernel.CommitID{}) {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	if post := storeBytes(t, g.store); len(post) != len(pre) {
		t.Fatalf("a dry run wrote %d objects", len(post)-len(pre))
	}
}

// @card is checked on the merged result: each side adds one Manages edge
// from alice (0..1 allows each alone), together they break it.
func TestMergeCardinalityViolation(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	f.commit(src, func(tx *Txn) error { return tx.Insert("Manages", Row{ID: "m1", From: "alice", To: "bob"}) })
	f.commit(f.main, func(tx *Txn) error { return tx.Insert("Manages", Row{ID: "m2", From: "alice", To: "carol"}) })
	_, err := f.merge(src, f.main, MergeOptions{})
	want := []conflictKey{{merge.CardinalityViolation, "Manages", "alice", "from"}}
	if got := conflictKeys(t, err); !sameConflicts(got, want) {
		t.Fatalf("conflicts %v, want %v", got, want)
	}
}

// hookStore runs hook once, before the first Put after it is armed: a
// rendezvous between a merge's reads and its first write.
type hookStore struct {
	objstore.Store
	hook func()
}

func (h *hookStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if hook := h.hook; hook != nil {
		h.hook = nil
		hook()
	}
	return h.Store.Put(ctx, key, data, cond)
}

// The merge never publishes a result computed against a stale target: a
// commit on the target between the merge's reads and its publish (here an
// edge to the node the source deletes, on a table the merge does not
// write) makes the merge run again, which now finds the orphan edge. With
// one round the merge fails, typed and retryable. Red without ExpectHead:
// the stale merge publishes the orphan.
func TestMergeRerunsWhenTargetMoves(t *testing.T) {
	for _, rounds := range []int{1, 0} {
		f := newMergeFixture(t)
		src := f.branch("feature", f.main)
		opRmNode.do(t, f, src, true)
		opAddNode.do(t, f, f.main, false) // the target moved too: a real merge
		hs := &hookStore{Store: f.store}
		g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
		must(t, err)
		hs.hook = func() {
			f.commit(f.main, func(tx *Txn) error { return tx.Insert("Knows", Row{ID: "k9", From: "dan", To: "alice"}) })
		}
		res, err := g.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{Rounds: rounds})
		if rounds == 1 {
			var ce *kernel.ContentionError
			if !errors.As(err, &ce) || !errors.Is(err, kernel.ErrContention) {
				t.Fatalf("one round on a moving target: %v, want *ContentionError", err)
			}
		} else {
			want := []conflictKey{{merge.OrphanEdge, "Knows", "k9", "to"}}
			if got := conflictKeys(t, err); !sameConflicts(got, want) || res.Rounds != 2 {
				t.Fatalf("rounds %d conflicts %v, want 2 rounds and %v", res.Rounds, got, want)
			}
		}
		if !hasRow(t, f, f.main, "Person", "alice") || len(kerneltest.Sidecars(f.store.(*sim.Store), testRoot)) != 0 {
			t.Fatal("the stale merge deleted alice or left a sidecar")
		}
	}
}

// A commit on the target that writes a table the merge writes too, between
// the merge's reads and its write, is a moved target as well: the merge's
// strict table write refuses it (*kernel.VersionMismatchError) and the
// merge runs again on the new head, keeping the other commit's row. Red
// if only ErrHeadMoved re-ran a round: the merge fails with the mismatch.
func TestMergeRerunsWhenMergedTableMoves(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opRmEdge.do(t, f, src, true)      // the merge writes Knows
	opAddNode.do(t, f, f.main, false) // the target moved too: a real merge
	hs := &hookStore{Store: f.store}
	g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
	must(t, err)
	hs.hook = func() {
		f.commit(f.main, func(tx *Txn) error { return tx.Insert("Knows", Row{ID: "k9", From: "dan", To: "alice"}) })
	}
	res, err := g.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	if err != nil || res.Outcome != merge.Merged || res.Rounds != 2 {
		t.Fatalf("merge = %+v, %v; want merged in round 2", res, err)
	}
	if hasRow(t, f, f.main, "Knows", "k1") || !hasRow(t, f, f.main, "Knows", "k9") {
		t.Fatal("the target lost the merge's delete of k1 or the racing commit's k9")
	}
	if left := kerneltest.Sidecars(f.store.(*sim.Store), testRoot); len(left) != 0 {
		t.Fatalf("sidecars left: %v", left)
	}
}

// A crash at every durable step of a merge leaves the target unmerged or
// merged once recovery has run, never a mix, and no sidecar: before the
// publish, recovery rolls the merge back, never forward (a recovery commit
// has one parent, so rolling forward would drop the merged parent from the
// lineage); after it, the merge commit stands with both parents. The merge
// then runs again (or is up to date). Red without the roll-back rule:
// recovery publishes the merged tables as a one-parent recovery commit.
func TestCrashedMergeIsRolledBack(t *testing.T) {
	merged := func() map[string]map[string]Row {
		f := newMergeFixture(t)
		src := f.branch("feature", f.main)
		opRmEdge.do(t, f, src, true)
		opSetA.do(t, f, f.main, false)
		mustMerge(t, f, src, f.main, merge.Merged)
		return f.state(f.main)
	}()
	for _, cut := range []failpoint.Name{failpoint.AfterSidecarWrite, failpoint.AfterTableCommit, failpoint.BeforePublish,
		failpoint.PublishBeforeWrite, failpoint.AfterPublishBeforeSidecarDelete} {
		t.Run(string(cut), func(t *testing.T) {
			f := newMergeFixture(t)
			src := f.branch("feature", f.main)
			opRmEdge.do(t, f, src, true)
			opSetA.do(t, f, f.main, false)
			before := f.state(f.main)
			store := f.store.(*sim.Store)
			fps := failpoint.NewSet()
			fps.Arm(cut, failpoint.Action{Kind: failpoint.Crash})
			g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(21, fps), CounterWrites: true}}) // a format-7 merge: its sidecar says merge
			must(t, err)
			if _, err := g.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{}); !errors.Is(err, failpoint.ErrCrashed) {
				t.Fatalf("merge = %v, want the crash", err)
			}
			keys := kerneltest.Sidecars(store, testRoot)
			if len(keys) != 1 {
				t.Fatalf("sidecars %v, want the crashed merge's", keys)
			}
			raw, _ := store.Peek(keys[0])
			s, _, err := format.DecodeSidecar(raw)
			if err != nil || s.WriterKind != WriterKindMerge || s.MergedParent == nil {
				t.Fatalf("sidecar %+v, %v: want kind merge naming the merged parent", s, err)
			}
			r, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.EnvAt(22, nil, kerneltest.Later)}})
			must(t, err)
			if left := kerneltest.Sidecars(store, testRoot); len(left) != 0 {
				t.Fatalf("sidecars left after recovery: %v", left)
			}
			as, err := kerneltest.Audits(store, testRoot)
			must(t, err)
			head, _ := f.g.Kernel().Head(ctx, f.main)
			again := merge.Merged
			if cut == failpoint.AfterPublishBeforeSidecarDelete {
				if len(as) != 1 || !as[0].Converged || head.Kind != format.KindMerge || len(head.Parents) != 2 {
					t.Fatalf("audits %+v head %+v: want the published merge finished", as, head)
				}
				if d := sameState(f.state(f.main), merged); d != "" {
					t.Fatalf("target after recovery: %s", d)
				}
				again = merge.AlreadyUpToDate
			} else {
				if len(as) != 1 || as[0].Decision != format.DecisionRollBack {
					t.Fatalf("audits %+v, want one roll-back", as)
				}
				if d := sameState(f.state(f.main), before); d != "" {
					t.Fatalf("target after recovery: %s", d)
				}
			}
			res, err := r.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
			if err != nil || res.Outcome != again {
				t.Fatalf("merge after recovery: %+v, %v, want %v", res, err, again)
			}
			if d := sameState(f.state(f.main), merged); d != "" {
				t.Fatalf("target after the merge: %s", d)
			}
		})
	}
}

// Two merges racing into one target both land: the one that loses the
// publish runs again on the winner's commit, and the target holds both
// sides' changes with both merged parents in its history.
func TestConcurrentMergesBothLand(t *testing.T) {
	f := newMergeFixture(t)
	a := f.branch("a", f.main)
	b := f.branch("b", f.main)
	opRmEdge.do(t, f, a, true)
	opAddNode.do(t, f, b, true)
	hs := &hookStore{Store: f.store}
	g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
	must(t, err)
	var first MergeResult
	hs.hook = func() { first = mustMerge(t, f, b, f.main, merge.FastForward) }
	res, err := g.Merge(ctx, a, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	if err != nil || res.Outcome != merge.Merged || res.Rounds != 2 || res.Target != first.Commit.ID {
		t.Fatalf("racing merge: %+v, %v; want merged in round 2 on %s", res, err, first.Commit.ID)
	}
	if hasRow(t, f, f.main, "Knows", "k1") || !hasRow(t, f, f.main, "Person", "eve") {
		t.Fatal("the target lost one of the racing merges")
	}
	mustMerge(t, f, a, f.main, merge.AlreadyUpToDate)
	mustMerge(t, f, b, f.main, merge.AlreadyUpToDate)
}

// The source may move during a merge: the merge merges the source head it
// captured, says which in its result, and the source's later commit is
// left for the next merge.
func TestSourceMovingDuringMerge(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opSetA.do(t, f, src, true)
	captured, _ := f.g.Kernel().Head(ctx, src)
	hs := &hookStore{Store: f.store}
	g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
	must(t, err)
	hs.hook = func() { opSetB.do(t, f, src, true) }
	res, err := g.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	if err != nil || res.Source != captured.ID || res.Commit.Parents[1] != captured.ID || res.Rounds != 1 {
		t.Fatalf("merge with a moving source: %+v, %v; want the captured source %s", res, err, captured.ID)
	}
	alice := f.state(f.main)["Person"]["alice"]
	if alice.Props["age"] != int64(31) || alice.Props["city"] != nil {
		t.Fatalf("alice on the target %+v: want the captured source's age and not its later city", alice)
	}
	next := mustMerge(t, f, src, f.main, merge.Merged)
	if next.Base != captured.ID {
		t.Fatalf("next merge base %s, want the captured source %s", next.Base, captured.ID)
	}
}

// A criss-cross history (main and feature merged into each other from the
// same two heads) has two best common ancestors; the merge takes the
// newest (the greater commit id), deterministically, and merges cleanly
// changes made after the criss-cross.
func TestCrissCrossMergeBase(t *testing.T) {
	f := newMergeFixture(t)
	feature := f.branch("feature", f.main)
	opSetB.do(t, f, feature, true)
	opSetA.do(t, f, f.main, false)
	m1, _ := f.g.Kernel().Head(ctx, f.main)
	f1, _ := f.g.Kernel().Head(ctx, feature)
	hs := &hookStore{Store: f.store}
	g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
	must(t, err)
	hs.hook = func() { mustMerge(t, f, f.main, feature, merge.Merged) } // feature takes m1
	res, err := g.Merge(ctx, feature, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	if err != nil || res.Source != f1.ID || res.Target != m1.ID {
		t.Fatalf("criss-cross merge: %+v, %v; want f1 into m1", res, err)
	}
	f.commit(f.main, func(tx *Txn) error { return tx.Insert("Person", Row{ID: "m2", Props: map[string]any{"name": "m2"}}) })
	f.commit(feature, func(tx *Txn) error { return tx.Insert("Person", Row{ID: "f2", Props: map[string]any{"name": "f2"}}) })
	want := m1.ID
	if f1.ID.Compare(m1.ID) > 0 {
		want = f1.ID
	}
	got := mustMerge(t, f, feature, f.main, merge.Merged)
	if got.Base != want {
		t.Fatalf("criss-cross base %s, want the newer best ancestor %s (m1 %s, f1 %s)", got.Base, want, m1.ID, f1.ID)
	}
	st := f.state(f.main)["Person"]
	if st["m2"].ID == "" || st["f2"].ID == "" || st["alice"].Props["age"] != int64(32) || st["alice"].Props["city"] != "Oslo" {
		t.Fatalf("after the criss-cross merge: %+v", st)
	}
}

// A merge holds every changed id until its publish, so it is bounded by the
// handle's row limit: more changed ids fail with ErrMergeTooLarge, nothing
// written.
func TestMergeTooLarge(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	f.commit(src, func(tx *Txn) error { return tx.Insert("Person", pers("x1"), pers("x2"), pers("x3")) })
	g, err := Open(ctx, f.store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}, Limits: Limits{MaxRows: 2}})
	must(t, err)
	before := storeBytes(t, f.store)
	if _, err := g.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{}); !errors.Is(err, ErrMergeTooLarge) {
		t.Fatalf("merge of 3 ids with a 2-row limit: %v, want ErrMergeTooLarge", err)
	}
	if after := storeBytes(t, f.store); len(after) != len(before) {
		t.Fatal("a refused merge wrote")
	}
	mustMerge(t, f, src, f.main, merge.FastForward)
}

// A merge refuses, typed and before any write, a branch merged into itself
// (ErrInvalidArgument; red without the check: it would report "already up
// to date") and any write on a read-only handle (kernel.ErrReadOnly); a dry
// run on a read-only handle computes the outcome and writes nothing.
func TestMergeRefusals(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opSetA.do(t, f, src, true)
	ro, err := Open(ctx, f.store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7), ReadOnly: true}})
	must(t, err)
	before := storeBytes(t, f.store)
	for _, tc := range []struct {
		name     string
		g        *Graph
		src, tgt kernel.BranchRef
		opts     MergeOptions
		want     error // nil: the dry run's outcome
	}{
		{"into itself", f.g, f.main, f.main, MergeOptions{}, kernel.ErrInvalidArgument},
		{"into itself, dry run", f.g, src, src, MergeOptions{DryRun: true}, kernel.ErrInvalidArgument},
		{"read-only", ro, src, f.main, MergeOptions{}, kernel.ErrReadOnly},
		{"read-only, dry run", ro, src, f.main, MergeOptions{DryRun: true}, nil},
	} {
		res, err := tc.g.Merge(ctx, tc.src, tc.tgt, kernel.LineageIntent{Actor: "test"}, tc.opts)
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		case tc.want == nil && (err != nil || res.Outcome != merge.FastForward || res.Commit.ID != (kernel.CommitID{})):
			t.Errorf("%s: %+v, %v, want a fast-forward, nothing written", tc.name, res, err)
		}
	}
	if after := storeBytes(t, f.store); !maps.Equal(after, before) {
		t.Fatalf("a refused merge or a dry run wrote: %d keys, was %d", len(after), len(before))
	}
}
