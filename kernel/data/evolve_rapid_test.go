package data

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// emodel is the reference model of the schema-evolution state machine:
// Person's properties (nullable int64 or int32, in order, some with a
// default) and each person's values by property name, WorksAt edges (id
// -> source) and the WorksAt @card max (0: unbounded).
type emodel struct {
	props  []string
	kinds  map[string]string           // prop -> "int64" or "int32" (absent: int64)
	defs   map[string]int64            // prop -> its default, if it has one
	rows   map[string]map[string]int64 // person -> prop -> value (absent: null)
	edges  map[string]string           // WorksAt id -> from
	cardMx uint32
	person string          // the node type's name: Person, or Human after a type rename
	works  string          // the edge type's name: WorksAt, or Employs
	hasTag bool            // the schema has node Tag
	tags   map[string]bool // Tag ids
}

func (m *emodel) kind(p string) string {
	if k, ok := m.kinds[p]; ok {
		return k
	}
	return "int64"
}

// withProps returns a copy of m's schema part with props, kinds and
// defaults replaced (rows and edges shared).
func (m *emodel) withProps(props []string, kinds map[string]string, defs map[string]int64) *emodel {
	next := *m
	next.props, next.kinds, next.defs = props, kinds, defs
	return &next
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m { //detlint:ordered a copy
		out[k] = v
	}
	return out
}

func (m *emodel) text() string {
	var b strings.Builder
	b.WriteString("node " + m.person + " {")
	for _, p := range m.props {
		b.WriteString(" " + p + ": " + m.kind(p) + "?")
		if d, ok := m.defs[p]; ok {
			fmt.Fprintf(&b, " @default(%d)", d)
		}
	}
	b.WriteString(" }\nnode Company {}\nedge " + m.works + ": " + m.person + " -> Company")
	if m.cardMx != 0 {
		fmt.Fprintf(&b, " @card(0..%d)", m.cardMx)
	}
	b.WriteString("\n")
	if m.hasTag {
		b.WriteString("node Tag {}\n")
	}
	return b.String()
}

func (m *emodel) has(p string) bool {
	for _, q := range m.props {
		if q == p {
			return true
		}
	}
	return false
}

// out counts the WorksAt edges of each source.
func (m *emodel) out() map[string]uint32 {
	n := map[string]uint32{}
	for _, from := range m.edges { //detlint:ordered counts
		n[from]++
	}
	return n
}

func (m *emodel) cardAllows(mx uint32) bool {
	if mx == 0 {
		return true
	}
	for _, c := range m.out() { //detlint:ordered an all-check
		if c > mx {
			return false
		}
	}
	return true
}

var propPool = []string{"a", "b", "c", "d", "e"}
var personIDs = []string{"p0", "p1", "p2", "p3"}

// TestSchemaEvolutionStateMachine interleaves random schema changes (add
// a property, int64 or int32, with or without a default; drop, rename,
// widen int32 -> int64; refused: narrowing, changing a default; tighten or
// loosen @card; add a type, drop it with its rows — refused without
// SchemaOptions.DropRows — and re-add it empty; rename the node type
// Person <-> Human or the edge type WorksAt <-> Employs, keeping their
// rows and edges) with writes, stale
// transactions and reads on the sim store, against emodel: every read
// (Get and Scan) matches the model, a rename keeps values, a drop then
// re-add reads null (or its default), rows written before an add read its
// default, a widening keeps values, a refused @card tightening is exactly one the model's
// edges break, and a transaction begun before a change fails with
// ErrSchemaChanged and leaves nothing.
func TestSchemaEvolutionStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &emodel{props: []string{"a"}, person: "Person", works: "WorksAt", rows: map[string]map[string]int64{}, edges: map[string]string{}, tags: map[string]bool{}}
		g, err := Init(ctx, sim.New(sim.Config{Seed: 1}), testRoot, rparse(rt, m.text()), Options{Kernel: kernel.Options{Env: testEnv(1)}})
		rmust(rt, err)
		main := rmain(rt, g)
		rcommit(rt, g, func(tx *Txn) error { return tx.Insert("Company", Row{ID: "c"}) })
		var stale *Txn      // a transaction begun before the last schema change
		var staleRow string // the person it writes
		var edgeN int
		applyModel := func(rt *rapid.T, next *emodel, renames []schema.Rename, want error) {
			var types []schema.TypeRename // the model's type names that changed
			for _, r := range [][2]string{{m.person, next.person}, {m.works, next.works}} {
				if r[0] != r[1] {
					types = append(types, schema.TypeRename{From: r[0], To: r[1]})
				}
			}
			_, err := g.ApplySchema(ctx, main, rparse(rt, next.text()), kernel.LineageIntent{Actor: "sm"}, SchemaOptions{Renames: renames, TypeRenames: types})
			if !errors.Is(err, want) && !(want == nil && err == nil) {
				rt.Fatalf("apply %q: %v, want %v", next.text(), err, want)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"upsert": func(rt *rapid.T) {
				id := rapid.SampledFrom(personIDs).Draw(rt, "id")
				vals := map[string]int64{}
				props := map[string]any{}
				for _, p := range m.props {
					if rapid.Bool().Draw(rt, "set "+p) {
						v := rapid.Int64Range(-5, 5).Draw(rt, "v "+p)
						vals[p], props[p] = v, v
					}
				}
				rcommit(rt, g, func(tx *Txn) error { return tx.Upsert(m.person, Row{ID: id, Props: props}) })
				m.rows[id] = vals
			},
			"edge": func(rt *rapid.T) {
				from := rapid.SampledFrom(personIDs).Draw(rt, "from")
				if _, ok := m.rows[from]; !ok {
					rt.Skip("no such person")
				}
				edgeN++
				id := fmt.Sprintf("w%d", edgeN)
				tx, err := g.Begin(ctx, main)
				rmust(rt, err)
				rmust(rt, tx.Insert(m.works, edge(id, from, "c")))
				_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "sm"})
				ok := m.cardMx == 0 || m.out()[from] < m.cardMx
				switch {
				case ok && err != nil:
					rt.Fatalf("edge %s from %s: %v", id, from, err)
				case !ok && !errors.Is(err, ErrCardinality):
					rt.Fatalf("edge %s from %s over @card(0..%d): %v, want ErrCardinality", id, from, m.cardMx, err)
				case ok:
					m.edges[id] = from
				}
			},
			"begin-stale": func(rt *rapid.T) {
				if stale != nil || len(m.rows) == 0 {
					rt.Skip("one at a time")
				}
				tx, err := g.Begin(ctx, main)
				rmust(rt, err)
				staleRow = "p-stale"
				rmust(rt, tx.Insert(m.person, Row{ID: staleRow}))
				stale = tx
			},
			"add": func(rt *rapid.T) {
				p := rapid.SampledFrom(propPool).Draw(rt, "prop")
				if m.has(p) {
					rt.Skip("present")
				}
				kinds, defs := copyMap(m.kinds), copyMap(m.defs)
				kinds[p] = rapid.SampledFrom([]string{"int64", "int32"}).Draw(rt, "kind")
				if rapid.Bool().Draw(rt, "with default") {
					defs[p] = rapid.Int64Range(-3, 3).Draw(rt, "default")
				}
				next := m.withProps(append(append([]string(nil), m.props...), p), kinds, defs)
				applyModel(rt, next, nil, nil)
				m.props, m.kinds, m.defs = next.props, kinds, defs
				if d, ok := defs[p]; ok { // every row written before reads it
					for _, r := range m.rows { //detlint:ordered sets one key in each
						r[p] = d
					}
				}
				changed(rt, &stale, staleRow, g, m.person)
			},
			"drop": func(rt *rapid.T) {
				if len(m.props) == 0 {
					rt.Skip("none")
				}
				p := rapid.SampledFrom(m.props).Draw(rt, "prop")
				kinds, defs := copyMap(m.kinds), copyMap(m.defs)
				delete(kinds, p)
				delete(defs, p)
				var props []string
				for _, q := range m.props {
					if q != p {
						props = append(props, q)
					}
				}
				next := m.withProps(props, kinds, defs)
				applyModel(rt, next, nil, nil)
				m.props, m.kinds, m.defs = props, kinds, defs
				for _, r := range m.rows { //detlint:ordered deletes one key from each
					delete(r, p)
				}
				changed(rt, &stale, staleRow, g, m.person)
			},
			"rename": func(rt *rapid.T) {
				if len(m.props) == 0 {
					rt.Skip("none")
				}
				from := rapid.SampledFrom(m.props).Draw(rt, "from")
				to := rapid.SampledFrom(propPool).Draw(rt, "to")
				if m.has(to) {
					rt.Skip("target present")
				}
				props := append([]string(nil), m.props...)
				for i, q := range props {
					if q == from {
						props[i] = to
					}
				}
				kinds, defs := copyMap(m.kinds), copyMap(m.defs)
				if k, ok := kinds[from]; ok {
					kinds[to] = k
					delete(kinds, from)
				}
				if d, ok := defs[from]; ok {
					defs[to] = d
					delete(defs, from)
				}
				next := m.withProps(props, kinds, defs)
				applyModel(rt, next, []schema.Rename{{Type: m.person, From: from, To: to}}, nil)
				m.props, m.kinds, m.defs = props, kinds, defs
				for _, r := range m.rows { //detlint:ordered moves one key in each
					if v, ok := r[from]; ok {
						r[to] = v
						delete(r, from)
					}
				}
				changed(rt, &stale, staleRow, g, m.person)
			},
			"widen-or-narrow": func(rt *rapid.T) {
				if len(m.props) == 0 {
					rt.Skip("none")
				}
				p := rapid.SampledFrom(m.props).Draw(rt, "prop")
				kinds := copyMap(m.kinds)
				if m.kind(p) == "int64" { // narrowing: refused whatever the values
					kinds[p] = "int32"
					applyModel(rt, m.withProps(m.props, kinds, m.defs), nil, schema.ErrIncompatibleChange)
					return
				}
				kinds[p] = "int64"
				applyModel(rt, m.withProps(m.props, kinds, m.defs), nil, nil)
				m.kinds = kinds // values unchanged: int32 reads widened
				changed(rt, &stale, staleRow, g, m.person)
			},
			"redefault": func(rt *rapid.T) { // changing a kept property's default: refused
				if len(m.props) == 0 {
					rt.Skip("none")
				}
				p := rapid.SampledFrom(m.props).Draw(rt, "prop")
				defs := copyMap(m.defs)
				if d, ok := defs[p]; ok && rapid.Bool().Draw(rt, "remove") {
					delete(defs, p)
				} else {
					defs[p] = d + 1
				}
				applyModel(rt, m.withProps(m.props, m.kinds, defs), nil, schema.ErrIncompatibleChange)
			},
			"tag-type": func(rt *rapid.T) {
				next := *m
				next.hasTag = !m.hasTag
				if m.hasTag && len(m.tags) > 0 {
					applyModel(rt, &next, nil, ErrTypeNotEmpty)
					_, err := g.ApplySchema(ctx, main, rparse(rt, next.text()), kernel.LineageIntent{Actor: "sm"}, SchemaOptions{DropRows: true})
					rmust(rt, err)
				} else {
					applyModel(rt, &next, nil, nil)
				}
				m.hasTag, m.tags = next.hasTag, map[string]bool{}
				changed(rt, &stale, staleRow, g, m.person)
			},
			"tag": func(rt *rapid.T) {
				if !m.hasTag {
					rt.Skip("no Tag type")
				}
				id := fmt.Sprintf("t%d", rapid.IntRange(0, 3).Draw(rt, "tag"))
				rcommit(rt, g, func(tx *Txn) error { return tx.Upsert("Tag", Row{ID: id}) })
				m.tags[id] = true
			},
			"card": func(rt *rapid.T) {
				mx := rapid.Uint32Range(0, 2).Draw(rt, "max")
				if mx == m.cardMx {
					rt.Skip("same")
				}
				next := *m
				next.cardMx = mx
				if !m.cardAllows(mx) {
					applyModel(rt, &next, nil, ErrCardTightened)
					return
				}
				applyModel(rt, &next, nil, nil)
				m.cardMx = mx
				changed(rt, &stale, staleRow, g, m.person)
			},
			"retype": func(rt *rapid.T) {
				next := *m
				if rapid.Bool().Draw(rt, "node") {
					next.person = map[string]string{"Person": "Human", "Human": "Person"}[m.person]
				} else {
					next.works = map[string]string{"WorksAt": "Employs", "Employs": "WorksAt"}[m.works]
				}
				applyModel(rt, &next, nil, nil)
				m.person, m.works = next.person, next.works // rows and edges unchanged
				changed(rt, &stale, staleRow, g, m.person)
			},
			"commit-stale": func(rt *rapid.T) {
				if stale == nil {
					rt.Skip("none")
				}
				_, err := stale.Commit(ctx, kernel.LineageIntent{Actor: "sm"})
				stale = nil
				rmust(rt, err) // not outdated by a change (changed() settles those)
				m.rows[staleRow] = map[string]int64{}
				// drop it again so ids stay in personIDs' reach of the model
				rcommit(rt, g, func(tx *Txn) error { return tx.Delete(m.person, staleRow) })
				delete(m.rows, staleRow)
			},
			"": func(rt *rapid.T) { checkEvolved(rt, g, m) },
		})
	})
}

// changed settles a stale transaction after a schema change landed: its
// commit must fail with ErrSchemaChanged and leave nothing.
func changed(rt *rapid.T, stale **Txn, row string, g *Graph, person string) {
	if *stale == nil {
		return
	}
	_, err := (*stale).Commit(ctx, kernel.LineageIntent{Actor: "sm"})
	*stale = nil
	if !errors.Is(err, kernel.ErrSchemaChanged) {
		rt.Fatalf("transaction begun before a schema change: %v, want ErrSchemaChanged", err)
	}
	if _, ok, err := rsnap(rt, g).Get(ctx, person, row); err != nil || ok {
		rt.Fatalf("refused stale write visible: %v %v", ok, err)
	}
}

// checkEvolved compares the head with the model: the schema's Person
// properties, every row by Get, every property by Scan, the edges.
func checkEvolved(rt *rapid.T, g *Graph, m *emodel) {
	s := rsnap(rt, g)
	sch := s.Schema()
	p, ok := sch.Node(m.person)
	if !ok {
		rt.Fatalf("schema has no node type %s:\n%s", m.person, sch)
	}
	var names []string
	for _, pr := range p.Props {
		names = append(names, pr.Name)
	}
	if strings.Join(names, ",") != strings.Join(m.props, ",") {
		rt.Fatalf("Person props %v, model %v", names, m.props)
	}
	ids := sortedKeys(rowSet(m.rows))
	for _, id := range ids {
		r, ok, err := s.Get(ctx, m.person, id)
		if err != nil || !ok {
			rt.Fatalf("Get %s: %v %v", id, ok, err)
		}
		for _, pr := range m.props {
			want, has := m.rows[id][pr]
			got, set := r.Props[pr]
			if n, ok := got.(int32); ok {
				if m.kind(pr) != "int32" {
					rt.Fatalf("%s.%s is an int32 under kind %s", id, pr, m.kind(pr))
				}
				got = int64(n)
			}
			if has != (set && got != nil) || (has && got != want) {
				rt.Fatalf("%s.%s = %v (set %v), model %v (set %v)", id, pr, got, set, want, has)
			}
		}
	}
	for _, pr := range m.props {
		var want []string
		for _, id := range ids {
			v := "null"
			if x, ok := m.rows[id][pr]; ok {
				v = fmt.Sprint(x)
			}
			want = append(want, id+"="+v)
		}
		if got := scanPropOf(rt, s, m.person, pr); got != strings.Join(want, ",") {
			rt.Fatalf("scan %s: %s, model %s", pr, got, strings.Join(want, ","))
		}
	}
	if _, ok := sch.Node("Tag"); ok != m.hasTag {
		rt.Fatalf("schema has Tag: %v, model %v", ok, m.hasTag)
	}
	if m.hasTag {
		var tags []string
		rmust(rt, scanColumns(ctx, s, "Tag", []string{schema.ColID}, func(v []string) { tags = append(tags, v[0]) }))
		sort.Strings(tags)
		if got, want := strings.Join(tags, ","), strings.Join(sortedKeys(m.tags), ","); got != want {
			rt.Fatalf("Tag rows %s, model %s", got, want)
		}
	}
	var edges []string
	rmust(rt, scanColumns(ctx, s, m.works, []string{schema.ColID, schema.ColFrom}, func(v []string) { edges = append(edges, v[0]+">"+v[1]) }))
	sort.Strings(edges)
	var want []string
	for id, from := range m.edges { //detlint:ordered sorted next
		want = append(want, id+">"+from)
	}
	sort.Strings(want)
	if strings.Join(edges, ",") != strings.Join(want, ",") {
		rt.Fatalf("edges %v, model %v", edges, want)
	}
}

func rowSet(m map[string]map[string]int64) map[string]bool {
	out := map[string]bool{}
	for k := range m { //detlint:ordered a set
		out[k] = true
	}
	return out
}

// scanPropOf is scanProp on a given snapshot.
func scanPropOf(t fatalT, s *Snapshot, typ, prop string) string {
	t.Helper()
	rr, err := s.Scan(ctx, typ, schema.ColID, prop)
	rmust(t, err)
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			v := "null"
			if !rec.Column(1).IsNull(i) {
				v = rec.Column(1).ValueStr(i)
			}
			out = append(out, rec.Column(0).ValueStr(i)+"="+v)
		}
	}
	rmust(t, rr.Err())
	sort.Strings(out)
	return strings.Join(out, ",")
}

// fatalT is what the helpers below need of a *testing.T or *rapid.T
// (rapid.T is not a testing.TB).
type fatalT interface {
	Helper()
	Fatalf(format string, args ...any)
}

func rmust(t fatalT, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v", err)
	}
}

func rparse(t fatalT, text string) schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(text))
	rmust(t, err)
	return s
}

func rmain(t fatalT, g *Graph) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(ctx, "main")
	rmust(t, err)
	return b
}

func rsnap(t fatalT, g *Graph) *Snapshot {
	t.Helper()
	s, err := g.SnapshotAt(ctx, rmain(t, g))
	rmust(t, err)
	return s
}

func rcommit(t fatalT, g *Graph, f func(tx *Txn) error) {
	t.Helper()
	tx, err := g.Begin(ctx, rmain(t, g))
	rmust(t, err)
	rmust(t, f(tx))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "sm"})
	rmust(t, err)
}
