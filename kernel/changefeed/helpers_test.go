package changefeed

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var ctx = context.Background()

const testSchemaText = `
node Person  { name: string  nick: string?  avatar: bytes?  age: int64? }
node Company { name: string }
edge WorksAt: Person -> Company
`

func testEnv(seed uint64) kernel.Env {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return kernel.Env{Clock: kernel.NewManualClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)), Entropy: rand.NewChaCha8(s)}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newStore() objstore.Store { return sim.New(sim.Config{Seed: 1}) }

func initGraph(t testing.TB, store objstore.Store, root string) *data.Graph {
	t.Helper()
	return initGraphSeed(t, store, root, 1)
}

// initGraphSeed creates a graph whose ids come from entropy seed (two
// graphs need two seeds to have two identities).
func initGraphSeed(t testing.TB, store objstore.Store, root string, seed uint64) *data.Graph {
	t.Helper()
	s, err := schema.Parse([]byte(testSchemaText))
	must(t, err)
	g, err := data.Init(ctx, store, root, s, data.Options{Kernel: kernel.Options{Env: testEnv(seed)}})
	must(t, err)
	return g
}

func openGraph(t testing.TB, store objstore.Store, root string, seed uint64) *data.Graph {
	t.Helper()
	g, err := data.Open(ctx, store, root, data.Options{Kernel: kernel.Options{Env: testEnv(seed)}})
	must(t, err)
	return g
}

func branch(t testing.TB, g *data.Graph, name string) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(ctx, name)
	must(t, err)
	return b
}

func commitOn(t testing.TB, g *data.Graph, b string, f func(tx *data.Txn) error) kernel.Commit {
	t.Helper()
	tx, err := g.Begin(ctx, branch(t, g, b))
	must(t, err)
	must(t, f(tx))
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "commit on " + b})
	must(t, err)
	return c
}

func person(id, name string) data.Row { return data.Row{ID: id, Props: map[string]any{"name": name}} }

// allChanges pulls every page of a commit's changes.
func allChanges(t testing.TB, f *Feed, id kernel.CommitID, filter feed.Filter, lim feed.Limits) (kernel.Commit, []Change, int) {
	t.Helper()
	var out []Change
	tok, pages := "", 0
	for {
		p, err := f.CommitChanges(ctx, id, tok, filter, lim)
		must(t, err)
		out = append(out, p.Changes...)
		pages++
		if p.Next == "" {
			return p.Commit, out, pages
		}
		if pages > 10000 {
			t.Fatal("no end of pages")
		}
		tok = p.Next
	}
}

// model is a replayed state: type -> id -> row.
type model map[string]map[string]data.Row

// apply applies one change idempotently (a redelivered change is harmless).
func (m model) apply(c Change) {
	if m[c.Type] == nil {
		m[c.Type] = map[string]data.Row{}
	}
	if c.Op == feed.OpDelete {
		delete(m[c.Type], c.ID)
		return
	}
	m[c.Type][c.ID] = *c.After
}

func firstCommit(t testing.TB, g *data.Graph) kernel.CommitID {
	t.Helper()
	s, err := g.Kernel().SnapshotAtVersion(ctx, branch(t, g, "main"), 0)
	must(t, err)
	return s.Head()
}

type storeT = objstore.Store

func sortStrings(s []string) { sort.Strings(s) }
