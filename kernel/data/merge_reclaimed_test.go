package data_test

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
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// getHookStore runs hook before forwarding a Get whose key contains match
// (each time, until hook is cleared): a deterministic point in the middle
// of a merge's reads.
type getHookStore struct {
	objstore.Store
	match string
	hook  func(key string)
}

func (s *getHookStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.hook != nil && strings.Contains(key, s.match) {
		s.hook(key)
	}
	return s.Store.Get(ctx, key)
}

// reclaimFixture is a graph on the sim store with a manual clock shared by
// its handles and a collector, main and a feature branch forked from it,
// each with a Person of its own since the fork.
type reclaimFixture struct {
	t          *testing.T
	store      *sim.Store
	clock      *kernel.ManualClock
	g          *data.Graph // writes and reads; never the merge's handle
	m          *maintain.Maintainer
	main, feat kernel.BranchRef
}

const reclaimGrace = time.Minute

var reclaimEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newReclaimFixture(t *testing.T) *reclaimFixture {
	t.Helper()
	ctx := context.Background()
	s, err := schema.Parse([]byte(`node Person { name: string }`))
	if err != nil {
		t.Fatal(err)
	}
	f := &reclaimFixture{t: t, store: sim.New(sim.Config{Seed: 3}), clock: kernel.NewManualClock(reclaimEpoch)}
	if f.g, err = data.Init(ctx, f.store, "g", s, f.opts(1)); err != nil {
		t.Fatal(err)
	}
	if f.m, err = maintain.New(f.store, "g", kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})}); err != nil {
		t.Fatal(err)
	}
	if f.main, err = f.g.Branch(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	f.put(f.main, "ann")
	if f.feat, err = f.g.Kernel().CreateBranch(ctx, "feat", f.main); err != nil {
		t.Fatal(err)
	}
	f.put(f.feat, "bob")
	f.put(f.main, "cy")
	return f
}

// opts are the options of a handle whose entropy is seeded by seed.
//
// Versions are objects (NoRiding): the fixture needs a head's version a
// collection can reclaim; one riding its manifest (format 11) is read
// from the manifest the merge holds, so only its fragments could go.
func (f *reclaimFixture) opts(seed byte) data.Options {
	return data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{seed})}, Grace: reclaimGrace, NoRiding: true}}
}

// handle opens a second handle (cold caches) on store.
func (f *reclaimFixture) handle(store objstore.Store) *data.Graph {
	f.t.Helper()
	g, err := data.Open(context.Background(), store, "g", f.opts(2))
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

// put commits a Person named id on b.
func (f *reclaimFixture) put(b kernel.BranchRef, id string) {
	f.t.Helper()
	tx, err := f.g.Begin(context.Background(), b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := tx.Insert("Person", data.Row{ID: id, Props: map[string]any{"name": id}}); err != nil {
		f.t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background(), kernel.LineageIntent{Actor: "test"}); err != nil {
		f.t.Fatalf("commit on %s: %v", b, err)
	}
}

// moveAndCollect commits on main (a new Person version: main's previous
// head pins one of its own no other manifest pins), lets the grace period
// pass, and collects keeping one manifest per branch: main's previous head
// and its Person version are deleted.
func (f *reclaimFixture) moveAndCollect(id string) {
	f.t.Helper()
	f.put(f.main, id)
	f.clock.Advance(reclaimGrace + gc.DefaultSkewMargin + time.Minute)
	rep, err := f.m.Collect(context.Background(), maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: reclaimGrace}})
	if err != nil {
		f.t.Fatalf("collect: %v", err)
	}
	if rep.TableVersions.Deleted == 0 {
		f.t.Fatalf("collect deleted no table version: %+v", rep)
	}
}

// mainPersonHook is a getHookStore over the fixture's store matching the
// versions of main's Person table (main's fork).
func (f *reclaimFixture) mainPersonHook() *getHookStore {
	return &getHookStore{Store: f.store, match: "/tables/Person/" + f.main.IncarnationID().String() + "/"}
}

// names reads the Person ids at the head of b.
func (f *reclaimFixture) names(b kernel.BranchRef) string {
	f.t.Helper()
	s, err := f.g.SnapshotAt(context.Background(), b)
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for _, id := range []string{"ann", "bob", "cy", "dee", "eve", "fay"} {
		if _, ok, err := s.Get(context.Background(), "Person", id); err != nil {
			f.t.Fatal(err)
		} else if ok {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, ",")
}

// TestMergeRetriesWhenItsSourceHeadIsReclaimed: a merge of main into feat
// reads main's head; while it reads the snapshots (at its first read of a
// main Person version), main moves on and a collection past the grace
// period deletes the head the merge read and the Person version only that
// head pinned. The merge's read answers ErrReclaimed; the merge computes
// again from the fresh heads (a second round) and publishes main's rows,
// the one committed under it included.
func TestMergeRetriesWhenItsSourceHeadIsReclaimed(t *testing.T) {
	f := newReclaimFixture(t)
	hs := f.mainPersonHook()
	g := f.handle(hs)
	hs.hook = func(string) { hs.hook = nil; f.moveAndCollect("dee") }
	res, err := g.Merge(context.Background(), f.main, f.feat, kernel.LineageIntent{Actor: "test", Message: "sync"}, data.MergeOptions{})
	if err != nil {
		t.Fatalf("merge with its source head reclaimed under it: %v (rounds %d)", err, res.Rounds)
	}
	if res.Rounds != 2 || res.Outcome != data.MergeMerged {
		t.Fatalf("merge: rounds %d outcome %v, want 2 rounds, merged", res.Rounds, res.Outcome)
	}
	head, err := f.g.Kernel().Head(context.Background(), f.main)
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != head.ID {
		t.Fatalf("merge source %s, want main's new head %s", res.Source, head.ID)
	}
	if got, want := f.names(f.feat), "ann,bob,cy,dee"; got != want {
		t.Fatalf("feat after the merge: %s, want %s", got, want)
	}
}

// TestMergeRetriesWithinItsRounds: main moves on and a collection reclaims
// what the merge read at every read of a main Person version, so in every
// round. The merge stops after
// MergeOptions.Rounds rounds with a retryable error matching
// ErrContention, not ErrReclaimed (nothing a fresh merge needs is gone),
// and feat is unchanged.
func TestMergeRetriesWithinItsRounds(t *testing.T) {
	f := newReclaimFixture(t)
	hs := f.mainPersonHook()
	g := f.handle(hs)
	moves := 0
	hs.hook = func(string) { moves++; f.moveAndCollect(fmt.Sprintf("m%d", moves)) } // at every read of a main Person version
	res, err := g.Merge(context.Background(), f.main, f.feat, kernel.LineageIntent{Actor: "test", Message: "sync"}, data.MergeOptions{Rounds: 2})
	var r interface{ Retryable() bool }
	if !errors.Is(err, kernel.ErrContention) || errors.Is(err, kernel.ErrReclaimed) || !errors.As(err, &r) || !r.Retryable() {
		t.Fatalf("merge reclaimed in every round: %v, want a retryable ErrContention that is not ErrReclaimed", err)
	}
	if res.Rounds != 2 {
		t.Fatalf("rounds %d, want 2", res.Rounds)
	}
	if got, want := f.names(f.feat), "ann,bob"; got != want {
		t.Fatalf("feat after the failed merge: %s, want %s", got, want)
	}
}

// TestMergeReclaimedUnderStillHeadsAnswersReclaimed: a table version the
// merge reads is gone while neither head moved (lost, not collected after
// a move): a fresh round would read the same heads, so the merge answers
// ErrReclaimed after one round.
func TestMergeReclaimedUnderStillHeadsAnswersReclaimed(t *testing.T) {
	f := newReclaimFixture(t)
	hs := f.mainPersonHook()
	g := f.handle(hs)
	hs.hook = func(key string) {
		hs.hook = nil
		if err := f.store.Delete(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	res, err := g.Merge(context.Background(), f.main, f.feat, kernel.LineageIntent{Actor: "test", Message: "sync"}, data.MergeOptions{})
	if !errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrContention) || res.Rounds != 1 {
		t.Fatalf("merge of unmoved heads with a version lost: %v (rounds %d), want ErrReclaimed after 1 round", err, res.Rounds)
	}
}
