package maintain_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// raceStore runs hook once, on the collector's own goroutine, right before
// the first store call that follows its first LIST of the leases
// ("after-lease-list") or before its first Delete ("before-first-delete"):
// a deterministic interleaving of a Pin into a running collection, with no
// goroutine and no sleep.
type raceStore struct {
	objstore.Store
	at     string
	leases string // the lease prefix
	armed  bool
	hook   func()
}

func (s *raceStore) fire(call string) {
	if s.hook == nil {
		return
	}
	if s.armed || s.at == "before-first-delete" && call == "delete" {
		h := s.hook
		s.hook = nil
		h()
	}
}

func (s *raceStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.fire("get")
	return s.Store.Get(ctx, key)
}

func (s *raceStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	s.fire("head")
	return s.Store.Head(ctx, key)
}

func (s *raceStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	s.fire("put")
	return s.Store.Put(ctx, key, b, c)
}

func (s *raceStore) Delete(ctx context.Context, key string) error {
	s.fire("delete")
	return s.Store.Delete(ctx, key)
}

func (s *raceStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	s.fire("list")
	p, err := s.Store.List(ctx, prefix, after, limit)
	if s.at == "after-lease-list" && prefix == s.leases && s.hook != nil {
		s.armed = true
	}
	return p, err
}

// TestPinRacingCollection is issue #27's race: a collection loads the
// leases; then a caller pins an old snapshot outside retention (the lease
// written, the manifest still there); then the collection deletes. Once
// Pin returns success, the pinned snapshot must read whole until its lease
// ends; otherwise Pin must answer ErrReclaimed and leave no lease. Two
// interleavings: the Pin lands right after the collector listed the
// leases, and right before its first delete.
func TestPinRacingCollection(t *testing.T) {
	for _, at := range []string{"after-lease-list", "before-first-delete"} {
		t.Run(at, func(t *testing.T) {
			f := newFixture(t)
			main := f.branch("main")
			cs := f.seed(main, 5)
			f.clock.Advance(10 * time.Minute)
			rs := &raceStore{Store: f.store, at: at, leases: format.NewKeys(root).LeasePrefix()}
			collector, err := maintain.New(rs, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{3})})
			if err != nil {
				t.Fatal(err)
			}
			var pinErr error
			fired := false
			rs.hook = func() {
				fired = true
				snap, err := f.g.Kernel().SnapshotAtCommit(ctx, cs[1].ID)
				if err != nil {
					t.Fatalf("read the old snapshot before pinning: %v", err)
				}
				_, pinErr = f.m.Pin(ctx, snap, time.Hour, "reader")
			}
			one := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
			if _, err := collector.Collect(ctx, one); err != nil {
				t.Fatalf("collect: %v", err)
			}
			if !fired {
				t.Fatal("the interleaving point was never reached")
			}
			switch {
			case pinErr == nil:
				if name, err := f.reopenRead(cs[1].ID); err != nil || name != "v0" {
					t.Fatalf("Pin succeeded, then its snapshot reads %q, %v", name, err)
				}
			case errors.Is(pinErr, kernel.ErrReclaimed):
				if n := countPrefix(t, f.store, format.NewKeys(root).LeasePrefix()); n != 0 {
					t.Fatalf("Pin answered ErrReclaimed and left %d leases", n)
				}
			default:
				t.Fatalf("pin: %v", pinErr)
			}
		})
	}
}

// countPrefix counts the keys under prefix.
func countPrefix(t *testing.T, s objstore.Store, prefix string) int {
	t.Helper()
	p, err := s.List(ctx, prefix, "", objstore.MaxListLimit)
	if err != nil {
		t.Fatal(err)
	}
	if p.Truncated {
		t.Fatalf("more than one page under %s", prefix)
	}
	return len(p.Keys)
}

// putRecord writes a collection record as a collector (crashed or still
// running) would have left it.
func putRecord(t *testing.T, s objstore.Store, rec format.Collection) string {
	t.Helper()
	b, err := format.EncodeCollection(&rec, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	key := format.NewKeys(root).Collection(rec.ID)
	if _, err := s.Put(ctx, key, b, objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	return key
}

// TestCollectionRecordsBindPins: a Pin of a manifest that a live record in
// state deleting plans to delete answers ErrReclaimed and leaves no lease
// (the collector may have re-listed before the lease); the same record
// once stale (its expiry passed by more than its margin) binds nothing,
// and the next collection deletes it while keeping a live record.
func TestCollectionRecordsBindPins(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	cs := f.seed(main, 3)
	snap, err := f.g.Kernel().SnapshotAtCommit(ctx, cs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	plan := []format.PlanRange{{Branch: "main", Incarnation: 1, From: snap.ManifestVersion(), To: snap.ManifestVersion()}}
	live := format.Collection{ID: format.ID{1}, State: format.CollectionDeleting, ExpiresUnixNano: now.Add(time.Hour).UnixNano(),
		SkewMarginNanos: int64(time.Minute), Plan: plan}
	liveKey := putRecord(t, f.store, live)
	if _, err := f.m.Pin(ctx, snap, time.Hour, "reader"); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("pin of a planned manifest: %v, want ErrReclaimed", err)
	}
	if n := countPrefix(t, f.store, format.NewKeys(root).LeasePrefix()); n != 0 {
		t.Fatalf("%d leases left by a refused pin", n)
	}
	if err := f.store.Delete(ctx, liveKey); err != nil {
		t.Fatal(err)
	}
	stale := live
	stale.ID, stale.ExpiresUnixNano = format.ID{2}, now.Add(-2*time.Minute).UnixNano()
	putRecord(t, f.store, stale)
	running := format.Collection{ID: format.ID{3}, State: format.CollectionLoading, ExpiresUnixNano: now.Add(time.Hour).UnixNano(), SkewMarginNanos: int64(time.Minute)}
	runningKey := putRecord(t, f.store, running)
	if _, err := f.m.Pin(ctx, snap, time.Hour, "reader"); err != nil {
		t.Fatalf("pin beside a stale and a loading record: %v", err)
	}
	rep := f.collect(policy)
	if rep.Records.Deleted != 1 || rep.Records.Kept != 1 {
		t.Fatalf("records: %+v, want the stale one deleted and the running one kept", rep.Records)
	}
	p, err := f.store.List(ctx, format.NewKeys(root).CollectionPrefix(), "", objstore.MaxListLimit)
	if err != nil || len(p.Keys) != 1 || p.Keys[0] != runningKey {
		t.Fatalf("records left: %v %v, want only %s", p.Keys, err, runningKey)
	}
}
