package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// columnarSchema has every kind the columnar path parses and an edge
// with @card.
const columnarSchema = `
node Person { name: string  age: int64?  score: float64?  active: bool?  rank: int32? }
node City   { name: string }
edge Knows:   Person -> Person { since: int64? }
edge LivesIn: Person -> City @card(0..1)
`

// columnarPeople is a valid Person file: ids out of order, quoted cells,
// empty cells (null, or "" for the string property).
const columnarPeople = "id,name,age,score,active,rank\n" +
	"p3,Cécile,29,,,7\n" +
	"p1,Ann,41,9.5,true,1\n" +
	"p2,\"Bob, \"\"the builder\"\"\",,-0.25,false,\n" +
	"p4,,,,,\n" +
	"p5,Eve,33,1e3,1,-2\n" +
	"p6,NULL,50,0,0,3\n"

// TestLoadColumnarMatchesRows: the columnar CSV path loads what the row
// path loads — the same rows, the same transactions (rows, first and last
// location) — and a load it cannot finish stops with the same error and
// the same committed transactions (under a byte budget, transactions
// may cut elsewhere), for valid input under row and byte
// batching, --null-string, --upsert --replace, and rejections (a cell that
// does not parse, an empty or null id, an unknown column, a wrong field
// count, a duplicate id, a missing endpoint, a second city per person).
// It also checks the columnar path took the files it should (red if it
// stops taking them, or if it loads anything differently).
func TestLoadColumnarMatchesRows(t *testing.T) {
	knows := "id,from,to,since\nk2,p2,p1,2001\nk1,p1,p2,\nk3,p3,p5,1999\nk4,p5,p5,2020\n"
	lives := "id,from,to\nl1,p1,c1\nl2,p2,c2\nl3,p3,c1\n"
	cities := "id,name\nc2,Bern\nc1,Aarau\n"
	valid := map[string]string{"Person.csv": columnarPeople, "City.csv": cities, "Knows.csv": knows, "LivesIn.csv": lives}
	with := func(name, body string) map[string]string {
		m := map[string]string{}
		for k, v := range valid { //detlint:ordered copies a map
			m[k] = v
		}
		m[name] = body
		return m
	}
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		taken bool // the columnar path takes a file (else the row path reads every file)
	}{
		{"valid", valid, nil, true},
		{"batch-rows", valid, []string{"--batch-rows", "4"}, true},
		{"batch-bytes", valid, []string{"--batch-bytes", "700"}, true},
		{"null-string", with("Person.csv", columnarPeople+"p7,Ida,NULL,NULL,NULL,NULL\n"), []string{"--null-string", "NULL"}, true}, // p6's name: rejected
		{"null-string-valid", with("Person.csv", "id,name,age,score\np1,Al,,\np2,Bo,7,\np3,Cy,,2.5\np5,E,1,\n"), []string{"--null-string", ""}, true},
		{"bad-int", with("Person.csv", columnarPeople+"p7,Gus,old,,,\n"), nil, true},
		{"bad-int32", with("Person.csv", columnarPeople+"p7,Gus,,,,99999999999\n"), nil, true},
		{"empty-id", with("Person.csv", columnarPeople+",Hal,,,,\n"), nil, true},
		{"null-id", with("Person.csv", columnarPeople+"NIL,Hal,,,,\n"), []string{"--null-string", "NIL"}, true},
		{"unknown-column", with("City.csv", "id,name,zip\nc1,Aarau,5000\n"), nil, false}, // City.csv is read first: the load stops there
		{"field-count", with("Knows.csv", knows+"k9,p1\n"), nil, true},
		{"duplicate-id", with("Knows.csv", knows+"k1,p2,p3,\n"), nil, true},
		{"missing-endpoint", with("Knows.csv", knows+"k9,p1,p99,\n"), nil, true},
		{"card", with("LivesIn.csv", lives+"l9,p1,c2\n"), nil, true},
		{"second-batch-rejected", with("Knows.csv", knows+"k9,p1,p99,\n"), []string{"--batch-rows", "3"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			paths := writeFiles(t, t.TempDir(), c.files)
			schemaFile := filepath.Join(t.TempDir(), "s.schema")
			writeFiles(t, filepath.Dir(schemaFile), map[string]string{"s.schema": columnarSchema})
			run := func(columnar bool) (loadOutcome, int) {
				defer func(on bool) { columnarCSV, columnarTaken = on, nil }(columnarCSV)
				taken := 0
				columnarCSV, columnarTaken = columnar, func(string) { taken++ }
				return loadTwice(t, paths, schemaFile, c.args), taken
			}
			rows, _ := run(false)
			cols, taken := run(true)
			if (taken > 0) != c.taken {
				t.Errorf("the columnar path took %d files, want some: %v", taken, c.taken)
			}
			if slices.Contains(c.args, "--batch-bytes") {
				// Records are charged their buffers at once, rows one by
				// one: the transactions differ, what they load does not.
				rows.report, cols.report, rows.report2, cols.report2 = "", "", "", ""
			}
			if !rows.equal(cols) {
				t.Fatalf("columnar load differs from the row path:\nrow path: %+v\ncolumnar: %+v", rows, cols)
			}
		})
	}
}

// loadOutcome is what a load leaves: its exit code, its report without
// commit ids, the rows on main and (for an upsert over it) the second
// load's report and rows.
type loadOutcome struct {
	code, code2 int
	report      string
	report2     string
	rows, rows2 []string
}

func (o loadOutcome) equal(p loadOutcome) bool {
	return o.code == p.code && o.code2 == p.code2 && o.report == p.report && o.report2 == p.report2 &&
		slices.Equal(o.rows, p.rows) && slices.Equal(o.rows2, p.rows2)
}

// loadTwice loads paths into a new graph, then again with --upsert
// --replace (which must leave the same rows), and returns the outcome.
func loadTwice(t *testing.T, paths []string, schemaFile string, args []string) loadOutcome {
	f := newFixture(t, "sim")
	load := func(extra ...string) (int, string) {
		all := append([]string{"load", "--json", f.spec, "g", "main"}, paths...)
		all = append(append(append(all, "--schema", schemaFile), args...), extra...)
		code, out, _ := f.run(all...)
		var rep loadReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("load --json: %v\n%s", err, out)
		}
		var b strings.Builder
		for _, tx := range rep.Transactions {
			b.WriteString(strings.Join([]string{filepath.Base(tx.First), filepath.Base(tx.Last)}, ".."))
			b.WriteString(" " + itoa(tx.Rows) + "; ")
		}
		return code, b.String() + "rows " + itoa(rep.Rows) + " error " + stripDirs(rep.Error, paths)
	}
	var o loadOutcome
	o.code, o.report = load()
	o.rows = f.canonicalRows("g")
	o.code2, o.report2 = load("--upsert", "--replace")
	o.rows2 = f.canonicalRows("g")
	return o
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// stripDirs removes the temporary directory of the input files from msg.
func stripDirs(msg string, paths []string) string {
	for _, p := range paths {
		msg = strings.ReplaceAll(msg, filepath.Dir(p)+string(filepath.Separator), "")
	}
	return msg
}
