package data

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

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
			names, err := AdjacencyChunkPages(b)
			must(t, err)
			pages += len(names)
		}
		out[kv.Key] = [2]int{len(refs), pages}
	}
	return out
}

// TestCompactRepacksEdgeIndexes: one-edge commits whose keys sort before a
// full adjacency page split it into a full page and a one-edge page each
// time (8 pages for 1036 edges per direction); a compaction repacks out
// and in into ceil(rows/AdjPageRows) pages listed by one chunk, leaves the
// id index (appended at its end, already full) alone, and Out and In
// answer exactly as before. Red without the repack (8 pages).
func TestCompactRepacksEdgeIndexes(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	const big, small = AdjPageRows + 6, 6
	nodes := []string{"z"}
	for i := 0; i < small; i++ {
		nodes = append(nodes, fmt.Sprintf("a%02d", i))
	}
	commitTx(t, g, func(tx *Txn) error {
		for _, n := range nodes {
			if err := tx.Insert("Person", person(n, "n")); err != nil {
				return err
			}
		}
		for i := 0; i < big; i++ {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("e%04d", i), "z", "z")); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < small; i++ {
		commitTx(t, g, func(tx *Txn) error {
			return tx.Insert("Knows", edge(fmt.Sprintf("x%02d", i), nodes[i+1], nodes[i+1]))
		})
	}
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
	if before["data.adj.out"][1] != small+2 {
		t.Fatalf("before compaction: %v, want %d out pages (the split pattern)", before, small+2)
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	var knows *TableCompaction
	for i := range rep.Tables {
		if rep.Tables[i].Table == "Knows" {
			knows = &rep.Tables[i]
		}
	}
	if knows == nil || strings.Join(knows.Repacked, ",") != "out,in" {
		t.Fatalf("report %+v, want Knows out and in repacked", rep)
	}
	after := indexShape(t, g, "Knows")
	pages := ceilDiv(big+small, AdjPageRows)
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
