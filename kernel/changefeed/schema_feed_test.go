package changefeed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// evoSchema is the schema a schema-change test writes: Person's
// properties in order (all nullable but name), and whether City exists.
type evoSchema struct {
	props []string // Person's nullable string properties
	city  bool
}

func (s evoSchema) text() string {
	var b strings.Builder
	b.WriteString("node Person { name: string")
	for _, p := range s.props {
		fmt.Fprintf(&b, " %s: string?", p)
	}
	b.WriteString(" }\nnode Company { name: string }\nedge WorksAt: Person -> Company\n")
	if s.city {
		b.WriteString("node City { name: string }\n")
	}
	return b.String()
}

func initEvoGraph(t testing.TB, s evoSchema) *data.Graph {
	t.Helper()
	sc, err := schema.Parse([]byte(s.text()))
	must(t, err)
	g, err := data.Init(ctx, newStore(), "g", sc, data.Options{Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	return g
}

func applyOn(t testing.TB, g *data.Graph, b string, s evoSchema, renames ...schema.Rename) {
	t.Helper()
	sc, err := schema.Parse([]byte(s.text()))
	must(t, err)
	_, err = g.ApplySchema(ctx, branch(t, g, b), sc, kernel.LineageIntent{Actor: "test", Message: "schema on " + b}, data.SchemaOptions{Renames: renames})
	must(t, err)
}

// headRows reads every row of b's head with Scan (the columnar path, not
// the diff) and its schema id.
func headRows(t testing.TB, g *data.Graph, b string) (model, string) {
	t.Helper()
	s, err := g.SnapshotAt(ctx, branch(t, g, b))
	must(t, err)
	m := model{}
	sc := s.Schema()
	var names []string
	for _, n := range sc.Nodes {
		names = append(names, n.Name)
	}
	for _, e := range sc.Edges {
		names = append(names, e.Name)
	}
	for _, name := range names {
		m[name] = map[string]data.Row{}
		rr, err := s.Scan(ctx, name)
		must(t, err)
		for rr.Next() {
			rec := rr.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				r := data.Row{Props: map[string]any{}}
				for c, f := range rec.Schema().Fields() {
					col := rec.Column(c)
					if col.IsNull(i) {
						continue
					}
					var v any
					switch a := col.(type) {
					case *array.String:
						v = a.Value(i)
					case *array.Int64:
						v = a.Value(i)
					case *array.Binary:
						v = slices.Clone(a.Value(i))
					default:
						t.Fatalf("column %s: %T", f.Name, col)
					}
					switch f.Name {
					case schema.ColID:
						r.ID = v.(string)
					case schema.ColFrom:
						r.From = v.(string)
					case schema.ColTo:
						r.To = v.(string)
					default:
						r.Props[f.Name] = v
					}
				}
				m[name][r.ID] = r
			}
		}
		must(t, rr.Err())
		rr.Release()
	}
	return m, s.Kernel().SchemaHash()
}

// applySchemaEvent applies a schema change to a consumer's rows (what a
// consumer does with the event): renamed types and properties move,
// dropped ones and dropped types go, added types start empty.
func applySchemaEvent(m model, sc *SchemaChange) {
	for _, st := range sc.Steps {
		switch st.Op {
		case schema.AddNode, schema.AddEdge:
			m[st.Type] = map[string]data.Row{}
		case schema.DropType:
			delete(m, st.Type)
		case schema.RenameType:
			m[st.Type] = m[st.From]
			delete(m, st.From)
		case schema.RenameProp:
			for _, r := range m[st.Type] { //detlint:ordered every row
				if v, ok := r.Props[st.From]; ok {
					r.Props[st.Prop] = v
					delete(r.Props, st.From)
				}
			}
		case schema.DropProp:
			for _, r := range m[st.Type] { //detlint:ordered every row
				delete(r.Props, st.Prop)
			}
		}
	}
}

// sameModel reports the first difference between two states, or "".
func sameModel(got, want model) string {
	for _, typ := range sortedKeys(want) {
		if len(want[typ]) != len(got[typ]) {
			return fmt.Sprintf("%s: %d rows, want %d", typ, len(got[typ]), len(want[typ]))
		}
		for _, id := range sortedKeys(want[typ]) {
			g, ok := got[typ][id]
			if !ok || !data.RowsEqual(g, want[typ][id]) {
				return fmt.Sprintf("%s %s: %+v (present %v), want %+v", typ, id, g, ok, want[typ][id])
			}
		}
	}
	for _, typ := range sortedKeys(got) {
		if _, ok := want[typ]; !ok && len(got[typ]) > 0 {
			return fmt.Sprintf("type %s kept with %d rows", typ, len(got[typ]))
		}
	}
	return ""
}

// schemaConsumer is a feed consumer that persists its rows, its schema id
// and its cursor together.
type schemaConsumer struct {
	rows   model
	schema string
}

func (c schemaConsumer) clone() schemaConsumer {
	out := schemaConsumer{rows: model{}, schema: c.schema}
	for typ, rows := range c.rows { //detlint:ordered copies only
		out.rows[typ] = map[string]data.Row{}
		for id, r := range rows { //detlint:ordered copies only
			props := map[string]any{}
			for k, v := range r.Props { //detlint:ordered copies only
				props[k] = v
			}
			r.Props = props
			out.rows[typ][id] = r
		}
	}
	return out
}

// apply applies one block, checking the feed's rules: a schema change
// only in a commit's first block and from the schema held; no id twice in
// one commit.
func (c *schemaConsumer) apply(bl Block, seen map[string]bool) error {
	if bl.Schema != nil {
		if bl.Continued {
			return fmt.Errorf("commit %s: schema change in a continued block", bl.Commit.ID)
		}
		if bl.Schema.From != c.schema {
			return fmt.Errorf("commit %s: schema change from %.12s, consumer holds %.12s", bl.Commit.ID, bl.Schema.From, c.schema)
		}
		applySchemaEvent(c.rows, bl.Schema)
		c.schema = bl.Schema.To
	}
	for _, ch := range bl.Changes {
		key := bl.Commit.ID.String() + "/" + ch.Type + "/" + ch.ID
		if seen[key] {
			return fmt.Errorf("%s delivered twice", key)
		}
		seen[key] = true
		if ch.Op != feed.OpInsert {
			held, ok := c.rows[ch.Type][ch.ID]
			if !ok || !data.RowsEqual(held, *ch.Before) {
				return fmt.Errorf("%s %s %s: before %+v, consumer holds %+v", ch.Op, ch.Type, ch.ID, *ch.Before, held)
			}
		}
		if c.rows[ch.Type] == nil {
			c.rows[ch.Type] = map[string]data.Row{}
		}
		c.rows.apply(ch)
	}
	return nil
}

// TestReplayAcrossSchemaChanges is the replay property across schema
// changes: on random histories of writes, property renames, drops and
// adds, added and dropped types, and merges of a branch that changed its
// schema, a consumer that polls main from the beginning under random page
// limits — crashing at random and resuming from its last saved cursor on
// a fresh handle — sees each schema change once per delivery of its
// commit, in the commit's first block, from the schema it holds; every
// delete's and update's Before equals the row it holds (the row changes
// are in their commit's schema); no id twice in a commit between crashes;
// and it ends with exactly main's head rows and schema. Red while the feed
// refused a schema change, and without the event (a renamed property stays
// under its old name).
func TestReplayAcrossSchemaChanges(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cur := map[string]evoSchema{"main": {props: []string{"nick", "age"}}}
		g := initEvoGraph(t, cur["main"])
		genesis, err := g.SnapshotAt(ctx, branch(t, g, "main"))
		must(t, err)
		_, err = g.Kernel().CreateBranch(ctx, "dev", branch(t, g, "main"))
		must(t, err)
		cur["dev"] = cur["main"]
		mergeDev := func() {
			res, err := g.Merge(ctx, branch(t, g, "dev"), branch(t, g, "main"), kernel.LineageIntent{Actor: "test", Message: "merge"}, data.MergeOptions{})
			var mc *data.MergeConflictError
			if errors.As(err, &mc) {
				return
			}
			must(t, err)
			if res.Schema != "" {
				s, err := g.SnapshotAt(ctx, branch(t, g, "main"))
				must(t, err)
				cur["main"] = schemaOf(s.Schema())
			}
		}
		steps := rapid.IntRange(2, 10).Draw(rt, "steps")
		for i := range steps {
			b := "main"
			if rapid.Bool().Draw(rt, "on-dev") {
				b = "dev"
			}
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op <= 3:
				writeRows(rt, t, g, b, cur[b], i)
			case op <= 7:
				cur[b] = changeSchema(rt, t, g, b, cur[b])
			default:
				mergeDev()
			}
		}
		mergeDev()
		want, wantSchema := headRows(t, g, "main")
		got := consumeSchema(rt, t, g, genesis.Kernel().SchemaHash())
		if got.schema != wantSchema {
			rt.Fatalf("consumer ends at schema %.12s, head has %.12s", got.schema, wantSchema)
		}
		if d := sameModel(got.rows, want); d != "" {
			rt.Fatalf("replayed state differs from the head: %s", d)
		}
	})
}

// schemaOf reads an evoSchema back from a schema in force.
func schemaOf(s schema.Schema) evoSchema {
	var out evoSchema
	p, _ := s.Node("Person")
	for _, pr := range p.Props {
		if pr.Name != "name" {
			out.props = append(out.props, pr.Name)
		}
	}
	_, out.city = s.Node("City")
	return out
}

// writeRows commits inserts and updates of Persons (and a City) on b.
func writeRows(rt *rapid.T, t *testing.T, g *data.Graph, b string, s evoSchema, step int) {
	n := rapid.IntRange(1, 3).Draw(rt, "rows")
	var rows []data.Row
	for i := range n {
		id := fmt.Sprintf("p%d", rapid.IntRange(0, 5).Draw(rt, "id"))
		if slices.ContainsFunc(rows, func(r data.Row) bool { return r.ID == id }) {
			continue
		}
		props := map[string]any{"name": fmt.Sprintf("n%d-%d", step, i)}
		for _, p := range s.props {
			if rapid.Bool().Draw(rt, "set") {
				props[p] = fmt.Sprintf("%s%d", p, step)
			}
		}
		rows = append(rows, data.Row{ID: id, Props: props})
	}
	commitOn(t, g, b, func(tx *data.Txn) error {
		if err := tx.Upsert("Person", rows...); err != nil {
			return err
		}
		if s.city && rapid.Bool().Draw(rt, "city") {
			return tx.Upsert("City", data.Row{ID: fmt.Sprintf("x%d", step%3), Props: map[string]any{"name": fmt.Sprintf("c%d", step)}})
		}
		return nil
	})
}

// changeSchema applies a random schema change on b: rename, drop or add a
// Person property, add City, or drop it when empty.
func changeSchema(rt *rapid.T, t *testing.T, g *data.Graph, b string, s evoSchema) evoSchema {
	next := evoSchema{props: slices.Clone(s.props), city: s.city}
	pool := []string{"nick", "age", "handle", "email", "note"}
	var renames []schema.Rename
	switch op := rapid.IntRange(0, 3).Draw(rt, "schema-op"); {
	case op == 0 && len(next.props) > 0:
		i := rapid.IntRange(0, len(next.props)-1).Draw(rt, "rename")
		to := rapid.SampledFrom(pool).Draw(rt, "to")
		if slices.Contains(next.props, to) {
			return s
		}
		renames = []schema.Rename{{Type: "Person", From: next.props[i], To: to}}
		next.props[i] = to
	case op == 1 && len(next.props) > 0:
		i := rapid.IntRange(0, len(next.props)-1).Draw(rt, "drop")
		next.props = slices.Delete(next.props, i, i+1)
	case op == 2:
		name := rapid.SampledFrom(pool).Draw(rt, "add")
		if slices.Contains(next.props, name) {
			return s
		}
		next.props = append(next.props, name)
	default:
		if next.city {
			snap, err := g.SnapshotAt(ctx, branch(t, g, b))
			must(t, err)
			if n, err := snap.Count(ctx, "City"); err != nil || n > 0 {
				return s
			}
		}
		next.city = !next.city
	}
	applyOn(t, g, b, next, renames...)
	return next
}

// consumeSchema replays main's feed from the beginning, crashing at random.
func consumeSchema(rt *rapid.T, t *testing.T, g *data.Graph, genesisSchema string) schemaConsumer {
	lim := feed.Limits{MaxChanges: rapid.IntRange(1, 5).Draw(rt, "max-changes"),
		MaxBytes: rapid.IntRange(40, 400).Draw(rt, "max-bytes"), MaxCommits: rapid.IntRange(1, 3).Draw(rt, "max-commits")}
	state := schemaConsumer{rows: model{}, schema: genesisSchema}
	saved, savedCursor := state.clone(), ""
	pos := Beginning()
	f := New(g)
	seen := map[string]bool{}
	crashes := 0
	for polls := 0; polls < 2000; polls++ {
		p, err := f.Poll(ctx, "main", pos, feed.Filter{}, lim)
		if err != nil {
			rt.Fatalf("poll %d: %v", polls, err)
		}
		for _, bl := range p.Blocks {
			if err := state.apply(bl, seen); err != nil {
				rt.Fatalf("poll %d: %v", polls, err)
			}
		}
		if p.Cursor != "" {
			saved, savedCursor = state.clone(), p.Cursor
		}
		if p.CaughtUp {
			return state
		}
		pos = FromToken(p.Cursor + p.PageToken)
		if crashes < 3 && rapid.IntRange(0, 4).Draw(rt, "crash") == 0 {
			crashes++
			state, pos, seen = saved.clone(), Beginning(), map[string]bool{}
			if savedCursor != "" {
				pos = FromToken(savedCursor)
			}
			f = New(g)
		}
	}
	rt.Fatal("feed never caught up")
	return schemaConsumer{}
}

// TestSchemaChangeInCommitChangesAndDiff: a rename commit's changes are
// its SchemaChange alone (no row change); a merge commit that brings a
// branch's added property carries the change and the branch's rows under
// the merged schema; a Diff across both starts with the SchemaChange
// (steps from the first schema to the last) and reports rows in the last
// schema's names.
func TestSchemaChangeInCommitChangesAndDiff(t *testing.T) {
	s0 := evoSchema{props: []string{"nick"}}
	g := initEvoGraph(t, s0)
	commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Insert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "ann", "nick": "a"}}, person("p2", "bob"))
	})
	before, err := g.SnapshotAt(ctx, branch(t, g, "main"))
	must(t, err)
	_, err = g.Kernel().CreateBranch(ctx, "dev", branch(t, g, "main"))
	must(t, err)
	applyOn(t, g, "main", evoSchema{props: []string{"handle"}}, schema.Rename{Type: "Person", From: "nick", To: "handle"})
	rename := headCommit(t, g, "main")
	applyOn(t, g, "dev", evoSchema{props: []string{"nick", "email"}})
	commitOn(t, g, "dev", func(tx *data.Txn) error {
		return tx.Update("Person", data.Row{ID: "p2", Props: map[string]any{"name": "bob", "email": "b@x"}})
	})
	res, err := g.Merge(ctx, branch(t, g, "dev"), branch(t, g, "main"), kernel.LineageIntent{Actor: "test", Message: "merge"}, data.MergeOptions{})
	must(t, err)
	f := New(g)

	p, err := f.CommitChanges(ctx, rename, "", feed.Filter{}, feed.Limits{})
	must(t, err)
	if p.Schema == nil || stepText(p.Schema.Steps) != "rename-property Person.nick -> handle" || len(p.Changes) != 0 || p.Next != "" {
		t.Fatalf("rename commit: schema %v, changes %v", p.Schema, p.Changes)
	}
	_, chs, _ := allChanges(t, f, res.Commit.ID, feed.Filter{}, feed.Limits{MaxChanges: 1})
	if len(chs) != 1 || chs[0].ID != "p2" || chs[0].Op != feed.OpUpdate || chs[0].After.Props["email"] != "b@x" || chs[0].Before.Props["email"] != nil {
		t.Fatalf("merge commit changes: %+v", chs)
	}
	sc, err := f.CommitSchemaChange(ctx, res.Commit.ID)
	must(t, err)
	if sc == nil || stepText(sc.Steps) != "add-property Person.email" {
		t.Fatalf("merge commit's schema change: %+v", sc)
	}
	// The page holding the event and nothing else continues at the rows.
	p, err = f.CommitChanges(ctx, res.Commit.ID, "", feed.Filter{Types: []string{"Person"}}, feed.Limits{MaxChanges: 1})
	must(t, err)
	if p.Schema == nil || len(p.Changes) != 0 || p.Next == "" {
		t.Fatalf("first page of the merge: schema %v, %d changes, next %q", p.Schema, len(p.Changes), p.Next)
	}
	p, err = f.CommitChanges(ctx, res.Commit.ID, p.Next, feed.Filter{Types: []string{"Person"}}, feed.Limits{MaxChanges: 1})
	must(t, err)
	if p.Schema != nil || len(p.Changes) != 1 || p.Next != "" {
		t.Fatalf("second page of the merge: schema %v, %d changes, next %q", p.Schema, len(p.Changes), p.Next)
	}

	after, err := g.SnapshotAt(ctx, branch(t, g, "main"))
	must(t, err)
	dp := firstDiffPage(t, before, after)
	if dp.Schema == nil || stepText(dp.Schema.Steps) != "rename-property Person.nick -> handle; add-property Person.email" || !dp.Done {
		t.Fatalf("diff: schema %+v, done %v", dp.Schema, dp.Done)
	}
	if len(dp.Changes) != 1 || dp.Changes[0].Before.Props["handle"] != nil || dp.Changes[0].After.Props["email"] != "b@x" {
		t.Fatalf("diff changes: %+v", dp.Changes)
	}
	bp := firstDiffPage(t, after, before)
	if bp.Schema == nil || stepText(bp.Schema.Steps) != "drop-property Person.email; rename-property Person.handle -> nick" ||
		len(bp.Changes) != 0 {
		t.Fatalf("diff backwards: schema %+v, changes %+v", bp.Schema, bp.Changes)
	}
}

func headCommit(t testing.TB, g *data.Graph, b string) kernel.CommitID {
	t.Helper()
	s, err := g.SnapshotAt(ctx, branch(t, g, b))
	must(t, err)
	return s.Kernel().Head()
}

func stepText(steps []schema.Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.String())
	}
	return strings.Join(out, "; ")
}

// firstDiffPage is the first page, without limits, of the Diff from one
// snapshot to another.
func firstDiffPage(t *testing.T, from, to *data.Snapshot) DiffPage {
	t.Helper()
	d, err := Diff(from, to, feed.Filter{})
	must(t, err)
	dp, err := d.Next(ctx, feed.Limits{})
	must(t, err)
	return dp
}
