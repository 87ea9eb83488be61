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
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// The overwrite race (docs/gc.md rule 3b): a collection that finds a
// commit index unusable rebuilds the reach from the manifests, keeps the
// merge bases that reach's search loads and stores it as the index; a
// writer's handle that finds the same index unusable rebuilds and stores
// it too. Each of the three tests below is one interleaving, forced with
// the store's hooks; before session 23 both sides overwrote
// unconditionally, and each one lost a merge base a later merge needs
// (ErrReclaimed). The rule that closes them: an index is written
// create-only, or If-Match over the unusable one read, and whoever loses
// the condition re-reads and uses the index there when it is usable; a
// usable index is never overwritten.

// raceHistory builds, on writers' handles with reach bounds entries/folds
// (0: the kernel's defaults), main with four branches forked, changed,
// merged into main and deleted but b0 (main's reach folds under
// small bounds), feat forked from b0 before its merge, feat
// moving on; main's head is the last merge. It returns main and feat.
func raceHistory(t *testing.T, entries, folds int) (*fixture, func() *data.Graph, kernel.BranchRef, kernel.BranchRef) {
	t.Helper()
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	seed := byte(10)
	opts := func() data.Options {
		seed++
		return data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{seed})}, Grace: time.Minute, ReachEntries: entries, ReachFolds: folds}}
	}
	s, err := schema.Parse([]byte("node Person { name: string }\nedge Knows: Person -> Person\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := sim.New(sim.Config{Seed: 1})
	store := &hookStore{Store: base}
	g, err := data.Init(ctx, store, root, s, opts())
	if err != nil {
		t.Fatal(err)
	}
	// The Maintainer keeps the kernel's default bounds, as `graphkernel
	// maintain` did before its --reach-* flags.
	m, err := maintain.New(store, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{2})})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: store, kst: store, base: base, clock: clock, g: g, m: m}
	open := func() *data.Graph {
		t.Helper()
		h, err := data.Open(ctx, store, root, opts())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	main := f.branch("main")
	f.seed(main, 1)
	var feat kernel.BranchRef
	for i := range 4 {
		b := f.fork(fmt.Sprint("b", i), main)
		f.commit(b, func(tx *data.Txn) error {
			return tx.Update("Person", person(fmt.Sprintf("p%02d", i), fmt.Sprint("b", i)))
		})
		if i == 0 { // feat's merge base with main is b0's commit, which main's reach names, in a fold under small bounds
			feat = f.fork("feat", b)
			f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p10", "feat")) })
		}
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p09", fmt.Sprint("main", i))) })
		if _, err := g.Merge(ctx, b, main, kernel.LineageIntent{Actor: "t", Message: "merge"}, data.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue // feat depends on it
		}
		if err := g.Kernel().DeleteBranch(ctx, fmt.Sprint("b", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 { // main's head is b3's merge: its reach folds b3's under small bounds
		f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p11", fmt.Sprint("feat", i))) })
	}
	return f, open, main, feat
}

// racePolicy keeps each incarnation's head alone (and what rule 3b keeps).
var racePolicy = maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}

// mergesAgain checks, on handle h, that main and feat's merge base is
// want and that feat merges into main.
func mergesAgain(h *data.Graph, main, feat kernel.BranchRef, want kernel.CommitID) error {
	c, err := h.Kernel().MergeBase(ctx, main, feat)
	if err != nil || c.ID != want {
		return fmt.Errorf("merge base of main and feat: %s %w, want %s", c.ID, err, want)
	}
	if _, err := h.Merge(ctx, feat, main, kernel.LineageIntent{Actor: "t", Message: "again"}, data.MergeOptions{}); err != nil {
		return fmt.Errorf("merge feat into main: %w", err)
	}
	return nil
}

// loseHeadIndex deletes the index of main's head commit (an OS crash lost
// it: a publish does not sync it) and returns its key.
func loseHeadIndex(t *testing.T, f *fixture, main kernel.BranchRef) string {
	t.Helper()
	key := format.NewKeys(root).CommitIndex(f.head(main))
	if err := f.store.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	return key
}

// TestWriterRepairAfterCollectionKeepsItsIndex: the writers use reach
// bounds 2/2, the collector the defaults. Main's head index is lost; a
// writer's repair reads it missing and rebuilds it (folds), and before
// its write lands a whole collection runs: it rebuilds the reach under
// its bounds (no folds), keeps main and feat's merge bases by it, stores
// it and deletes the rest. Then the writer's write lands. A reader after
// that must search by the reach the collection kept merge bases by: the
// writer's write, create-only, loses and the writer uses the collector's
// index. Red when the writer overwrites: readers search by the writer's
// reach, whose folds the collection deleted (ErrReclaimed).
func TestWriterRepairAfterCollectionKeepsItsIndex(t *testing.T) {
	f, open, main, feat := raceHistory(t, 2, 2)
	base, err := open().Kernel().MergeBase(ctx, main, feat)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(10 * time.Minute)
	key := loseHeadIndex(t, f, main)
	var rep maintain.Report
	f.store.match, f.store.hook = key, func() { rep = f.collect(racePolicy) }
	if _, err := open().Kernel().RepairHeadIndex(ctx, main); err != nil {
		t.Fatal(err)
	}
	if f.store.hook != nil || rep.Manifests.Deleted == 0 || rep.MergeBasesUnknown != 0 {
		t.Fatalf("the collection did not run inside the writer's repair, deleted nothing or left a merge base unknown: %+v", rep)
	}
	if err := mergesAgain(open(), main, feat, base.ID); err != nil {
		t.Fatalf("after a writer's repair landed over the collector's rebuilt index: %v", err)
	}
}

// TestCollectorKeepsTheWritersIndex: the reverse order. The collection
// reads main's head index missing and rebuilds the reach; before its
// write lands, a writer's handle repairs the index (its bounds, 2/2: a
// fold at main's previous head) and keeps it in its cache. The collector
// must not overwrite a usable index: its write loses, and it keeps merge
// bases by the writer's index. Then the writer commits on main, joining
// the new commit's reach from the one its handle holds, and a cold
// reader's merge base of main and feat searches by that. Red when the
// collector overwrites: it kept merge bases by its own reach (no fold at
// main's previous head) and deleted that manifest, which the new
// commit's reach names (ErrReclaimed).
func TestCollectorKeepsTheWritersIndex(t *testing.T) {
	f, open, main, feat := raceHistory(t, 2, 2)
	base, err := open().Kernel().MergeBase(ctx, main, feat)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(10 * time.Minute)
	key := loseHeadIndex(t, f, main)
	w := open()
	f.store.match, f.store.hook = key, func() {
		if repaired, err := w.Kernel().RepairHeadIndex(ctx, main); err != nil || !repaired {
			t.Fatalf("writer's repair inside the collection: %v %v", repaired, err)
		}
	}
	rep := f.collect(racePolicy)
	if f.store.hook != nil || rep.Manifests.Deleted == 0 || rep.MergeBasesUnknown != 0 {
		t.Fatalf("the writer's repair did not run inside the collection, it deleted nothing or left a merge base unknown: %+v", rep)
	}
	// The writer commits on main: its handle joins the new commit's reach
	// from the one it holds for main's head.
	tx, err := w.Begin(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Update("Person", person("p08", "after")); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "w", Message: "after"}); err != nil {
		t.Fatal(err)
	}
	if err := mergesAgain(open(), main, feat, base.ID); err != nil {
		t.Fatalf("a cold handle after the collection and the writer's next commit: %v", err)
	}
}

// TestIncompleteRepairNeverReplacesACompleteIndex: writers and collector
// with the same (default) bounds. A writer's repair of main's head index
// (missing) reads the head's predecessor manifest, and before it reads
// that manifest's index a collection runs: it rebuilds main's head reach,
// stores it, and deletes the predecessor with its index and the history
// below (retention keeps the head alone). The writer's rebuild now lacks
// its input's reach and comes out incomplete. It must not replace the
// complete index the collection stored: it loses its create-only write
// and uses the collector's. Red when it overwrites: readers find an
// incomplete index, cannot rebuild it (its inputs were collected) and
// walk into collected history (ErrReclaimed).
func TestIncompleteRepairNeverReplacesACompleteIndex(t *testing.T) {
	f, open, main, feat := raceHistory(t, 0, 0)
	base, err := open().Kernel().MergeBase(ctx, main, feat)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := f.g.Kernel().Log(ctx, main, "", 2)
	if err != nil || len(hist.Commits) != 2 {
		t.Fatalf("main's log: %v %v", hist, err)
	}
	f.clock.Advance(10 * time.Minute)
	loseHeadIndex(t, f, main)
	var rep maintain.Report
	f.store.getMatch = format.NewKeys(root).CommitIndex(hist.Commits[1].ID)
	f.store.getHook = func() { rep = f.collect(racePolicy) }
	w := open()
	if _, err := w.Kernel().RepairHeadIndex(ctx, main); err != nil && !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatal(err)
	}
	if f.store.getHook != nil || rep.Manifests.Deleted == 0 || rep.MergeBasesUnknown != 0 {
		t.Fatalf("the collection did not run inside the writer's repair, deleted nothing or left a merge base unknown: %+v", rep)
	}
	if err := mergesAgain(open(), main, feat, base.ID); err != nil {
		t.Fatalf("after the writer's repair: %v", err)
	}
}

// ambiguousIndexStore answers the next n Puts of commit indexes
// ambiguously (objstore.ErrAmbiguous), after applying them when applied.
type ambiguousIndexStore struct {
	objstore.Store
	n       int
	applied bool
}

func (s *ambiguousIndexStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.n == 0 || !strings.Contains(key, "/index/commits/") {
		return s.Store.Put(ctx, key, b, c)
	}
	s.n--
	if s.applied {
		if _, err := s.Store.Put(ctx, key, b, c); err != nil {
			return "", err
		}
	}
	return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errors.New("connection reset after the request was sent"))
}

// TestAmbiguousRebuiltIndexWriteIsResolved: a collection's conditional
// write of a rebuilt commit index that answers ambiguously is read back
// (house rule 3): applied, the index there is the run's (a create-only
// retry would find the key taken, and the run would use what is there);
// not applied, it is written again. Either way the run completes with
// every kept manifest's rebuilt index stored, and the merge bases answer
// after it. Red when an ambiguous outcome fails the write (the run
// fails); a retry without the read-back would also end well, through the
// lost condition's re-read.
func TestAmbiguousRebuiltIndexWriteIsResolved(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprint("applied=", applied), func(t *testing.T) {
			base := sim.New(sim.Config{Seed: 1})
			amb := &ambiguousIndexStore{Store: base}
			store := &hookStore{Store: amb}
			f := newFixtureOn(t, base, store, store, 0, 0, 0)
			main := f.branch("main")
			cs := f.seed(main, 6)
			feat := f.fork("feat", main)
			f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p01", "feat")) })
			want, err := f.reopen().Kernel().MergeBase(ctx, main, feat)
			if err != nil {
				t.Fatal(err)
			}
			deleteCommitIndexes(t, f)
			f.clock.Advance(10 * time.Minute)
			amb.n, amb.applied = 3, applied
			rep := f.collect(policy)
			if amb.n != 0 || rep.IndexesRebuilt == 0 || rep.MergeBasesUnknown != 0 {
				t.Fatalf("ambiguous writes left %d, report %+v; want every ambiguous write met, indexes rebuilt, no merge base unknown", amb.n, rep)
			}
			if _, err := store.Get(ctx, format.NewKeys(root).CommitIndex(cs[len(cs)-1].ID)); err != nil {
				t.Fatalf("main's head index after the collection: %v", err)
			}
			if c, err := f.reopen().Kernel().MergeBase(ctx, main, feat); err != nil || c.ID != want.ID {
				t.Fatalf("merge base after the collection: %s %v, want %s", c.ID, err, want.ID)
			}
		})
	}
}
