package data

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/objstore"
)

// scriptStore runs every call through script (when set): script decides
// whether the inner call runs (call) and what the caller sees.
type scriptStore struct {
	objstore.Store
	script func(ctx context.Context, op objstore.Op, key string, call func() error) error
}

func (s *scriptStore) run(ctx context.Context, op objstore.Op, key string, call func() error) error {
	if s.script == nil {
		return call()
	}
	return s.script(ctx, op, key, call)
}

func (s *scriptStore) Get(ctx context.Context, key string) (o objstore.Object, err error) {
	err = s.run(ctx, objstore.OpGet, key, func() (err error) { o, err = s.Store.Get(ctx, key); return err })
	return o, err
}

func (s *scriptStore) Head(ctx context.Context, key string) (a objstore.Attrs, err error) {
	err = s.run(ctx, objstore.OpHead, key, func() (err error) { a, err = s.Store.Head(ctx, key); return err })
	return a, err
}

func (s *scriptStore) List(ctx context.Context, prefix, after string, limit int) (p objstore.ListPage, err error) {
	err = s.run(ctx, objstore.OpList, prefix, func() (err error) { p, err = s.Store.List(ctx, prefix, after, limit); return err })
	return p, err
}

func (s *scriptStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (etag string, err error) {
	err = s.run(ctx, objstore.OpPut, key, func() (err error) { etag, err = s.Store.Put(ctx, key, data, cond); return err })
	return etag, err
}

func (s *scriptStore) Delete(ctx context.Context, key string) error {
	return s.run(ctx, objstore.OpDelete, key, func() error { return s.Store.Delete(ctx, key) })
}

func isRead(op objstore.Op) bool {
	return op == objstore.OpGet || op == objstore.OpHead || op == objstore.OpList
}

// mintedID is the commit id an ambiguous error names (zero if none).
func mintedID(err error) kernel.CommitID {
	var ou *kernel.OutcomeUnknownError
	var ce *kernel.ContentionError
	switch {
	case errors.As(err, &ou):
		return ou.CommitID
	case errors.As(err, &ce):
		return ce.CommitID
	}
	return kernel.CommitID{}
}

// commitsSince returns the commits on b after commit from, newest first
// (first parents; at most 8).
func commitsSince(t *testing.T, g *Graph, b kernel.BranchRef, from kernel.CommitID) []kernel.Commit {
	t.Helper()
	c, err := g.Kernel().Head(ctx, b)
	must(t, err)
	var out []kernel.Commit
	for range 8 {
		if c.ID == from {
			return out
		}
		out = append(out, c)
		if c, err = g.Kernel().Commit(ctx, c.Parents[0]); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("commit %s not within 8 first parents of the head of %s", from, b)
	return nil
}

// mergeCommits returns the merge commits of cs, failing the test on any
// commit that is neither a merge of source nor a recovery (the roll-back
// of an abandoned merge).
func mergeCommits(t *testing.T, cs []kernel.Commit, source kernel.CommitID) []kernel.Commit {
	t.Helper()
	var out []kernel.Commit
	for _, c := range cs {
		switch {
		case c.Kind == format.KindMerge && len(c.Parents) == 2 && c.Parents[1] == source:
			out = append(out, c)
		case c.Kind != format.KindRecovery:
			t.Fatalf("commit %+v on the target: want only the merge and recovery", c)
		}
	}
	return out
}

// A merge round whose publish lost its acknowledgement is never run again:
// it reports its commit when the read-back settles the write, and
// otherwise an error matching objstore.ErrAmbiguous (naming the commit it
// minted) on every exit: reads refused, a read outage past the retry
// budget, a cancelled context. It writes no second manifest; the target
// holds exactly the one merge commit if the write landed, none if it did
// not, and a caller that merges again after recovery gets "already up to
// date" or the one merge. Both publish paths: a merge with table changes
// (kernel Write, under a sidecar) and a net-zero one (a bare Publish).
func TestMergeLostAckIsNeverRerun(t *testing.T) {
	exits := []struct {
		name string
		// exit handles every call after the lost acknowledgement.
		exit      func(cancel context.CancelFunc) func(ctx context.Context, op objstore.Op, key string, call func() error) error
		readsBack bool // the read-back succeeds: the merge reports its commit
		also      error
	}{
		{"read back", func(context.CancelFunc) func(context.Context, objstore.Op, string, func() error) error {
			return func(_ context.Context, _ objstore.Op, _ string, call func() error) error { return call() }
		}, true, nil},
		{"reads refused", func(context.CancelFunc) func(context.Context, objstore.Op, string, func() error) error {
			return func(_ context.Context, op objstore.Op, key string, call func() error) error {
				if isRead(op) {
					return objstore.NewError(op, key, objstore.ErrRejected, errors.New("refused"))
				}
				return call()
			}
		}, false, objstore.ErrRejected},
		{"read outage", func(context.CancelFunc) func(context.Context, objstore.Op, string, func() error) error {
			return func(_ context.Context, op objstore.Op, key string, call func() error) error {
				if isRead(op) {
					return objstore.NewError(op, key, objstore.ErrTransient, errors.New("outage"))
				}
				return call()
			}
		}, false, objstore.ErrTransient},
		{"context cancelled", func(cancel context.CancelFunc) func(context.Context, objstore.Op, string, func() error) error {
			return func(ctx context.Context, _ objstore.Op, _ string, _ func() error) error {
				cancel()
				return ctx.Err()
			}
		}, false, context.Canceled},
	}
	paths := []struct {
		name string
		op   mergeOp // the source's change
		want merge.Outcome
	}{
		{"write", opRmEdge, merge.Merged},
		{"publish", opNetZero, merge.Merged},
	}
	for _, path := range paths {
		for _, exit := range exits {
			for _, applied := range []bool{true, false} {
				name := path.name + "/" + exit.name + "/not applied"
				if applied {
					name = path.name + "/" + exit.name + "/applied"
				}
				t.Run(name, func(t *testing.T) {
					lostAckMergeCase(t, path.op, path.want, applied, exit.readsBack, exit.also, exit.exit)
				})
			}
		}
	}
}

func lostAckMergeCase(t *testing.T, op mergeOp, want merge.Outcome, applied, readsBack bool, also error,
	exit func(context.CancelFunc) func(context.Context, objstore.Op, string, func() error) error) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	op.do(t, f, src, true)
	opAddNode.do(t, f, f.main, false) // the target moved too: a real merge
	pre, err := f.g.Kernel().Head(ctx, f.main)
	must(t, err)
	srcHead, err := f.g.Kernel().Head(ctx, src)
	must(t, err)
	ss := &scriptStore{Store: f.store}
	g, err := Open(ctx, ss, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7)}})
	must(t, err)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	manifests := format.NewKeys(testRoot).BranchPrefix(f.main.Name())
	after := exit(cancel)
	lost, rewrites := false, 0
	ss.script = func(ctx context.Context, op objstore.Op, key string, call func() error) error {
		isManifest := op == objstore.OpPut && strings.HasPrefix(key, manifests)
		if lost {
			if isManifest {
				rewrites++
			}
			return after(ctx, op, key, call)
		}
		if !isManifest {
			return call()
		}
		lost = true
		if applied {
			if err := call(); err != nil {
				return err
			}
		}
		return objstore.NewAmbiguousError(op, key, objstore.ErrTransient, errors.New("ack lost"))
	}
	res, merr := g.Merge(mctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	ss.script = nil
	if !lost {
		t.Fatal("the merge wrote no manifest: the fault was not injected")
	}
	if res.Rounds > 1 {
		t.Fatalf("the merge ran %d rounds after a round with an unknown outcome", res.Rounds)
	}
	// The truth, read past the faults.
	r, err := Open(ctx, f.store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.EnvAt(8, nil, kerneltest.Later)}})
	must(t, err)
	landed := commitsSince(t, r, f.main, pre.ID)
	merges := mergeCommits(t, landed, srcHead.ID)
	switch {
	case readsBack:
		if merr != nil || res.Outcome != want || len(landed) != 1 || len(merges) != 1 || res.Commit.ID != merges[0].ID {
			t.Fatalf("merge = %+v, %v; landed %v: want the one merge commit reported", res, merr, landed)
		}
	default:
		if merr == nil || !objstore.IsAmbiguous(merr) || (also != nil && !errors.Is(merr, also)) {
			t.Fatalf("merge = %v, want an error matching objstore.ErrAmbiguous and %v", merr, also)
		}
		if applied && (len(merges) != 1 || mintedID(merr) != merges[0].ID) {
			t.Fatalf("the error names commit %s, landed %v: want the one lost-ack merge", mintedID(merr), landed)
		}
		if !applied && len(merges) != 0 {
			t.Fatalf("landed %v, want no merge: the lost write never applied", landed)
		}
		if rewrites != 0 {
			t.Fatalf("%d manifest writes after the unresolved one", rewrites)
		}
	}
	// A caller that merges again, after recovery, never gets a second merge.
	again := want
	if len(merges) == 1 {
		again = merge.AlreadyUpToDate
	}
	if res, err := r.Merge(ctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{}); err != nil || res.Outcome != again {
		t.Fatalf("merge again: %+v, %v, want %v", res, err, again)
	}
	if n := len(mergeCommits(t, commitsSince(t, r, f.main, pre.ID), srcHead.ID)); n != 1 {
		t.Fatalf("%d merge commits on the target after merging again, want one", n)
	}
}

// A round whose error is both "the target moved" and ambiguous is not run
// again: the kernel reports a moved head as ambiguous when the merge's
// context ends after its table versions were written (the sidecar is left
// for recovery, kernel K4), and a second round could only report a
// definite error (or publish) for an outcome that is still open. Here a
// commit lands on the target after the merge wrote its first object, and
// the context is cancelled right after the publish reads that new head.
// Red without the driver's ambiguity guard: the merge runs a second round,
// which fails with a definite context.Canceled.
func TestAmbiguousMovedRoundIsNotRerun(t *testing.T) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	opRmEdge.do(t, f, src, true)
	opAddNode.do(t, f, f.main, false)
	srcHead, err := f.g.Kernel().Head(ctx, src)
	must(t, err)
	ss := &scriptStore{Store: f.store}
	g, err := Open(ctx, ss, testRoot, Options{Kernel: kernel.Options{Env: testEnv(7), CounterWrites: true}}) // a format-7 round: its sidecar makes the cancelled round ambiguous
	must(t, err)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var moved kernel.Commit
	movedKey := ""
	ss.script = func(ctx context.Context, op objstore.Op, key string, call func() error) error {
		if op == objstore.OpPut && moved.ID == (kernel.CommitID{}) {
			// The target moves between the merge's reads and its publish.
			var perr error
			moved, perr = f.g.Kernel().Publish(ctx, f.main, nil, kernel.LineageIntent{Actor: "other"}, nil)
			must(t, perr)
			movedKey = format.NewKeys(testRoot).Manifest(f.main.Name(), moved.Incarnation, moved.ManifestVersion)
		}
		err := call()
		if op == objstore.OpGet && key == movedKey {
			cancel() // the caller gives up just after the publish saw the moved head
		}
		return err
	}
	res, merr := g.Merge(mctx, src, f.main, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	ss.script = nil
	if movedKey == "" {
		t.Fatal("the merge wrote nothing: the target never moved")
	}
	if !errors.Is(merr, kernel.ErrHeadMoved) || !objstore.IsAmbiguous(merr) || res.Rounds != 1 {
		t.Fatalf("merge = rounds %d, %v; want one round ending ambiguous with the moved head", res.Rounds, merr)
	}
	r, err := Open(ctx, f.store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.EnvAt(8, nil, kerneltest.Later)}})
	must(t, err)
	if n := len(mergeCommits(t, commitsSince(t, r, f.main, moved.ID), srcHead.ID)); n != 0 {
		t.Fatalf("%d merge commits on the target, want none: the round computed on the old head published", n)
	}
	mustMerge(t, &mergeFixture{t: t, store: f.store, g: r, main: f.main}, src, f.main, merge.Merged)
	if n := len(mergeCommits(t, commitsSince(t, r, f.main, moved.ID), srcHead.ID)); n != 1 {
		t.Fatalf("%d merge commits on the target after merging again, want one", n)
	}
}
