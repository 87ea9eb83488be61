package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaApplyTypeRename: `schema apply --rename OLD=NEW` renames a
// type keeping its rows: the dry run prints the renamed type and
// publishes nothing; the change stores @table; show lists the rows under
// the new name; schema diff prints the rename; verify is clean.
func TestSchemaApplyTypeRename(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	next := writeFile(t, t.TempDir(), "next.schema", `
node Human   { name: string  age: int64?  score: float64?  active: bool?  born: timestamp?  avatar: bytes? }
node Company { name: string }
edge WorksAt: Human -> Company @card(0..1) { since: timestamp? }
edge Knows:   Human -> Human
`)
	before := f.mustRun(0, "log", f.spec, testRoot, "main", "--json")
	out := f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person=Human", "--dry-run")
	if !strings.Contains(out, "rename-type Person -> Human") || !strings.Contains(out, "dry run") || strings.Contains(out, "drop-type") {
		t.Fatalf("dry run printed:\n%s", out)
	}
	if after := f.mustRun(0, "log", f.spec, testRoot, "main", "--json"); after != before {
		t.Fatal("a dry run published")
	}
	f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person=Human")
	if s := f.mustRun(0, "schema", f.spec, testRoot); !strings.Contains(s, "node Human @table(Person) {") || !strings.Contains(s, "edge Knows: Human -> Human {") {
		t.Fatalf("schema after apply:\n%s", s)
	}
	var sh showJSON
	if err := json.Unmarshal([]byte(f.mustRun(0, "show", f.spec, testRoot, "main", "--json")), &sh); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ty := range sh.Types {
		if ty.Type == "Human" {
			found = ty.Pinned && ty.Rows > 0
		}
	}
	if !found {
		t.Fatalf("show: Human not pinned with rows: %+v", sh.Types)
	}
	if out := f.mustRun(0, "schema", "diff", f.spec, testRoot, "main@1", "main"); !strings.Contains(out, "rename-type Person -> Human") {
		t.Fatalf("schema diff:\n%s", out)
	}
	f.mustRun(0, "verify", f.spec, testRoot)
	if out := f.mustRun(2, "schema", "apply", f.spec, testRoot, "main", next, "--rename", "Person=Hu.man"); out != "" {
		t.Fatalf("bad --rename printed %q", out)
	}
}
