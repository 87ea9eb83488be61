package data

import (
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// schemaHistory builds a history on main through schema changes and writes
// and returns its snapshots, oldest first, with a label each.
func schemaHistory(t *testing.T) ([]*Snapshot, []string) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	var snaps []*Snapshot
	var labels []string
	mark := func(label string) {
		snaps, labels = append(snaps, snap(t, g)), append(labels, label)
	}
	text := evoSchemaText
	change := func(label, old, new string, renames ...schema.Rename) {
		t.Helper()
		next := text + new
		if old != "" {
			next = replaceOnce(t, text, old, new)
		}
		if _, err := g.ApplySchema(ctx, mainRef(t, g), parseSchema(t, next), kernel.LineageIntent{Actor: "test", Message: label}, SchemaOptions{Renames: renames}); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		text = next
		mark(label)
	}
	mark("start")
	change("rename age", "age: int64?", "years: int64?", schema.Rename{Type: "Person", From: "age", To: "years"})
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(tx.Update("Person", Row{ID: "p1", Props: map[string]any{"name": "ann", "years": int64(32)}}),
			tx.Insert("Person", Row{ID: "p4", Props: map[string]any{"name": "dee", "years": int64(7)}}))
	})
	mark("write years")
	change("drop years", "years: int64?", "")
	change("add email", "name: string ", "name: string email: string? ")
	commitTx(t, g, func(tx *Txn) error {
		return tx.Update("Person", Row{ID: "p2", Props: map[string]any{"name": "bob", "email": "b@x"}})
	})
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Person", "p3") })
	mark("write email")
	change("add City", "", "node City { name: string }\n")
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("City", Row{ID: "x1", Props: map[string]any{"name": "oslo"}}) })
	mark("write City")
	change("drop since", "{ since: int64? }", "")
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w4", "p4", "c2")) })
	mark("write WorksAt")
	return snaps, labels
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := indexOf(s, old)
	if i < 0 {
		t.Fatalf("no %q in %q", old, s)
	}
	return s[:i] + new + s[i+len(old):]
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// translate applies schema steps to a state (what a feed consumer does
// with a schema change): a renamed property moves, a dropped one goes, a
// dropped type goes with its rows, an added type starts empty.
func translate(state map[string]map[string]Row, steps []schema.Step) map[string]map[string]Row {
	out := map[string]map[string]Row{}
	for typ, rows := range state {
		out[typ] = map[string]Row{}
		for id, r := range rows {
			props := map[string]any{}
			for k, v := range r.Props {
				props[k] = v
			}
			r.Props = props
			out[typ][id] = r
		}
	}
	for _, st := range steps {
		switch st.Op {
		case schema.AddNode, schema.AddEdge:
			out[st.Type] = map[string]Row{}
		case schema.DropType:
			delete(out, st.Type)
		case schema.RenameProp:
			for _, r := range out[st.Type] {
				if v, ok := r.Props[st.From]; ok {
					r.Props[st.Prop] = v
					delete(r.Props, st.From)
				}
			}
		case schema.DropProp:
			for _, r := range out[st.Type] {
				delete(r.Props, st.Prop)
			}
		}
	}
	return out
}

// TestDiffAcrossSchemaChanges: for every ordered pair of snapshots of a
// history with renames, drops, adds of properties and types (backwards
// included), a consumer holding the older state that applies
// schema.Compare's steps and then every TableChanges of the newer schema's
// types (each delete's and update's Before equal to the row it holds)
// holds the newer state exactly. Red without the older side's layout
// (fragments of the other schema do not decode) and without the whole read
// backwards across a drop (rows in shared fragments keep the column).
func TestDiffAcrossSchemaChanges(t *testing.T) {
	snaps, labels := schemaHistory(t)
	for i, from := range snaps {
		for j, to := range snaps {
			t.Run(fmt.Sprintf("%s->%s", labels[i], labels[j]), func(t *testing.T) {
				state := translate(snapState(t, from), schema.Compare(from.Schema(), to.Schema()))
				for _, typ := range to.cat.names {
					if state[typ] == nil {
						state[typ] = map[string]Row{}
					}
					err := TableChanges(ctx, from, to, typ, "", func(c RowChange) error {
						held, ok := state[typ][c.ID]
						switch {
						case c.Op == ChangeInsert && ok:
							return fmt.Errorf("insert of %s %s, held %v", typ, c.ID, held)
						case c.Op != ChangeInsert && (!ok || !RowsEqual(held, *c.Before)):
							return fmt.Errorf("%s of %s %s: before %v, held %v (%t)", c.Op, typ, c.ID, *c.Before, held, ok)
						case c.Op == ChangeDelete:
							delete(state[typ], c.ID)
						default:
							state[typ][c.ID] = *c.After
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				for typ := range state {
					if _, ok := to.cat.tables[typ]; !ok {
						t.Fatalf("replayed state keeps type %s", typ)
					}
				}
				if d := sameState(state, snapState(t, to)); d != "" {
					t.Fatalf("replayed state differs: %s", d)
				}
			})
		}
	}
}

// TestDiffAcrossSchemaChangeReportsNoSchemaOnlyChange: a rename, a drop
// and an add of a property change no row; the rows a later write changed
// are reported under the new names.
func TestDiffAcrossSchemaChangeReportsNoSchemaOnlyChange(t *testing.T) {
	snaps, labels := schemaHistory(t)
	changes := func(i, j int, typ string) string {
		var out string
		must(t, TableChanges(ctx, snaps[i], snaps[j], typ, "", func(c RowChange) error {
			out += fmt.Sprintf("%s %s %v; ", c.Op, c.ID, c.After)
			return nil
		}))
		return out
	}
	for i := 1; i < len(labels); i++ {
		if labels[i] == "rename age" || labels[i] == "drop years" || labels[i] == "add email" || labels[i] == "drop since" {
			for _, typ := range snaps[i].cat.names {
				if got := changes(i-1, i, typ); got != "" {
					t.Fatalf("%s: %s changes %s", labels[i], typ, got)
				}
			}
		}
	}
	if got, want := changes(0, 2, "Person"), "update p1 &{p1   map[name:ann years:32]}; insert p4 &{p4   map[name:dee years:7]}; "; got != want {
		t.Fatalf("across the rename: %s, want %s", got, want)
	}
	if DiffReadsWhole(snaps[0], snaps[2], "Person") || !DiffReadsWhole(snaps[3], snaps[2], "Person") {
		t.Fatal("DiffReadsWhole: want only backwards across the drop")
	}
}
