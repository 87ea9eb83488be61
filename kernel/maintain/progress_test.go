package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// tickStore advances the clock by tick on every store call while on: a
// collection whose time bound is counted in requests (no sleep).
type tickStore struct {
	objstore.Store
	clock *kernel.ManualClock
	tick  time.Duration
	on    bool
}

func (s *tickStore) advance() {
	if s.on {
		s.clock.Advance(s.tick)
	}
}

func (s *tickStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.advance()
	return s.Store.Get(ctx, key)
}

func (s *tickStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	s.advance()
	return s.Store.Head(ctx, key)
}

func (s *tickStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	s.advance()
	return s.Store.Put(ctx, key, b, c)
}

func (s *tickStore) Delete(ctx context.Context, key string) error {
	s.advance()
	return s.Store.Delete(ctx, key)
}

func (s *tickStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	s.advance()
	return s.Store.List(ctx, prefix, after, limit)
}

// progressRun is what K bounded collections between batches of writes
// left: the keys on the store, what the runs deleted per category, and
// the runs cut short by their bound.
type progressRun struct {
	keys    int
	deleted maintain.Report // Deleted summed over the runs
	partial []maintain.Report
}

// progressCategories are the categories every bounded run of
// boundedHistory has garbage in.
func progressCategories(r maintain.Report) map[string]int {
	return map[string]int{"manifests": r.Manifests.Deleted, "table versions": r.TableVersions.Deleted, "fragments": r.Fragments.Deleted,
		"adjacency": r.Adjacency.Deleted, "commit indexes": r.CommitIndexes.Deleted}
}

// changes commits n changes on main: a renamed node (a new node table
// version and fragment) and an inserted edge (a new edge table version,
// fragment and adjacency index).
func (f *fixture) changes(main kernel.BranchRef, n int, edge *int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		f.commit(main, func(tx *data.Txn) error {
			*edge++
			if err := tx.Update("Person", person("p00", fmt.Sprint("v", *edge))); err != nil {
				return err
			}
			return tx.Insert("Knows", data.Row{ID: fmt.Sprint("k", *edge), From: fmt.Sprintf("p%02d", *edge%20), To: fmt.Sprintf("p%02d", (*edge+1)%20)})
		})
	}
}

// boundedHistory writes a backlog of 60 changes, then k times: a batch of
// 8 changes and a branch forked and deleted (a dead name and its marker),
// and one collection whose time bound allows about 300 store requests
// (one tenth of a second each): more than a batch's garbage and the load,
// less than the backlog's, so the first runs are cut short.
func boundedHistory(t *testing.T, k int) progressRun {
	t.Helper()
	f := newObjectsFixture(t) // every category, fragment objects included, has garbage
	main := f.branch("main")
	f.seed(main, 0)
	edge := 0
	f.changes(main, 60, &edge)
	ts := &tickStore{Store: f.store, clock: f.clock, tick: 100 * time.Millisecond}
	collector, err := maintain.New(ts, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{7})})
	if err != nil {
		t.Fatal(err)
	}
	bounded := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}, MaxDuration: time.Minute + 30*time.Second}
	var out progressRun
	for run := 0; run < k; run++ {
		name := fmt.Sprint("feat", run)
		f.fork(name, main)
		if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
			t.Fatal(err)
		}
		f.changes(main, 8, &edge)
		f.clock.Advance(10 * time.Minute)
		ts.on = true
		rep, err := collector.Collect(ctx, bounded)
		ts.on = false
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if !rep.Complete {
			out.partial = append(out.partial, rep)
		}
		addDeleted(&out.deleted, rep)
	}
	out.keys = countAll(t, f.store)
	return out
}

func addDeleted(sum *maintain.Report, r maintain.Report) {
	for _, p := range []struct{ to, from *maintain.Counts }{
		{&sum.Manifests, &r.Manifests}, {&sum.TableVersions, &r.TableVersions}, {&sum.Fragments, &r.Fragments},
		{&sum.Adjacency, &r.Adjacency}, {&sum.CommitIndexes, &r.CommitIndexes}, {&sum.Leases, &r.Leases},
		{&sum.NameMarkers, &r.NameMarkers}, {&sum.ForkMarkers, &r.ForkMarkers}, {&sum.Audits, &r.Audits},
		{&sum.Plans, &r.Plans}, {&sum.Records, &r.Records},
	} {
		p.to.Deleted += p.from.Deleted
	}
}

// countAll counts every key of the store.
func countAll(t *testing.T, s objstore.Store) int {
	t.Helper()
	n, after := 0, ""
	for page := 0; page < 1000; page++ {
		p, err := s.List(ctx, "", after, objstore.MaxListLimit)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Keys)
		if !p.Truncated || len(p.Keys) == 0 {
			return n
		}
		after = p.Keys[len(p.Keys)-1]
	}
	t.Fatal("more than 1000 pages")
	return n
}

// TestBoundedCollectionsMakeProgress is docs/gc.md §7's progress rule: a
// history whose garbage outgrows what one time-bounded run can delete is
// collected so that every run cut short by its bound still deletes in
// every category with garbage (manifests, table versions, fragments,
// adjacency objects, commit indexes), and the keys left after K such runs
// between batches of writes do not grow with K. Before the split, a run
// cut short spent its time on manifests and table versions and deleted no
// fragment, adjacency object or commit index at all.
func TestBoundedCollectionsMakeProgress(t *testing.T) {
	short, long := boundedHistory(t, 5), boundedHistory(t, 20)
	d := long.deleted
	t.Logf("K=5: %d keys (%d runs cut short); K=20: %d keys (%d cut short)", short.keys, len(short.partial), long.keys, len(long.partial))
	t.Logf("deleted over K=20: manifests %d, table versions %d, fragments %d, adjacency %d, commit indexes %d, name markers %d, fork markers %d",
		d.Manifests.Deleted, d.TableVersions.Deleted, d.Fragments.Deleted, d.Adjacency.Deleted, d.CommitIndexes.Deleted,
		d.NameMarkers.Deleted, d.ForkMarkers.Deleted)
	if len(long.partial) == 0 {
		t.Fatal("every bounded run finished: the history does not outgrow the bound")
	}
	for i, r := range long.partial {
		for what, n := range progressCategories(r) { //detlint:ordered test check, order-free
			if n == 0 {
				t.Errorf("run cut short #%d deleted no %s: %+v", i, what, r)
			}
		}
	}
	// A dead name's marker is garbage too (its fork marker is retired by
	// DeleteBranch itself).
	if d.NameMarkers.Deleted == 0 {
		t.Error("no name marker deleted over 20 bounded runs")
	}
	// Fifteen more batches may leave at most about one more batch's
	// garbage behind (~100 keys), not fifteen.
	if long.keys > short.keys+100 {
		t.Errorf("keys after 20 bounded runs %d, after 5 %d: the backlog grows with the runs", long.keys, short.keys)
	}
}

// TestManifestSweepCutShortDeletesNothingLater: the manifest sweep
// keeps its order before everything else (docs/gc.md §7): a run whose
// manifest sweep is cut short (MaxDeletes here, fewer than main's garbage
// manifests) deletes nothing of a later category, so a garbage
// manifest it left still reaches everything it names, and a Pin of it
// after the run (no record left to bind it) reads whole, or answers
// ErrReclaimed when the manifest is gone. Sharing the deletes with the
// manifest sweep too deleted main's garbage table versions while their
// manifests stayed, and such a Pin succeeded on a snapshot that no longer
// read (ErrReclaimed on its table version).
func TestManifestSweepCutShortDeletesNothingLater(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	cs := f.seed(main, 12)
	for i := 0; i < 10; i++ {
		name := fmt.Sprint("a", i)
		f.fork(name, main)
		if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(10 * time.Minute)
	cut := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}, MaxDeletes: 5}
	rep, err := f.m.Collect(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	later := rep.TableVersions.Deleted + rep.Fragments.Deleted + rep.Adjacency.Deleted + rep.CommitIndexes.Deleted
	if rep.Complete || rep.Manifests.Deleted != 5 || later != 0 {
		t.Errorf("want a run cut short in its manifest sweep, deleting nothing later: %+v", rep)
	}
	pinned := 0
	for _, c := range cs[:len(cs)-1] {
		snap, err := f.g.Kernel().SnapshotAtCommit(ctx, c.ID)
		if err != nil {
			t.Fatal(err) // the handle's cache still has every manifest
		}
		id, err := f.m.Pin(ctx, snap, time.Hour, "reader")
		switch {
		case errors.Is(err, kernel.ErrReclaimed):
		case err != nil:
			t.Fatalf("pin: %v", err)
		default:
			pinned++
			if _, err := f.reopenRead(c.ID); err != nil {
				t.Fatalf("Pin of commit %s succeeded, then its snapshot reads: %v", c.ID, err)
			}
			if err := f.m.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pinned == 0 {
		t.Fatal("no garbage manifest of main was left to pin")
	}
	if n := countPrefix(t, f.store, format.NewKeys(root).CollectionPrefix()); n != 0 {
		t.Fatalf("%d collection records left after the run", n)
	}
	f.collect(maintain.Policy{Policy: cut.Policy})
}
