package main

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// schemaDiffDoc is diff's and changes' --json document with its schema
// change.
type schemaDiffDoc struct {
	diffDoc
	Schema *schemaChangeJSON `json:"schema"`
}

// TestSchemaDiff: `schema diff` prints the steps between two refs' schemas
// (a rename by column, an add), says when they are one, and --json gives
// both schema ids; diff and changes work across the schema change,
// printing it before the rows, and the rows use the newer names. On sim
// and fs; nothing is written.
func TestSchemaDiff(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph()
			f.commit(g, "main", "age", func(tx *data.Txn) error {
				return tx.Upsert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "Ann", "age": int64(41)}})
			})
			next := writeFile(t, t.TempDir(), "next.schema", strings.Replace(testSchema, "age: int64?", "years: int64?  email: string?", 1))
			f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person.age=years")
			f.commit(g, "main", "years", func(tx *data.Txn) error {
				return tx.Upsert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "Ann", "years": int64(42)}})
			})
			before := f.store.Writes()

			out := f.mustRun(0, "schema", "diff", f.spec, testRoot, "main@4", "main")
			for _, want := range []string{"  rename-property Person.age -> years\n", "  add-property Person.email\n", "2 step(s)"} {
				if !strings.Contains(out, want) {
					t.Errorf("schema diff lacks %q:\n%s", want, out)
				}
			}
			var sd schemaDiffJSON
			decodeJSON(t, f.mustRun(0, "schema", "diff", f.spec, testRoot, "main@4", "main", "--json"), &sd)
			if !sd.Changed || sd.From.Schema == sd.To.Schema || sd.From.ManifestVersion != 4 || len(sd.Steps) != 2 {
				t.Errorf("schema diff --json: %+v", sd)
			}
			if out := f.mustRun(0, "schema", "diff", f.spec, testRoot, "main@5", "feature"); !strings.Contains(out, "drop-property Person.email") ||
				!strings.Contains(out, "rename-property Person.years -> age") {
				t.Errorf("schema diff backwards, across branches:\n%s", out)
			}
			if out := f.mustRun(0, "schema", "diff", f.spec, testRoot, "main@5", "main"); !strings.Contains(out, "schema unchanged") {
				t.Errorf("one schema:\n%s", out)
			}

			var d schemaDiffDoc
			decodeJSON(t, f.mustRun(0, "diff", f.spec, testRoot, "main@4", "main", "--json"), &d)
			if d.Schema == nil || len(d.Schema.Steps) != 2 || summary(d.Changes) != "update Person p1\n" ||
				len(d.Changes[0].Changed) != 1 || d.Changes[0].Changed[0] != (propChange{"years", float64(41), float64(42)}) {
				t.Errorf("diff --json across the change: %+v", d)
			}
			text := f.mustRun(0, "diff", f.spec, testRoot, "main@4", "main")
			for _, want := range []string{"(the changes below use the new schema)\n  rename-property Person.age -> years\n", `update Person p1 years: 41 -> 42`} {
				if !strings.Contains(text, want) {
					t.Errorf("diff text lacks %q:\n%s", want, text)
				}
			}
			var c schemaDiffDoc
			decodeJSON(t, f.mustRun(0, "changes", f.spec, testRoot, "main@5", "--json"), &c)
			if c.Schema == nil || len(c.Schema.Steps) != 2 || len(c.Changes) != 0 {
				t.Errorf("changes of the schema commit: %+v", c)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("schema diff, diff and changes wrote %d objects", w-before)
			}
			_, hout, herr := f.run("schema", "diff", "-h")
			if !strings.Contains(hout+herr, "graphkernel schema diff fs:/var/lib/graphs g1 main@3 feature --json") {
				t.Errorf("help lacks the example:\n%s%s", hout, herr)
			}
		})
	}
}
