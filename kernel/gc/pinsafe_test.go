package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/format"
)

func ref(b string, inc, v uint64) format.ManifestRef {
	return format.ManifestRef{Branch: b, Incarnation: inc, Version: v}
}

// TestPlanOf: a plan compresses manifests into sorted runs of consecutive
// versions per incarnation; order and duplicates do not matter.
func TestPlanOf(t *testing.T) {
	got := PlanOf([]format.ManifestRef{ref("main", 1, 3), ref("f", 2, 0), ref("main", 1, 1), ref("main", 1, 2), ref("main", 1, 2), ref("main", 1, 7), ref("f", 1, 4)})
	want := []format.PlanRange{{Branch: "f", Incarnation: 1, From: 4, To: 4}, {Branch: "f", Incarnation: 2, From: 0, To: 0},
		{Branch: "main", Incarnation: 1, From: 1, To: 3}, {Branch: "main", Incarnation: 1, From: 7, To: 7}}
	if !cmp.Equal(got, want) {
		t.Fatalf("PlanOf = %+v, want %+v", got, want)
	}
	if PlanOf(nil) != nil {
		t.Fatal("empty plan not nil")
	}
}

// TestPinReclaimed: Pin's verdict from the records it read after its lease
// write. Only a live record in state deleting whose plan may delete what
// the lease holds makes it ErrReclaimed; a history lease (Through) holds
// every later version of its incarnation too.
func TestPinReclaimed(t *testing.T) {
	now := time.Unix(1000, 0)
	plan := []format.PlanRange{{Branch: "main", Incarnation: 1, From: 2, To: 5}}
	live := now.Add(time.Minute).UnixNano()
	rec := func(state string, expires int64, p []format.PlanRange) format.Collection {
		return format.Collection{ID: format.ID{1}, State: state, ExpiresUnixNano: expires, SkewMarginNanos: int64(10 * time.Second), Plan: p}
	}
	lease := func(r format.ManifestRef, through bool) format.Lease {
		return format.Lease{Snapshot: r, Through: through}
	}
	for _, tc := range []struct {
		name string
		recs []format.Collection
		l    format.Lease
		want bool
	}{
		{"no records", nil, lease(ref("main", 1, 3), false), false},
		{"loading: it re-lists after our write", []format.Collection{rec(format.CollectionLoading, live, nil)}, lease(ref("main", 1, 3), false), false},
		{"deleting, planned", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 3), false), true},
		{"deleting, first of range", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 2), false), true},
		{"deleting, last of range", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 5), false), true},
		{"deleting, above the plan", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 6), false), false},
		{"deleting, below the plan", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 1), false), false},
		{"history lease below the plan", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 1), true), true},
		{"history lease above the plan", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 6), true), false},
		{"other incarnation", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 2, 3), true), false},
		{"other branch", []format.Collection{rec(format.CollectionDeleting, live, plan)}, lease(ref("f", 1, 3), false), false},
		{"expired within the margin still binds", []format.Collection{rec(format.CollectionDeleting, now.Add(-5*time.Second).UnixNano(), plan)}, lease(ref("main", 1, 3), false), true},
		{"stale past the margin", []format.Collection{rec(format.CollectionDeleting, now.Add(-11*time.Second).UnixNano(), plan)}, lease(ref("main", 1, 3), false), false},
		{"one of several", []format.Collection{rec(format.CollectionLoading, live, nil), rec(format.CollectionDeleting, live, plan)}, lease(ref("main", 1, 4), false), true},
	} {
		if got := PinReclaimed(tc.recs, tc.l, now); got != tc.want {
			t.Errorf("%s: PinReclaimed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMayDeleteStopsBeforeStale: a collector stops deleting at its expiry
// minus its margin, strictly before any reader may call its record stale
// (expiry plus the margin), so the two never overlap at any clock within
// the skew.
func TestMayDeleteStopsBeforeStale(t *testing.T) {
	c := format.Collection{ExpiresUnixNano: time.Unix(100, 0).UnixNano(), SkewMarginNanos: int64(10 * time.Second)}
	for _, tc := range []struct {
		at         time.Time
		may, stale bool
	}{
		{time.Unix(80, 0), true, false},
		{time.Unix(90, 0), false, false},
		{time.Unix(110, 0), false, false},
		{time.Unix(111, 0), false, true},
	} {
		if MayDelete(c, tc.at) != tc.may || RecordStale(c, tc.at) != tc.stale {
			t.Errorf("at %v: MayDelete %v RecordStale %v, want %v %v", tc.at, MayDelete(c, tc.at), RecordStale(c, tc.at), tc.may, tc.stale)
		}
	}
}

// TestLeaseHolds: a snapshot lease holds its manifest; a history lease
// every later manifest of its incarnation as well.
func TestLeaseHolds(t *testing.T) {
	snap := format.Lease{Snapshot: ref("main", 1, 4)}
	hist := format.Lease{Snapshot: ref("main", 1, 4), Through: true}
	for _, tc := range []struct {
		l    format.Lease
		r    format.ManifestRef
		want bool
	}{
		{snap, ref("main", 1, 4), true}, {snap, ref("main", 1, 5), false}, {snap, ref("main", 1, 3), false},
		{hist, ref("main", 1, 4), true}, {hist, ref("main", 1, 9), true}, {hist, ref("main", 1, 3), false}, {hist, ref("main", 2, 9), false},
	} {
		if got := LeaseHolds(tc.l, tc.r); got != tc.want {
			t.Errorf("LeaseHolds(%+v, %+v) = %v", tc.l, tc.r, got)
		}
	}
}
