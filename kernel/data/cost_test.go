package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// insertCost is what one keyed single-table insert transaction costs.
type insertCost struct {
	schemaReads, tableOpens, otherTableOpens, requests int
}

// measureInsert runs Begin + Insert(one Person) + Commit on g and counts.
func measureInsert(t testing.TB, g *Graph, cs *counting.Store, id string) insertCost {
	t.Helper()
	cs.Reset()
	tx, err := g.Begin(ctx, mainRef(t, g))
	must(t, err)
	must(t, tx.Insert("Person", person(id, "n")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "cost"})
	must(t, err)
	tables := testRoot + "/tables/"
	return insertCost{
		schemaReads:     cs.CountWhere(objstore.OpGet, testRoot+"/schema/"),
		tableOpens:      cs.CountWhere(objstore.OpGet, tables+"Person/"),
		otherTableOpens: cs.CountWhere(objstore.OpGet, tables) - cs.CountWhere(objstore.OpGet, tables+"Person/"),
		requests:        int(cs.Counts().Requests()),
	}
}

// TestInsertCostGates pins the cost gates of a keyed single-table insert:
// the schema contract is read at most once (exactly once on a fresh
// handle, then never), the touched table is opened (its version object
// read) at most once, and no other table is opened.
func TestInsertCostGates(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	seeded := initGraph(t, cs, Limits{})
	seedGraph(t, seeded)
	g := openGraph(t, cs, 7) // fresh handle: empty caches
	first := measureInsert(t, g, cs, "n1")
	if first.schemaReads != 1 || first.tableOpens > 1 || first.otherTableOpens != 0 {
		t.Fatalf("first insert on a fresh handle: %+v, want 1 schema read, <= 1 table open, no other table", first)
	}
	for i := 2; i < 6; i++ {
		c := measureInsert(t, g, cs, "n"+itoa(i))
		if c.schemaReads != 0 || c.tableOpens > 1 || c.otherTableOpens != 0 {
			t.Fatalf("insert %d: %+v, want no schema read, <= 1 table open", i, c)
		}
	}
}
