package data

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// keyHookStore runs hook once, before forwarding the first Put whose key
// contains match: a deterministic interleaving point for races.
type keyHookStore struct {
	objstore.Store
	match string
	hook  func()
}

func (s *keyHookStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.hook != nil && strings.Contains(key, s.match) {
		h := s.hook
		s.hook = nil
		h()
	}
	return s.Store.Put(ctx, key, b, c)
}

// insertPeople commits n single-row inserts p<from>.. p<from+n-1>.
func insertPeople(t testing.TB, g *Graph, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person(fmt.Sprintf("p%04d", i), "n")) })
	}
}

func pinnedVersion(t testing.TB, g *Graph, table string) kernel.TableVersion {
	t.Helper()
	s := snap(t, g)
	tv, err := g.Kernel().ReadPinned(ctx, pinRef(s.ks, table))
	must(t, err)
	return tv
}

// pinnedMetadata returns the metadata of the version of table g's main
// pins, as a map.
func pinnedMetadata(t testing.TB, g *Graph, table string) map[string]string {
	t.Helper()
	md := map[string]string{}
	for _, kv := range pinnedVersion(t, g, table).Metadata {
		md[kv.Key] = kv.Value
	}
	return md
}

// tableCompaction returns rep's entry for table (nil if it has none).
func tableCompaction(rep CompactReport, table string) *TableCompaction {
	for i := range rep.Tables {
		if rep.Tables[i].Table == table {
			return &rep.Tables[i]
		}
	}
	return nil
}

// TestCompactPreservesRowsAndConverges: a compaction rewrites the small
// fragments of many single-row commits into one, publishes one maintenance
// commit (actor maintenance) whose table version is marked
// content-preserving, every row reads back the same, and running it again
// publishes nothing.
func TestCompactPreservesRowsAndConverges(t *testing.T) {
	defaultFragmentShapes(t, "it counts the version's inline fragments")
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	insertPeople(t, g, 0, 15) // binary-counter merging leaves 4 fragments: 8+4+2+1
	before := pinnedVersion(t, g, "Person")
	wantIDs := scanIDs(t, snap(t, g), "Person")
	if len(before.Fragments) != 4 {
		t.Fatalf("%d fragments before, want 4", len(before.Fragments))
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 1 || rep.Tables[0].Table != "Person" || rep.Tables[0].FragmentsBefore != 4 || rep.Tables[0].FragmentsAfter != 1 {
		t.Fatalf("report %+v", rep)
	}
	if c := rep.Tables[0].Commit; c.Actor != MaintenanceActor {
		t.Fatalf("commit actor %q", c.Actor)
	}
	after := pinnedVersion(t, g, "Person")
	if !after.ContentPreserving || after.BasedOn == nil || after.BasedOn.Version != before.Version || after.Rows != 15 || len(after.Fragments) != 1 {
		t.Fatalf("compacted version %+v (before v%d)", after, before.Version)
	}
	if got := scanIDs(t, snap(t, g), "Person"); got != wantIDs {
		t.Fatalf("rows after compaction %s, want %s", got, wantIDs)
	}
	if r, ok, err := snap(t, g).Get(ctx, "Person", "p0007"); err != nil || !ok || r.Props["name"] != "n" {
		t.Fatalf("Get(p0007) = %+v %v %v", r, ok, err)
	}
	head, _ := g.Kernel().Head(ctx, mainRef(t, g))
	rep, err = g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if again, _ := g.Kernel().Head(ctx, mainRef(t, g)); len(rep.Tables) != 0 || again.ID != head.ID {
		t.Fatalf("second compaction published %+v", rep)
	}
}

// TestStrictTxnSurvivesCompaction: a transaction that updates and deletes
// (strict) begun before a compaction commits after it, and one whose
// commit races a compaction landing in its own round rebuilds on it.
func TestStrictTxnSurvivesCompaction(t *testing.T) {
	store := &keyHookStore{Store: sim.New(sim.Config{Seed: 1})}
	g := initGraph(t, store, Limits{})
	insertPeople(t, g, 0, 15)
	tx, del := begin(t, g), begin(t, g)
	must(t, tx.Update("Person", person("p0003", "updated")))
	must(t, del.Delete("Person", "p0004"))
	_, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
		t.Fatalf("strict update after a compaction: %v", err)
	}
	if _, err := del.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err == nil {
		t.Fatalf("strict delete begun before an update of the same table committed")
	}
	del = begin(t, g)
	must(t, del.Delete("Person", "p0004"))
	if _, err := g.Compact(ctx, mainRef(t, g), compact.Policy{MinFragments: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := del.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
		t.Fatalf("strict delete after a compaction: %v", err)
	}
	insertPeople(t, g, 100, 7) // new small fragments: 1 compacted + 3
	other := openGraph(t, store.Store, 7)
	tx = begin(t, g)
	must(t, tx.Update("Person", person("p0005", "raced")))
	store.match, store.hook = "/sidecars/", func() { // the txn's sidecar: a compaction lands first
		rep, err := other.Compact(ctx, mainRef(t, other), compact.Policy{MinFragments: 2})
		if err != nil || len(rep.Tables) != 1 {
			t.Errorf("racing compaction: %+v %v", rep, err)
		}
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
		t.Fatalf("strict txn racing a compaction: %v", err)
	}
	s := snap(t, g)
	for id, want := range map[string]string{"p0003": "updated", "p0005": "raced", "p0106": "n"} {
		if r, ok, err := s.Get(ctx, "Person", id); err != nil || !ok || r.Props["name"] != want {
			t.Fatalf("Get(%s) = %+v %v %v, want name %s", id, r, ok, err, want)
		}
	}
	if _, ok, _ := s.Get(ctx, "Person", "p0004"); ok {
		t.Fatalf("deleted p0004 is back")
	}
	if n, _ := s.Count(ctx, "Person"); n != 21 {
		t.Fatalf("count %d, want 21", n)
	}
}

// TestCompactionRacingDataWriteLosesNothing: a data write (an update, which
// keeps the fragment count) that publishes
// while a compaction is in its round (after the compaction built its
// fragments, before its table version) wins; the compaction rebuilds on the
// data write's version, so the result holds both.
func TestCompactionRacingDataWriteLosesNothing(t *testing.T) {
	store := &keyHookStore{Store: sim.New(sim.Config{Seed: 1})}
	g := initGraph(t, store, Limits{})
	insertPeople(t, g, 0, 15)
	other := openGraph(t, store.Store, 9)
	store.match, store.hook = "/tables/Person/", func() {
		commitTx(t, other, func(tx *Txn) error { return tx.Update("Person", person("p0000", "racer")) })
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 1 {
		t.Fatalf("report %+v", rep)
	}
	s := snap(t, g)
	if r, ok, err := s.Get(ctx, "Person", "p0000"); err != nil || !ok || r.Props["name"] != "racer" {
		t.Fatalf("the racing data write was lost: %+v %v %v", r, ok, err)
	}
	if n, _ := s.Count(ctx, "Person"); n != 15 {
		t.Fatalf("count %d, want 15", n)
	}
	tv := pinnedVersion(t, g, "Person")
	if !tv.ContentPreserving {
		t.Fatalf("the compaction did not publish last: %+v", tv)
	}
}

// TestCompactEdgeTableKeepsItsAdjacencyIndex: compacting an edge table
// keeps the version's adjacency index (the same edges, sorted by key and
// id whatever the fragments), so Out and In answer the same through it.
func TestCompactEdgeTableKeepsItsAdjacencyIndex(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i < 4; i++ {
			if err := tx.Insert("Person", person(fmt.Sprint("p", i), "n")); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < 15; i++ {
		commitTx(t, g, func(tx *Txn) error {
			return tx.Insert("Knows", edge(fmt.Sprintf("k%02d", i), fmt.Sprint("p", i%4), fmt.Sprint("p", (i+1)%4)))
		})
	}
	adjacency := func() string {
		s := snap(t, g)
		var out []string
		for i := 0; i < 4; i++ {
			o, err := s.Out(ctx, "Knows", fmt.Sprint("p", i))
			must(t, err)
			in, err := s.In(ctx, "Knows", fmt.Sprint("p", i))
			must(t, err)
			out = append(out, ids(o)+"|"+ids(in))
		}
		return strings.Join(out, ";")
	}
	want := adjacency()
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 1 || rep.Tables[0].Table != "Knows" {
		t.Fatalf("report %+v", rep)
	}
	tv := pinnedVersion(t, g, "Knows")
	var adj int
	for _, kv := range tv.Metadata {
		if strings.HasPrefix(kv.Key, metaAdjPrefix) {
			adj++
		}
	}
	if !tv.ContentPreserving || adj != 3 { // data.adj.out, data.adj.in, data.adj.id
		t.Fatalf("compacted edge version: preserving %v, %d adjacency entries", tv.ContentPreserving, adj)
	}
	if got := adjacency(); got != want {
		t.Fatalf("adjacency after compaction\n%s\nwant\n%s", got, want)
	}
}
