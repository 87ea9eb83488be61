package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// TestSchemaApplyDefaultsAndWidening: `schema apply` prints an added
// property's default and an int32 -> int64 widening, a required property
// with a default is added to a type with rows, exported rows written
// before it read the default, and a narrowing is refused by kind.
func TestSchemaApplyDefaultsAndWidening(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	dir := t.TempDir()
	file := func(name, text string) string { return writeFile(t, dir, name, text) }
	added := strings.Replace(testSchema, "age: int64?", "age: int64?  level: int64 @default(2)  rank: int32?", 1)
	out := f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", file("add.schema", added))
	if !strings.Contains(out, "add-property Person.level default 2") || !strings.Contains(out, "add-property Person.rank") {
		t.Fatalf("apply printed:\n%s", out)
	}
	exp := t.TempDir()
	f.mustRun(0, "export", f.spec, testRoot, "main", exp, "--format", "jsonl")
	rows, err := os.ReadFile(filepath.Join(exp, "Person.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(rows), `"level":2`); n == 0 || n != strings.Count(string(rows), "\n") {
		t.Fatalf("exported rows do not all read the default:\n%s", rows)
	}
	widened := strings.Replace(added, "rank: int32?", "rank: int64?", 1)
	out = f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", file("widen.schema", widened), "--dry-run")
	if !strings.Contains(out, "widen-property Person.rank int32 -> int64") {
		t.Fatalf("widening printed:\n%s", out)
	}
	f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", file("widen.schema", widened))
	_, _, errs := f.run("schema", "apply", f.spec, testRoot, "main", file("narrow.schema", added))
	if !strings.Contains(errs, "kind int64 cannot change to int32") {
		t.Fatalf("narrowing: %s", errs)
	}
}

// TestSchemaApplyDropRows: a dropped type with rows is refused, then
// dropped with --drop-rows, which prints how many rows went with it.
func TestSchemaApplyDropRows(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	next := writeFile(t, t.TempDir(), "drop.schema", strings.Replace(testSchema, "edge Knows:   Person -> Person\n", "", 1))
	if _, _, errs := f.run("schema", "apply", f.spec, testRoot, "main", next); !strings.Contains(errs, "dropped type is not empty") {
		t.Fatalf("drop without --drop-rows: %s", errs)
	}
	out := f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", next, "--drop-rows")
	if !strings.Contains(out, "drop-type Knows") || !strings.Contains(out, "Knows: 2 rows dropped with it") {
		t.Fatalf("apply --drop-rows printed:\n%s", out)
	}
	f.mustRun(0, "verify", f.spec, testRoot)
}

// TestExportLoadInt32: int32 values survive export (JSON Lines and
// Parquet) and load back into a graph with the same schema.
func TestExportLoadInt32(t *testing.T) {
	f := newFixture(t, "sim")
	g := f.buildGraph()
	withRank := strings.Replace(testSchema, "age: int64?", "age: int64?  rank: int32?", 1)
	f.mustRun(0, "schema", "apply", f.spec, testRoot, "main", writeFile(t, t.TempDir(), "rank.schema", withRank))
	f.commit(g, "main", "ranks", func(tx *data.Txn) error {
		return tx.Patch(context.Background(), "Person", data.Row{ID: "p1", Props: map[string]any{"rank": int32(-2147483648)}})
	})
	want := f.canonicalRows(testRoot)
	for _, format := range []string{"jsonl", "parquet"} {
		dir := t.TempDir()
		f.mustRun(0, "export", f.spec, testRoot, "main", dir, "--format", format)
		root := "int32-" + format
		args := append([]string{"load", f.spec, root, "main"}, globFiles(t, dir, "*."+format)...)
		f.mustRun(0, append(args, "--schema", filepath.Join(dir, "schema.gk"))...)
		if got := f.canonicalRows(root); strings.Join(got, "\n") != strings.Join(want, "\n") || !strings.Contains(strings.Join(got, "\n"), "-2147483648") {
			t.Fatalf("%s round trip:\nwant %s\ngot  %s", format, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
}
