package changefeed

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// TestTypeRenameInFeed: a type rename is a schema event (rename-type, by
// storage table), never a drop and an add: its commit delivers the event
// alone (no row deleted or inserted), later commits' rows come under the
// new name, and a diff across it holds the event and only the rows that
// changed, so a consumer applying both holds the head's rows.
func TestTypeRenameInFeed(t *testing.T) {
	g := initEvoGraph(t, evoSchema{props: []string{"nick"}})
	commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Insert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "ann", "nick": "a"}}, person("p2", "bob"))
	})
	held, _ := headRows(t, g, "main")
	before, err := g.SnapshotAt(ctx, branch(t, g, "main"))
	must(t, err)
	renamed := `node Human { name: string nick: string? }
node Company { name: string }
edge WorksAt: Human -> Company
`
	sc, err := schema.Parse([]byte(renamed))
	must(t, err)
	_, err = g.ApplySchema(ctx, branch(t, g, "main"), sc, kernel.LineageIntent{Actor: "test", Message: "rename"},
		data.SchemaOptions{TypeRenames: []schema.TypeRename{{From: "Person", To: "Human"}}})
	must(t, err)
	rename := headCommit(t, g, "main")
	commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Update("Human", data.Row{ID: "p2", Props: map[string]any{"name": "bob", "nick": "b"}})
	})
	f := New(g)
	p, err := f.CommitChanges(ctx, rename, "", feed.Filter{}, feed.Limits{})
	must(t, err)
	if p.Schema == nil || stepText(p.Schema.Steps) != "rename-type Person -> Human" || len(p.Changes) != 0 {
		t.Fatalf("rename commit: schema %+v, changes %+v", p.Schema, p.Changes)
	}
	_, chs, _ := allChanges(t, f, headCommit(t, g, "main"), feed.Filter{}, feed.Limits{})
	if len(chs) != 1 || chs[0].Type != "Human" || chs[0].ID != "p2" || chs[0].Op != feed.OpUpdate {
		t.Fatalf("the commit after: %+v", chs)
	}
	after, err := g.SnapshotAt(ctx, branch(t, g, "main"))
	must(t, err)
	dp := firstDiffPage(t, before, after)
	if dp.Schema == nil || stepText(dp.Schema.Steps) != "rename-type Person -> Human" || !dp.Done || len(dp.Changes) != 1 {
		t.Fatalf("diff: schema %+v, changes %+v", dp.Schema, dp.Changes)
	}
	if b := dp.Changes[0].Before; b == nil || b.Props["nick"] != nil || dp.Changes[0].Type != "Human" {
		t.Fatalf("diff change: %+v", dp.Changes[0])
	}
	applySchemaEvent(held, dp.Schema)
	for _, c := range dp.Changes {
		held.apply(c)
	}
	want, _ := headRows(t, g, "main")
	if diff := sameModel(held, want); diff != "" {
		t.Fatalf("consumer after the diff: %s", diff)
	}
}
