package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var bigLoad = flag.Bool("gk.bigload", false, "TestLoadProgressLines loads 10^6 edges (default 2*10^4)")

// steppingClock is a command clock that moves one second per reading: a
// status line falls due every statusEvery readings, with no sleep.
func steppingClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// runMetered runs the command with a stepping clock, stderr a terminal or
// not, and status interval every (0: the default, 10 s of that clock).
func (f *fixture) runMetered(tty bool, every time.Duration, args ...string) (int, string, string) {
	f.t.Helper()
	var out, errb bytes.Buffer
	a := f.app(&out, &errb)
	a.now, a.tty, a.statusEvery = steppingClock(), tty, every
	code := a.run(context.Background(), args)
	return code, out.String(), errb.String()
}

// TestProgressOnEveryLongCommand: without a terminal, load, export, diff,
// changes, verify and maintain print periodic one-line status lines on
// stderr ("graphkernel CMD: ..."), never a carriage return, and stdout
// stays one JSON document; on a terminal they redraw one line in place
// and end by clearing it. The inputs are small, so the interval is 1 ns
// here (a line at every clock reading); TestLoadProgressLines runs the
// default interval.
func TestProgressOnEveryLongCommand(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	for _, tty := range []bool{false, true} {
		for _, args := range [][]string{
			{"load", f.spec, fmt.Sprintf("tty-%t", tty), "main", "testdata/people.jsonl", "--schema", "testdata/people.schema"},
			{"export", f.spec, testRoot, "main", t.TempDir()},
			{"diff", f.spec, testRoot, "main@1", "main"},
			{"changes", f.spec, testRoot, "main@2"},
			{"verify", f.spec, testRoot},
			{"maintain", f.spec, testRoot},
		} {
			code, out, errs := f.runMetered(tty, time.Nanosecond, append(args, "--json")...)
			if code != 0 || !json.Valid([]byte(out)) {
				t.Fatalf("%s: exit %d, stdout not one JSON document:\n%s\n%s", args[0], code, out, errs)
			}
			status := "graphkernel " + args[0] + ": "
			if !tty && (!strings.HasPrefix(errs, status) || strings.Contains(errs, "\r")) {
				t.Errorf("%s without a terminal: want status lines %q, got:\n%q", args[0], status, errs)
			}
			if tty && (!strings.Contains(errs, "\r\033[K") || !strings.HasSuffix(errs, "\r\033[K") || strings.Contains(errs, status)) {
				t.Errorf("%s on a terminal: want one redrawn line, got:\n%q", args[0], errs)
			}
		}
	}
}

var statusLine = regexp.MustCompile(`^graphkernel load: (\d+) rows, [0-9.]+ [kMG]?B of [0-9.]+ [kMG]?B \((\d+)%\), \d+ rows/s(, ETA \d+[hms0-9]*)?, \d+[hms0-9]* elapsed$`)

// TestLoadProgressLines loads a generated graph (10^4 nodes and 2*10^4
// edges; 10^5 nodes and 10^6 edges with -gk.bigload) through the command
// with stderr not a terminal, and checks the status lines: at least three,
// rows and percentage increasing, the ETA shown while the input is not
// consumed. The status interval is the default 10 s of a clock that
// moves one second per reading (no sleeps).
func TestLoadProgressLines(t *testing.T) {
	nodes, edges := 10_000, 20_000
	if *bigLoad {
		nodes, edges = 100_000, 1_000_000
	}
	dir := t.TempDir()
	nodeFile := writeGenerated(t, filepath.Join(dir, "Person.jsonl"), nodes, func(i int) string {
		return fmt.Sprintf(`{"id":"p%07d","name":"n%d","age":%d}`, i, i, i%90)
	})
	edgeFile := writeGenerated(t, filepath.Join(dir, "Knows.jsonl"), edges, func(i int) string {
		return fmt.Sprintf(`{"id":"k%08d","from":"p%07d","to":"p%07d"}`, i, i%nodes, (i*7+1)%nodes)
	})
	f := newFixture(t, "sim")
	code, out, errs := f.runMetered(false, 0, "load", f.spec, "big", "main", nodeFile, edgeFile,
		"--schema", "testdata/people.schema", "--batch-rows", strconv.Itoa(max(edges/4, 1000)), "--json")
	if code != 0 {
		t.Fatalf("load: exit %d\n%s", code, errs)
	}
	var rep loadReport
	decodeJSON(t, out, &rep)
	if rep.Rows != nodes+edges {
		t.Fatalf("loaded %d rows, want %d", rep.Rows, nodes+edges)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d status lines, want at least 3:\n%s", len(lines), errs)
	}
	lastRows, lastPct, etas := -1, -1, 0
	for _, l := range lines {
		m := statusLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a status line: %q", l)
		}
		rows, _ := strconv.Atoi(m[1])
		pct, _ := strconv.Atoi(m[2])
		if rows < lastRows || pct < lastPct {
			t.Fatalf("status went backwards: %q after %d rows, %d%%", l, lastRows, lastPct)
		}
		lastRows, lastPct = rows, pct
		if m[3] != "" {
			etas++
		}
	}
	if etas == 0 || lastRows == 0 {
		t.Fatalf("no ETA or no rows in the status lines:\n%s", errs)
	}
	t.Logf("%d rows, %d transactions, %d status lines; last: %s", rep.Rows, len(rep.Transactions), len(lines), lines[len(lines)-1])
}

// writeGenerated writes n lines line(0..n-1) to path.
func writeGenerated(t *testing.T, path string, n int, line func(int) string) string {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	for i := range n {
		w.WriteString(line(i))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
