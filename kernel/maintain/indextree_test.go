package maintain_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCollectKeepsIndexTrees: table versions whose indexes are trees of
// ref chunks (IndexFanout 2: a version lists one ref chunk per direction)
// keep, through a collection keeping the last 3 commits, every ref chunk,
// chunk and page below their refs — red without the collector walking the
// levels (the level-0 chunks and pages of retained versions are swept and
// their Out and Get fail) — the collection deletes the dropped versions'
// objects, and verify finds the graph clean.
func TestCollectKeepsIndexTrees(t *testing.T) {
	f := newFixtureOpts(t, 0, 2)
	main := f.branch("main")
	f.commit(main, func(tx *data.Txn) error {
		for i := 0; i < 20; i++ {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%02d", i), "n")); err != nil {
				return err
			}
		}
		return nil
	})
	var cs []kernel.Commit
	for i := 0; i < 9; i++ {
		if i%3 == 2 { // a delete folds the id index's delta: the id tree is rewritten too
			cs = append(cs, f.commit(main, func(tx *data.Txn) error { return tx.Delete("Knows", fmt.Sprintf("k%02db", i-1)) }))
			continue
		}
		cs = append(cs, f.commit(main, func(tx *data.Txn) error {
			for _, s := range []string{"a", "b", "c"} {
				if err := tx.Insert("Knows", data.Row{ID: fmt.Sprintf("k%02d%s", i, s), From: fmt.Sprintf("p%02d", i), To: fmt.Sprintf("p%02d", 19-i)}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	for _, tk := range []struct{ table, key string }{{"Knows", "data.adj.out"}, {"Knows", "data.adj.in"}, {"Person", "data.adj.id"}} {
		for _, kv := range lastVersion(t, f, tk.table).Metadata {
			if kv.Key == tk.key && !strings.Contains(kv.Value, `"level":`) {
				t.Fatalf("%s %s = %s: not a ref chunk", tk.table, kv.Key, kv.Value)
			}
		}
	}
	adjBefore := len(f.store.Store.(*sim.Store).Keys(root + "/adj/"))
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.TableVersions.Deleted == 0 || rep.Adjacency.Deleted == 0 {
		t.Fatalf("nothing reclaimed: %+v", rep)
	}
	if after := len(f.store.Store.(*sim.Store).Keys(root + "/adj/")); after >= adjBefore {
		t.Fatalf("%d index objects after the collection, %d before", after, adjBefore)
	}
	g := f.reopen()
	for _, c := range cs[len(cs)-3:] {
		s, err := g.SnapshotAtCommit(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"p00", "p03", "p06"} {
			out, err := s.Out(ctx, "Knows", p)
			if err != nil || len(out) != 3 {
				t.Fatalf("retained commit %s: Out(%s) = %d edges, %v; want 3", c.ID, p, len(out), err)
			}
		}
		if _, ok, err := s.Get(ctx, "Person", "p19"); err != nil || !ok {
			t.Fatalf("retained commit %s: Get(p19) = %v, %v", c.ID, ok, err)
		}
	}
	tx, err := g.Begin(ctx, f.branch("main"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Insert("Person", person("p05", "dup")); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "t"}); err == nil {
		t.Fatal("a duplicate id passed the id tree after the collection")
	}
	vr, err := verify.Graph(ctx, f.store, root, kernel.Env{Clock: f.clock}, f.clock.Now(), policy.KeepLast)
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Problems) > 0 {
		var b strings.Builder
		for _, p := range vr.Problems {
			fmt.Fprintf(&b, "\n  %s %s: %s", p.Rule, p.Key, p.Detail)
		}
		t.Fatalf("verify after collecting a graph with index trees:%s", b.String())
	}
}

// lastVersion returns the newest stored version of table.
func lastVersion(t *testing.T, f *fixture, table string) format.TableVersion {
	t.Helper()
	var newest format.TableVersion
	for _, key := range f.store.Store.(*sim.Store).Keys(root + "/tables/" + table + "/") {
		b, err := f.store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		tv, _, err := format.DecodeTableVersion(b.Data)
		if err != nil {
			t.Fatal(err)
		}
		if tv.Version > newest.Version {
			newest = tv
		}
	}
	return newest
}

