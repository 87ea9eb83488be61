package maintain_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCollectKeepsIndexTrees: table versions whose indexes are trees of
// ref chunks (IndexFanout 2: a version lists one ref chunk per direction)
// keep, through a collection keeping the last 3 commits, every ref chunk,
// chunk and page below their refs — red without the collector walking the
// levels (the level-0 chunks and pages of retained versions are swept and
// their Out and Get fail) — the collection deletes the dropped versions'
// objects, verify finds the graph clean, and verify names a damaged page
// below a ref chunk (red without verify walking the levels).
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
	f.collectShrinking(root + "/adj/")
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
	f.verifyClean("a graph with index trees")
	page := firstLeafPage(t, f, "Person", lastVersion(t, f, "Person"), "data.adj.id")
	obj, err := f.store.Get(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	obj.Data[len(obj.Data)/2] ^= 1
	if _, err := f.store.Store.(*sim.Store).Put(ctx, page, obj.Data, objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	vr, err := verify.Graph(ctx, f.store, root, kernel.Env{Clock: f.clock}, f.clock.Now(), policy.KeepLast)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range vr.Problems {
		found = found || (p.Key == page && p.Rule == verify.RuleAdjacency)
	}
	if !found {
		t.Fatalf("verify missed a damaged id page under a ref chunk (%s): %+v", page, vr.Problems)
	}
}

// firstLeafPage returns the key of the first page under the index refs
// version tv of table lists under md, walking its ref chunks.
func firstLeafPage(t *testing.T, f *fixture, table string, tv format.TableVersion, md string) string {
	t.Helper()
	var refs []struct{ Name string }
	for _, kv := range tv.Metadata {
		if kv.Key == md {
			if err := json.Unmarshal([]byte(kv.Value), &refs); err != nil || len(refs) == 0 {
				t.Fatalf("%s: %v", kv.Value, err)
			}
		}
	}
	keys := format.NewKeys(root)
	name := refs[0].Name
	for range data.MaxIndexLevels + 1 {
		id, err := ulid.ParseStrict(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.store.Get(ctx, keys.Adjacency(table, id))
		if err != nil {
			t.Fatal(err)
		}
		entries, below, err := data.AdjacencyChunkEntries(b.Data)
		if err != nil {
			t.Fatal(err)
		}
		id, err = ulid.ParseStrict(entries[0])
		if err != nil {
			t.Fatal(err)
		}
		if !below {
			return keys.Adjacency(table, id)
		}
		name = entries[0]
	}
	t.Fatal("index deeper than data.MaxIndexLevels")
	return ""
}

// lastVersion returns the newest stored version of table.
func lastVersion(t *testing.T, f *fixture, table string) format.TableVersion {
	t.Helper()
	var newest format.TableVersion
	for _, tv := range storedVersions(t, f, table) {
		if tv.Version > newest.Version {
			newest = tv
		}
	}
	return newest
}

// storedVersions returns every stored version of table, decoded.
func storedVersions(t *testing.T, f *fixture, table string) []format.TableVersion {
	t.Helper()
	var out []format.TableVersion
	for _, key := range f.store.Store.(*sim.Store).Keys(root + "/tables/" + table + "/") {
		b, err := f.store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		tv, _, err := format.DecodeTableVersion(b.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tv)
	}
	return out
}

// TestCollectKeepsFragmentTrees: paged table versions whose fragment
// chunk refs are trees of fragment ref chunks (IndexFanout 2, every
// fragment an object) keep, through a collection keeping the last 3
// commits, every fragment ref chunk, fragment chunk and fragment below
// them — red without the collector walking the levels (the fragments of
// retained versions are swept and their reads fail) — and verify finds
// the graph clean.
func TestCollectKeepsFragmentTrees(t *testing.T) {
	f := newFixtureAll(t, 1, -1, 2)
	main := f.branch("main")
	var cs []kernel.Commit
	var counts []int // rows at each commit of cs
	rows := 0
	for i := 0; i < 12; i++ {
		cs = append(cs, f.commit(main, func(tx *data.Txn) error {
			for k := 0; k < 26-2*i; k++ { // each batch smaller than the last: one fragment each

				if err := tx.Insert("Person", person(fmt.Sprintf("p%02d%02d", i, k), "n")); err != nil {
					return err
				}
			}
			return nil
		}))
		rows += 26 - 2*i
		counts = append(counts, rows)
		if i%4 == 3 { // an update rewrites one fragment: one path of the tree
			cs = append(cs, f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person(fmt.Sprintf("p%02d00", i-2), "u")) }))
			counts = append(counts, rows)
		}
	}
	tv := lastVersion(t, f, "Person")
	for _, kv := range tv.Metadata {
		if kv.Key == "data.frags" && !strings.Contains(kv.Value, `"level":`) {
			t.Fatalf("data.frags = %s: not a fragment ref chunk", kv.Value)
		}
	}
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.TableVersions.Deleted == 0 || rep.Fragments.Deleted+rep.Adjacency.Deleted == 0 {
		t.Fatalf("nothing reclaimed: %+v", rep)
	}
	g := f.reopen()
	for i := len(cs) - 3; i < len(cs); i++ {
		c := cs[i]
		s, err := g.SnapshotAtCommit(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.Count(ctx, "Person")
		if err != nil || n != uint64(counts[i]) {
			t.Fatalf("retained commit %s: Count = %d, %v; want %d", c.ID, n, err, counts[i])
		}
		for _, id := range []string{"p0000", "p0500", "p1001"} {
			if _, ok, err := s.Get(ctx, "Person", id); err != nil || !ok {
				t.Fatalf("retained commit %s: Get(%s) = %v, %v", c.ID, id, ok, err)
			}
		}
	}
	f.verifyClean("a graph with fragment trees")
}

// collectShrinking advances the clock past the grace period, collects
// under policy and fails unless the collection deleted table versions and
// adjacency objects and left fewer keys under prefix than before.
func (f *fixture) collectShrinking(prefix string) maintain.Report {
	f.t.Helper()
	before := len(f.store.Store.(*sim.Store).Keys(prefix))
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.TableVersions.Deleted == 0 || rep.Adjacency.Deleted == 0 {
		f.t.Fatalf("nothing reclaimed: %+v", rep)
	}
	if after := len(f.store.Store.(*sim.Store).Keys(prefix)); after >= before {
		f.t.Fatalf("%d objects under %s after the collection, %d before", after, prefix, before)
	}
	return rep
}

// verifyClean fails unless verify finds the collected graph (what) clean
// under the test policy's retention.
func (f *fixture) verifyClean(what string) {
	f.t.Helper()
	vr, err := verify.Graph(ctx, f.store, root, kernel.Env{Clock: f.clock}, f.clock.Now(), policy.KeepLast)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(vr.Problems) > 0 {
		var b strings.Builder
		for _, p := range vr.Problems {
			fmt.Fprintf(&b, "\n  %s %s: %s", p.Rule, p.Key, p.Detail)
		}
		f.t.Fatalf("verify after collecting %s:%s", what, b.String())
	}
}
