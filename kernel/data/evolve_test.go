package data

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// evoSchemaText is the schema the evolution tests start from.
const evoSchemaText = `
node Person  { name: string  age: int64? }
node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }
`

func parseSchema(t testing.TB, text string) schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return s
}

// evoGraph inits a graph with evoSchemaText on store and commits: Persons
// p1 (age 31), p2 (age 42), p3 (no age); Companies c1, c2; WorksAt w1
// p1->c1 (since 2001), w2 p1->c2, w3 p2->c1.
func evoGraph(t testing.TB, store objstore.Store) *Graph {
	t.Helper()
	g, err := Init(ctx, store, testRoot, parseSchema(t, evoSchemaText), Options{Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(
			tx.Insert("Person", Row{ID: "p1", Props: map[string]any{"name": "ann", "age": int64(31)}},
				Row{ID: "p2", Props: map[string]any{"name": "bob", "age": int64(42)}}, person("p3", "cy")),
			tx.Insert("Company", company("c1"), company("c2")),
			tx.Insert("WorksAt", Row{ID: "w1", From: "p1", To: "c1", Props: map[string]any{"since": int64(2001)}},
				edge("w2", "p1", "c2"), edge("w3", "p2", "c1")))
	})
	return g
}

// withSchema returns evoSchemaText with old replaced by new (once).
func withSchema(t testing.TB, old, new string) string {
	t.Helper()
	if !strings.Contains(evoSchemaText, old) {
		t.Fatalf("schema has no %q", old)
	}
	return strings.Replace(evoSchemaText, old, new, 1)
}

func apply(t testing.TB, g *Graph, text string, opts SchemaOptions) (SchemaChange, error) {
	t.Helper()
	return g.ApplySchema(ctx, mainRef(t, g), parseSchema(t, text), kernel.LineageIntent{Actor: "test", Message: "schema"}, opts)
}

// propOf reads one property of a row at the head ("<absent>" if the row is
// missing).
func propOf(t testing.TB, g *Graph, typ, id, prop string) any {
	t.Helper()
	r, ok, err := snap(t, g).Get(ctx, typ, id)
	must(t, err)
	if !ok {
		return "<absent>"
	}
	return r.Props[prop]
}

// scanProp reads prop of every row of typ through a Scan (the columnar
// path, a second decoder of the same fragments), as "id=value".
func scanProp(t testing.TB, g *Graph, typ, prop string) string {
	t.Helper()
	s := snap(t, g)
	rr, err := s.Scan(ctx, typ, schema.ColID, prop)
	must(t, err)
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
	must(t, rr.Err())
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestApplySchemaChanges pins each change kind: what it publishes, what
// old rows read through the new schema, and what it refuses.
func TestApplySchemaChanges(t *testing.T) {
	cases := []struct {
		name   string
		target func(t testing.TB) string
		opts   SchemaOptions
		want   error // nil: applied
		steps  string
		check  func(t *testing.T, g *Graph)
	}{
		{name: "add node type",
			target: func(t testing.TB) string { return evoSchemaText + "node City { name: string }\n" },
			steps:  "add-node City",
			check: func(t *testing.T, g *Graph) {
				commitTx(t, g, func(tx *Txn) error { return tx.Insert("City", Row{ID: "x1", Props: map[string]any{"name": "oslo"}}) })
				if got := scanProp(t, g, "City", "name"); got != "x1=oslo" {
					t.Fatalf("City rows %s", got)
				}
			}},
		{name: "add edge type",
			target: func(t testing.TB) string { return evoSchemaText + "edge Knows: Person -> Person\n" },
			steps:  "add-edge Knows",
			check: func(t *testing.T, g *Graph) {
				commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k1", "p1", "p2")) })
				out, err := snap(t, g).Out(ctx, "Knows", "p1")
				if err != nil || ids(out) != "k1" {
					t.Fatalf("Out = %s, %v", ids(out), err)
				}
			}},
		{name: "add nullable property reads null on old rows",
			target: func(t testing.TB) string {
				return withSchema(t, "age: int64? }", "age: int64?  email: string? }")
			},
			steps: "add-property Person.email",
			check: func(t *testing.T, g *Graph) {
				if got := scanProp(t, g, "Person", "email"); got != "p1=null,p2=null,p3=null" {
					t.Fatalf("email after add: %s", got)
				}
				if got := scanProp(t, g, "Person", "age"); got != "p1=31,p2=42,p3=null" {
					t.Fatalf("age after add: %s", got)
				}
				commitTx(t, g, func(tx *Txn) error {
					return tx.Upsert("Person", Row{ID: "p1", Props: map[string]any{"name": "ann", "email": "a@x"}})
				})
				if got := scanProp(t, g, "Person", "email"); got != "p1=a@x,p2=null,p3=null" {
					t.Fatalf("email after a write: %s", got)
				}
			}},
		{name: "drop property then re-add it: the old data never comes back",
			target: func(t testing.TB) string { return withSchema(t, "age: int64? }", "}") },
			steps:  "drop-property Person.age",
			check: func(t *testing.T, g *Graph) {
				if v := propOf(t, g, "Person", "p1", "age"); v != nil {
					t.Fatalf("dropped age reads %v", v)
				}
				tx := begin(t, g)
				if err := tx.Insert("Person", Row{ID: "p9", Props: map[string]any{"name": "z", "age": int64(1)}}); !errors.Is(err, ErrInvalidRow) {
					t.Fatalf("insert with a dropped property = %v, want ErrInvalidRow", err)
				}
				tx.Discard()
				ch, err := apply(t, g, withSchema(t, "age: int64? }", "age: string? }"), SchemaOptions{})
				must(t, err)
				if p, _ := ch.Plan.New.Node("Person"); p.Props[1].StorageColumn() == "age" {
					t.Fatalf("re-added age took the retired column: %+v", p)
				}
				if got := scanProp(t, g, "Person", "age"); got != "p1=null,p2=null,p3=null" {
					t.Fatalf("re-added age reads %s, want nulls (the old int64 column is retired)", got)
				}
			}},
		{name: "rename property keeps the data",
			target: func(t testing.TB) string { return withSchema(t, "age: int64? }", "years: int64? }") },
			opts:   SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}}},
			steps:  "rename-property Person.age -> years",
			check: func(t *testing.T, g *Graph) {
				if got := scanProp(t, g, "Person", "years"); got != "p1=31,p2=42,p3=null" {
					t.Fatalf("renamed years reads %s", got)
				}
				if v := propOf(t, g, "Person", "p2", "years"); v != int64(42) {
					t.Fatalf("Get years = %v", v)
				}
				commitTx(t, g, func(tx *Txn) error {
					return tx.Upsert("Person", Row{ID: "p3", Props: map[string]any{"name": "cy", "years": int64(7)}})
				})
				if got := scanProp(t, g, "Person", "years"); got != "p1=31,p2=42,p3=7" {
					t.Fatalf("years after a write: %s", got)
				}
			}},
		{name: "rename edge property keeps the data",
			target: func(t testing.TB) string { return withSchema(t, "since: int64?", "from_year: int64?") },
			opts:   SchemaOptions{Renames: []schema.Rename{{Type: "WorksAt", From: "since", To: "from_year"}}},
			steps:  "rename-property WorksAt.since -> from_year",
			check: func(t *testing.T, g *Graph) {
				out, err := snap(t, g).Out(ctx, "WorksAt", "p1") // through the adjacency pages
				must(t, err)
				if len(out) != 2 || out[0].Props["from_year"] != int64(2001) {
					t.Fatalf("Out after rename: %+v", out)
				}
			}},
		{name: "loosen a required property",
			target: func(t testing.TB) string {
				return withSchema(t, "node Company { name: string }", "node Company { name: string? }")
			},
			steps: "loosen-property Company.name",
			check: func(t *testing.T, g *Graph) {
				commitTx(t, g, func(tx *Txn) error { return tx.Insert("Company", Row{ID: "c9"}) })
				if got := scanProp(t, g, "Company", "name"); got != "c1=co c1,c2=co c2,c9=null" {
					t.Fatalf("names %s", got)
				}
			}},
		{name: "card tightening the data allows",
			target: func(t testing.TB) string { return withSchema(t, "-> Company {", "-> Company @card(0..2) {") },
			steps:  "recard WorksAt 0..* -> 0..2",
			check: func(t *testing.T, g *Graph) {
				tx := begin(t, g)
				must(t, tx.Insert("WorksAt", edge("w9", "p1", "c1")))
				if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrCardinality) {
					t.Fatalf("third edge of p1 under @card(0..2) = %v, want ErrCardinality", err)
				}
			}},
		{name: "card tightening violated by live edges is refused, naming them",
			target: func(t testing.TB) string { return withSchema(t, "-> Company {", "-> Company @card(0..1) {") },
			want:   ErrCardTightened,
			check: func(t *testing.T, g *Graph) {
				_, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(0..1) {"), SchemaOptions{})
				var re *SchemaRefusedError
				if !errors.As(err, &re) || !cmp.Equal(re.Nodes, []string{"p1"}) || !cmp.Equal(re.Edges, []string{"w1", "w2"}) {
					t.Fatalf("refusal %+v (%v), want node p1 with edges w1, w2", re, err)
				}
			}},
		{name: "card minimum raised above a node's edges is refused",
			target: func(t testing.TB) string { return withSchema(t, "-> Company {", "-> Company @card(1..*) {") },
			want:   ErrCardTightened,
			check: func(t *testing.T, g *Graph) {
				_, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(1..*) {"), SchemaOptions{})
				var re *SchemaRefusedError
				if !errors.As(err, &re) || !cmp.Equal(re.Nodes, []string{"p3"}) {
					t.Fatalf("refusal %+v, want node p3 (no edge)", re)
				}
			}},
		{name: "drop a type with rows is refused",
			target: func(t testing.TB) string {
				return withSchema(t, "edge WorksAt: Person -> Company { since: int64? }", "")
			},
			want: ErrTypeNotEmpty},
		{name: "drop an empty type",
			target: func(t testing.TB) string { return evoSchemaText },
			check: func(t *testing.T, g *Graph) {
				_, err := apply(t, g, evoSchemaText+"node City {}\n", SchemaOptions{})
				must(t, err)
				ch, err := apply(t, g, evoSchemaText, SchemaOptions{})
				must(t, err)
				if got := fmt.Sprint(ch.Plan.Steps); got != "[drop-type City]" || ch.Commit.ID == (kernel.CommitID{}) {
					t.Fatalf("steps %s commit %v", got, ch.Commit.ID)
				}
				if _, err := snap(t, g).Count(ctx, "City"); !errors.Is(err, ErrUnknownType) {
					t.Fatalf("City after drop: %v", err)
				}
			}},
		{name: "required property on a type with rows is refused",
			target: func(t testing.TB) string { return withSchema(t, "age: int64? }", "age: int64?  email: string }") },
			want:   ErrRequiredOnRows},
		{name: "kind change is refused",
			target: func(t testing.TB) string { return withSchema(t, "age: int64?", "age: string?") },
			want:   schema.ErrIncompatibleChange},
		{name: "nullable to required is refused",
			target: func(t testing.TB) string { return withSchema(t, "age: int64?", "age: int64") },
			want:   schema.ErrIncompatibleChange},
		{name: "no change publishes nothing",
			target: func(t testing.TB) string { return evoSchemaText },
			steps:  "",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
			before, err := g.Kernel().Head(ctx, mainRef(t, g))
			must(t, err)
			ch, err := apply(t, g, tc.target(t), tc.opts)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("apply = %v, want %v", err, tc.want)
				}
				if after, _ := g.Kernel().Head(ctx, mainRef(t, g)); after.ID != before.ID {
					t.Fatalf("a refused change published %v", after)
				}
			} else {
				must(t, err)
				var got []string
				for _, s := range ch.Plan.Steps {
					got = append(got, s.String())
				}
				if strings.Join(got, "; ") != tc.steps {
					t.Fatalf("steps %q, want %q", strings.Join(got, "; "), tc.steps)
				}
				after, err := g.Kernel().Head(ctx, mainRef(t, g))
				must(t, err)
				switch {
				case tc.steps == "" && (after.ID != before.ID || ch.From != ch.To):
					t.Fatalf("an empty change published %v", after)
				case tc.steps != "" && (after.ID != ch.Commit.ID || after.Parents[0] != before.ID || ch.From == ch.To):
					t.Fatalf("head %+v, want the change's one commit on %v", after, before.ID)
				case tc.steps != "" && snap(t, g).Kernel().SchemaHash() != ch.To:
					t.Fatalf("head schema %s, want %s", snap(t, g).Kernel().SchemaHash(), ch.To)
				}
			}
			if tc.check != nil {
				tc.check(t, g)
			}
		})
	}
}

// TestSchemaChangeKeepsOldVersionsReadable pins that a schema change is a
// point in history: the manifest before it still reads under the old
// schema, the one after under the new.
func TestSchemaChangeKeepsOldVersionsReadable(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	before := snap(t, g)
	_, err := apply(t, g, withSchema(t, "age: int64? }", "years: int64? }"), SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}}})
	must(t, err)
	old, err := g.SnapshotAtVersion(ctx, mainRef(t, g), before.Kernel().ManifestVersion())
	must(t, err)
	r, ok, err := old.Get(ctx, "Person", "p1")
	if err != nil || !ok || r.Props["age"] != int64(31) {
		t.Fatalf("old version reads %+v %v %v", r, ok, err)
	}
}

// TestTxnBegunBeforeSchemaChange pins the concurrency rule: a transaction
// begun under the old schema fails at commit with a retryable
// *kernel.SchemaChangedError naming both schema ids, and writes nothing.
func TestTxnBegunBeforeSchemaChange(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	tx := begin(t, g)
	must(t, tx.Insert("Person", person("p9", "zed")))
	ch, err := apply(t, g, withSchema(t, "age: int64? }", "age: int64?  email: string? }"), SchemaOptions{})
	must(t, err)
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	var sc *kernel.SchemaChangedError
	if !errors.As(err, &sc) || sc.Expected != ch.From || sc.Actual != ch.To || !sc.Retryable() {
		t.Fatalf("stale commit = %v, want SchemaChangedError %s -> %s", err, ch.From, ch.To)
	}
	if v := propOf(t, g, "Person", "p9", "name"); v != "<absent>" {
		t.Fatalf("the refused write is visible: %v", v)
	}
	if keys := kerneltest.Sidecars(g.store.(*sim.Store), testRoot); len(keys) != 0 {
		t.Fatalf("sidecars left: %v", keys)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("p9", "zed")) }) // the retry lands
}

// TestStaleTxnCannotBreakTightenedCard is the symptom the check exists
// for: a transaction begun under @card(0..*) adds a second edge of p2
// after the change to @card(0..1) landed. It must fail (schema changed);
// validated against its stale schema it would leave p2 with 2 edges.
func TestStaleTxnCannotBreakTightenedCard(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("WorksAt", "w2") })
	tx := begin(t, g)
	must(t, tx.Insert("WorksAt", edge("w9", "p2", "c2")))
	_, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(0..1) {"), SchemaOptions{})
	must(t, err)
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, kernel.ErrSchemaChanged) {
		t.Fatalf("stale commit = %v, want ErrSchemaChanged", err)
	}
	checkCardHolds(t, g, "WorksAt")
}

// checkCardHolds asserts every source node of edge type typ is within its
// @card at the head (the reference check: counts from a full scan).
func checkCardHolds(t testing.TB, g *Graph, typ string) {
	t.Helper()
	if v := cardViolation(t, g, typ); v != "" {
		t.Fatal(v)
	}
}

// cardViolation describes the first source node of typ outside its @card
// at the head, or "".
func cardViolation(t testing.TB, g *Graph, typ string) string {
	t.Helper()
	s := snap(t, g)
	sch := s.Schema()
	e, _ := sch.Edge(typ)
	n := map[string]uint64{}
	must(t, scanColumns(ctx, s, typ, []string{schema.ColID, schema.ColFrom}, func(v []string) { n[v[1]]++ }))
	for _, src := range sortedKeys(countSet(n)) {
		if !e.Card.Allows(n[src]) {
			return fmt.Sprintf("%s has %d %s edges under @card(%s)", src, n[src], typ, e.Card)
		}
	}
	return ""
}

func countSet(m map[string]uint64) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// TestConcurrentSchemaChanges pins "one wins, the other re-plans or is
// refused": handle A's change is planned, then handle B's lands before A
// writes its manifest (from A's publish failpoint, no goroutines).
func TestConcurrentSchemaChanges(t *testing.T) {
	cases := []struct {
		name    string
		a, b    string
		renames []schema.Rename
		want    error  // A's outcome
		final   string // Person props at the end
	}{
		{name: "compatible: A re-plans on B's schema",
			a: "age: int64?  email: string? }", b: "age: int64?  phone: string? }",
			final: "name,age,email"}, // A's target wins as a whole (phone dropped by A's re-plan)
		{name: "A renames what B dropped: refused",
			a: "years: int64? }", b: "}",
			renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}},
			want:    schema.ErrIncompatibleChange, final: "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			a := evoGraph(t, store)
			b := openGraph(t, store, 2)
			fps := failpoint.NewSet()
			ga, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(3, fps)}})
			must(t, err)
			_ = a
			fired := false
			fps.SetDecider(func(n failpoint.Name) (failpoint.Action, bool) {
				if n == failpoint.PublishBeforeWrite && !fired {
					fired = true
					if _, err := apply(t, b, withSchema(t, "age: int64? }", tc.b), SchemaOptions{}); err != nil {
						t.Errorf("B's change: %v", err)
					}
				}
				return failpoint.Action{}, false
			})
			_, err = apply(t, ga, withSchema(t, "age: int64? }", tc.a), SchemaOptions{Renames: tc.renames})
			if tc.want == nil {
				must(t, err)
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("A = %v, want %v", err, tc.want)
			}
			sch := snap(t, b).Schema()
			p, _ := sch.Node("Person")
			var names []string
			for _, pr := range p.Props {
				names = append(names, pr.Name)
			}
			if got := strings.Join(names, ","); got != tc.final || !fired {
				t.Fatalf("Person props %s (B ran: %v), want %s", got, fired, tc.final)
			}
		})
	}
}

// TestMergeCarriesSchemaChange: a schema change merges like any commit
// (S10): merging main's change into a branch that did nothing is a
// fast-forward whose commit names main's schema, and the branch's rows
// read through it; the other direction is already up to date.
func TestMergeCarriesSchemaChange(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	feature, err := g.Kernel().CreateBranch(ctx, "feature", mainRef(t, g))
	must(t, err)
	ch, err := apply(t, g, withSchema(t, "age: int64? }", "age: int64?  email: string? }"), SchemaOptions{})
	must(t, err)
	if res, err := g.Merge(ctx, feature, mainRef(t, g), kernel.LineageIntent{Actor: "test"}, MergeOptions{}); err != nil || res.Outcome != MergeAlreadyUpToDate {
		t.Fatalf("merge of an unchanged branch = %v, %v", res.Outcome, err)
	}
	res, err := g.Merge(ctx, mainRef(t, g), feature, kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	if err != nil || res.Outcome != MergeFastForward || res.Schema != ch.To {
		t.Fatalf("merge into the branch = %v (schema %s), %v; want a fast-forward to %s", res.Outcome, res.Schema, err, ch.To)
	}
	s, err := g.SnapshotAt(ctx, feature)
	must(t, err)
	if s.Kernel().SchemaHash() != ch.To {
		t.Fatalf("branch schema %s, want %s", s.Kernel().SchemaHash(), ch.To)
	}
	if r, ok, err := s.Get(ctx, "Person", "p1"); err != nil || !ok || r.Props["age"] != int64(31) || r.Props["email"] != nil {
		t.Fatalf("p1 on the branch = %v, %v, %v", r, ok, err)
	}
}

// TestApplySchemaExpectSchema: a change written for one schema
// (SchemaOptions.ExpectSchema) is refused with *kernel.SchemaChangedError,
// not re-planned, when the head names another, and nothing is published;
// on the schema it names it applies.
func TestApplySchemaExpectSchema(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	first := snap(t, g).Kernel().SchemaHash()
	_, err := apply(t, g, withSchema(t, "age: int64? }", "years: int64? }"),
		SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}}, ExpectSchema: first})
	must(t, err)
	before := snap(t, g).Kernel().Head()
	// Written for the first schema: on the renamed head it would drop years.
	_, err = apply(t, g, withSchema(t, "age: int64? }", "age: int64? email: string? }"), SchemaOptions{ExpectSchema: first})
	var sc *kernel.SchemaChangedError
	if !errors.As(err, &sc) || sc.Expected != first {
		t.Fatalf("apply on a changed schema = %v, want *SchemaChangedError expecting %s", err, first)
	}
	if snap(t, g).Kernel().Head() != before || propOf(t, g, "Person", "p1", "years") != int64(31) {
		t.Fatal("a refused change published")
	}
}
