package maintain_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var metaCycles = flag.String("metagc.cycles", "50,200", "TestCollectBoundsKeysOverCycles: the two cycle counts compared")

// metaPolicy is a small retention on the fixture's injected clock.
var metaPolicy = maintain.Policy{Policy: gc.Policy{KeepLast: 2, KeepFor: 5 * time.Minute, Grace: time.Minute, SkewMargin: time.Minute}}

// keysPerPrefix counts the store's keys under root by their first segment
// (branches, names, forks, tables, data, adj, index, audit, plans, ...).
func (f *fixture) keysPerPrefix() map[string]int {
	f.t.Helper()
	out := map[string]int{}
	for _, k := range f.store.Store.(*sim.Store).Keys(root + "/") {
		seg, _, _ := strings.Cut(strings.TrimPrefix(k, root+"/"), "/")
		out[seg]++
	}
	return out
}

// branchPerChange runs n cycles of: fork a feature branch from main,
// commit one row on it, merge it into main, delete it; with a collection
// every 50 cycles, then a final collection past every retention.
func (f *fixture) branchPerChange(n int) {
	f.t.Helper()
	main := f.branch("main")
	f.seed(main, 0)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("feature-%05d", i)
		feat := f.fork(name, main)
		f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("f%05d", i), name)) })
		if _, err := f.g.Merge(ctx, feat, main, kernel.LineageIntent{Actor: "t", Message: "merge " + name}, data.MergeOptions{}); err != nil {
			f.t.Fatalf("cycle %d: merge: %v", i, err)
		}
		if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
			f.t.Fatalf("cycle %d: delete: %v", i, err)
		}
		if i%50 == 49 {
			f.collect(metaPolicy)
		}
	}
	f.clock.Advance(time.Hour)
	f.collect(metaPolicy)
}

// TestCollectBoundsKeysOverCycles: what the store holds after a collection
// is bounded by what is live, not by how many branches ever existed
// (docs/gc.md, Bound): after 50 and after 200 branch-per-change cycles and
// a collection past every retention, every metadata prefix holds the same
// number of keys (fragments and adjacency objects are main's live rows,
// which grow with the cycles). Red while dead names keep their tombstones, name markers and
// (debris) fork markers.
//
// -metagc.cycles=100,1000 runs other sizes (the figures in docs/gc.md).
func TestCollectBoundsKeysOverCycles(t *testing.T) {
	var n1, n2 int
	if _, err := fmt.Sscanf(*metaCycles, "%d,%d", &n1, &n2); err != nil || n1 <= 0 || n2 < n1 {
		t.Fatalf("-metagc.cycles %q: want SMALL,LARGE", *metaCycles)
	}
	small, large := newFixture(t), newFixture(t)
	small.branchPerChange(n1)
	large.branchPerChange(n2)
	a, b := small.keysPerPrefix(), large.keysPerPrefix()
	t.Logf("keys per prefix after %d cycles %v, after %d %v", n1, a, n2, b)
	var grew []string
	for p, n := range b {
		if p == "data" || p == "adj" {
			continue // live content: main's head holds one row per cycle
		}
		if n > a[p] {
			grew = append(grew, fmt.Sprintf("%s: %d -> %d", p, a[p], n))
		}
	}
	sort.Strings(grew)
	if len(grew) > 0 {
		t.Fatalf("keys grow with the number of branches ever created: %v", grew)
	}
}

// mergedAndDeleted forks name from main, commits row id on it, merges it
// into main and deletes it; it returns the (now stale) handle.
func (f *fixture) mergedAndDeleted(name, id string) kernel.BranchRef {
	f.t.Helper()
	main := f.branch("main")
	b := f.fork(name, main)
	f.commit(b, func(tx *data.Txn) error { return tx.Insert("Person", person(id, name)) })
	if _, err := f.g.Merge(ctx, b, main, kernel.LineageIntent{Actor: "t", Message: "merge " + name}, data.MergeOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
		f.t.Fatal(err)
	}
	return b
}

// TestRecreatedNameAfterCollection: a name deleted and collected whole (a
// dead name) looks as if it never existed; re-created, it takes an
// incarnation number above the collected one (the incarnation floor,
// docs/gc.md rule 1a), its commits merge into main as any new branch's,
// and the stale handle of the collected incarnation answers
// ErrBranchNotFound, never acting on the new one.
func TestRecreatedNameAfterCollection(t *testing.T) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	old := f.mergedAndDeleted("feat", "a1")
	f.clock.Advance(time.Hour)
	rep := f.collect(metaPolicy)
	if rep.Floor != old.Incarnation()+1 || rep.NameMarkers.Deleted != 1 {
		t.Fatalf("collection of the dead name: %+v, want floor %d and its name marker deleted", rep, old.Incarnation()+1)
	}
	k := f.reopen().Kernel()
	if _, err := k.Branch(ctx, "feat"); !errors.Is(err, kernel.ErrBranchNotFound) {
		t.Fatalf("Branch of a collected name: %v", err)
	}
	if bs, err := k.ListBranches(ctx); err != nil || len(bs) != 1 {
		t.Fatalf("ListBranches after collection: %v %v, want main alone", bs, err)
	}
	again := f.fork("feat", f.branch("main"))
	if again.Incarnation() <= old.Incarnation() {
		t.Fatalf("re-created feat#%d reuses the collected incarnation number %d", again.Incarnation(), old.Incarnation())
	}
	f.commit(again, func(tx *data.Txn) error { return tx.Insert("Person", person("a2", "again")) })
	for _, op := range []func() error{
		func() error { _, err := k.Head(ctx, old); return err },
		func() error { _, err := f.g.Begin(ctx, old); return err },
		func() error { _, err := k.CreateBranch(ctx, "child", old); return err },
	} {
		if err := op(); !errors.Is(err, kernel.ErrBranchNotFound) {
			t.Fatalf("stale handle %s of the collected incarnation: %v, want ErrBranchNotFound", old, err)
		}
	}
	if _, err := f.g.Merge(ctx, again, f.branch("main"), kernel.LineageIntent{Actor: "t", Message: "merge again"}, data.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := f.reopen().SnapshotAt(ctx, f.branch("main"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "a2"} {
		if _, ok, err := s.Get(ctx, "Person", id); err != nil || !ok {
			t.Fatalf("main after merging the re-created feat: %s present %v, %v", id, ok, err)
		}
	}
	if bs, err := k.ListBranches(ctx); err != nil || len(bs) != 2 {
		t.Fatalf("ListBranches with feat re-created: %v %v", bs, err)
	}
}

// deleteHookStore runs hook once before forwarding the first Delete whose
// key ends with suffix.
type deleteHookStore struct {
	objstore.Store
	suffix string
	hook   func()
}

func (s *deleteHookStore) Delete(ctx context.Context, key string) error {
	if s.hook != nil && strings.HasSuffix(key, s.suffix) {
		h := s.hook
		s.hook = nil
		h()
	}
	return s.Store.Delete(ctx, key)
}

// TestCollectRestoresNameMarkers: a create of a dead name racing the
// collection — its marker written before the collector deletes it, its
// manifest landing after the collector's listing — still ends listed: the
// collector looks the name up again after the delete and puts the marker
// back. And a live name whose marker is missing (a collector crashed
// before its re-check) gets it back from the next collection. Red without
// the re-check and the repair. With other dead names beside feat the
// re-check is one listing of every branch (recheckNames), else a LIST of
// feat's manifests.
func TestCollectRestoresNameMarkers(t *testing.T) {
	for _, others := range []int{0, 5} {
		t.Run(fmt.Sprintf("others=%d", others), func(t *testing.T) { testCollectRestoresNameMarkers(t, others) })
	}
}

func testCollectRestoresNameMarkers(t *testing.T, others int) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	f.mergedAndDeleted("feat", "a1")
	f.forkedAndDeleted("gone", others)
	f.clock.Advance(time.Hour)
	hs := &deleteHookStore{Store: f.store, suffix: "/names/feat"}
	m := f.maintainerOver(hs)
	var created kernel.BranchRef
	hs.hook = func() { created = f.fork("feat", f.branch("main")) } // lands between the listing and the marker delete
	rep, err := m.Collect(ctx, metaPolicy)
	if err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if created.Name() == "" || rep.NameMarkersRestored != 1 {
		t.Fatalf("racing create %v; restored %d markers, want 1", created, rep.NameMarkersRestored)
	}
	bs, err := f.reopen().Kernel().ListBranches(ctx)
	if err != nil || len(bs) != 2 {
		t.Fatalf("ListBranches after the racing create: %v %v, want feat and main", bs, err)
	}
	if err := f.store.Delete(ctx, root+"/names/feat"); err != nil {
		t.Fatal(err)
	}
	if rep := f.collect(metaPolicy); rep.NameMarkersRestored != 1 {
		t.Fatalf("a live name without its marker: restored %d, want 1", rep.NameMarkersRestored)
	}
	if bs, err := f.reopen().Kernel().ListBranches(ctx); err != nil || len(bs) != 2 {
		t.Fatalf("ListBranches after the repair: %v %v", bs, err)
	}
}

// TestCollectRecoveryRecordsAfterRetention: a crashed write rolled back by
// recovery leaves an audit record and a roll-back plan; a collection keeps
// both within KeepFor + grace + margin of the record's time (R5 relies on
// the record) and deletes both after it (docs/gc.md rule 8). Red while
// recovery records are kept forever.
func TestCollectRecoveryRecordsAfterRetention(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 0)
	f.crashBeforePublish(main, true)
	f.commit(main, func(tx *data.Txn) error { return tx.Insert("Person", person("later", "x")) }) // moves the pin: a roll-back
	f.clock.Advance(time.Minute)
	f.reopen() // the sweep rolls the crashed write back: plan + audit
	count := func() (audits, plans int) {
		return len(f.store.Store.(*sim.Store).Keys(root + "/audit/")), len(f.store.Store.(*sim.Store).Keys(root + "/plans/"))
	}
	if a, p := count(); a != 1 || p != 1 {
		t.Fatalf("after recovery: %d audit records, %d plans; want 1 and 1", a, p)
	}
	f.collect(metaPolicy)
	if a, p := count(); a != 1 || p != 1 {
		t.Fatalf("within retention: %d audit records, %d plans kept; want 1 and 1", a, p)
	}
	f.clock.Advance(metaPolicy.KeepFor + metaPolicy.Grace + metaPolicy.SkewMargin + time.Minute)
	rep := f.collect(metaPolicy)
	if a, p := count(); a != 0 || p != 0 || rep.Audits.Deleted != 1 || rep.Plans.Deleted != 1 {
		t.Fatalf("past retention: %d audit records, %d plans left (%+v %+v); want none", a, p, rep.Audits, rep.Plans)
	}
}

// TestCollectedNameCommitIsReclaimed: a commit of a name collected whole
// answers ErrReclaimed (it may have been there), not ErrNotFound, even
// when every name left is complete: the incarnation floor tells the
// history scan that a collection deleted a name (docs/gc.md §5). Red
// without the scan reading the floor.
func TestCollectedNameCommitIsReclaimed(t *testing.T) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	feat := f.fork("feat", f.branch("main"))
	c := f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person("gone", "feat")) })
	if err := f.g.Kernel().DeleteBranch(ctx, "feat"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	keepMain := metaPolicy
	keepMain.KeepLast = 100 // main's history stays whole
	if rep := f.collect(keepMain); rep.Floor == 0 {
		t.Fatalf("the dead name was not collected: %+v", rep)
	}
	if _, err := f.reopen().Kernel().Commit(ctx, c.ID); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("Commit of a collected name's commit: %v, want ErrReclaimed", err)
	}
}

// TestCreateRacingTombstoneDelete: a create of a dead name whose lookup
// still saw the tombstone takes the incarnation above it while the
// collector deletes the old incarnation's keys, tombstone last: the new
// incarnation's keys are disjoint from every deleted one, it stays the
// name's live head, listed, and the stale handle of the old one fails.
func TestCreateRacingTombstoneDelete(t *testing.T) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	old := f.mergedAndDeleted("feat", "a1")
	page, err := f.store.List(ctx, root+"/branches/feat/", "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("tombstone: %v %v", page.Keys, err)
	}
	f.clock.Advance(time.Hour)
	hs := &deleteHookStore{Store: f.store, suffix: page.Keys[0]}
	m := f.maintainerOver(hs)
	var created kernel.BranchRef
	hs.hook = func() { created = f.fork("feat", f.branch("main")) } // sees the tombstone: incarnation old+1
	if rep, err := m.Collect(ctx, metaPolicy); err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if created.Incarnation() != old.Incarnation()+1 {
		t.Fatalf("racing create took incarnation %d, want %d", created.Incarnation(), old.Incarnation()+1)
	}
	k := f.reopen().Kernel()
	if b, err := k.Branch(ctx, "feat"); err != nil || b.IncarnationID() != created.IncarnationID() {
		t.Fatalf("feat after the racing create: %v %v, want %v", b, err, created)
	}
	if bs, err := k.ListBranches(ctx); err != nil || len(bs) != 2 {
		t.Fatalf("ListBranches: %v %v", bs, err)
	}
	if _, err := k.Head(ctx, old); !errors.Is(err, kernel.ErrBranchNotFound) {
		t.Fatalf("stale handle: %v", err)
	}
	f.commit(created, func(tx *data.Txn) error { return tx.Insert("Person", person("a2", "x")) })
}

// TestCollectForkMarkers: the fork marker of a create that never landed
// goes once older than the grace period plus margin; a live child's
// marker stays, so deleting its source is still refused (the fork index
// stays complete).
func TestCollectForkMarkers(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 0)
	live := f.fork("live", main)
	blocked, err := data.Open(ctx, &refuseManifestStore{Store: f.store, part: "/branches/ghost/"}, root,
		data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{7})}, Grace: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocked.Kernel().CreateBranch(ctx, "ghost", live); !errors.Is(err, objstore.ErrRejected) {
		t.Fatalf("blocked create: %v", err)
	}
	markers := func() int { return len(f.store.Store.(*sim.Store).Keys(root + "/forks/")) }
	if n := markers(); n != 2 {
		t.Fatalf("%d fork markers, want live's and ghost's", n)
	}
	if rep := f.collect(metaPolicy); rep.ForkMarkers.Deleted != 0 {
		t.Fatalf("young markers deleted: %+v", rep.ForkMarkers)
	}
	f.clock.Advance(time.Hour)
	if rep := f.collect(metaPolicy); rep.ForkMarkers.Deleted != 1 || markers() != 1 {
		t.Fatalf("after the grace period: %+v, %d markers left; want ghost's deleted", rep.ForkMarkers, markers())
	}
	f.fork("child", live)
	if err := f.reopen().Kernel().DeleteBranch(ctx, "live"); !errors.As(err, new(*kernel.HasDependentsError)) {
		t.Fatalf("delete of a branch with a live child after collection: %v", err)
	}
}

// refuseManifestStore refuses every Put whose key contains part.
type refuseManifestStore struct {
	objstore.Store
	part string
}

func (s *refuseManifestStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if strings.Contains(key, s.part) {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrRejected, errors.New("test: refused"))
	}
	return s.Store.Put(ctx, key, b, c)
}
