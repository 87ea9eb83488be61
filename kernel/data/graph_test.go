package data

import (
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var ctx = context.Background()

const testRoot = "graphs/g"

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func testEnv(seed uint64) kernel.Env {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return kernel.Env{Clock: kernel.NewManualClock(epoch), Entropy: rand.NewChaCha8(s)}
}

func testSchema(t testing.TB) schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(testSchemaText))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pagedAll (-data.paged) runs every test of the package with table
// versions paged from two fragments on, in chunks of at most two infos.
var pagedAll = flag.Bool("data.paged", false, "page the fragment infos of every table version with 2+ fragments (chunks of 2)")

// testPaged is set by paged variants of tests (pagedHandles); with
// -data.paged every handle the helpers open pages.
var testPaged bool

// treeAll (-data.tree) runs every test of the package with index trees
// from the smallest tables: pages of two rows, two pages per level-0
// chunk, ref chunks of two refs, one ref per direction in a table version (indextree.go).
var treeAll = flag.Bool("data.tree", false, "write every index as a tree of ref chunks (pages of two rows, two per chunk, two refs per ref chunk)")

// defaultIndexShapes skips a test under -data.tree that pins the default
// index shapes (pages and chunks of their full sizes) or builds a fixture
// of a format before index trees (restampTo does not re-sum ref chunks).
func defaultIndexShapes(t *testing.T, why string) {
	t.Helper()
	if *treeAll {
		t.Skipf("-data.tree: %s", why)
	}
}

// defaultFragmentShapes skips a test under -data.paged that pins the
// default fragment shapes (inline fragment infos: a table's size summed
// from the version, no fragment chunk among the objects a commit writes or
// a lookup reads) or builds a fixture of a format before paged versions
// (restampTo does not re-sum fragment chunks).
func defaultFragmentShapes(t *testing.T, why string) {
	t.Helper()
	if *pagedAll {
		t.Skipf("-data.paged: %s", why)
	}
}

// testTree is set by tree variants of tests (treeHandles).
var testTree bool

// paging applies the test paging knobs to a new handle.
func paging(g *Graph) *Graph {
	if testPaged || *pagedAll {
		g.inline, g.fragChunkMax, g.fragRefInline, g.fragRefMax = 1, 2, 1, 2
	}
	if testObjectFragments {
		g.embed = -1
	}
	if testTree || *treeAll {
		g.withIndexFanout(2)
	}
	g.jsonChunks = g.jsonChunks || testJSONChunks
	benchShapes(g)
	return g
}

// testJSONChunks makes the helpers' handles write index chunks as JSON,
// the payload of formats 7 to 11 (chunkcodec.go): fixtures of a format
// before 12, and the JSON side of side-by-side benchmarks.
var testJSONChunks bool

// jsonChunkHandles makes the helpers open JSON-chunk handles until the
// test ends.
func jsonChunkHandles(t testing.TB) {
	testJSONChunks = true
	t.Cleanup(func() { testJSONChunks = false })
}

// testObjectFragments is set by tests about fragment objects
// (objectFragments): the helpers' handles embed no fragment (embed.go).
var testObjectFragments bool

// objectFragments makes the helpers open handles that write every
// fragment as an object until the test ends.
func objectFragments(t testing.TB) {
	testObjectFragments = true
	t.Cleanup(func() { testObjectFragments = false })
}

// treeHandles makes the helpers open handles writing index trees of
// small tables until the test ends.
func treeHandles(t testing.TB) {
	testTree = true
	t.Cleanup(func() { testTree = false })
}

// pagedHandles makes the helpers open paging handles until the test ends.
func pagedHandles(t testing.TB) {
	testPaged = true
	t.Cleanup(func() { testPaged = false })
}

// testNoRiding makes initGraph and openGraph handles write every table
// version as an object (kernel.Options.NoRiding): fixtures restamped to a
// format before 11 (restampTo), whose manifests carry no riding version.
var testNoRiding bool

// versionsAsObjects sets testNoRiding for the rest of t.
func versionsAsObjects(t testing.TB) {
	testNoRiding = true
	t.Cleanup(func() { testNoRiding = false })
}

func initGraph(t testing.TB, store objstore.Store, limits Limits) *Graph {
	t.Helper()
	g, err := Init(ctx, store, testRoot, testSchema(t), Options{Kernel: kernel.Options{Env: testEnv(1), NoRiding: testNoRiding}, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return paging(g)
}

func openGraph(t testing.TB, store objstore.Store, seed uint64) *Graph {
	t.Helper()
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(seed), NoRiding: testNoRiding}})
	if err != nil {
		t.Fatal(err)
	}
	return paging(g)
}

func mainRef(t testing.TB, g *Graph) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func begin(t testing.TB, g *Graph) *Txn {
	t.Helper()
	tx, err := g.Begin(ctx, mainRef(t, g))
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// commitRows commits one transaction built by f.
func commitTx(t testing.TB, g *Graph, f func(tx *Txn) error) kernel.Commit {
	t.Helper()
	tx := begin(t, g)
	must(t, f(tx))
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "commit"})
	must(t, err)
	return c
}

// seed commits baseGraph() into g.
func seedGraph(t testing.TB, g *Graph) kernel.Commit {
	t.Helper()
	return commitTx(t, g, func(tx *Txn) error {
		bg := baseGraph()
		for _, typ := range []string{"Person", "Company", "WorksAt", "Knows", "Reports"} {
			if err := tx.Insert(typ, bg[typ]...); err != nil {
				return err
			}
		}
		return nil
	})
}

func snap(t testing.TB, g *Graph) *Snapshot {
	t.Helper()
	s, err := g.SnapshotAt(ctx, mainRef(t, g))
	must(t, err)
	return s
}

func ids(rows []Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

func scanIDs(t testing.TB, s *Snapshot, typ string) string {
	t.Helper()
	rr, err := s.Scan(ctx, typ)
	must(t, err)
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, rowAt(s.cat.tables[typ], rec, i).ID)
		}
	}
	must(t, rr.Err())
	sort.Strings(out)
	return strings.Join(out, ",")
}

// heads returns every table HEAD and the branch head commit: the durable
// state a rejected transaction must leave unchanged.
func heads(t testing.TB, g *Graph) string {
	t.Helper()
	b := mainRef(t, g)
	var out []string
	for _, name := range []string{"Company", "Knows", "Person", "Reports", "WorksAt"} {
		h, err := g.Kernel().TableHead(ctx, b, name)
		must(t, err)
		out = append(out, name+"@"+h.Fork.String()+"/"+itoa(int(h.Version)))
	}
	c, err := g.Kernel().Head(ctx, b)
	must(t, err)
	return strings.Join(out, " ") + " head=" + c.ID.String()
}

func stores() map[string]func(t testing.TB) objstore.Store {
	return map[string]func(t testing.TB) objstore.Store{
		"sim": func(t testing.TB) objstore.Store { return sim.New(sim.Config{Seed: 1}) },
		"fs": func(t testing.TB) objstore.Store {
			s, err := fs.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// TestRoundTrip writes a small graph and reads it back through every read
// of a snapshot, on the sim and fs stores.
func TestRoundTrip(t *testing.T) {
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			g := initGraph(t, newStore(t), Limits{})
			seedGraph(t, g)
			s := snap(t, g)
			if n, err := s.Count(ctx, "Person"); err != nil || n != 3 {
				t.Fatalf("Count(Person) = %d, %v", n, err)
			}
			r, ok, err := s.Get(ctx, "Person", "p2")
			if err != nil || !ok || r.Props["name"] != "bob" {
				t.Fatalf("Get(p2) = %+v, %v, %v", r, ok, err)
			}
			if _, ok, err := s.Get(ctx, "Person", "p9"); err != nil || ok {
				t.Fatalf("Get(p9) = %v, %v", ok, err)
			}
			if out, err := s.Out(ctx, "Knows", "p1"); err != nil || ids(out) != "k1" {
				t.Fatalf("Out(Knows, p1) = %v, %v", ids(out), err)
			}
			if in, err := s.In(ctx, "WorksAt", "c1"); err != nil || ids(in) != "w1" || in[0].From != "p1" {
				t.Fatalf("In(WorksAt, c1) = %+v, %v", in, err)
			}
			if in, err := s.In(ctx, "Knows", "p1"); err != nil || len(in) != 0 {
				t.Fatalf("In(Knows, p1) = %+v, %v", in, err)
			}
			if got := scanIDs(t, s, "Person"); got != "p1,p2,p3" {
				t.Fatalf("Scan(Person) = %s", got)
			}
			rr, err := s.Scan(ctx, "WorksAt", "to", "id")
			must(t, err)
			defer rr.Release()
			if !rr.Next() || rr.Record().NumCols() != 2 || rr.Schema().Field(0).Name != "to" {
				t.Fatalf("projected scan: %v %v", rr.Schema(), rr.Err())
			}
			if _, err := s.Scan(ctx, "WorksAt", "nope"); !errors.Is(err, ErrInvalidRow) {
				t.Fatalf("Scan with an unknown column = %v", err)
			}
			if _, err := s.Out(ctx, "Person", "p1"); !errors.Is(err, ErrUnknownType) {
				t.Fatalf("Out on a node type = %v", err)
			}
			if tb, err := s.Table("WorksAt"); err != nil || !tb.Edge || tb.Schema().NumFields() != 4 {
				t.Fatalf("Table(WorksAt) = %+v, %v", tb, err)
			}
			if _, _, err := s.Get(ctx, "Robot", "x"); !errors.Is(err, ErrUnknownType) {
				t.Fatalf("Get on an unknown type = %v", err)
			}
		})
	}
}

// TestTxnReadsSeePending pins that reads inside a transaction see its own
// staged inserts, updates and deletes.
func TestTxnReadsSeePending(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	tx := begin(t, g)
	defer tx.Discard()
	must(t, tx.Insert("Person", person("p4", "dee")))
	must(t, tx.Update("Person", person("p2", "bobby")))
	must(t, tx.Insert("Knows", edge("k2", "p4", "p1"), edge("k3", "p1", "p4")))
	must(t, tx.Upsert("Knows", edge("k1", "p1", "p3")))
	if r, ok, err := tx.Get(ctx, "Person", "p4"); err != nil || !ok || r.Props["name"] != "dee" {
		t.Fatalf("Get(pending p4) = %+v %v %v", r, ok, err)
	}
	if r, ok, err := tx.Get(ctx, "Person", "p2"); err != nil || !ok || r.Props["name"] != "bobby" {
		t.Fatalf("Get(updated p2) = %+v %v %v", r, ok, err)
	}
	if r, ok, err := tx.Get(ctx, "Person", "p3"); err != nil || !ok || r.Props["name"] != "cy" {
		t.Fatalf("Get(base p3) = %+v %v %v", r, ok, err)
	}
	if n, err := tx.Count(ctx, "Person"); err != nil || n != 4 {
		t.Fatalf("Count(Person) = %d %v, want 4", n, err)
	}
	if out, err := tx.Out(ctx, "Knows", "p1"); err != nil || ids(out) != "k1,k3" || out[0].To != "p3" {
		t.Fatalf("Out(Knows, p1) = %+v %v", out, err)
	}
	if in, err := tx.In(ctx, "Knows", "p1"); err != nil || ids(in) != "k2" {
		t.Fatalf("In(Knows, p1) = %+v %v", in, err)
	}
	if in, err := tx.In(ctx, "Knows", "p2"); err != nil || len(in) != 0 {
		t.Fatalf("In(Knows, p2) = %+v %v (k1 was re-pointed)", in, err)
	}

	del := begin(t, g)
	defer del.Discard()
	must(t, del.DeleteCascade("Person", "p1"))
	must(t, del.Delete("Company", "c2"))
	if _, ok, err := del.Get(ctx, "Person", "p1"); err != nil || ok {
		t.Fatalf("Get(deleted p1) = %v %v", ok, err)
	}
	if n, err := del.Count(ctx, "Company"); err != nil || n != 1 {
		t.Fatalf("Count(Company) = %d %v", n, err)
	}
	if in, err := del.In(ctx, "WorksAt", "c1"); err != nil || len(in) != 0 {
		t.Fatalf("In(WorksAt, c1) after cascade delete of p1 = %+v %v", in, err)
	}
}

// TestCommitEffects pins what a commit writes: each touched table gets one
// new version, untouched tables keep theirs, the commit is visible in a new
// snapshot and invisible in the old one (snapshot immutability).
func TestCommitEffects(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	before := snap(t, g)
	c := commitTx(t, g, func(tx *Txn) error {
		if err := tx.Update("Person", Row{ID: "p2", Props: map[string]any{"name": "bobby", "age": 41}}); err != nil {
			return err
		}
		return tx.Insert("Company", company("c3"))
	})
	after := snap(t, g)
	for _, tc := range []struct {
		table string
		delta uint64
	}{{"Person", 1}, {"Company", 1}, {"Knows", 0}, {"WorksAt", 0}} {
		b, _ := before.Kernel().Table(tc.table)
		a, _ := after.Kernel().Table(tc.table)
		if a.Version != b.Version+tc.delta {
			t.Fatalf("%s: version %d -> %d, want +%d", tc.table, b.Version, a.Version, tc.delta)
		}
	}
	if r, _, _ := before.Get(ctx, "Person", "p2"); r.Props["name"] != "bob" {
		t.Fatalf("old snapshot sees %v", r.Props)
	}
	if r, _, _ := after.Get(ctx, "Person", "p2"); r.Props["name"] != "bobby" || r.Props["age"] != int64(41) {
		t.Fatalf("new snapshot sees %v", r.Props)
	}
	at, err := g.SnapshotAtCommit(ctx, c.ID)
	must(t, err)
	if n, _ := at.Count(ctx, "Company"); n != 3 {
		t.Fatalf("snapshot at commit: %d companies", n)
	}
	old, err := g.SnapshotAtVersion(ctx, mainRef(t, g), before.Kernel().ManifestVersion())
	must(t, err)
	if got := scanIDs(t, old, "Company"); got != "c1,c2" {
		t.Fatalf("snapshot at version: %s", got)
	}
}

// TestUpdatesNeverChangeFiles pins the copy-on-write rule: no fragment file
// is ever rewritten or deleted by an update, upsert or delete.
func TestUpdatesNeverChangeFiles(t *testing.T) {
	objectFragments(t)
	store := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, store, Limits{})
	seedGraph(t, g)
	files := func() map[string]string {
		out := map[string]string{}
		page, err := store.List(ctx, testRoot+"/data/", "", 0)
		must(t, err)
		for _, k := range page.Keys {
			obj, err := store.Get(ctx, k)
			must(t, err)
			out[k] = string(obj.Data)
		}
		return out
	}
	old := files()
	commitTx(t, g, func(tx *Txn) error { return tx.Upsert("Person", person("p1", "ann2"), person("p5", "eve")) })
	commitTx(t, g, func(tx *Txn) error { return tx.Update("Knows", edge("k1", "p2", "p1")) })
	commitTx(t, g, func(tx *Txn) error { return tx.DeleteCascade("Person", "p3") })
	now := files()
	for k, v := range old {
		if now[k] != v {
			t.Fatalf("fragment %s changed or vanished", k)
		}
	}
	if len(now) <= len(old) {
		t.Fatalf("no new fragments: %d -> %d", len(old), len(now))
	}
}

// TestStaleHandleCardinality is the done-when case: handle A adds the one
// allowed WorksAt edge of p2; handle B, whose transaction began before A
// committed and which never read since, tries to add a second: rejected,
// because cardinality counts the live table, not B's pinned base.
func TestStaleHandleCardinality(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	a := initGraph(t, store, Limits{})
	seedGraph(t, a)
	b := openGraph(t, store, 2)
	txB := begin(t, b) // pinned before A's edge exists
	commitTx(t, a, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w2", "p2", "c1")) })
	must(t, txB.Insert("WorksAt", edge("w3", "p2", "c2")))
	before := heads(t, b)
	_, err := txB.Commit(ctx, kernel.LineageIntent{Actor: "b"})
	if !errors.Is(err, ErrCardinality) {
		t.Fatalf("stale handle B's second edge: %v, want ErrCardinality", err)
	}
	if after := heads(t, b); after != before {
		t.Fatalf("rejected commit moved state:\n%s\n%s", before, after)
	}
	out, err := snap(t, a).Out(ctx, "WorksAt", "p2")
	if err != nil || ids(out) != "w2" {
		t.Fatalf("Out(WorksAt, p2) = %v %v", ids(out), err)
	}
}

// TestRejectedCommitHasNoEffect pins that a transaction failing validation
// at Commit writes nothing at all (no PUT) and moves no HEAD.
func TestRejectedCommitHasNoEffect(t *testing.T) {
	cases := []struct {
		name string
		f    func(tx *Txn) error
		want error
	}{
		{"insert existing", func(tx *Txn) error { return tx.Insert("Person", person("p9", "x"), person("p1", "x")) }, ErrIDExists},
		{"dangling edge in a multi-table txn", func(tx *Txn) error {
			if err := tx.Insert("Company", company("c9")); err != nil {
				return err
			}
			return tx.Insert("Knows", edge("k9", "p1", "p9"))
		}, ErrDanglingEdge},
		{"node with edges", func(tx *Txn) error { return tx.Delete("Company", "c1") }, ErrHasEdges},
		{"cardinality", func(tx *Txn) error { return tx.Insert("Reports", edge("r8", "p1", "p3"), edge("r9", "p1", "p1")) }, ErrCardinality},
		{"duplicate", func(tx *Txn) error { return tx.Upsert("Person", person("p8", "a"), person("p8", "b")) }, ErrDuplicateID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := counting.New(sim.New(sim.Config{Seed: 1}))
			g := initGraph(t, cs, Limits{})
			seedGraph(t, g)
			before := heads(t, g)
			tx := begin(t, g)
			must(t, tc.f(tx))
			cs.Reset()
			_, err := tx.Commit(ctx, kernel.LineageIntent{})
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrValidation) {
				t.Fatalf("Commit = %v, want %v", err, tc.want)
			}
			if w := cs.Writes(); w != 0 {
				t.Fatalf("rejected commit made %d writes", w)
			}
			if after := heads(t, g); after != before {
				t.Fatalf("rejected commit moved state:\n%s\n%s", before, after)
			}
			if _, err := tx.Commit(ctx, kernel.LineageIntent{}); !errors.Is(err, ErrTxnDone) {
				t.Fatalf("second Commit = %v, want ErrTxnDone", err)
			}
		})
	}
}

// TestStagingRejectsBeforeIO pins that bounds, mixing and row shape are
// rejected by the staging call itself, with no store request at all.
func TestStagingRejectsBeforeIO(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(t, cs, Limits{MaxRows: 3, MaxBytes: 1 << 10})
	tx := begin(t, g)
	defer tx.Discard()
	cs.Reset()
	if err := tx.Insert("Company", company("a"), company("b"), company("c"), company("d")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("4 rows over a 3-row limit: %v", err)
	}
	if err := tx.Insert("Company", Row{ID: "a", Props: map[string]any{"name": strings.Repeat("x", 2000)}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("2000 bytes over a 1 KiB limit: %v", err)
	}
	must(t, tx.Insert("Company", company("a")))
	if err := tx.Delete("Company", "b"); !errors.Is(err, ErrMixedTransaction) || !strings.Contains(err.Error(), "split the transaction") {
		t.Fatalf("delete after insert: %v", err)
	}
	if err := tx.Insert("Company", Row{ID: "b"}); !errors.Is(err, ErrInvalidRow) {
		t.Fatalf("missing required name: %v", err)
	}
	if n := cs.Counts().Requests(); n != 0 {
		t.Fatalf("staging made %d store requests", n)
	}
}

// TestStrictVersionMismatch pins strict ops: an Update or Delete on a table
// that moved since Begin fails with a version mismatch telling the caller
// to retry, before any write; Insert and Upsert rebase instead.
func TestStrictVersionMismatch(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	upd, ins, ups, dup := begin(t, g), begin(t, g), begin(t, g), begin(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("p7", "gus")) })

	must(t, upd.Update("Person", person("p1", "ann2")))
	before := heads(t, g)
	cs.Reset()
	_, err := upd.Commit(ctx, kernel.LineageIntent{})
	var mm *kernel.VersionMismatchError
	if !errors.Is(err, kernel.ErrVersionMismatch) || !errors.As(err, &mm) || mm.Table != "Person" || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("stale update: %v", err)
	}
	if cs.Writes() != 0 || heads(t, g) != before {
		t.Fatalf("stale update wrote %d objects", cs.Writes())
	}

	must(t, ins.Insert("Person", person("p8", "hal")))
	if _, err := ins.Commit(ctx, kernel.LineageIntent{}); err != nil {
		t.Fatalf("non-strict insert on a moved table: %v", err)
	}
	must(t, ups.Upsert("Person", person("p7", "gus2")))
	if _, err := ups.Commit(ctx, kernel.LineageIntent{}); err != nil {
		t.Fatalf("non-strict upsert on a moved table: %v", err)
	}
	must(t, dup.Insert("Person", person("p7", "dup")))
	if _, err := dup.Commit(ctx, kernel.LineageIntent{}); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an id another writer added since Begin: %v, want ErrIDExists", err)
	}
	s := snap(t, g)
	if got := scanIDs(t, s, "Person"); got != "p1,p2,p3,p7,p8" {
		t.Fatalf("persons = %s", got)
	}
	if r, _, _ := s.Get(ctx, "Person", "p7"); r.Props["name"] != "gus2" {
		t.Fatalf("p7 = %v", r.Props)
	}
}

// TestCascadeDelete pins cascade end to end: the node and every incident
// edge go; without cascade the delete is refused.
func TestCascadeDelete(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	tx := begin(t, g)
	must(t, tx.Delete("Person", "p2"))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{}); !errors.Is(err, ErrHasEdges) {
		t.Fatalf("delete p2 without cascade: %v", err)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.DeleteCascade("Person", "p2") })
	s := snap(t, g)
	for typ, want := range map[string]string{"Person": "p1,p3", "Knows": "", "Reports": "", "WorksAt": "w1"} {
		if got := scanIDs(t, s, typ); got != want {
			t.Fatalf("%s = %q, want %q", typ, got, want)
		}
	}
	if n, _ := s.Count(ctx, "Knows"); n != 0 {
		t.Fatalf("Count(Knows) = %d", n)
	}
}

// TestBulkWriteRecord pins the Arrow bulk path: scanned records written
// back with Upsert round-trip; a record of another type is rejected.
func TestBulkWriteRecord(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	rr, err := snap(t, g).Scan(ctx, "Person")
	must(t, err)
	defer rr.Release()
	tx := begin(t, g)
	for rr.Next() {
		if err := tx.WriteRecord(OpInsert, "Company", rr.Record()); !errors.Is(err, ErrInvalidRow) {
			t.Fatalf("Person record as Company: %v", err)
		}
		if err := tx.WriteRecord(OpDelete, "Person", rr.Record()); !errors.Is(err, ErrValidation) {
			t.Fatalf("WriteRecord with delete: %v", err)
		}
		must(t, tx.WriteRecord(OpUpsert, "Person", rr.Record()))
	}
	must(t, rr.Err())
	if _, err := tx.Commit(ctx, kernel.LineageIntent{}); err != nil {
		t.Fatal(err)
	}
	s := snap(t, g)
	if got := scanIDs(t, s, "Person"); got != "p1,p2,p3" {
		t.Fatalf("persons = %s", got)
	}
	if r, _, _ := s.Get(ctx, "Person", "p3"); r.Props["name"] != "cy" {
		t.Fatalf("p3 = %v", r.Props)
	}
}

// TestEmptyAndDone pins the transaction lifecycle errors.
func TestEmptyAndDone(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	tx := begin(t, g)
	if _, err := tx.Commit(ctx, kernel.LineageIntent{}); !errors.Is(err, ErrEmptyTransaction) {
		t.Fatalf("empty commit: %v", err)
	}
	if err := tx.Insert("Company", company("a")); !errors.Is(err, ErrTxnDone) {
		t.Fatalf("insert after commit: %v", err)
	}
	tx = begin(t, g)
	tx.Discard()
	if _, _, err := tx.Get(ctx, "Company", "a"); !errors.Is(err, ErrTxnDone) {
		t.Fatalf("get after discard: %v", err)
	}
}

// TestCascadeRacingEdgeDelete pins a cascade whose edge another writer
// deleted since Begin: the @card check must not look the gone edge up on
// the live head (it panicked: "edges of node \"\" ... were not looked
// up"); the cascade is strict on the edge table, so the commit fails with
// a version mismatch telling the caller to retry, before any write. Found
// by the simulator's data-drops workload (a person's cascade delete racing
// the unlink of their WorksAt edge).
func TestCascadeRacingEdgeDelete(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	for _, p := range []string{"p4", "p5", "p6"} { // more WorksAt fragments than the check loads
		commitTx(t, g, func(tx *Txn) error {
			must(t, tx.Insert("Person", person(p, p)))
			return tx.Insert("WorksAt", edge("w-"+p, p, "c2"))
		})
	}
	drop := begin(t, g)
	must(t, drop.DeleteCascade("Person", "p1"))
	commitTx(t, openGraph(t, cs, 2), func(tx *Txn) error { return tx.Delete("WorksAt", "w1") })

	before := heads(t, g)
	cs.Reset()
	_, err := drop.Commit(ctx, kernel.LineageIntent{})
	var mm *kernel.VersionMismatchError
	if !errors.Is(err, kernel.ErrVersionMismatch) || !errors.As(err, &mm) || mm.Table != "WorksAt" {
		t.Fatalf("cascade racing the delete of its edge: %v, want a version mismatch on WorksAt", err)
	}
	if cs.Writes() != 0 || heads(t, g) != before {
		t.Fatalf("the refused cascade wrote %d objects", cs.Writes())
	}
}
