package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// consumer is a search-index updater: it applies the feed and persists its
// cursor together with what it applied (here: in memory).
type consumer struct {
	savedCursor string
	index       map[string]string // person id -> name
}

// catchUp polls main from the saved cursor until it reaches the head. A
// page that ends inside a commit is followed by its page token at once; the
// cursor is saved only at commit boundaries, so a crash re-delivers at most
// the commit in progress (at-least-once; applying is idempotent).
func (c *consumer) catchUp(ctx context.Context, f *changefeed.Feed) error {
	pos := changefeed.Beginning()
	if c.savedCursor != "" {
		pos = changefeed.FromToken(c.savedCursor)
	}
	for polls := 0; polls < 1000; polls++ {
		page, err := f.Poll(ctx, "main", pos, feed.Filter{Types: []string{"Person"}}, feed.Limits{MaxChanges: 2})
		switch {
		case errors.Is(err, feed.ErrGap), errors.Is(err, feed.ErrBranchChanged):
			return fmt.Errorf("re-baseline from a snapshot: %w", err)
		case err != nil:
			return err
		}
		for _, b := range page.Blocks {
			for _, ch := range b.Changes {
				if ch.Op == feed.OpDelete {
					delete(c.index, ch.ID)
				} else {
					c.index[ch.ID] = ch.After.Props["name"].(string)
				}
			}
		}
		if page.Cursor != "" {
			c.savedCursor = page.Cursor // persist with c.index, atomically
		}
		if page.CaughtUp {
			return nil
		}
		pos = changefeed.FromToken(page.Cursor + page.PageToken)
	}
	return errors.New("still behind after 1000 polls")
}

func Example() {
	ctx := context.Background()
	s, _ := schema.Parse([]byte(`node Person { name: string }`))
	env := kernel.Env{Clock: kernel.NewManualClock(time.Unix(0, 0)), Entropy: rand.NewChaCha8([32]byte{})}
	store := sim.New(sim.Config{Seed: 1})
	g, err := data.Init(ctx, store, "graphs/example", s, data.Options{Kernel: kernel.Options{Env: env}})
	if err != nil {
		fmt.Println(err)
		return
	}
	commit := func(f func(tx *data.Txn) error) {
		main, _ := g.Branch(ctx, "main")
		tx, _ := g.Begin(ctx, main)
		_ = f(tx)
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "example"}); err != nil {
			fmt.Println(err)
		}
	}
	commit(func(tx *data.Txn) error {
		return tx.Insert("Person", data.Row{ID: "ann", Props: map[string]any{"name": "Ann"}},
			data.Row{ID: "bob", Props: map[string]any{"name": "Bob"}}, data.Row{ID: "cy", Props: map[string]any{"name": "Cy"}})
	})

	c := &consumer{index: map[string]string{}}
	if err := c.catchUp(ctx, changefeed.New(g)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(c.index), c.index["bob"])

	commit(func(tx *data.Txn) error { return tx.Delete("Person", "bob") })
	// The consumer restarts (a new process, a new handle) from its cursor.
	g2, _ := data.Open(ctx, store, "graphs/example", data.Options{Kernel: kernel.Options{Env: env}})
	if err := c.catchUp(ctx, changefeed.New(g2)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(c.index), c.index["cy"])
	// Output:
	// 3 Bob
	// 2 Cy
}
