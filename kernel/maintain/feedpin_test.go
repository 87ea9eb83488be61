package maintain_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
)

// drain polls branch from pos until caught up (at most 64 pages) and
// returns the commits delivered whole and the last cursor.
func drain(g *data.Graph, branch string, pos changefeed.Position) (int, string, error) {
	fd := changefeed.New(g)
	commits, cursor := 0, ""
	for i := 0; i < 64; i++ {
		page, err := fd.Poll(ctx, branch, pos, feed.Filter{}, feed.Limits{})
		if err != nil {
			return commits, cursor, err
		}
		for _, b := range page.Blocks {
			if b.Complete {
				commits++
			}
		}
		if page.Cursor != "" {
			cursor, pos = page.Cursor, changefeed.FromToken(page.Cursor)
		} else {
			pos = changefeed.FromToken(page.PageToken)
		}
		if page.CaughtUp && page.Cursor != "" {
			return commits, cursor, nil
		}
	}
	return commits, cursor, fmt.Errorf("not caught up after 64 pages")
}

// TestPinFeedKeepsALaggingConsumersHistory: a consumer saves its cursor,
// then main moves on by six commits and a collection keeping only the
// head runs. With a history lease on its cursor (PinFeed) the consumer
// polls all six commits; renewed at its new cursor (and the old lease
// released), the next collection keeps what it still needs. Without the
// lease the same poll is a *feed.GapError.
func TestPinFeedKeepsALaggingConsumersHistory(t *testing.T) {
	one := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
	for _, leased := range []bool{true, false} {
		t.Run(fmt.Sprintf("leased=%v", leased), func(t *testing.T) {
			f := newFixture(t)
			main := f.branch("main")
			f.seed(main, 1)
			_, cursor, err := drain(f.g, "main", changefeed.Beginning())
			if err != nil {
				t.Fatal(err)
			}
			lease, err := f.m.PinFeed(ctx, "main", cursor, time.Hour, "consumer")
			if err != nil {
				t.Fatalf("pin feed: %v", err)
			}
			if !leased {
				if err := f.m.Release(ctx, lease); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 6; i++ {
				f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p01", fmt.Sprint("w", i))) })
			}
			f.clock.Advance(10 * time.Minute)
			if rep := f.collect(one); rep.Manifests.Deleted == 0 {
				t.Fatalf("the collection deleted nothing: %+v", rep)
			}
			n, next, err := drain(f.reopen(), "main", changefeed.FromToken(cursor))
			if !leased {
				var gap *feed.GapError
				if !errors.As(err, &gap) {
					t.Fatalf("without a lease: %d commits, %v; want a *feed.GapError", n, err)
				}
				return
			}
			if err != nil || n != 6 {
				t.Fatalf("with a lease: %d commits, %v; want 6", n, err)
			}
			renewed, err := f.m.PinFeed(ctx, "main", next, time.Hour, "consumer")
			if err != nil {
				t.Fatalf("renew: %v", err)
			}
			if err := f.m.Release(ctx, lease); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p02", fmt.Sprint("x", i))) })
			}
			f.clock.Advance(10 * time.Minute)
			f.collect(one)
			if n, _, err := drain(f.reopen(), "main", changefeed.FromToken(next)); err != nil || n != 3 {
				t.Fatalf("after renewal: %d commits, %v; want 3", n, err)
			}
			if _, err := f.m.PinFeed(ctx, "main", cursor, time.Hour, "late"); !errors.Is(err, kernel.ErrReclaimed) {
				t.Fatalf("pin of a cursor whose history is gone: %v, want ErrReclaimed", err)
			}
			_ = renewed
		})
	}
}
