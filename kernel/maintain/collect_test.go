package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var ctx = context.Background()

const root = "graphs/g"

// hookStore runs hook once before forwarding the first Put whose key
// contains match (a deterministic interleaving point).
type hookStore struct {
	objstore.Store
	match string
	hook  func()
	// torn, if set, is every key whose reads fail as the fs store's do
	// for a file a crash tore (objstore.ErrCorruptObject).
	torn func(key string) bool
	// getHook, if set, runs once before forwarding the first Get of the
	// key getMatch.
	getMatch string
	getHook  func()
}

func (s *hookStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.getHook != nil && key == s.getMatch {
		h := s.getHook
		s.getHook = nil
		h()
	}
	if s.torn != nil && s.torn(key) {
		return objstore.Object{}, objstore.NewError(objstore.OpGet, key, objstore.ErrRejected, fmt.Errorf("torn: %w", objstore.ErrCorruptObject))
	}
	return s.Store.Get(ctx, key)
}

func (s *hookStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.hook != nil && strings.Contains(key, s.match) {
		h := s.hook
		s.hook = nil
		h()
	}
	return s.Store.Put(ctx, key, b, c)
}

type fixture struct {
	t     *testing.T
	store *hookStore
	// kst is the store the handles and the Maintainer use: store, or
	// (newDeferringFixture) store with the simulator's deferred
	// durability, whose machine crash base.MachineCrash is.
	kst   objstore.Store
	base  *sim.Store
	clock *kernel.ManualClock
	g     *data.Graph
	m     *maintain.Maintainer
	// inline is data.Options.InlineFragments of every handle (0: default).
	inline int
	// embed is data.Options.EmbedFragments of every handle (0: default;
	// -1: every fragment an object, newObjectsFixture).
	embed int
	// fanout is data.Options.IndexFanout of every handle (0: default).
	fanout int
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, 0) }

// newObjectsFixture is newFixture whose handles embed no fragment in its
// table version (format 9): every fragment is an object, for tests about
// collecting fragment objects.
func newObjectsFixture(t *testing.T) *fixture { return newFixtureEmbed(t, 0, -1) }

// newFixtureWith is newFixture whose handles list at most inline
// fragment infos inline (0: the default), paging the rest.
func newFixtureWith(t *testing.T, inline int) *fixture { return newFixtureAll(t, inline, 0, 0) }

// newFixtureEmbed is newFixtureWith whose handles take embed as
// data.Options.EmbedFragments.
func newFixtureEmbed(t *testing.T, inline, embed int) *fixture {
	return newFixtureAll(t, inline, embed, 0)
}

// newFixtureOpts is newFixtureWith whose handles also write indexes of
// IndexFanout fanout (0: the default).
func newFixtureOpts(t *testing.T, inline, fanout int) *fixture {
	return newFixtureAll(t, inline, 0, fanout)
}

// newFixtureAll is newFixture whose handles take inline, embed and fanout
// as data.Options.InlineFragments, EmbedFragments and IndexFanout.
func newFixtureAll(t *testing.T, inline, embed, fanout int) *fixture {
	t.Helper()
	base := sim.New(sim.Config{Seed: 1})
	store := &hookStore{Store: base}
	return newFixtureOn(t, base, store, store, inline, embed, fanout)
}

// newDeferringFixture is newFixture on the simulator's deferring view
// (sim.Deferring): deferred writes, a publish's commit index among them,
// stay volatile until synced, and f.base.MachineCrash loses them.
func newDeferringFixture(t *testing.T) *fixture {
	t.Helper()
	base := sim.New(sim.Config{Seed: 1})
	d := base.Deferring()
	store := &hookStore{Store: d}
	return newFixtureOn(t, base, store, deferringStore{hookStore: store, d: d}, 0, 0, 0)
}

// deferringStore is a hookStore over a sim.Deferring that keeps its
// deferred-durability capabilities (an embedded objstore.Store hides them).
type deferringStore struct {
	*hookStore
	d *sim.Deferring
}

func (s deferringStore) PutDeferred(ctx context.Context, key string, b []byte) (string, error) {
	return s.d.PutDeferred(ctx, key, b)
}

func (s deferringStore) PutDeferredIntact(ctx context.Context, key string, b []byte, c objstore.Condition) (string, bool, error) {
	return s.d.PutDeferredIntact(ctx, key, b, c)
}

func (s deferringStore) SyncDeferred(ctx context.Context, keys []string) error {
	return s.d.SyncDeferred(ctx, keys)
}

func (s deferringStore) PutAfterDeferred(ctx context.Context, key string, b []byte, c objstore.Condition, deferred []string) (string, error) {
	return s.d.PutAfterDeferred(ctx, key, b, c, deferred)
}

// fixtureNoRiding makes the fixtures' handles write every table version as
// an object (kernel.Options.NoRiding): the collector's tests of version
// objects (reclaiming them, reading them by what changed, their grace
// rule) need objects to judge. withRiding turns it off for a test of
// versions riding their manifests (format 11).
var fixtureNoRiding = true

// withRiding makes the rest of t's fixtures write versions riding their
// manifests (format 11), as a production handle does.
func withRiding(t *testing.T) {
	fixtureNoRiding = false
	t.Cleanup(func() { fixtureNoRiding = true })
}

// newFixtureOn is newFixtureAll on base, seen through store (the hooks)
// and kst (what handles and the Maintainer use).
func newFixtureOn(t *testing.T, base *sim.Store, store *hookStore, kst objstore.Store, inline, embed, fanout int) *fixture {
	t.Helper()
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	env := func(seed byte) kernel.Env {
		return kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{seed})}
	}
	s, err := schema.Parse([]byte("node Person { name: string }\nedge Knows: Person -> Person\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := data.Init(ctx, kst, root, s, data.Options{Kernel: kernel.Options{Env: env(1), Grace: time.Minute, NoRiding: fixtureNoRiding}, InlineFragments: inline, EmbedFragments: embed, IndexFanout: fanout})
	if err != nil {
		t.Fatal(err)
	}
	m, err := maintain.New(kst, root, env(2))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: store, kst: kst, base: base, clock: clock, g: g, m: m, inline: inline, embed: embed, fanout: fanout}
}

var policy = maintain.Policy{Policy: gc.Policy{KeepLast: 3, Grace: time.Minute, SkewMargin: time.Minute}}

func (f *fixture) branch(name string) kernel.BranchRef {
	f.t.Helper()
	b, err := f.g.Branch(ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// fork creates branch name from b.
func (f *fixture) fork(name string, from kernel.BranchRef) kernel.BranchRef {
	f.t.Helper()
	b, err := f.g.Kernel().CreateBranch(ctx, name, from)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// commit runs one transaction on branch b and advances the clock a minute.
func (f *fixture) commit(b kernel.BranchRef, do func(tx *data.Txn) error) kernel.Commit {
	f.t.Helper()
	tx, err := f.g.Begin(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := do(tx); err != nil {
		f.t.Fatal(err)
	}
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "c"})
	if err != nil {
		f.t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	return c
}

// crashBeforePublish inserts one Person row on b through a handle that
// crashes right before its publish (failpoint.BeforePublish): the write's
// objects, its table version (named per attempt, or counter-named with a
// sidecar first when counter: a format-7 write) and nothing published.
func (f *fixture) crashBeforePublish(b kernel.BranchRef, counter bool) {
	f.t.Helper()
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Crash, Times: 1})
	crashing, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{CounterWrites: counter, NoRiding: fixtureNoRiding,
		Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{5}), Failpoints: fps}, Grace: time.Minute}, EmbedFragments: f.embed})
	if err != nil {
		f.t.Fatal(err)
	}
	tx, err := crashing.Begin(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := tx.Insert("Person", person("crashed", "c")); err != nil {
		f.t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crasher"}); !errors.Is(err, failpoint.ErrCrashed) {
		f.t.Fatalf("crashing commit: %v", err)
	}
}

func person(id, name string) data.Row { return data.Row{ID: id, Props: map[string]any{"name": name}} }

// seed inserts 20 people, then renames p00 n times (each a new fragment).
func (f *fixture) seed(b kernel.BranchRef, n int) []kernel.Commit {
	f.t.Helper()
	var cs []kernel.Commit
	cs = append(cs, f.commit(b, func(tx *data.Txn) error {
		for i := 0; i < 20; i++ {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%02d", i), "n")); err != nil {
				return err
			}
		}
		return nil
	}))
	for i := 0; i < n; i++ {
		cs = append(cs, f.commit(b, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("v", i))) }))
	}
	return cs
}

// readAll reads every row of the snapshot at commit c (every fragment)
// and returns p00's name.
func (f *fixture) readAll(c kernel.CommitID) (string, error) {
	s, err := f.g.SnapshotAtCommit(ctx, c)
	if err != nil {
		return "", err
	}
	rr, err := s.Scan(ctx, "Person")
	if err != nil {
		return "", err
	}
	defer rr.Release()
	rows := 0
	for rr.Next() {
		rows += int(rr.Record().NumRows())
	}
	if err := rr.Err(); err != nil {
		return "", err
	}
	if rows != 20 {
		return "", fmt.Errorf("%d rows, want 20", rows)
	}
	r, ok, err := s.Get(ctx, "Person", "p00")
	if err != nil || !ok {
		return "", fmt.Errorf("get p00: %v %v", ok, err)
	}
	return r.Props["name"].(string), nil
}

// reopen returns a fresh read-write handle (empty caches).
func (f *fixture) reopen() *data.Graph {
	f.t.Helper()
	g, err := data.Open(ctx, f.kst, root, data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})}, Grace: time.Minute, NoRiding: fixtureNoRiding}, InlineFragments: f.inline, EmbedFragments: f.embed, IndexFanout: f.fanout})
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

func (f *fixture) collect(p maintain.Policy) maintain.Report {
	f.t.Helper()
	rep, err := f.m.Collect(ctx, p)
	if err != nil {
		f.t.Fatalf("collect: %v", err)
	}
	if !rep.Complete {
		f.t.Fatalf("collect incomplete: %+v", rep)
	}
	return rep
}

// TestCollectKeepsRetentionAndReclaimsTheRest: after a collection keeping
// the last 3 commits, those commits read fully and correctly, older ones
// answer ErrReclaimed (never ErrCorrupt, never a wrong answer), Log stops
// cleanly at the boundary, writes go on, and a second collection deletes
// nothing.
func TestCollectKeepsRetentionAndReclaimsTheRest(t *testing.T) {
	f := newObjectsFixture(t) // fragment objects to reclaim (none embedded)
	main := f.branch("main")
	cs := f.seed(main, 12)
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.Manifests.Deleted == 0 || rep.TableVersions.Deleted == 0 || rep.Fragments.Deleted == 0 {
		t.Fatalf("nothing reclaimed: %+v", rep)
	}
	for i, c := range cs[len(cs)-3:] {
		name, err := f.readAll(c.ID)
		if want := fmt.Sprint("v", 9+i); err != nil || name != want {
			t.Fatalf("retained commit %d: %q %v, want %q", i, name, err, want)
		}
	}
	cold := f.reopen() // a handle's cache of immutable objects may still answer, correctly
	for _, c := range cs[:len(cs)-3] {
		if _, err := f.reopenRead(c.ID); !errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrCorrupt) {
			t.Fatalf("collected commit %s: %v, want ErrReclaimed", c.ID, err)
		}
		if _, err := cold.Kernel().Commit(ctx, c.ID); !errors.Is(err, kernel.ErrReclaimed) {
			t.Fatalf("Commit(%s) = %v, want ErrReclaimed", c.ID, err)
		}
	}
	if _, err := cold.Kernel().SnapshotAtVersion(ctx, main, 1); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("SnapshotAtVersion(1) = %v, want ErrReclaimed", err)
	}
	var logged int
	cursor := kernel.LogCursor("")
	for i := 0; i < 10; i++ {
		page, err := cold.Kernel().Log(ctx, main, cursor, 2)
		if err != nil {
			t.Fatalf("log: %v", err)
		}
		logged += len(page.Commits)
		if page.Next == "" {
			if !page.Reclaimed {
				t.Fatalf("log ended without marking the retention boundary")
			}
			break
		}
		cursor = page.Next
	}
	if logged != 3 {
		t.Fatalf("log shows %d commits, want the 3 retained", logged)
	}
	c := f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", "after")) })
	if name, err := f.readAll(c.ID); err != nil || name != "after" {
		t.Fatalf("write after collection: %q %v", name, err)
	}
	f.clock.Advance(10 * time.Minute)
	rep = f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 4, Grace: time.Minute, SkewMargin: time.Minute}})
	if rep.Manifests.Deleted+rep.TableVersions.Deleted+rep.Fragments.Deleted != 0 {
		t.Fatalf("second collection with the same retention deleted %+v", rep)
	}
}

// TestCollectKeepsWhatAWriteStaged: a collection with zero retention runs
// while a transaction is between its fragment writes and its publish; the
// write's staged objects are young (the grace rule), so nothing it needs is
// deleted and the commit reads back whole. Later, with the clock past the
// grace period, what the write replaced is collected.
func TestCollectKeepsWhatAWriteStaged(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 3)
	f.clock.Advance(10 * time.Minute)
	zero := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
	var during maintain.Report
	f.store.match, f.store.hook = "/branches/", func() { // fragment and table version staged, pinned by nothing yet
		rep, err := f.m.Collect(ctx, zero)
		if err != nil {
			t.Errorf("collect during the write: %v", err)
		}
		during = rep
	}
	c := f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", "staged")) })
	if during.Manifests.Deleted == 0 {
		t.Fatalf("the concurrent collection ran without reclaiming anything: %+v", during)
	}
	if name, err := f.readAll(c.ID); err != nil || name != "staged" {
		t.Fatalf("the write staged during a collection: %q %v", name, err)
	}
	f.clock.Advance(10 * time.Minute)
	f.collect(zero)
	if name, err := f.reopenRead(c.ID); err != nil || name != "staged" {
		t.Fatalf("head after a zero-retention collection: %q %v", name, err)
	}
}

func (f *fixture) reopenRead(c kernel.CommitID) (string, error) {
	g := f.g
	f.g = f.reopen()
	defer func() { f.g = g }()
	return f.readAll(c)
}

// TestCollectKeepsVersionsSharedByBranches: feat is forked from main and
// shares its table version; main moves on and keeps only its last commit.
// Reachability is computed across all branches, so feat still reads whole.
func TestCollectKeepsVersionsSharedByBranches(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	for i := 0; i < 5; i++ {
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("main", i))) })
	}
	f.clock.Advance(10 * time.Minute)
	f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	g := f.reopen()
	s, err := g.SnapshotAt(ctx, feat)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok, err := s.Get(ctx, "Person", "p00"); err != nil || !ok || r.Props["name"] != "v0" {
		t.Fatalf("feat's shared version after main's collection: %+v %v %v", r, ok, err)
	}
	if n, err := s.Count(ctx, "Person"); err != nil || n != 20 {
		t.Fatalf("feat count %d %v", n, err)
	}
}

// TestPinnedSnapshotSurvivesUntilReleased: a leased snapshot outside
// retention stays fully readable; after Release it is collected.
func TestPinnedSnapshotSurvivesUntilReleased(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	cs := f.seed(main, 1)
	old, err := f.g.Kernel().SnapshotAtCommit(ctx, cs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.m.Pin(ctx, old, time.Hour, "reader")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("new", i))) })
	}
	f.clock.Advance(10 * time.Minute)
	one := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
	if rep := f.collect(one); rep.Leases.Kept != 1 {
		t.Fatalf("lease not kept: %+v", rep)
	}
	if name, err := f.reopenRead(cs[1].ID); err != nil || name != "v0" {
		t.Fatalf("pinned snapshot: %q %v", name, err)
	}
	if err := f.m.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	f.collect(one)
	if _, err := f.reopenRead(cs[1].ID); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("released snapshot: %v, want ErrReclaimed", err)
	}
	if _, err := f.m.Pin(ctx, old, time.Hour, "late"); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("pin of a reclaimed snapshot: %v, want ErrReclaimed", err)
	}
}

// TestDeletedBranchCollectedAfterRetention: a deleted branch keeps its
// history while its tombstone is within KeepFor; after, everything only it
// reached is collected and the name still reads as deleted.
func TestDeletedBranchCollectedAfterRetention(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	for i := 0; i < 3; i++ {
		f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprint("f", i), "feat")) })
	}
	if err := f.g.Kernel().DeleteBranch(ctx, "feat"); err != nil {
		t.Fatal(err)
	}
	p := maintain.Policy{Policy: gc.Policy{KeepLast: 1, KeepFor: time.Hour, Grace: time.Minute, SkewMargin: time.Minute}}
	f.clock.Advance(10 * time.Minute)
	within := f.collect(p)
	f.clock.Advance(2 * time.Hour)
	after := f.collect(p)
	if after.TableVersions.Deleted < 3 || after.Manifests.Deleted < 4 {
		t.Fatalf("deleted branch not collected after retention: within %+v, after %+v", within, after)
	}
	if _, err := f.reopen().Branch(ctx, "feat"); !errors.Is(err, kernel.ErrBranchNotFound) {
		t.Fatalf("Branch(feat) after collection: %v, want ErrBranchNotFound", err)
	}
	if name, err := f.reopenRead(f.head(main)); err != nil || name != "v0" {
		t.Fatalf("main after collecting feat: %q %v", name, err)
	}
}

func (f *fixture) head(b kernel.BranchRef) kernel.CommitID {
	f.t.Helper()
	c, err := f.g.Kernel().Head(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	return c.ID
}

// TestMaintainCompactsThenCollects: one call compacts the branches that
// need it and collects; the heads read the same, and a second call right
// after compacts nothing.
func TestMaintainCompactsThenCollects(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	for i := 0; i < 15; i++ { // binary-counter merging leaves 4 small fragments
		f.commit(main, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("p%02d", i), "n")) })
	}
	f.clock.Advance(10 * time.Minute)
	p := maintain.RunPolicy{Collect: maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}}
	rep, err := maintain.Maintain(ctx, f.g, f.m, p)
	if err != nil {
		t.Fatal(err)
	}
	if tc := rep.Compactions["main"]; len(tc) != 1 || tc[0].FragmentsAfter != 1 || !rep.Collect.Complete {
		t.Fatalf("maintain report %+v", rep)
	}
	s, err := f.reopen().SnapshotAt(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, "Person"); err != nil || n != 15 {
		t.Fatalf("count after maintain %d %v", n, err)
	}
	rep, err = maintain.Maintain(ctx, f.g, f.m, p)
	if err != nil || len(rep.Compactions) != 0 {
		t.Fatalf("second maintain: %+v %v", rep, err)
	}
}

// TestCollectKeepsWhatAPendingSidecarNeeds: a writer crashed before its
// publish leaves a sidecar planned on manifest B; many commits and a
// collection keeping only the last one later, recovery still resolves it,
// because it reads every manifest since B and the collection kept them
// (the simulator found this: maint seed 4).
func TestCollectKeepsWhatAPendingSidecarNeeds(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	f.crashBeforePublish(main, false)
	for i := 0; i < 6; i++ { // within the recovery lease: no heal-first resolves the sidecar
		tx, err := f.g.Begin(ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Insert("Person", person(fmt.Sprint("later", i), "x")); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(10 * time.Minute)
	rep0 := f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	if rep0.Manifests.Deleted == 0 {
		t.Fatalf("nothing collected: %+v", rep0)
	}
	f.reopen() // a read-write open sweeps the sidecar (past its lease)
	if page, err := f.store.List(ctx, root+"/sidecars/", "", 10); err != nil || len(page.Keys) != 0 {
		t.Fatalf("sidecars after recovery: %v %v", page.Keys, err)
	}
}

// TestCollectKeepsTheAdjacencyIndexOfKeptVersions: an edge table's
// adjacency chunks and pages are kept while a kept version names them and
// collected with the versions that alone named them; Out and In on a cold
// handle answer the same after a collection keeping one commit.
func TestCollectKeepsTheAdjacencyIndexOfKeptVersions(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.commit(main, func(tx *data.Txn) error {
		for i := 0; i < 4; i++ {
			if err := tx.Insert("Person", person(fmt.Sprint("p", i), "n")); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < 12; i++ {
		f.commit(main, func(tx *data.Txn) error { // more edges than an adjacency delta holds: each commit rewrites pages
			for j := 0; j <= data.MaxAdjDeltaRows; j++ {
				if err := tx.Insert("Knows", data.Row{ID: fmt.Sprintf("k%02d-%02d", i, j), From: fmt.Sprint("p", (i+j)%4), To: fmt.Sprint("p", (i+j+1)%4)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	adjacency := func(g *data.Graph) string {
		s, err := g.SnapshotAt(ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i < 4; i++ {
			o, err := s.Out(ctx, "Knows", fmt.Sprint("p", i))
			if err != nil {
				t.Fatalf("Out: %v", err)
			}
			in, err := s.In(ctx, "Knows", fmt.Sprint("p", i))
			if err != nil {
				t.Fatalf("In: %v", err)
			}
			out = append(out, fmt.Sprint(len(o), "/", len(in)))
		}
		return strings.Join(out, ",")
	}
	want := adjacency(f.g)
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	if rep.Adjacency.Deleted == 0 || rep.Adjacency.Kept == 0 {
		t.Fatalf("adjacency objects: %+v", rep.Adjacency)
	}
	if got := adjacency(f.reopen()); got != want {
		t.Fatalf("adjacency after collection %s, want %s", got, want)
	}
}

// TestCollectKeepsTheIDIndexOfKeptVersions: a node table's id index
// (chunks and pages under R/adj/<table>/, data.adj.id) is collected with
// the versions that alone named it and kept while a kept version names it:
// after a collection keeping one commit, a cold handle's endpoint checks,
// which read that index, accept edges to every kept node.
func TestCollectKeepsTheIDIndexOfKeptVersions(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	for i := 0; i < 6; i++ {
		// More ids than an id delta holds (data.MaxIDDelta): every commit
		// rewrites the pages rather than riding the table version.
		f.commit(main, func(tx *data.Txn) error {
			rows := []data.Row{person(fmt.Sprint("p", i), "n")}
			for j := 0; j < data.MaxIDDelta; j++ {
				rows = append(rows, person(fmt.Sprintf("q%d-%02d", i, j), "n"))
			}
			return tx.Insert("Person", rows...)
		})
	}
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	if rep.Adjacency.Deleted == 0 || rep.Adjacency.Kept == 0 {
		t.Fatalf("id index objects: %+v", rep.Adjacency)
	}
	f.g = f.reopen()
	f.commit(main, func(tx *data.Txn) error {
		for i := 0; i < 6; i++ {
			if err := tx.Insert("Knows", data.Row{ID: fmt.Sprint("k", i), From: fmt.Sprint("p", i), To: fmt.Sprint("p", (i+1)%6)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestCollectKeepsForkPoints: a live branch's fork point (its first merge
// base) stays readable however far its source moved on and whatever the
// retention, so the branch can still be merged.
func TestCollectKeepsForkPoints(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	fork, err := f.g.Kernel().Head(ctx, feat)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("main", i))) })
	}
	f.clock.Advance(10 * time.Minute)
	f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	if name, err := f.reopenRead(fork.ID); err != nil || name != "v0" {
		t.Fatalf("fork point of a live branch after collection: %q %v", name, err)
	}
	if _, err := f.reopen().Kernel().MergeBase(ctx, main, feat); err != nil {
		t.Fatalf("merge base after collection: %v", err)
	}
}

// TestCollectKeepsMergeBases: branches merged into each other, then moved
// on past retention. The collection keeps the manifests their merge base
// needs (rule 3b: what every live pair's merge base loads), so after it
// MergeBase answers as before and merging again works — without the rule
// the base (the merged commit, far below either head) is collected and
// the merge fails with ErrReclaimed.
func TestCollectKeepsMergeBases(t *testing.T) { collectKeepsMergeBases(t, newFixture(t), lossHooks{}) }

// TestCollectKeepsMergeBasesWithoutCommitIndexes: commit indexes are aids
// an OS crash may lose (a publish writes its commit's index beside the
// manifest, and no sync makes it durable; docs/format.md), so a
// collection that finds a reach's index missing, torn or stale rebuilds
// that reach from the manifests, as its publish computed it, and keeps
// the same merge bases: after every index is lost (deleted, or read torn)
// the merge bases answer the same and the merges succeed. Red without
// readReachDepth's rebuild: the heads' merge bases are unknown, the collection
// deletes them and the merges fail with ErrReclaimed.
func TestCollectKeepsMergeBasesWithoutCommitIndexes(t *testing.T) {
	t.Run("deleted", func(t *testing.T) {
		collectKeepsMergeBases(t, newFixture(t), lossHooks{lose: func(f *fixture) { deleteCommitIndexes(t, f) }})
	})
	t.Run("torn", func(t *testing.T) {
		collectKeepsMergeBases(t, newFixture(t), lossHooks{lose: func(f *fixture) {
			f.store.torn = func(key string) bool { return strings.HasPrefix(key, root+"/index/commits/") }
		}})
	})
}

// TestCollectSyncsTheIndexesItKeepsBy: an index a handle rebuilt (writers
// crashed between their publishes and their index writes; here the
// indexes of each branch's last six commits are gone before the merge
// bases are asked for, and a fresh handle's MergeBase rebuilds them) is
// written with no sync of its own (writeCommitIndex), so a collection
// that read a reach from such an index, kept the merge bases it names and
// deleted the manifests in between must make the index durable first: an
// OS crash right after the collection (every volatile object lost) then
// leaves every merge base answering and the merges succeeding. Red
// without syncIndexes: the rebuilt indexes are lost, and rebuilding them
// again needs the manifests the collection deleted (ErrReclaimed).
func TestCollectSyncsTheIndexesItKeepsBy(t *testing.T) {
	collectKeepsMergeBases(t, newDeferringFixture(t), lossHooks{
		early: func(f *fixture) {
			// The last loop's 18 commits are the newest: their ids sort
			// last (a ULID starts with its time; the clock moves on with
			// every commit).
			page, err := f.store.List(ctx, root+"/index/commits/", "", 1000)
			if err != nil || page.Truncated || len(page.Keys) < 18 {
				t.Fatalf("list commit indexes: %d %v", len(page.Keys), err)
			}
			lost := 0
			for _, k := range page.Keys[len(page.Keys)-18:] {
				if err := f.store.Delete(ctx, k); err != nil {
					t.Fatal(err)
				}
				lost++
			}
			if lost != 18 {
				t.Fatalf("deleted %d commit indexes, want the last loop's 18", lost)
			}
		},
		lose: func(f *fixture) {
			if f.base.Volatile() == 0 {
				t.Fatal("no object volatile before the collection: the rebuilt commit indexes were synced")
			}

		},
		crash: func(f *fixture) { f.base.MachineCrash(0, 0) },
	})
}

// TestCollectSurvivesAFailedIndexSync: the collection's sync of the
// indexes it keeps merge bases by fails (an fsync's EIO:
// objstore.ErrSyncFailed, which the store then refuses to sync again);
// the run reads them back and writes them again durably, and after a
// machine crash the merges still find their bases. Red without the
// rewrite: the collection fails, and so would every later one on the
// same keys.
func TestCollectSurvivesAFailedIndexSync(t *testing.T) {
	collectKeepsMergeBases(t, newDeferringFixture(t), lossHooks{
		lose:  func(f *fixture) { f.base.FailSyncs(1) },
		crash: func(f *fixture) { f.base.MachineCrash(0, 0) },
	})
}

// collectKeepsMergeBases is TestCollectKeepsMergeBases on f with lose (if
// set) run right before the collection and crash (if set) right after
// it: the merge bases found before must still answer, and merges succeed,
// after both.
func collectKeepsMergeBases(t *testing.T, f *fixture, h lossHooks) {
	t.Helper()
	if err := collectMergeBases(t, f, h); err != nil {
		t.Fatal(err)
	}
}

// lossHooks are what collectMergeBases runs at its three points (each if
// set): early before the merge bases are first asked for (a fresh
// handle's MergeBase rebuilds and stores an index it finds missing),
// lose right before the collection, crash right after it.
type lossHooks struct {
	early, lose, crash func(f *fixture)
}

// collectMergeBases is collectKeepsMergeBases returning what went wrong
// after the collection: an error wrapping the kernel's (ErrReclaimed for
// a merge base collected) or a report that kept no merge base.
func collectMergeBases(t *testing.T, f *fixture, h lossHooks) error {
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	fix := f.fork("fix", main)
	for i := 0; i < 3; i++ {
		f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p01", fmt.Sprint("feat", i))) })
		f.commit(fix, func(tx *data.Txn) error { return tx.Update("Person", person("p04", fmt.Sprint("fix", i))) })
	}
	for _, src := range []kernel.BranchRef{feat, fix} {
		if _, err := f.g.Merge(ctx, src, main, kernel.LineageIntent{Actor: "t", Message: "merge"}, data.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.g.Merge(ctx, main, fix, kernel.LineageIntent{Actor: "t", Message: "back"}, data.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	for i := 0; i < 6; i++ {
		f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p02", fmt.Sprint("feat", i))) })
		f.commit(fix, func(tx *data.Txn) error { return tx.Update("Person", person("p05", fmt.Sprint("fix", i))) })
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p03", fmt.Sprint("main", i))) })
	}
	if h.early != nil {
		h.early(f)
	}
	pairs := [][2]kernel.BranchRef{{main, feat}, {main, fix}, {feat, fix}}
	var before []kernel.CommitID
	for _, p := range pairs {
		c, err := f.reopen().Kernel().MergeBase(ctx, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, c.ID)
	}
	f.clock.Advance(10 * time.Minute)
	if h.lose != nil {
		h.lose(f)
	}
	rep := f.collect(maintain.Policy{Policy: gc.Policy{KeepLast: 2, Grace: time.Minute, SkewMargin: time.Minute}})
	f.store.torn = nil
	if h.crash != nil {
		h.crash(f)
	}
	for i, p := range pairs {
		c, err := f.reopen().Kernel().MergeBase(ctx, p[0], p[1])
		if err != nil || c.ID != before[i] {
			return fmt.Errorf("merge base of %s and %s after collection: %s, want %s: %w", p[0], p[1], c.ID, before[i], err)
		}
	}
	if rep.Manifests.Deleted == 0 || rep.MergeBases == 0 || rep.MergeBasesUnknown != 0 {
		return fmt.Errorf("collection reclaimed no manifest, kept no merge base or left some unknown: %+v", rep)
	}
	cold := f.reopen()
	for _, src := range []kernel.BranchRef{feat, fix} {
		if _, err := cold.Merge(ctx, src, main, kernel.LineageIntent{Actor: "t", Message: "again"}, data.MergeOptions{}); err != nil {
			return fmt.Errorf("merge %s into main after collection: %w", src, err)
		}
	}
	s, err := cold.SnapshotAt(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"p01": "feat2", "p02": "feat5", "p03": "main5", "p04": "fix2", "p05": "fix5"} {
		r, ok, err := s.Get(ctx, "Person", id)
		if err != nil || !ok || r.Props["name"] != want {
			t.Fatalf("after the merges %s = %v %v %v, want name %q", id, r, ok, err, want)
		}
	}
	return nil
}

// deleteCommitIndexes deletes every commit index of f's graph (at least
// one, at most 10 pages of them).
func deleteCommitIndexes(t *testing.T, f *fixture) {
	t.Helper()
	deleted, after := 0, ""
	for range 10 {
		page, err := f.store.List(ctx, root+"/index/commits/", after, 1000)
		if err != nil {
			t.Fatalf("list commit indexes: %v", err)
		}
		for _, k := range page.Keys {
			if err := f.store.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			deleted++
			after = k
		}
		if !page.Truncated {
			break
		}
	}
	if deleted == 0 {
		t.Fatal("no commit index to delete")
	}
}

// TestCollectWithoutCommitIndexes: commit indexes are aids, never
// authoritative; with every one gone a collection still runs and keeps
// everything the other rules keep. It rebuilds the reach of a head whose
// index is gone from the manifests, at most rebuildDepth commits back,
// and stores the index of each kept manifest it rebuilt; past that depth
// it counts the live heads whose merge bases it could not find
// (Report.MergeBasesUnknown) instead of guessing.
func TestCollectWithoutCommitIndexes(t *testing.T) {
	for _, tc := range []struct {
		commits          int
		rebuilt, unknown int
	}{
		{6, 4, 0},                         // main's three retained commit manifests and the genesis; feat's v0 holds no commit
		{maintain.RebuildDepth + 6, 0, 2}, // main's head is more than rebuildDepth commits from the genesis
	} {
		t.Run(fmt.Sprint(tc.commits, "commits"), func(t *testing.T) {
			f := newFixture(t)
			main := f.branch("main")
			cs := f.seed(main, tc.commits)
			if _, err := f.g.Kernel().CreateBranch(ctx, "feat", main); err != nil {
				t.Fatal(err)
			}
			deleteCommitIndexes(t, f)
			f.clock.Advance(10 * time.Minute)
			rep := f.collect(policy)
			if rep.MergeBasesUnknown != tc.unknown || rep.MergeBases != 0 || rep.IndexesRebuilt != tc.rebuilt {
				t.Fatalf("merge bases kept %d, unknown %d, indexes rebuilt %d; want 0, %d and %d", rep.MergeBases, rep.MergeBasesUnknown, rep.IndexesRebuilt, tc.unknown, tc.rebuilt)
			}
			head := root + "/index/commits/" + f.head(main).String()
			if _, err := f.store.Get(ctx, head); (err == nil) != (tc.rebuilt > 0) {
				t.Fatalf("main's head index after the collection: %v (rebuilt %d)", err, tc.rebuilt)
			}
			for i, c := range cs[len(cs)-3:] {
				if name, err := f.readAll(c.ID); err != nil || name != fmt.Sprint("v", tc.commits-3+i) {
					t.Fatalf("retained commit %d: %q %v", i, name, err)
				}
			}
		})
	}
}

// TestCollectTornCommitIndexes: a publish attempt's commit index is
// written wholly deferred, made durable by its manifest's sync only if
// that attempt lands, so an OS crash can tear one; a later attempt's or a
// repair's overwrite of it is not synced either, so even a published
// commit's index may read torn (objstore.ErrCorruptObject) after a
// crash. The collector takes such an index as missing (it rebuilds the
// reach from the manifests, TestCollectWithoutCommitIndexes) and
// completes (red without readReachDepth's rule: every collection fails on the
// torn read).
func TestCollectTornCommitIndexes(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 6)
	if _, err := f.g.Kernel().CreateBranch(ctx, "feat", main); err != nil {
		t.Fatal(err)
	}
	f.store.torn = func(key string) bool { return strings.HasPrefix(key, root+"/index/commits/") }
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.MergeBasesUnknown != 0 || rep.MergeBases != 0 || rep.IndexesRebuilt != 4 {
		t.Fatalf("merge bases kept %d, unknown %d, indexes rebuilt %d; want 0, 0 and 4 (main's three retained commit manifests and the genesis)", rep.MergeBases, rep.MergeBasesUnknown, rep.IndexesRebuilt)
	}
}

// TestCollectDropsMergedDeletedBranches: a feature branch merged into main,
// then deleted, stays in the reach of main and of every branch forked
// after the merge, so it is a tip of their common reach — but one the
// merge base reaches (main's side dominates it). Rule 3b keeps only the
// tips some pair may need as its base, so once the deleted branch is past
// retention its manifests and the versions only it pinned are collected
// (without that, every merged feature branch would be kept forever), and
// MergeBase and a merge of the later branch still work.
func TestCollectDropsMergedDeletedBranches(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 1)
	feat := f.fork("feat", main)
	for i := 0; i < 3; i++ {
		f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p07", fmt.Sprint("feat", i))) })
	}
	if _, err := f.g.Merge(ctx, feat, main, kernel.LineageIntent{Actor: "t", Message: "merge feat"}, data.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.g.Kernel().DeleteBranch(ctx, "feat"); err != nil {
		t.Fatal(err)
	}
	fix := f.fork("fix", main)
	for i := 0; i < 4; i++ {
		f.commit(fix, func(tx *data.Txn) error { return tx.Update("Person", person("p08", fmt.Sprint("fix", i))) })
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p09", fmt.Sprint("main", i))) })
	}
	base, err := f.reopen().Kernel().MergeBase(ctx, main, fix)
	if err != nil {
		t.Fatal(err)
	}
	p := maintain.Policy{Policy: gc.Policy{KeepLast: 1, KeepFor: time.Hour, Grace: time.Minute, SkewMargin: time.Minute}}
	f.clock.Advance(2 * time.Hour)
	f.collect(p)
	page, err := f.store.List(ctx, root+"/branches/feat/", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Keys) != 0 {
		t.Fatalf("deleted, merged branch after retention keeps %d manifests %v, want none (a dead name, docs/gc.md rule 1)", len(page.Keys), page.Keys)
	}
	if c, err := f.reopen().Kernel().MergeBase(ctx, main, fix); err != nil || c.ID != base.ID {
		t.Fatalf("merge base of main and fix after collection: %s %v, want %s", c.ID, err, base.ID)
	}
	if _, err := f.reopen().Merge(ctx, fix, main, kernel.LineageIntent{Actor: "t", Message: "merge fix"}, data.MergeOptions{}); err != nil {
		t.Fatalf("merge fix into main after collection: %v", err)
	}
}
