package data

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// worksAtGraph commits n persons, 4 companies and one WorksAt edge per
// person (p -> company i%4), so WorksAt spans several fragments and many
// adjacency pages.
func worksAtGraph(t testing.TB, n int) (*byteLog, *Graph) {
	t.Helper()
	cs := &byteLog{Store: sim.New(sim.Config{Seed: 1})}
	g := initGraph(t, cs, Limits{})
	commitTx(t, g, func(tx *Txn) error {
		var ps, ws []Row
		for i := 0; i < n; i++ {
			ps = append(ps, person(fmt.Sprintf("p%06d", i), "x"))
			ws = append(ws, edge(fmt.Sprintf("w%06d", i), fmt.Sprintf("p%06d", i), fmt.Sprintf("c%d", i%4)))
		}
		if err := tx.Insert("Company", company("c0"), company("c1"), company("c2"), company("c3")); err != nil {
			return err
		}
		if err := tx.Insert("Person", ps...); err != nil {
			return err
		}
		return tx.Insert("WorksAt", ws...)
	})
	return cs, g
}

// byteLog records the key and size of every successful Get.
type byteLog struct {
	objstore.Store
	mu   sync.Mutex
	gets []objstore.Object
	keys []string
}

func (b *byteLog) Get(ctx context.Context, key string) (objstore.Object, error) {
	o, err := b.Store.Get(ctx, key)
	if err == nil {
		b.mu.Lock()
		b.gets, b.keys = append(b.gets, o), append(b.keys, key)
		b.mu.Unlock()
	}
	return o, err
}

func (b *byteLog) Reset() {
	b.mu.Lock()
	b.gets, b.keys = nil, nil
	b.mu.Unlock()
}

func prefixBytes(b *byteLog, prefix string) (gets int, bytes uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, k := range b.keys {
		if strings.HasPrefix(k, prefix) {
			gets++
			bytes += uint64(len(b.gets[i].Data))
		}
	}
	return gets, bytes
}

// TestAdjacencyReadsFollowDegree: a cold Out reads one chunk and one page
// of the index and no data fragment; an @card(0..1) insert and a cascading
// node delete read only the index pages and data fragments of the touched
// nodes' edges, never the whole edge table. Red with the whole-table loads
// this replaced.
func TestAdjacencyReadsFollowDegree(t *testing.T) {
	defaultFragmentShapes(t, "it sums the table's size from inline fragment infos")
	n := 3 * MaxFragmentRows
	cs, _ := worksAtGraph(t, n)
	g := openGraph(t, cs, 4)
	total := tableBytes(t, snap(t, g), "WorksAt")
	cs.Reset()
	rows, err := snap(t, g).Out(ctx, "WorksAt", "p012345")
	must(t, err)
	dataGets, _ := prefixBytes(cs, testRoot+"/data/")
	adjGets, adjBytes := prefixBytes(cs, testRoot+"/adj/")
	path := 2 + indexRefsOf(t, pinnedVersion(t, g, "WorksAt"), "out")[0].Level // one chunk per level and a page
	if len(rows) != 1 || rows[0].To != "c1" || dataGets != 0 || adjGets != path || adjBytes > total/10 {
		t.Fatalf("cold Out: %v with %d data GETs, %d index GETs (%d bytes of a %d-byte table); want 1 edge, 0, %d",
			ids(rows), dataGets, adjGets, adjBytes, total, path)
	}
	in, err := snap(t, g).InDegree(ctx, "WorksAt", "c2")
	if err != nil || in != n/4 {
		t.Fatalf("InDegree(c2) = %d, %v; want %d", in, err, n/4)
	}

	g = openGraph(t, cs, 5)
	cs.Reset()
	commitTx(t, g, func(tx *Txn) error {
		if err := tx.Insert("Person", person("zz", "new")); err != nil {
			return err
		}
		return tx.Insert("WorksAt", edge("wzz", "zz", "c0"))
	})
	if _, b := prefixBytes(cs, testRoot+"/data/WorksAt/"); b > total/4 {
		t.Fatalf("@card insert read %d bytes of WorksAt fragments of %d", b, total)
	}
	cs.Reset()
	commitTx(t, g, func(tx *Txn) error { return tx.DeleteCascade("Person", "p000007") })
	if _, b := prefixBytes(cs, testRoot+"/data/WorksAt/"); b > total/2 {
		t.Fatalf("cascading delete read %d bytes of WorksAt fragments of %d", b, total)
	}
	s := snap(t, openGraph(t, cs, 6))
	if out, err := s.OutDegree(ctx, "WorksAt", "p000007"); err != nil || out != 0 {
		t.Fatalf("deleted node's out-degree %d, %v", out, err)
	}
	if out, err := s.Out(ctx, "WorksAt", "zz"); err != nil || ids(out) != "wzz" {
		t.Fatalf("new node's out-edges %v, %v", ids(out), err)
	}
}

// TestExpandBytesLimit: a traversal whose index fetches would pass
// MaxBytes stops with a typed limit error; with room it completes.
func TestExpandBytesLimit(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	s := snap(t, openGraph(t, g.store, 2))
	if _, err := Expand(ctx, s, []string{"p1"}, "Knows", traverse.Out, 0, 2, traverse.Limits{MaxBytes: 10}); !errors.Is(err, traverse.ErrLimit) {
		t.Fatalf("Expand over a 10-byte budget: %v, want ErrLimit", err)
	}
	res, err := Expand(ctx, s, []string{"p1"}, "Knows", traverse.Out, 0, 2, traverse.Limits{})
	if err != nil || fmt.Sprint(res.Nodes) != "[{p1 0} {p2 1}]" {
		t.Fatalf("Expand = %v, %v", res, err)
	}
}

// failAdjPut fails the n-th Put of an adjacency object (counting from 0).
type failAdjPut struct {
	objstore.Store
	mu       sync.Mutex
	n, seen  int
	failures int
}

var errInjected = errors.New("injected adjacency write failure")

func (f *failAdjPut) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if strings.Contains(key, "/adj/") {
		f.mu.Lock()
		hit := f.seen == f.n
		f.seen++
		f.mu.Unlock()
		if hit {
			f.failures++
			return "", errInjected
		}
	}
	return f.Store.Put(ctx, key, b, c)
}

// TestAdjacencyWriteFailureIsInvisible: whichever adjacency object write
// fails, the commit fails with that error, publishes nothing (the head
// answers as before), and the next commit builds a complete index.
func TestAdjacencyWriteFailureIsInvisible(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	for n := 0; n < 4; n++ {
		fs := &failAdjPut{Store: sim.New(sim.Config{Seed: 1}), n: 1 << 30}
		g := initGraph(t, fs, Limits{})
		seedGraph(t, g)
		before := snap(t, g)
		fs.n, fs.seen = n, 0
		tx := begin(t, g)
		must(t, tx.Insert("Knows", edge("k9", "p2", "p3")))
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "t"}); !errors.Is(err, errInjected) || fs.failures != 1 {
			t.Fatalf("failing adjacency write %d: commit = %v (%d failures), want the injected error", n, err, fs.failures)
		}
		after := snap(t, openGraph(t, fs, 3))
		if after.Kernel().ManifestVersion() != before.Kernel().ManifestVersion() {
			t.Fatalf("failing adjacency write %d: a publish happened", n)
		}
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k9", "p2", "p3")) })
		s := snap(t, openGraph(t, fs, 4))
		for node, want := range map[string]string{"p2": "k9", "p1": "k1"} { //detlint:ordered independent checks
			if out, err := s.Out(ctx, "Knows", node); err != nil || ids(out) != want {
				t.Fatalf("after the retry: Out(%s) = %v, %v; want %s", node, ids(out), err, want)
			}
		}
		if in, err := s.In(ctx, "Knows", "p3"); err != nil || ids(in) != "k9" {
			t.Fatalf("after the retry: In(p3) = %v, %v", ids(in), err)
		}
	}
}

// crashAfter lets the first n Puts through, then fails every call: the
// writing process died there.
type crashAfter struct {
	objstore.Store
	mu   sync.Mutex
	n    int
	dead bool
}

var errCrashed = errors.New("process crashed")

func (c *crashAfter) Put(ctx context.Context, key string, b []byte, cond objstore.Condition) (string, error) {
	c.mu.Lock()
	if c.dead || c.n == 0 {
		c.dead = true
		c.mu.Unlock()
		return "", errCrashed
	}
	c.n--
	c.mu.Unlock()
	return c.Store.Put(ctx, key, b, cond)
}

func (c *crashAfter) Get(ctx context.Context, key string) (objstore.Object, error) {
	c.mu.Lock()
	dead := c.dead
	c.mu.Unlock()
	if dead {
		return objstore.Object{}, errCrashed
	}
	return c.Store.Get(ctx, key)
}

// TestAdjacencyCrashCuts: a commit that inserts a Knows edge (new pages
// and chunks in both directions), cut after each of its Puts in turn, then recovered by another
// process: the graph shows the commit entirely or not at all, and every
// adjacency read (both directions, every node) agrees with that state and
// finds every object its table version names.
func TestAdjacencyCrashCuts(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	puts := 0
	for cut := 0; ; cut++ {
		inner := sim.New(sim.Config{Seed: 1})
		g := initGraph(t, inner, Limits{})
		seedGraph(t, g)
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k2", "p2", "p3")) })
		cs := &crashAfter{Store: inner, n: cut}
		w := openGraph(t, cs, 7)
		tx := begin(t, w)
		must(t, tx.Insert("Knows", edge("k3", "p3", "p1")))
		_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crashing"})
		if err == nil {
			puts = cut
			break
		}
		r := openGraph(t, inner, 8)
		if _, err := r.Kernel().Recover(ctx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
			t.Fatalf("cut %d: recover: %v", cut, err)
		}
		s := snap(t, openGraph(t, inner, 9))
		all, err := s.GetMany(ctx, "Knows", []string{"k1", "k2", "k3"})
		must(t, err)
		if got := ids(all); got != "k1,k2" && got != "k1,k2,k3" {
			t.Fatalf("cut %d: Knows = %s, want the commit all or nothing", cut, got)
		}
		for _, n := range []string{"p1", "p2", "p3"} {
			for _, out := range []bool{true, false} {
				rows, err := s.adjacent(ctx, "Knows", n, out)
				if err != nil {
					t.Fatalf("cut %d: adjacency of %s: %v", cut, n, err)
				}
				var want []Row
				for _, e := range all {
					if (out && e.From == n) || (!out && e.To == n) {
						want = append(want, e)
					}
				}
				if !sameRows(rows, want) {
					t.Fatalf("cut %d: adjacency (out=%v) of %s = %s, the table says %s", cut, out, n, ids(rows), ids(want))
				}
			}
		}
		if cut > 64 {
			t.Fatal("the commit never completed")
		}
	}
	if puts < 5 {
		t.Fatalf("the commit made %d puts; the sweep cut too few", puts)
	}
}

// TestPreIndexVersions: edge table versions written before the adjacency
// index existed are answered from the whole table, and the next commit
// indexes the table from scratch, after which reads use the index.
func TestPreIndexVersions(t *testing.T) {
	writeAdjacency = false
	inner := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, inner, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k2", "p2", "p3"), edge("k3", "p1", "p3")) })
	writeAdjacency = true
	old := snap(t, openGraph(t, inner, 2))
	v, err := old.view(ctx, "Knows")
	must(t, err)
	if v.hasAdj {
		t.Fatal("a pre-index version has an index")
	}
	if in, err := old.In(ctx, "Knows", "p3"); err != nil || ids(in) != "k2,k3" {
		t.Fatalf("pre-index In(p3) = %v, %v", ids(in), err)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Knows", "k3") })
	cs := &byteLog{Store: inner}
	s := snap(t, openGraph(t, cs, 3))
	cs.Reset()
	in, err := s.In(ctx, "Knows", "p3")
	if gets, _ := prefixBytes(cs, testRoot+"/data/"); err != nil || ids(in) != "k2" || gets != 0 {
		t.Fatalf("indexed In(p3) = %v, %v with %d fragment GETs; want k2 through the index", ids(in), err, gets)
	}
	if out, err := s.Out(ctx, "Knows", "p1"); err != nil || ids(out) != "k1" {
		t.Fatalf("indexed Out(p1) = %v, %v", ids(out), err)
	}
}
