package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// The CSV form of testdata/people.jsonl: one file per type, empty cell =
// null (but the empty string for a string property).
var peopleCSV = map[string]string{
	"Person.csv": "id,name,age,score,active,born,avatar\n" +
		"p1,Ann,41,9.5,true,1985-03-01T00:00:00Z,AAEC/w==\n" +
		"p2,\"Bob, \"\"the builder\"\"\",,-0.25,false,,\n" +
		"p3,Cécile,29,,,,\n" +
		"p4,,,,,,\n",
	"Company.csv": "id,name\nc1,Acme\nc2,Initech\n",
	"WorksAt.csv": "id,from,to,since\nw1,p1,c1,2020-01-15T09:30:00.123456789Z\nw2,p2,c2,\n",
	"Knows.csv":   "id,from,to\nk1,p1,p2\nk2,p2,p3\nk3,p3,p1\n",
}

const peopleRows = 4 + 2 + 2 + 3

func writeFiles(t *testing.T, dir string, files map[string]string) []string {
	t.Helper()
	var paths []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// canonicalRows reads every row of every type at branch main as canonical
// JSON lines (type, then the row's fields), sorted.
func (f *fixture) canonicalRows(root string) []string {
	f.t.Helper()
	return f.canonicalRowsOn(root, "main")
}

// canonicalRowsOn is canonicalRows at the head of branch.
func (f *fixture) canonicalRowsOn(root, branch string) []string {
	f.t.Helper()
	ctx := context.Background()
	g, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{ReadOnly: true, Env: f.env}})
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := g.Branch(ctx, branch)
	s, err := g.SnapshotAt(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, typ := range snapshotTypes(s) {
		rr, err := s.Scan(ctx, typ.Type)
		if err != nil {
			f.t.Fatal(err)
		}
		for rr.Next() {
			rec := rr.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				fields, err := arrowRow(rec, i)
				if err != nil {
					f.t.Fatal(err)
				}
				for k, v := range fields {
					fields[k] = textOf(v)
				}
				fields[colType] = typ.Type
				b, _ := json.Marshal(fields)
				out = append(out, string(b))
			}
		}
		rr.Release()
	}
	sort.Strings(out)
	return out
}

// TestLoadExportRoundTrip: for JSON Lines, CSV and Parquet input, load into
// a new graph, export, load the export into another new graph, verify it,
// and find the same rows in both (and the rows of testdata/people.jsonl).
func TestLoadExportRoundTrip(t *testing.T) {
	f := newFixture(t, "sim")
	schemaFile := filepath.Join("testdata", "people.schema")
	f.mustRun(0, "load", f.spec, "ref", "main", "testdata/people.jsonl", "--schema", schemaFile)
	want := f.canonicalRows("ref")
	if len(want) != peopleRows {
		t.Fatalf("reference load: %d rows, want %d", len(want), peopleRows)
	}
	parquetDir := t.TempDir()
	f.mustRun(0, "export", f.spec, "ref", "main", parquetDir, "--format", "parquet")
	inputs := map[string][]string{
		"jsonl":   {"testdata/people.jsonl"},
		"csv":     writeFiles(t, t.TempDir(), peopleCSV),
		"parquet": globFiles(t, parquetDir, "*.parquet"),
	}
	for _, in := range []string{"jsonl", "csv", "parquet"} {
		for _, out := range []string{"jsonl", "parquet"} {
			t.Run(in+"-"+out, func(t *testing.T) {
				g1, g2, dir := "g-"+in+"-"+out+"-1", "g-"+in+"-"+out+"-2", t.TempDir()
				args := append([]string{"load", f.spec, g1, "main"}, inputs[in]...)
				f.mustRun(0, append(args, "--schema", schemaFile)...)
				f.mustRun(0, "export", f.spec, g1, "main", dir, "--format", out)
				args = append([]string{"load", f.spec, g2, "main"}, globFiles(t, dir, "*."+out)...)
				f.mustRun(0, append(args, "--schema", filepath.Join(dir, "schema.gk"))...)
				f.mustRun(0, "verify", f.spec, g2)
				if got1, got2 := f.canonicalRows(g1), f.canonicalRows(g2); !equal(got1, want) || !equal(got2, want) {
					t.Fatalf("rows differ:\nwant %s\nload %s\nround trip %s", strings.Join(want, "\n"), strings.Join(got1, "\n"), strings.Join(got2, "\n"))
				}
			})
		}
	}
}

// TestExportArrowAndRefs: Arrow IPC export is one readable file per type
// with the table's rows, and export reads a commit or a version, not only
// a head.
func TestExportArrowAndRefs(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.buildGraph()
			var log []commitJSON
			decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "--json"), &log)
			for ref, persons := range map[string]int64{"main": 4, "main@1": 3, log[2].ID: 3, "feature": 4} {
				dir := t.TempDir()
				var rep exportReport
				decodeJSON(t, f.mustRun(0, "export", f.spec, testRoot, ref, dir, "--format", "arrow", "--json"), &rep)
				if len(rep.Types) != 4 {
					t.Fatalf("%s: %+v", ref, rep)
				}
				fh, err := os.Open(filepath.Join(dir, "Person.arrow"))
				if err != nil {
					t.Fatal(err)
				}
				r, err := ipc.NewFileReader(fh, ipc.WithAllocator(memory.DefaultAllocator))
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for i := 0; i < r.NumRecords(); i++ {
					rec, err := r.Record(i)
					if err != nil {
						t.Fatal(err)
					}
					n += rec.NumRows()
				}
				r.Close()
				fh.Close()
				if n != persons {
					t.Errorf("%s: Person.arrow holds %d rows, want %d", ref, n, persons)
				}
			}
		})
	}
}

func globFiles(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no %s in %s: %v", pattern, dir, err)
	}
	return m
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLoadRejectsAndResumes: a rejected row names its file and line; a load
// that fails part-way reports the transactions that committed; re-running
// the fixed input with --upsert completes, and a second --upsert run leaves
// the same rows.
func TestLoadRejectsAndResumes(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			dir := t.TempDir()
			schemaFile := filepath.Join("testdata", "people.schema")
			bad := writeFiles(t, dir, map[string]string{"Person.csv": "id,name,age\np1,Ann,1\np2,Bob,2\np3,Cy,x3\n"})
			code, out, errs := f.run("load", f.spec, "g", "main", bad[0], "--schema", schemaFile, "--batch-rows", "1")
			if code != 1 || !strings.Contains(errs, bad[0]+":4: rejected") || !strings.Contains(errs, `"age"`) ||
				!strings.Contains(out, "committed transaction 1") || strings.Contains(out, "committed transaction 2") {
				t.Fatalf("bad cell: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			// A rejection found at commit (a dangling edge) names its line too.
			dangling := writeFiles(t, dir, map[string]string{"Knows.jsonl": "{\"id\":\"k1\",\"from\":\"p1\",\"to\":\"p1\"}\n{\"id\":\"k9\",\"from\":\"p1\",\"to\":\"nobody\"}\n"})
			code, _, errs = f.run("load", f.spec, "g", "main", dangling[0])
			if code != 1 || !strings.Contains(errs, dangling[0]+":2: rejected") || !strings.Contains(errs, "endpoint") {
				t.Fatalf("dangling edge: exit %d\n%s", code, errs)
			}
			good := writeFiles(t, dir, map[string]string{"Person.csv": "id,name,age\np1,Ann,1\np2,Bob,2\np3,Cy,3\n"})
			f.mustRun(0, "load", f.spec, "g", "main", good[0], "--upsert", "--batch-rows", "2")
			first := f.canonicalRows("g")
			f.mustRun(0, "load", f.spec, "g", "main", good[0], "--upsert")
			if again := f.canonicalRows("g"); len(first) != 3 || !equal(first, again) {
				t.Fatalf("--upsert re-run changed rows:\n%v\n%v", first, again)
			}
			code, _, errs = f.run("load", f.spec, "g", "main", good[0])
			if code != 1 || !strings.Contains(errs, "already exists") {
				t.Fatalf("insert re-run: exit %d\n%s", code, errs)
			}
			f.mustRun(0, "verify", f.spec, "g")
		})
	}
}

// TestLoadSplitsAtTheByteLimit: rows that would push a transaction past
// the data plane's byte limit go into the next transaction; every row
// lands, and each transaction stays within the limit.
func TestLoadSplitsAtTheByteLimit(t *testing.T) {
	f := newFixture(t, "sim")
	var out, errb bytes.Buffer
	a := f.app(&out, &errb)
	a.limits = data.Limits{MaxBytes: 250} // two to three rows (each is charged 64 bytes besides its values)
	code := a.run(context.Background(), []string{"load", f.spec, "g", "main", "testdata/people.jsonl", "--schema", "testdata/people.schema", "--json"})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var rep loadReport
	decodeJSON(t, out.String(), &rep)
	if rep.Rows != peopleRows || len(rep.Transactions) < 3 {
		t.Fatalf("%d rows in %d transactions, want %d rows split in 3 or more", rep.Rows, len(rep.Transactions), peopleRows)
	}
	if got := f.canonicalRows("g"); len(got) != peopleRows {
		t.Fatalf("%d rows visible", len(got))
	}
}
