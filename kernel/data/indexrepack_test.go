package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// indexShape returns, per index metadata key of table's pinned version,
// its chunk count and page count (chunks read from the store).
func indexShape(t *testing.T, g *Graph, table string) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	for _, kv := range pinnedVersion(t, g, table).Metadata {
		if !strings.HasPrefix(kv.Key, metaAdjPrefix) {
			continue
		}
		var refs []adjRef
		must(t, json.Unmarshal([]byte(kv.Value), &refs))
		pages := 0
		for _, r := range refs {
			b, err := g.get(ctx, g.keys.Adjacency(table, mustULID(t, r.Name)))
			must(t, err)
			names, below, err := AdjacencyChunkEntries(b)
			must(t, err)
			if below {
				t.Fatalf("%s: chunk %s is a ref chunk", kv.Key, r.Name)
			}
			pages += len(names)
		}
		out[kv.Key] = [2]int{len(refs), pages}
	}
	return out
}

// TestCompactRepacksEdgeIndexes: a commit deleting most edges of every
// full adjacency page leaves each page nearly empty (every page changed,
// so none absorbs its neighbour); a compaction repacks out and in into
// ceil(rows/AdjPageRows) pages listed by one chunk, leaves the id index
// (two short pages: within repackWorth's slack) alone, Out and In answer
// exactly as before, and a second compaction does nothing. Red without
// the repack (4 pages per direction, nothing compacted).
func TestCompactRepacksEdgeIndexes(t *testing.T) {
	defaultIndexShapes(t, "it counts the pages and chunks of the default sizes")
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	const full, keepEvery = 4, 100
	nodes := []string{"y", "z"}
	commitTx(t, g, func(tx *Txn) error {
		for _, n := range nodes {
			if err := tx.Insert("Person", person(n, "n")); err != nil {
				return err
			}
		}
		for i := 0; i < full*AdjPageRows; i++ {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("e%05d", i), nodes[i/(2*AdjPageRows)], "z")); err != nil {
				return err
			}
		}
		return nil
	})
	kept := 0
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i < full*AdjPageRows; i++ {
			if i%keepEvery == 0 {
				kept++
				continue
			}
			if err := tx.Delete("Knows", fmt.Sprintf("e%05d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	adjacency := func() string {
		s := snap(t, g)
		var out []string
		for _, n := range nodes {
			o, err := s.Out(ctx, "Knows", n)
			must(t, err)
			in, err := s.In(ctx, "Knows", n)
			must(t, err)
			out = append(out, ids(o)+"|"+ids(in))
		}
		return strings.Join(out, ";")
	}
	want := adjacency()
	before := indexShape(t, g, "Knows")
	if before["data.adj.out"] != [2]int{1, full} {
		t.Fatalf("before compaction: %v, want %d short out pages", before, full)
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	knows := tableCompaction(rep, "Knows")
	if knows == nil || strings.Join(knows.Repacked, ",") != "out,in" {
		t.Fatalf("report %+v, want Knows out and in repacked", rep)
	}
	after := indexShape(t, g, "Knows")
	pages := ceilDiv(kept, AdjPageRows)
	for _, k := range []string{"data.adj.out", "data.adj.in"} {
		if after[k] != [2]int{1, pages} {
			t.Errorf("%s after compaction: %v chunks and pages, want [1 %d] (before %v)", k, after[k], pages, before[k])
		}
	}
	if after["data.adj.id"] != before["data.adj.id"] {
		t.Errorf("id index changed shape: %v -> %v", before["data.adj.id"], after["data.adj.id"])
	}
	if got := adjacency(); got != want {
		t.Fatalf("adjacency after the repack\n%s\nwant\n%s", got, want)
	}
	rep, err = g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 0 {
		t.Fatalf("second compaction did %+v, want nothing", rep)
	}
}

func mustULID(t *testing.T, s string) ulid.ULID {
	t.Helper()
	id, err := ulid.ParseStrict(s)
	must(t, err)
	return id
}

// TestOneRowCommitsKeepIndexPagesFull: one-row commits whose ids sort
// before the 20 seeded ones (each landing in the full page holding them)
// absorb the short page their overflow went to (absorbNext), so the id
// index holds ceil(rows/IDPageRows) pages without any compaction. Red
// without absorbNext: one one-id page per seeded id pushed out (22 pages).
func TestOneRowCommitsKeepIndexPagesFull(t *testing.T) {
	defaultIndexShapes(t, "it counts the pages of the default page size")
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	const seeded, commits = 20, IDPageRows + 100
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i < seeded; i++ {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%02d", i), "n")); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < commits; i++ {
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person(fmt.Sprintf("f%05d", i), "n")) })
	}
	pages := ceilDiv(seeded+commits, IDPageRows)
	if got := indexShape(t, g, "Person")["data.adj.id"]; got != [2]int{1, pages} {
		t.Fatalf("Person id index after %d one-row commits: %v chunks and pages, want [1 %d]", commits, got, pages)
	}
	for _, id := range []string{"f00000", fmt.Sprintf("f%05d", commits-1), "p00", "p19"} {
		tx := begin(t, g)
		err := tx.Insert("Person", person(id, "dup"))
		if err == nil {
			_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "dup"})
		}
		if !errors.Is(err, ErrIDExists) {
			t.Fatalf("insert of existing %s: %v, want ErrIDExists", id, err)
		}
	}
}

// TestCompactConvergesUnderIndexFanout: on a handle whose IndexFanout
// shapes its pages (4 ids a page, the simulator's and simrun -procs'
// shape), a commit deleting three ids of every four leaves each id page
// holding one; a compaction repacks the id index into ceil(rows/4)
// pages, and a second compaction does nothing. Red when the repack
// judges and cuts pages at the format's page size (IDPageRows) instead of
// the handle's: every compaction found the 4-id pages "poorly filled" and
// rewrote the whole index again (docs/perf.md, "Maintenance rounds under
// paged shapes").
func TestCompactConvergesUnderIndexFanout(t *testing.T) {
	const fanout, seeded = 4, 40
	g, err := Init(ctx, sim.New(sim.Config{Seed: 1}), "g", testSchema(t), fanoutOptions(1, fanout))
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i < seeded; i++ {
			if err := tx.Insert("Person", person(fmt.Sprintf("p%03d", i), "n")); err != nil {
				return err
			}
		}
		return nil
	})
	var kept []string
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i < seeded; i++ {
			if i%fanout == 0 {
				kept = append(kept, fmt.Sprintf("p%03d", i))
				continue
			}
			if err := tx.Delete("Person", fmt.Sprintf("p%03d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	idPages := func() (pages, full int) {
		s := snap(t, g)
		tb, err := s.cat.table("Person")
		must(t, err)
		r := newReader(g, s.cat)
		leaves, err := r.leafChunks(ctx, tb, dirID, indexRefsOf(t, pinnedVersion(t, g, "Person"), "id"))
		must(t, err)
		for _, ref := range leaves {
			c, err := r.chunk(ctx, tb, dirID, ref)
			must(t, err)
			for _, p := range c.Pages {
				pages++
				if p.Rows == fanout {
					full++
				}
			}
		}
		return pages, full
	}
	before, _ := idPages()
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 1 || strings.Join(rep.Tables[0].Repacked, ",") != "id" {
		t.Fatalf("first compaction did %+v, want Person's id index repacked (%d pages before)", rep, before)
	}
	want := ceilDiv(len(kept), fanout)
	if pages, full := idPages(); pages != want || full != len(kept)/fanout {
		t.Fatalf("repacked id index: %d pages (%d full), want %d (%d full; %d before)", pages, full, want, len(kept)/fanout, before)
	}
	rep, err = g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	if len(rep.Tables) != 0 {
		t.Fatalf("second compaction did %+v, want nothing (a compacted table converges)", rep)
	}
	got, err := snap(t, g).GetMany(ctx, "Person", kept)
	if err != nil || len(got) != len(kept) {
		t.Fatalf("rows after the compactions: %d of %d, %v", len(got), len(kept), err)
	}
}
