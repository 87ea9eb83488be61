package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// rowOf returns the canonical JSON line of typ id on main at root, or "".
func (f *fixture) rowOf(root, typ, id string) string {
	f.t.Helper()
	for _, r := range f.canonicalRows(root) {
		if strings.Contains(r, `"_type":"`+typ+`"`) && strings.Contains(r, `"id":"`+id+`"`) {
			return r
		}
	}
	return ""
}

// TestLoadUpsertPatchesByDefault: --upsert with a partial row changes only
// the columns it names (JSON Lines keys, CSV header columns; a named null
// sets null) and keeps the others; --upsert --replace replaces the whole
// row, nulling the columns it leaves out; --replace alone is a usage
// error.
func TestLoadUpsertPatchesByDefault(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			dir := t.TempDir()
			f.mustRun(0, "load", f.spec, "g", "main", "testdata/people.jsonl", "--schema", "testdata/people.schema")
			patch := writeFiles(t, dir, map[string]string{
				"a.jsonl":    `{"_type":"Person","id":"p1","name":"Ann B","age":77}` + "\n" + `{"_type":"Person","id":"p3","age":null}` + "\n",
				"Person.csv": "id,score\np2,1.5\n",
			})
			f.mustRun(0, "load", f.spec, "g", "main", patch[0], patch[1], "--upsert")
			p1 := f.rowOf("g", "Person", "p1")
			for _, want := range []string{`"name":"Ann B"`, `"age":77`, `"active":true`, `"score":9.5`, `"born":"1985-03-01T00:00:00Z"`, `"avatar":"AAEC/w=="`} {
				if !strings.Contains(p1, want) {
					t.Errorf("patched p1 lacks %s: %s", want, p1)
				}
			}
			if p2 := f.rowOf("g", "Person", "p2"); !strings.Contains(p2, `"score":1.5`) || !strings.Contains(p2, `"active":false`) || !strings.Contains(p2, `the builder`) {
				t.Errorf("CSV-patched p2: %s", p2)
			}
			if p3 := f.rowOf("g", "Person", "p3"); !strings.Contains(p3, `"age":null`) || !strings.Contains(p3, `"name":"Cécile"`) {
				t.Errorf("p3 with age patched to null: %s", p3)
			}
			replace := writeFiles(t, dir, map[string]string{"r.jsonl": `{"_type":"Person","id":"p1","name":"Ann C"}` + "\n"})
			f.mustRun(0, "load", f.spec, "g", "main", replace[0], "--upsert", "--replace")
			p1 = f.rowOf("g", "Person", "p1")
			for _, want := range []string{`"name":"Ann C"`, `"age":null`, `"active":null`, `"score":null`, `"born":null`, `"avatar":null`} {
				if !strings.Contains(p1, want) {
					t.Errorf("replaced p1 lacks %s: %s", want, p1)
				}
			}
			if code, _, errs := f.run("load", f.spec, "g", "main", replace[0], "--replace"); code != 2 || !strings.Contains(errs, "--upsert") {
				t.Errorf("--replace without --upsert: exit %d\n%s", code, errs)
			}
			if _, _, errs := f.run("load", "-h"); !strings.Contains(errs, "only the columns the row names change") || !strings.Contains(errs, "--replace") {
				t.Errorf("load -h does not say what --upsert does:\n%s", errs)
			}
			f.mustRun(0, "verify", f.spec, "g")
		})
	}
}

// TestLoadErrorHints: each load error gets its own hint, or none; only a
// duplicate id on insert mentions --upsert, and it says what --upsert
// changes; with --json the hint is in the error object.
func TestLoadErrorHints(t *testing.T) {
	f := newFixture(t, "sim")
	dir := t.TempDir()
	schemaFile := filepath.Join("testdata", "people.schema")
	f.mustRun(0, "load", f.spec, "g", "main", "testdata/people.jsonl", "--schema", schemaFile)
	writeFiles(t, dir, map[string]string{
		"Robot.jsonl":     `{"id":"r1"}` + "\n",
		"exists.jsonl":    `{"_type":"Person","id":"p1","name":"again"}` + "\n",
		"twice.jsonl":     `{"_type":"Person","id":"n1","name":"a"}` + "\n" + `{"_type":"Person","id":"n1","name":"b"}` + "\n",
		"dangling.jsonl":  `{"_type":"Knows","id":"k9","from":"p1","to":"nobody"}` + "\n",
		"badvalue.jsonl":  `{"_type":"Person","id":"n2","name":"a","age":"old"}` + "\n",
		"badcolumn.jsonl": `{"_type":"Person","id":"n3","name":"a","height":2}` + "\n",
		"card.jsonl":      `{"_type":"WorksAt","id":"w9","from":"p1","to":"c2"}` + "\n",
	})
	path := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		file, hint string // hint "" = no hint line
	}{
		{"Robot.jsonl", "graphkernel schema"},
		{"exists.jsonl", "load with --upsert (it changes only the columns each row names"},
		{"twice.jsonl", "twice within one transaction"},
		{"dangling.jsonl", "load the endpoint node first"},
		{"badvalue.jsonl", ""},
		{"badcolumn.jsonl", ""},
		{"card.jsonl", "@card bounds"},
	} {
		code, _, errs := f.run("load", f.spec, "g", "main", path(c.file))
		hints := strings.Count(errs, "hint:")
		switch {
		case code != 1:
			t.Errorf("%s: exit %d\n%s", c.file, code, errs)
		case c.hint == "" && hints != 0, c.hint != "" && (hints != 1 || !strings.Contains(errs, c.hint)):
			t.Errorf("%s: want hint %q, got:\n%s", c.file, c.hint, errs)
		case c.file != "exists.jsonl" && strings.Contains(errs, "--upsert"):
			t.Errorf("%s: suggests --upsert:\n%s", c.file, errs)
		}
	}
	// A load that stops on unreadable input after committing sayss a re-run
	// with --upsert finishes it (the committed rows are written unchanged).
	torn := writeFiles(t, t.TempDir(), map[string]string{"torn.jsonl": `{"_type":"Person","id":"t1","name":"a"}` + "\n" + `{"_type":"Person","id":"t2","name":"b"}` + "\n" + `{"_type":"Person","id":` + "\n"})
	code, _, errs := f.run("load", f.spec, "g", "main", torn[0], "--batch-rows", "1")
	if code != 1 || !strings.Contains(errs, "hint: 1 transaction(s) are committed; once the cause is fixed, re-running with --upsert finishes the load idempotently") {
		t.Errorf("torn input after one commit: exit %d\n%s", code, errs)
	}
	var e errorJSON
	var rep loadReport
	_, out, _ := f.run("load", f.spec, "g", "main", path("Robot.jsonl"), "--json")
	decodeJSON(t, out, &rep)
	if !strings.Contains(rep.Error, "Robot") {
		t.Errorf("load --json failure: %s", out)
	}
	_, out, _ = f.run("load", f.spec, "g", "nosuchbranch", path("Robot.jsonl"), "--json")
	decodeJSON(t, out, &e)
	if !strings.Contains(e.Error, "nosuchbranch") || !strings.Contains(e.Hint, "branch create") || e.Exit != 1 {
		t.Errorf("load --json on a missing branch: %s", out)
	}
}

// TestLoadNullString: CSV without --null-string loads an empty string
// cell as "" and an empty int cell as null; with --null-string NULL the
// cell NULL is null in every column kind (a string column too) and an
// empty string cell stays "".
func TestLoadNullString(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			dir := t.TempDir()
			schemaFile := filepath.Join("testdata", "people.schema")
			plain := writeFiles(t, dir, map[string]string{"Person.csv": "id,name,age\nq1,,\n"})
			f.mustRun(0, "load", f.spec, "g", "main", plain[0], "--schema", schemaFile)
			if r := f.rowOf("g", "Person", "q1"); !strings.Contains(r, `"name":""`) || !strings.Contains(r, `"age":null`) {
				t.Fatalf("default CSV nulls: %s", r)
			}
			nulls := writeFiles(t, t.TempDir(), map[string]string{"Company.csv": "id,name\nc7,\n", "WorksAt.csv": "id,from,to,since\nw7,q1,c7,NULL\n"})
			f.mustRun(0, "load", f.spec, "g", "main", nulls[0], nulls[1], "--null-string", "NULL")
			if r := f.rowOf("g", "WorksAt", "w7"); !strings.Contains(r, `"since":null`) {
				t.Fatalf("--null-string on a timestamp: %s", r)
			}
			if r := f.rowOf("g", "Company", "c7"); !strings.Contains(r, `"name":""`) {
				t.Fatalf("--null-string NULL: an empty string cell: %s", r)
			}
			patch := writeFiles(t, t.TempDir(), map[string]string{"Person.csv": "id,name,age\nq1,NULL,5\n"})
			code, _, errs := f.run("load", f.spec, "g", "main", patch[0], "--null-string", "NULL", "--upsert")
			if code != 1 || !strings.Contains(errs, "name") {
				t.Fatalf("null in a required string column: exit %d\n%s", code, errs)
			}
		})
	}
}
