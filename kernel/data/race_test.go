package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// danglingEdges lists every edge of s (of every edge type) whose from or to
// node does not exist in s, as "type/id".
func danglingEdges(t testing.TB, s *Snapshot) []string {
	t.Helper()
	var out []string
	for _, name := range s.cat.names {
		e := s.cat.tables[name]
		if !e.Edge {
			continue
		}
		s.mu.Lock()
		v, err := s.view(ctx, name)
		if err == nil {
			err = s.r.loadAll(ctx, v)
		}
		s.mu.Unlock()
		must(t, err)
		for i := range v.recs {
			for row := 0; row < int(v.recs[i].NumRows()); row++ {
				r := rowAt(e, v.recs[i], row)
				for _, end := range [2][2]string{{e.From, r.From}, {e.To, r.To}} {
					if _, ok, err := s.Get(ctx, end[0], end[1]); err != nil || !ok {
						must(t, err)
						out = append(out, name+"/"+r.ID)
					}
				}
			}
		}
	}
	return out
}

// TestNodeDeleteVersusEdgeInsert pins the dangling-edge race: a node delete
// and an edge insert to that node, each valid on its own base, must never
// both publish. Each side is interleaved deterministically (a sim store
// hook runs the other transaction, whole, after ours validated and before
// its write):
//   - the edge insert (non-strict) expects the endpoint node table at the
//     version it validated against; when a node delete published first, it
//     re-validates on the newer version and is rejected as dangling (also
//     when it writes the endpoint node table itself and rebases it);
//   - the node delete expects the edge tables at the versions it checked for
//     remaining edges (strictly); when an edge insert published first, it
//     fails with a version mismatch telling the caller to refresh and retry.
func TestNodeDeleteVersusEdgeInsert(t *testing.T) {
	insertEdge := func(tx *Txn) error { return tx.Insert("Knows", edge("k9", "p1", "p3")) }
	deleteNode := func(tx *Txn) error { return tx.Delete("Person", "p3") }
	insertNodeAndEdge := func(tx *Txn) error {
		if err := tx.Insert("Person", person("p9", "new")); err != nil {
			return err
		}
		return insertEdge(tx)
	}
	cases := []struct {
		name       string
		ours       func(tx *Txn) error
		competing  func(tx *Txn) error
		raceTable  string // the competing txn runs at our Write's first probe of this table
		want       error
		wantPeople string
		wantKnows  string
	}{
		{name: "delete publishes first", ours: insertEdge, competing: deleteNode, raceTable: "Knows",
			want: ErrDanglingEdge, wantPeople: "p1,p2", wantKnows: "k1"},
		{name: "delete publishes first, endpoint table written too", ours: insertNodeAndEdge, competing: deleteNode, raceTable: "Knows",
			want: ErrDanglingEdge, wantPeople: "p1,p2", wantKnows: "k1"},
		{name: "edge publishes first", ours: deleteNode, competing: insertEdge, raceTable: "Person",
			want: kernel.ErrVersionMismatch, wantPeople: "p1,p2,p3", wantKnows: "k1,k9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := commitRacing(t, tc.ours, tc.competing, tc.raceTable)
			s := snap(t, g)
			if d := danglingEdges(t, s); len(d) != 0 {
				t.Fatalf("dangling edges visible: %v (our Commit = %v)", d, err)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Commit = %v, want %v", err, tc.want)
			}
			if got := scanIDs(t, s, "Person"); got != tc.wantPeople {
				t.Fatalf("persons = %s, want %s", got, tc.wantPeople)
			}
			if got := scanIDs(t, s, "Knows"); got != tc.wantKnows {
				t.Fatalf("knows = %s, want %s", got, tc.wantKnows)
			}
		})
	}
}

// TestEdgeToNodeDeletedSinceBegin pins the stale-base side of the same
// rule: a node deleted (and published) after the edge transaction began is
// caught at Commit, whether or not the transaction writes the node type
// too — endpoints are checked at the node type's version the publish will
// expect, not only in the base the transaction began on.
func TestEdgeToNodeDeletedSinceBegin(t *testing.T) {
	for _, withNode := range []bool{false, true} {
		name := map[bool]string{false: "edge only", true: "edge and a node"}[withNode]
		t.Run(name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			g := initGraph(t, store, Limits{})
			seedGraph(t, g)
			tx := begin(t, g)
			commitTx(t, openGraph(t, store, 3), func(tx *Txn) error { return tx.Delete("Person", "p3") })
			if withNode {
				must(t, tx.Insert("Person", person("p9", "new")))
			}
			must(t, tx.Insert("Knows", edge("k9", "p1", "p3")))
			if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "ours"}); !errors.Is(err, ErrDanglingEdge) {
				t.Fatalf("Commit = %v, want ErrDanglingEdge", err)
			}
			s := snap(t, g)
			if d := danglingEdges(t, s); len(d) != 0 {
				t.Fatalf("dangling edges visible: %v", d)
			}
			if got := scanIDs(t, s, "Person"); got != "p1,p2" {
				t.Fatalf("persons = %s", got)
			}
		})
	}
}
