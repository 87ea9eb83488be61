package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// indexRefsOf returns the refs a table version lists under data.adj.<dir>.
func indexRefsOf(t testing.TB, tv kernel.TableVersion, dir string) []adjRef {
	t.Helper()
	for _, kv := range tv.Metadata {
		if kv.Key == metaAdjPrefix+dir {
			var refs []adjRef
			must(t, json.Unmarshal([]byte(kv.Value), &refs))
			return refs
		}
	}
	t.Fatalf("table %s version %d has no data.adj.%s", tv.Table, tv.Version, dir)
	return nil
}

func metaOf(tv kernel.TableVersion) map[string]string {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	return md
}

// TestIndexTreeMatchesModel: with index trees from two rows on (pages of
// two rows, two pages per chunk, two refs per ref chunk), a random mix of
// person and Knows inserts and deletes over many commits keeps every
// direction at one ref of level >= 1 in the table version, and Out, In,
// Get and the id index's duplicate check answer as the model does. Red
// without the tree (the version lists a ref per chunk) or with a wrong
// descent (a missing or extra edge).
func TestIndexTreeMatchesModel(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	treeHandles(t)
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	rng := rand.New(rand.NewPCG(7, 8))
	const people = 40
	commitTx(t, g, func(tx *Txn) error {
		for i := range people {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%03d", i), "x")); err != nil {
				return err
			}
		}
		return nil
	})
	edges := map[string][2]string{} // id -> from, to
	next := 0
	for round := range 15 {
		deletes := len(edges) > 0 && round%3 == 2 // a transaction either inserts or deletes
		commitTx(t, g, func(tx *Txn) error {
			for range 1 + rng.IntN(6) {
				if deletes && len(edges) > 0 {
					ids := sortedKeysOf(edges)
					id := ids[rng.IntN(len(ids))]
					delete(edges, id)
					if err := tx.Delete("Knows", id); err != nil {
						return err
					}
					continue
				}
				if deletes {
					break
				}
				id := fmt.Sprintf("k%04d", next)
				next++
				e := [2]string{fmt.Sprintf("p%03d", rng.IntN(people)), fmt.Sprintf("p%03d", rng.IntN(people))}
				edges[id] = e
				if err := tx.Insert("Knows", edge(id, e[0], e[1])); err != nil {
					return err
				}
			}
			return nil
		})
		s := snap(t, openGraph(t, st, uint64(10+round)))
		for _, table := range []string{"Person", "Knows"} {
			tv := pinnedVersion(t, g, table)
			dirs := []string{"id"}
			if table == "Knows" {
				dirs = []string{"out", "in", "id"}
			}
			for _, d := range dirs {
				rows := tv.Rows // a level-0 chunk holds at most 4 rows here
				if d == "id" {
					delta, err := IDIndexDelta(metaOf(tv))
					must(t, err)
					rows -= uint64(len(delta))
				}
				if refs := indexRefsOf(t, tv, d); len(refs) != 1 || (rows > 4) != (refs[0].Level > 0) {
					t.Fatalf("round %d: %s data.adj.%s of %d rows lists %d refs (level %d), want one ref chunk", round, table, d, rows, len(refs), refs[0].Level)
				}
			}
		}
		for i := range people {
			p := fmt.Sprintf("p%03d", i)
			var wantOut, wantIn []string
			for _, id := range sortedKeysOf(edges) {
				if edges[id][0] == p {
					wantOut = append(wantOut, id)
				}
				if edges[id][1] == p {
					wantIn = append(wantIn, id)
				}
			}
			out, err := s.Out(ctx, "Knows", p)
			must(t, err)
			in, err := s.In(ctx, "Knows", p)
			must(t, err)
			if ids(out) != strings.Join(wantOut, ",") || ids(in) != strings.Join(wantIn, ",") {
				t.Fatalf("round %d: %s out %s in %s; want out %v in %v", round, p, ids(out), ids(in), wantOut, wantIn)
			}
		}
	}
	tx := begin(t, g)
	must(t, tx.Insert("Person", person("p017", "dup")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrIDExists) {
		t.Fatalf("duplicate person through the id tree: %v, want ErrIDExists", err)
	}
}

// treeChunksWritten returns the kind-14 index chunks (not fragment chunks)
// of table among the objects written since the last reset of cs, by level.
func treeChunksWritten(t testing.TB, st *sim.Store, cs *counting.Store, table string) map[int]int {
	t.Helper()
	levels := map[int]int{}
	log, _ := cs.Log()
	for _, r := range log {
		if r.Op != objstore.OpPut || !strings.HasPrefix(r.Key, testRoot+"/adj/"+table+"/") {
			continue
		}
		obj, err := st.Get(ctx, r.Key)
		must(t, err)
		payload, err := format.OpenAdjacencyChunk(obj.Data)
		if err != nil {
			continue // a page
		}
		c, err := decodeChunkPayload(payload) // a fragment chunk decodes as JSON with dir "frag"
		must(t, err)
		if c.Dir != dirFrag {
			levels[c.Level]++
		}
	}
	return levels
}

// TestIndexTreeOneRowCommitRewritesOnePath: a one-row delete in a Person
// table whose id index is a tree of several levels writes one id page,
// one level-0 chunk and one ref chunk per level above it — the path to
// the changed page — and the version keeps one ref. Red when a commit
// rewrites more of the tree (every ref chunk, or every level-0 chunk).
func TestIndexTreeOneRowCommitRewritesOnePath(t *testing.T) {
	treeHandles(t)
	st := sim.New(sim.Config{Seed: 1})
	cs := counting.New(st)
	g := initGraph(t, cs, Limits{})
	commitTx(t, g, func(tx *Txn) error {
		for i := range 128 {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%04d", i), "x")); err != nil {
				return err
			}
		}
		return nil
	})
	top := indexRefsOf(t, pinnedVersion(t, g, "Person"), "id")
	if len(top) != 1 || top[0].Level < 3 {
		t.Fatalf("128 ids in pages of 2: top %+v, want one ref of level >= 3", top)
	}
	cs.Reset()
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Person", "p0077") })
	levels := treeChunksWritten(t, st, cs, "Person")
	after := indexRefsOf(t, pinnedVersion(t, g, "Person"), "id")
	for l := 0; l <= after[0].Level; l++ {
		if levels[l] != 1 {
			t.Fatalf("a one-row delete wrote chunks by level %v; want exactly one per level 0..%d", levels, after[0].Level)
		}
	}
	if len(after) != 1 || len(levels) != after[0].Level+1 {
		t.Fatalf("after the delete: top %+v, chunks by level %v", after, levels)
	}
	if got := scanIDs(t, snap(t, g), "Person"); strings.Contains(got, "p0077") || strings.Count(got, ",") != 126 {
		t.Fatalf("rows after the delete: %s", got)
	}
}

// TestIndexTreeLevelsChecked: a chunk whose level differs from its ref's,
// a ref chunk listing refs of the wrong level and a ref list mixing
// levels are corrupt (typed), never read as something else.
func TestIndexTreeLevelsChecked(t *testing.T) {
	tb, err := testCatalog(t).table("Person")
	must(t, err)
	page := adjRef{Name: "01JGJFGR48QSR90J7DRP97RRT3", LoKey: "a", LoID: "a", HiKey: "b", Rows: 2, Bytes: 9, CRC32C: 1}
	leaf := page
	leaf.Name = "01JGJFGR48QSR90J7DRP97RRT4"
	encode := func(level int, refs ...adjRef) []byte {
		p, err := json.Marshal(adjChunk{Table: "Person", Dir: "id", Level: level, Pages: refs})
		must(t, err)
		return format.EncodeAdjacencyChunk(p)
	}
	refTo := func(b []byte, level int) adjRef {
		r := adjRef{Name: "01JGJFGR48QSR90J7DRP97RRT5", LoKey: "a", LoID: "a", HiKey: "b", Rows: 2, Level: level}
		r.Bytes, r.CRC32C = uint64(len(b)), crcOf(b)
		return r
	}
	for _, tc := range []struct {
		name  string
		b     []byte
		level int
	}{
		{"chunk of level 1 under a level-0 ref", encode(1, leaf), 0},
		{"chunk of level 0 under a level-1 ref", encode(0, page), 1},
		{"level-2 chunk listing level-0 refs", encode(2, leaf), 2},
		{"level past the bound", encode(maxIndexLevels+1, leaf), maxIndexLevels + 1},
	} {
		if _, err := decodeChunk(tb, dirID, refTo(tc.b, tc.level), tc.b); !errors.Is(err, ErrCorruptFragment) {
			t.Errorf("%s: %v, want ErrCorruptFragment", tc.name, err)
		}
	}
	good := encode(1, leaf)
	if _, err := decodeChunk(tb, dirID, refTo(good, 1), good); err != nil {
		t.Fatalf("a well-formed ref chunk: %v", err)
	}
	mixed := []adjRef{{Name: page.Name, LoKey: "a", LoID: "a", HiKey: "a", Rows: 1, Bytes: 1}, {Name: leaf.Name, LoKey: "b", LoID: "b", HiKey: "b", Rows: 1, Bytes: 1, Level: 1}}
	if err := checkRefs(mixed, 8, 2); err == nil {
		t.Fatal("a ref list mixing levels passed checkRefs")
	}
}

// TestFormat9IndexRefsOpenAndTreeOnWrite: a graph in the format-9 layout
// (every index direction listed inline, many chunks each, every object
// stamped 9) opens read-write without any write, reads whole, and its next
// commit lists each direction it rewrites through ref chunks, stamped 10.
func TestFormat9IndexRefsOpenAndTreeOnWrite(t *testing.T) {
	noAdjDelta(t)        // its edge commits write pages
	versionsAsObjects(t) // a fixture of a format before 11: no version rides
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	g.withIndexFanout(2)
	g.idxInline = 1 << 20 // the format-9 layout: every chunk ref inline
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error {
		for i := range 30 {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("k%03d", i), "p1", "p2")); err != nil {
				return err
			}
		}
		return nil
	})
	if refs := indexRefsOf(t, pinnedVersion(t, g, "Knows"), "out"); len(refs) < 4 || refs[0].Level != 0 {
		t.Fatalf("format-9 layout: %d out refs of level %d, want many of level 0", len(refs), refs[0].Level)
	}
	wantOut := ids(mustRows(snap(t, g).Out(ctx, "Knows", "p1")))
	restampTo(t, st, format.FormatV9)
	before := st.Keys(testRoot + "/branches/main/")[0]
	treeHandles(t)
	p := openGraph(t, st, 3)
	if st.Keys(testRoot + "/branches/main/")[0] != before {
		t.Fatal("a read-write open of a format-9 graph wrote a manifest")
	}
	if got := ids(mustRows(snap(t, p).Out(ctx, "Knows", "p1"))); got != wantOut {
		t.Fatalf("format-9 Out(p1) = %s, want %s", got, wantOut)
	}
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Knows", edge("k999", "p1", "p2")) })
	for _, d := range []string{"out", "in"} {
		if refs := indexRefsOf(t, pinnedVersion(t, p, "Knows"), d); len(refs) != 1 || refs[0].Level == 0 {
			t.Fatalf("after a format-10 commit: data.adj.%s lists %d refs of level %d, want one ref chunk", d, len(refs), refs[0].Level)
		}
	}
	if got := ids(mustRows(snap(t, openGraph(t, st, 4)).Out(ctx, "Knows", "p1"))); got != wantOut+",k999" {
		t.Fatalf("Out(p1) after the commit = %s, want %s,k999", got, wantOut)
	}
	obj, err := st.Get(ctx, st.Keys(testRoot + "/branches/main/")[0])
	must(t, err)
	if m, _, err := format.DecodeManifest(obj.Data); err != nil || m.FormatStamp != format.CurrentFormat {
		t.Fatalf("manifest after the commit: stamp %d, %v; want %d", m.FormatStamp, err, format.CurrentFormat)
	}
}

func mustRows(rows []Row, err error) []Row {
	if err != nil {
		panic(err)
	}
	return rows
}
