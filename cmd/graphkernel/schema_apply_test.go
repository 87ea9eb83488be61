package main

import (
	"encoding/json"
	"github.com/graphkernel/graphkernel/kernel/data"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaApply runs `schema apply`: a dry run prints the plan and
// publishes nothing; a rename and an add publish one commit that `schema`
// and `log` show; a refused tightening exits 1 naming the edges.
func TestSchemaApply(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	dir := t.TempDir()
	file := func(name, text string) string { return writeFile(t, dir, name, text) }
	next := file("next.schema", strings.Replace(testSchema, "age: int64?", "years: int64?  email: string?", 1))
	before := f.mustRun(0, "log", f.spec, testRoot, "main", "--json")
	out := f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person.age=years", "--dry-run")
	if !strings.Contains(out, "rename-property Person.age -> years") || !strings.Contains(out, "add-property Person.email") || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run printed:\n%s", out)
	}
	if after := f.mustRun(0, "log", f.spec, testRoot, "main", "--json"); after != before {
		t.Fatal("a dry run published")
	}
	var res schemaApplyJSON
	out = f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person.age=years", "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Commit == "" || res.From == res.To || len(res.Steps) != 2 {
		t.Fatalf("apply --json: %s (%v)", out, err)
	}
	if s := f.mustRun(0, "schema", f.spec, testRoot); !strings.Contains(s, "years: int64? @col(age)") {
		t.Fatalf("schema after apply:\n%s", s)
	}
	if l := f.mustRun(0, "log", f.spec, testRoot, "main", "-n", "1"); !strings.Contains(l, res.Commit) {
		t.Fatalf("log does not show the schema change %s:\n%s", res.Commit, l)
	}
	if out := f.mustRun(2, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person-age"); out != "" {
		t.Fatalf("bad --rename printed %q", out)
	}
	_, _, errs := f.run("schema", "apply", f.spec, testRoot, "main", file("bad.schema", strings.Replace(testSchema, "age: int64?", "years: string?  email: string?", 1)))
	if !strings.Contains(errs, "property years: kind int64 cannot change to string") {
		t.Fatalf("kind change: %s", errs)
	}
}

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyAfterBranchSchemaChange: a branch whose schema added a
// property (main's did not) and wrote it verifies clean, and so does main
// after a rename.
func TestVerifyAfterBranchSchemaChange(t *testing.T) {
	f := newFixture(t, "sim")
	g := f.buildGraph()
	f.mustRun(0, "branch", "create", f.spec, testRoot, "evo")
	next := writeFile(t, t.TempDir(), "next.schema", strings.Replace(testSchema, "age: int64?", "age: int64?  email: string?", 1))
	f.mustRun(0, "schema", "apply", f.spec, testRoot, "evo", next)
	f.commit(g, "evo", "email", func(tx *data.Txn) error {
		return tx.Upsert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "Ann", "email": "a@x"}})
	})
	f.mustRun(0, "verify", f.spec, testRoot)
	renamed := writeFile(t, t.TempDir(), "renamed.schema", strings.Replace(testSchema, "age: int64?", "years: int64?", 1))
	f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", renamed, "--rename", "Person.age=years")
	f.mustRun(0, "verify", f.spec, testRoot)
}
