package data

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// raceHook runs a competing action once, just before the first store call
// that lists a key prefix (kernel.Write's table-head probe): after the
// transaction under test validated, before its table versions are written.
type raceHook struct {
	mu     sync.Mutex
	prefix string
	// publish is the prefix of the branch's manifests: a write whose
	// versions ride its manifest (format 11) probes no table key, and
	// its manifest PUT is the last point before its publish.
	publish string
	action  func()
	fired   bool
}

func (h *raceHook) before(_ context.Context, c *sim.Call) error {
	h.mu.Lock()
	probe := (c.Op == objstore.OpList || c.Op == objstore.OpPut) && strings.HasPrefix(c.Key, h.prefix)
	publish := h.publish != "" && c.Op == objstore.OpPut && strings.HasPrefix(c.Key, h.publish)
	fire := h.action != nil && !h.fired && (probe || publish)
	if fire {
		h.fired = true
	}
	h.mu.Unlock()
	if fire {
		h.action()
	}
	return nil
}

// commitRacing commits a transaction staged by ours on a seeded graph,
// while another handle commits competing, whole, at our Write's first probe
// of table's versions (the HEAD LIST of a counter-named write, the version PUT of one named per attempt) or, when its
// versions ride the manifest (format 11), at its manifest PUT. It returns our graph and our Commit's error, and
// fails the test if the competing commit never ran.
func commitRacing(t *testing.T, ours, competing func(tx *Txn) error, table string) (*Graph, error) {
	t.Helper()
	hook := &raceHook{}
	store := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{Before: hook.before}})
	g := initGraph(t, store, Limits{})
	seedGraph(t, g)
	other := openGraph(t, store, 3)
	tx := begin(t, g)
	must(t, ours(tx))
	hook.mu.Lock()
	hook.prefix = testRoot + "/tables/" + table + "/"
	hook.publish = testRoot + "/branches/"
	hook.action = func() { commitTx(t, other, competing) }
	hook.mu.Unlock()
	_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "ours"})
	if !hook.fired {
		t.Fatal("the competing commit never ran")
	}
	return g, err
}

// TestRebaseRevalidates pins the non-strict rebase: when another writer
// publishes to the table between this transaction's validation and its
// write, kernel.Write rebuilds on the newer version and the transaction is
// validated again there: compatible work lands, a conflict is rejected.
func TestRebaseRevalidates(t *testing.T) {
	cases := []struct {
		name      string
		table     string
		competing func(tx *Txn) error
		ours      func(tx *Txn) error
		want      error
		after     func(t *testing.T, s *Snapshot)
	}{
		{
			name:      "disjoint inserts both land",
			table:     "Person",
			competing: func(tx *Txn) error { return tx.Insert("Person", person("p8", "other")) },
			ours:      func(tx *Txn) error { return tx.Insert("Person", person("p9", "ours")) },
			after: func(t *testing.T, s *Snapshot) {
				if got := scanIDs(t, s, "Person"); got != "p1,p2,p3,p8,p9" {
					t.Fatalf("persons = %s", got)
				}
			},
		},
		{
			name:      "same id inserted concurrently",
			table:     "Person",
			competing: func(tx *Txn) error { return tx.Insert("Person", person("p9", "other")) },
			ours:      func(tx *Txn) error { return tx.Insert("Person", person("p9", "ours")) },
			want:      ErrIDExists,
		},
		{
			name:      "upsert replaces the concurrent row",
			table:     "Person",
			competing: func(tx *Txn) error { return tx.Upsert("Person", person("p1", "other")) },
			ours:      func(tx *Txn) error { return tx.Upsert("Person", person("p1", "ours")) },
			after: func(t *testing.T, s *Snapshot) {
				if r, _, _ := s.Get(ctx, "Person", "p1"); r.Props["name"] != "ours" {
					t.Fatalf("p1 = %v", r.Props)
				}
			},
		},
		{
			name:      "cardinality against the newer edge table",
			table:     "WorksAt",
			competing: func(tx *Txn) error { return tx.Insert("WorksAt", edge("w2", "p2", "c1")) },
			ours:      func(tx *Txn) error { return tx.Insert("WorksAt", edge("w3", "p2", "c2")) },
			want:      ErrCardinality,
			after: func(t *testing.T, s *Snapshot) {
				if out, _ := s.Out(ctx, "WorksAt", "p2"); ids(out) != "w2" {
					t.Fatalf("Out(WorksAt, p2) = %s", ids(out))
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := commitRacing(t, tc.ours, tc.competing, tc.table)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Commit = %v, want %v", err, tc.want)
			}
			if tc.after != nil {
				tc.after(t, snap(t, g))
			}
		})
	}
}

// TestBranchIsolation pins that data written on a branch is invisible on
// main and that a branch starts from its source's data.
func TestBranchIsolation(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	feat, err := g.Kernel().CreateBranch(ctx, "feature", mainRef(t, g))
	must(t, err)
	tx, err := g.Begin(ctx, feat)
	must(t, err)
	must(t, tx.Insert("Person", person("p9", "branchy")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{})
	must(t, err)
	fs, err := g.SnapshotAt(ctx, feat)
	must(t, err)
	if got := scanIDs(t, fs, "Person"); got != "p1,p2,p3,p9" {
		t.Fatalf("feature persons = %s", got)
	}
	if got := scanIDs(t, snap(t, g), "Person"); got != "p1,p2,p3" {
		t.Fatalf("main persons = %s", got)
	}
}
