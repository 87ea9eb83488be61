package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBatchesByBytes: --batch-bytes is the transaction byte budget:
// the load commits a transaction whenever the next row would pass it, so
// more rows per transaction fit as the budget grows, every row lands, and
// a row larger than the budget stops the load with a hint naming the flag.
func TestLoadBatchesByBytes(t *testing.T) {
	var body strings.Builder
	body.WriteString("id,name\n")
	for i := range 200 {
		fmt.Fprintf(&body, "p%03d,%s\n", i, strings.Repeat("n", 20))
	}
	cases := []struct {
		budget  string
		minTxns int
		maxTxns int
	}{
		{"1000", 7, 200}, // about 130 estimated bytes a row: 7 rows a transaction
		{"4000", 2, 12},
		{"1000000", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.budget, func(t *testing.T) {
			f := newFixture(t, "sim")
			files := writeFiles(t, t.TempDir(), map[string]string{"Person.csv": body.String()})
			var out, errb bytes.Buffer
			code := f.app(&out, &errb).run(context.Background(), []string{"load", f.spec, "g", "main", files[0],
				"--schema", filepath.Join("testdata", "people.schema"), "--batch-bytes", c.budget, "--json"})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errb.String())
			}
			var rep loadReport
			decodeJSON(t, out.String(), &rep)
			if rep.Rows != 200 || len(rep.Transactions) < c.minTxns || len(rep.Transactions) > c.maxTxns {
				t.Fatalf("%d rows in %d transactions, want 200 in %d..%d", rep.Rows, len(rep.Transactions), c.minTxns, c.maxTxns)
			}
		})
	}
	f := newFixture(t, "sim")
	code, _, errs := f.run("load", f.spec, "g", "main", writeFiles(t, t.TempDir(), map[string]string{"Person.csv": body.String()})[0],
		"--schema", filepath.Join("testdata", "people.schema"), "--batch-bytes", "30")
	if code != 1 || !strings.Contains(errs, "Person.csv:2: rejected") || !strings.Contains(errs, "byte budget of 30 bytes") || !strings.Contains(errs, "--batch-bytes") {
		t.Fatalf("row over the budget: exit %d\n%s", code, errs)
	}
}

// TestLoadLocatesRejectionInLaterBatch: with no per-row location map, a
// row rejected at commit in the fourth transaction (after the nodes and two of edges) is still named by its
// line (the input is read again to find it).
func TestLoadLocatesRejectionInLaterBatch(t *testing.T) {
	f := newFixture(t, "sim")
	dir := t.TempDir()
	nodes := "id,name\np1,Ann\np2,Bob\n"
	edges := "id,from,to\nk1,p1,p2\nk2,p2,p1\nk3,p1,p1\nk4,p2,p2\nk5,p1,nobody\nk6,p2,p1\n"
	files := writeFiles(t, dir, map[string]string{"Person.csv": nodes, "Knows.csv": edges})
	code, out, errs := f.run(append([]string{"load", f.spec, "g", "main"}, append(files, "--schema", filepath.Join("testdata", "people.schema"), "--batch-rows", "2")...)...)
	if code != 1 || !strings.Contains(errs, files[0]+":6: rejected") || !strings.Contains(out, "committed transaction 3") || strings.Contains(out, "committed transaction 4") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
