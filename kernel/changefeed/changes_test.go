package changefeed

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// TestExactImages: before and after images are exact — null, the empty
// string and empty bytes are three values — and a rewrite with identical
// values is no change; the cause rides along.
func TestExactImages(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Insert("Person",
			data.Row{ID: "a", Props: map[string]any{"name": "A"}},
			data.Row{ID: "b", Props: map[string]any{"name": "B", "nick": "", "avatar": []byte{}}},
			data.Row{ID: "c", Props: map[string]any{"name": "C", "nick": "x"}})
	})
	c := commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Update("Person",
			data.Row{ID: "a", Props: map[string]any{"name": "A", "nick": ""}},                // null -> ""
			data.Row{ID: "b", Props: map[string]any{"name": "B", "nick": "", "avatar": nil}}, // [] -> null
			data.Row{ID: "c", Props: map[string]any{"name": "C", "nick": "x"}})               // identical
	})
	cause, got, _ := allChanges(t, f, c.ID, feed.Filter{}, feed.Limits{})
	if cause.ID != c.ID || cause.Actor != "test" || cause.Message != "commit on main" || !cause.Time.Equal(c.Time) || len(cause.Parents) != 1 {
		t.Fatalf("cause %+v, want %+v", cause, c)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("changes %+v", got)
	}
	for _, ch := range got {
		if ch.Op != feed.OpUpdate || ch.Before == nil || ch.After == nil || ch.Type != "Person" || ch.Edge {
			t.Fatalf("change %+v", ch)
		}
	}
	if v, ok := got[0].Before.Props["nick"]; ok && v != nil {
		t.Fatalf("a's before nick %#v, want null", v)
	}
	if got[0].After.Props["nick"] != "" {
		t.Fatalf("a's after nick %#v, want empty string", got[0].After.Props["nick"])
	}
	if b, ok := got[1].Before.Props["avatar"].([]byte); !ok || b == nil || len(b) != 0 {
		t.Fatalf("b's before avatar %#v, want empty bytes", got[1].Before.Props["avatar"])
	}
	if v := got[1].After.Props["avatar"]; v != nil {
		t.Fatalf("b's after avatar %#v, want null", v)
	}
	same := commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Update("Person", data.Row{ID: "c", Props: map[string]any{"name": "C", "nick": "x"}})
	})
	if _, got, _ := allChanges(t, f, same.ID, feed.Filter{}, feed.Limits{}); len(got) != 0 {
		t.Fatalf("identical rewrite reported %+v", got)
	}
}

// TestEdgesCarryEndpointsAndOrder: edge images carry endpoints; nodes go
// before edges, types by name, ids ascending; deletes carry the before
// image; the filter selects by type and by operation.
func TestEdgesCarryEndpointsAndOrder(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	c := commitOn(t, g, "main", func(tx *data.Txn) error {
		must(t, tx.Insert("WorksAt", data.Row{ID: "w1", From: "p2", To: "co1"}))
		must(t, tx.Insert("Person", person("p2", "P2"), person("p1", "P1")))
		return tx.Insert("Company", data.Row{ID: "co1", Props: map[string]any{"name": "Co"}})
	})
	_, got, _ := allChanges(t, f, c.ID, feed.Filter{}, feed.Limits{})
	var order []string
	for _, ch := range got {
		order = append(order, ch.Type+"/"+ch.ID+"/"+ch.Op.String())
	}
	if d := cmp.Diff([]string{"Company/co1/insert", "Person/p1/insert", "Person/p2/insert", "WorksAt/w1/insert"}, order); d != "" {
		t.Fatalf("order (-want +got):\n%s", d)
	}
	if e := got[3]; !e.Edge || e.After.From != "p2" || e.After.To != "co1" {
		t.Fatalf("edge change %+v", e)
	}
	del := commitOn(t, g, "main", func(tx *data.Txn) error { return tx.DeleteCascade("Person", "p2") })
	_, got, _ = allChanges(t, f, del.ID, feed.Filter{}, feed.Limits{})
	if len(got) != 2 || got[1].Op != feed.OpDelete || got[1].After != nil || got[1].Before.From != "p2" || got[1].Before.To != "co1" {
		t.Fatalf("cascade delete changes %+v", got)
	}
	_, got, _ = allChanges(t, f, del.ID, feed.Filter{Types: []string{"WorksAt"}}, feed.Limits{})
	if len(got) != 1 || got[0].Type != "WorksAt" {
		t.Fatalf("type filter: %+v", got)
	}
	_, got, _ = allChanges(t, f, c.ID, feed.Filter{Ops: []feed.Op{feed.OpDelete}}, feed.Limits{})
	if len(got) != 0 {
		t.Fatalf("op filter: %+v", got)
	}
}

// TestMergeCommitIsFirstParentRelative: a merge commit's changes are what
// it changed on its branch (relative to the first parent), and its cause
// names the merged parent.
func TestMergeCommitIsFirstParentRelative(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	k := g.Kernel()
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("p1", "one")) })
	dev, err := k.CreateBranch(ctx, "dev", branch(t, g, "main"))
	must(t, err)
	devHead := commitOn(t, g, "dev", func(tx *data.Txn) error { return tx.Insert("Person", person("p2", "two")) })
	mainHead := commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Insert("Company", data.Row{ID: "co", Props: map[string]any{"name": "Co"}})
	})
	// A merge that takes dev's Person table onto main (Company stays main's).
	ds, err := k.SnapshotAt(ctx, dev)
	must(t, err)
	pin, _ := ds.Table("Person")
	merged := devHead.ID
	m, err := k.Publish(ctx, branch(t, g, "main"), []kernel.TableUpdate{kernel.UpdateOf(pin)},
		kernel.LineageIntent{Actor: "merger", Message: "merge dev", MergedParent: &merged}, nil)
	must(t, err)
	cause, got, _ := allChanges(t, f, m.ID, feed.Filter{}, feed.Limits{})
	if len(cause.Parents) != 2 || cause.Parents[0] != mainHead.ID || cause.Parents[1] != devHead.ID || cause.Actor != "merger" {
		t.Fatalf("merge cause %+v", cause)
	}
	if len(got) != 1 || got[0].ID != "p2" || got[0].Op != feed.OpInsert {
		t.Fatalf("merge changes %+v (want only dev's p2, relative to main's head)", got)
	}
	page, err := f.Poll(ctx, "main", AfterCommit(mainHead.ID), feed.Filter{}, feed.Limits{})
	must(t, err)
	if len(page.Blocks) != 1 || page.Blocks[0].Commit.ID != m.ID || len(page.Blocks[0].Changes) != 1 || !page.CaughtUp {
		t.Fatalf("poll after main's head: %+v", page)
	}
}

// TestEmptyCommits: the genesis commit and a commit without data changes
// have empty change lists (and empty blocks in the feed).
func TestEmptyCommits(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	if _, got, _ := allChanges(t, f, firstCommit(t, g), feed.Filter{}, feed.Limits{}); len(got) != 0 {
		t.Fatalf("genesis changes %+v", got)
	}
	e, err := g.Kernel().Publish(ctx, branch(t, g, "main"), nil, kernel.LineageIntent{Actor: "t", Message: "no data"}, nil)
	must(t, err)
	if _, got, _ := allChanges(t, f, e.ID, feed.Filter{}, feed.Limits{}); len(got) != 0 {
		t.Fatalf("data-less commit changes %+v", got)
	}
	page, err := f.Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{})
	must(t, err)
	if len(page.Blocks) != 2 || page.Blocks[0].Commit.ID != firstCommit(t, g) || page.Blocks[1].Commit.ID != e.ID || page.Cursor == "" {
		t.Fatalf("poll: %+v", page)
	}
	for _, b := range page.Blocks {
		if len(b.Changes) != 0 || !b.Complete {
			t.Fatalf("block %+v", b)
		}
	}
}

// TestDiffAcrossBranchesStreams: Diff between two branch heads streams in
// pages that concatenate to the whole diff.
func TestDiffAcrossBranchesStreams(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	commitOn(t, g, "main", func(tx *data.Txn) error {
		var rows []data.Row
		for i := range 30 {
			rows = append(rows, person(fmt.Sprintf("p%02d", i), "x"))
		}
		return tx.Insert("Person", rows...)
	})
	_, err := g.Kernel().CreateBranch(ctx, "dev", branch(t, g, "main"))
	must(t, err)
	commitOn(t, g, "dev", func(tx *data.Txn) error { return tx.Delete("Person", "p03", "p17") })
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Update("Person", person("p05", "y")) })
	a, err := g.SnapshotAt(ctx, branch(t, g, "main"))
	must(t, err)
	b, err := g.SnapshotAt(ctx, branch(t, g, "dev"))
	must(t, err)
	d, err := Diff(a, b, feed.Filter{})
	must(t, err)
	var got []string
	for pages := 0; ; pages++ {
		p, err := d.Next(ctx, feed.Limits{MaxChanges: 1})
		must(t, err)
		if len(p.Changes) > 1 {
			t.Fatalf("page of %d changes", len(p.Changes))
		}
		for _, c := range p.Changes {
			got = append(got, c.ID+"/"+c.Op.String())
		}
		if p.Done {
			break
		}
		if pages > 10 {
			t.Fatal("no end")
		}
	}
	if d := cmp.Diff([]string{"p03/delete", "p05/update", "p17/delete"}, got); d != "" {
		t.Fatalf("diff (-want +got):\n%s", d)
	}
	if _, err := Diff(a, b, feed.Filter{Ops: []feed.Op{7}}); err == nil {
		t.Fatal("bad filter accepted")
	}
}

// TestCommitPageTokenBinding: a commit-changes page token is refused for
// another commit or another filter.
func TestCommitPageTokenBinding(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	c := commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("a", "A"), person("b", "B")) })
	p, err := f.CommitChanges(ctx, c.ID, "", feed.Filter{}, feed.Limits{MaxChanges: 1})
	must(t, err)
	if p.Next == "" || len(p.Changes) != 1 {
		t.Fatalf("first page %+v", p)
	}
	if _, err := f.CommitChanges(ctx, firstCommit(t, g), p.Next, feed.Filter{}, feed.Limits{}); !errors.Is(err, feed.ErrBadCursor) {
		t.Fatalf("token of another commit: %v", err)
	}
	if _, err := f.CommitChanges(ctx, c.ID, p.Next, feed.Filter{Types: []string{"Person"}}, feed.Limits{}); !errors.Is(err, feed.ErrBadCursor) {
		t.Fatalf("token under another filter: %v", err)
	}
}
