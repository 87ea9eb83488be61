package gc_test

import (
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
)

// TestSweepShare: each category gets an equal share of the time and
// deletes left (rounded up), the last one everything; past the end no
// time.
func TestSweepShare(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name         string
		now          time.Time
		budget, left int
		until        time.Time
		deletes      int
	}{
		{"first of ten", t0, 100, 10, t0.Add(6 * time.Second), 10},
		{"rounded up", t0, 5, 10, t0.Add(6 * time.Second), 1},
		{"last gets all", t0, 7, 1, t0.Add(time.Minute), 7},
		{"past the end", t0.Add(2 * time.Minute), 7, 3, t0.Add(time.Minute), 3},
		{"no budget", t0, 0, 4, t0.Add(time.Minute), 0},
	} {
		until, deletes := gc.SweepShare(c.now, t0.Add(time.Minute), c.budget, c.left)
		if !until.Equal(c.until) || deletes != c.deletes {
			t.Errorf("%s: %v %d, want %v %d", c.name, until, deletes, c.until, c.deletes)
		}
	}
}

// TestLeftoverBindsUntilGone: a leftover record plans exactly the left
// manifests, is never stale, binds a Pin of one of them, and binds
// nothing once none of them is present.
func TestLeftoverBindsUntilGone(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := format.Collection{ID: format.ID{1}, State: format.CollectionDeleting, ExpiresUnixNano: now.UnixNano(), SkewMarginNanos: int64(time.Minute),
		Plan: []format.PlanRange{{Branch: "main", Incarnation: 1, From: 1, To: 9}}}
	left := []format.ManifestRef{{Branch: "main", Incarnation: 1, Version: 7}, {Branch: "main", Incarnation: 1, Version: 8}}
	l := gc.Leftover(rec, left)
	if !gc.IsLeftover(l) || gc.IsLeftover(rec) {
		t.Fatalf("IsLeftover: %v for the leftover, %v for the record", gc.IsLeftover(l), gc.IsLeftover(rec))
	}
	if len(l.Plan) != 1 || l.Plan[0].From != 7 || l.Plan[0].To != 8 {
		t.Fatalf("leftover plan %+v, want main#1 7..8", l.Plan)
	}
	if err := format.ValidateCollection(&l); err != nil {
		t.Fatal(err)
	}
	if gc.RecordStale(l, now.Add(1000*24*time.Hour)) {
		t.Fatal("a leftover record went stale")
	}
	lease := format.Lease{Snapshot: format.ManifestRef{Branch: "main", Incarnation: 1, Version: 8}}
	if !gc.PinReclaimed([]format.Collection{l}, lease, now.Add(24*time.Hour)) {
		t.Fatal("a leftover record does not bind a Pin of a left manifest")
	}
	lease.Snapshot.Version = 3 // deleted by its run: Pin's manifest check answers
	if gc.PinReclaimed([]format.Collection{l}, lease, now) {
		t.Fatal("a leftover record binds a manifest outside what was left")
	}
	present := func(v uint64) func(gc.IncKey, uint64, uint64) bool {
		return func(inc gc.IncKey, from, to uint64) bool {
			return inc == gc.IncKey{Name: "main", Inc: 1} && from <= v && v <= to
		}
	}
	if gc.LeftoverGone(l, present(8)) || !gc.LeftoverGone(l, present(9)) {
		t.Fatal("LeftoverGone: want false while 8 is present, true once only 9 is")
	}
	if gc.LeftoverGone(rec, present(100)) {
		t.Fatal("LeftoverGone judged a running collector's record")
	}
}
