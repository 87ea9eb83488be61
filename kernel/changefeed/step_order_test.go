package changefeed

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// orderGraph drives one case: a graph and its dev branch, forked at
// genesis.
type orderGraph struct {
	t testing.TB
	g *data.Graph
}

func (o orderGraph) write(b, typ string, rows ...data.Row) {
	commitOn(o.t, o.g, b, func(tx *data.Txn) error { return tx.Upsert(typ, rows...) })
}

func (o orderGraph) apply(b, text string, opts data.SchemaOptions) {
	o.t.Helper()
	sc, err := schema.Parse([]byte(text))
	must(o.t, err)
	_, err = o.g.ApplySchema(ctx, branch(o.t, o.g, b), sc, kernel.LineageIntent{Actor: "test", Message: "schema on " + b}, opts)
	must(o.t, err)
}

func (o orderGraph) mergeDev() {
	o.t.Helper()
	_, err := o.g.Merge(ctx, branch(o.t, o.g, "dev"), branch(o.t, o.g, "main"), kernel.LineageIntent{Actor: "test", Message: "merge"}, data.MergeOptions{})
	var mc *data.MergeConflictError
	if errors.As(err, &mc) {
		o.t.Fatalf("merge refused: %v", err)
	}
	must(o.t, err)
}

// withPerson is the schema a TestSchemaStepsApplyInOrder case applies:
// Person with the nullable properties props (the cases start from "nick:
// string? age: string?"), and Company, City and WorksAt to rename and
// drop.
func withPerson(props string) string {
	return "node Person { name: string " + props + " }\nnode Company { name: string }\nnode City { name: string }\nedge WorksAt: Person -> Company\n"
}

func row(id string, props map[string]any) data.Row { return data.Row{ID: id, Props: props} }

// TestSchemaStepsApplyInOrder pins S12's replay rule on the minimal
// histories where a schema change reuses a name within one event: a
// consumer that applies an event's steps one after the other, each
// naming types and properties as the steps before it left them (what
// every consumer in the repository does), then the row changes, holds the
// head's rows — replaying main's feed from the beginning, and applying
// one Diff from genesis to the head. Red before the steps were ordered
// for replay: a rename onto a dropped property's name was followed by
// the drop of that name (the renamed values went; the seed
// 12913565291662121776 of TestReplayAcrossSchemaChanges), a swap of two
// names moved one value twice, a type added under a renamed type's old
// name came before the rename (its rows went), and a type renamed onto a
// dropped type's name was followed by that drop.
func TestSchemaStepsApplyInOrder(t *testing.T) {
	cases := []struct {
		name string
		run  func(o orderGraph)
	}{
		{"rename onto a dropped property in one change", func(o orderGraph) {
			o.write("main", "Person", row("p0", map[string]any{"name": "a", "nick": "n0", "age": "a0"}), row("p1", map[string]any{"name": "b", "nick": "n1"}))
			o.apply("main", withPerson(`age: string?`), data.SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "nick", To: "age"}}})
		}},
		{"drop then rename onto the name on a branch, merged", func(o orderGraph) {
			o.write("main", "Person", row("p0", map[string]any{"name": "a", "nick": "n0"}))
			o.apply("dev", withPerson(`nick: string?`), data.SchemaOptions{})
			o.apply("dev", withPerson(`age: string?`), data.SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "nick", To: "age"}}})
			o.mergeDev()
		}},
		{"drop the first property, rename the second onto it on a branch, merged", func(o orderGraph) {
			o.write("main", "Person", row("p0", map[string]any{"name": "a", "age": "a0"}))
			o.apply("dev", withPerson(`age: string?`), data.SchemaOptions{})
			o.apply("dev", withPerson(`nick: string?`), data.SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "nick"}}})
			o.mergeDev()
		}},
		{"property swap on a branch, merged", func(o orderGraph) {
			o.write("main", "Person", row("p0", map[string]any{"name": "a", "nick": "n0", "age": "a0"}))
			for _, st := range []struct {
				props string
				r     schema.Rename
			}{
				{"tmp: string? age: string?", schema.Rename{Type: "Person", From: "nick", To: "tmp"}},
				{"tmp: string? nick: string?", schema.Rename{Type: "Person", From: "age", To: "nick"}},
				{"age: string? nick: string?", schema.Rename{Type: "Person", From: "tmp", To: "age"}},
			} {
				o.apply("dev", withPerson(st.props), data.SchemaOptions{Renames: []schema.Rename{st.r}})
			}
			o.mergeDev()
		}},
		{"type renamed onto a dropped type's name, merged", func(o orderGraph) {
			o.write("main", "Company", row("c0", map[string]any{"name": "co"}))
			o.apply("dev", `node Person { name: string nick: string? age: string? } node Company { name: string }
edge WorksAt: Person -> Company`, data.SchemaOptions{})
			o.apply("dev", `node Person { name: string nick: string? age: string? } node City { name: string }
edge WorksAt: Person -> City`, data.SchemaOptions{TypeRenames: []schema.TypeRename{{From: "Company", To: "City"}}})
			o.mergeDev()
		}},
		{"type added under a renamed type's old name, merged", func(o orderGraph) {
			o.write("main", "Company", row("c0", map[string]any{"name": "co"}))
			o.apply("dev", `node Person { name: string nick: string? age: string? } node Zoo { name: string } node City { name: string }
edge WorksAt: Person -> Zoo`, data.SchemaOptions{TypeRenames: []schema.TypeRename{{From: "Company", To: "Zoo"}}})
			o.apply("dev", `node Person { name: string nick: string? age: string? } node Zoo { name: string } node City { name: string }
node Company { name: string }
edge WorksAt: Person -> Zoo`, data.SchemaOptions{})
			o.mergeDev()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := schema.Parse([]byte(withPerson("nick: string? age: string?")))
			must(t, err)
			g, err := data.Init(ctx, newStore(), "g", sc, data.Options{Kernel: kernel.Options{Env: testEnv(1)}})
			must(t, err)
			genesis, err := g.SnapshotAt(ctx, branch(t, g, "main"))
			must(t, err)
			_, err = g.Kernel().CreateBranch(ctx, "dev", branch(t, g, "main"))
			must(t, err)
			held, _ := headRows(t, g, "main")
			tc.run(orderGraph{t: t, g: g})
			want, wantSchema := headRows(t, g, "main")

			got := replayAll(t, g, genesis.Kernel().SchemaHash())
			if got.schema != wantSchema {
				t.Fatalf("feed: consumer ends at schema %.12s, head has %.12s", got.schema, wantSchema)
			}
			if d := sameModel(got.rows, want); d != "" {
				t.Fatalf("feed replay differs from the head: %s", d)
			}

			head, err := g.SnapshotAt(ctx, branch(t, g, "main"))
			must(t, err)
			dp := diffAll(t, genesis, head)
			if dp.Schema == nil {
				t.Fatal("diff from genesis carries no schema change")
			}
			applySchemaEvent(held, dp.Schema)
			for _, c := range dp.Changes {
				held.apply(c)
			}
			if d := sameModel(held, want); d != "" {
				t.Fatalf("diff from genesis (steps %s): %s", stepText(dp.Schema.Steps), d)
			}
		})
	}
}

// replayAll polls main's feed from the beginning to the head in one
// consumer, checking S12's rules (schemaConsumer.apply).
func replayAll(t testing.TB, g *data.Graph, genesisSchema string) schemaConsumer {
	t.Helper()
	state := schemaConsumer{rows: model{}, schema: genesisSchema}
	f, pos, seen := New(g), Beginning(), map[string]bool{}
	for polls := 0; polls < 100; polls++ {
		p, err := f.Poll(ctx, "main", pos, feed.Filter{}, feed.Limits{})
		must(t, err)
		for _, bl := range p.Blocks {
			if err := state.apply(bl, seen); err != nil {
				t.Fatalf("poll %d: %v", polls, err)
			}
		}
		if p.CaughtUp {
			return state
		}
		pos = FromToken(p.Cursor + p.PageToken)
	}
	t.Fatal("feed never caught up")
	return schemaConsumer{}
}

// diffAll reads a whole Diff from a to b as one page's schema event and
// every change.
func diffAll(t testing.TB, a, b *data.Snapshot) DiffPage {
	t.Helper()
	d, err := Diff(a, b, feed.Filter{})
	must(t, err)
	var out DiffPage
	for pages := 0; pages < 100; pages++ {
		p, err := d.Next(ctx, feed.Limits{})
		must(t, err)
		if p.Schema != nil {
			out.Schema = p.Schema
		}
		out.Changes = append(out.Changes, p.Changes...)
		if p.Done {
			return out
		}
	}
	t.Fatal("diff never done")
	return DiffPage{}
}
