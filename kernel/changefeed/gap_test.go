package changefeed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
)

// TestPollAcrossCollectedHistoryIsAGap: after a collection that keeps the
// last two commits, polling main from the beginning and the changes of a
// collected commit are *feed.GapError (feed.ErrGap and
// kernel.ErrReclaimed), while a poll from now and the changes of a
// retained commit still work (the genesis, the feed's graph identity, is
// kept).
func TestPollAcrossCollectedHistoryIsAGap(t *testing.T) {
	store := newStore()
	g := initGraph(t, store, "g")
	var cs []kernel.Commit
	for i := 0; i < 6; i++ {
		cs = append(cs, commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprint("p", i), "n")) }))
	}
	// The graph's handles use their own clock; collect far in the future.
	later := kernel.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := maintain.New(store, "g", kernel.Env{Clock: later, Entropy: rand.NewChaCha8([32]byte{7})})
	must(t, err)
	rep, err := m.Collect(ctx, maintain.Policy{Policy: gc.Policy{KeepLast: 2, Grace: time.Minute, SkewMargin: time.Minute}})
	if err != nil || rep.Manifests.Deleted == 0 {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	f := New(openGraph(t, store, "g", 3))
	_, err = f.Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{})
	var gap *feed.GapError
	if !errors.As(err, &gap) || !errors.Is(err, feed.ErrGap) || !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("poll from the beginning across collected history: %v, want a *feed.GapError", err)
	}
	if _, err := f.Poll(ctx, "main", Now(), feed.Filter{}, feed.Limits{}); err != nil {
		t.Fatalf("poll from now: %v", err)
	}
	if _, err := f.CommitChanges(ctx, cs[1].ID, "", feed.Filter{}, feed.Limits{}); !errors.Is(err, feed.ErrGap) {
		t.Fatalf("changes of a collected commit: %v, want feed.ErrGap", err)
	}
	page, err := f.CommitChanges(ctx, cs[5].ID, "", feed.Filter{}, feed.Limits{})
	if err != nil || len(page.Changes) != 1 {
		t.Fatalf("changes of a retained commit: %+v %v", page, err)
	}
}
