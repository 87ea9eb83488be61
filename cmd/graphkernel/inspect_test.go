package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
}

// TestInspect runs branches, log, show and schema over each backend against
// a history with a fork and a merge, in text and --json.
func TestInspect(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.buildGraph()
			before := f.store.Writes()

			var brs []branchJSON
			decodeJSON(t, f.mustRun(0, "branches", f.spec, testRoot, "--json"), &brs)
			if len(brs) != 2 || brs[0].Name != "feature" || brs[1].Name != "main" || brs[1].Depth != 3 || brs[1].Incarnation != 1 {
				t.Fatalf("branches: %+v", brs)
			}
			if out := f.mustRun(0, "branches", f.spec, testRoot); !strings.Contains(out, "feature") || !strings.Contains(out, brs[1].Head) {
				t.Fatalf("branches text:\n%s", out)
			}

			var log []commitJSON
			decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "main", "-n", "10", "--json"), &log)
			if len(log) != 4 {
				t.Fatalf("log: %d commits, want 4 (merge, more people, people, genesis)", len(log))
			}
			if log[0].Message != "merge feature" || len(log[0].Parents) != 2 || log[0].Marks[0] != "merge" || log[3].Kind != "genesis" {
				t.Fatalf("log: %+v", log)
			}
			text := f.mustRun(0, "log", f.spec, testRoot, "-n", "1")
			if !strings.Contains(text, "Merge:   "+log[0].Parents[0]+" "+log[0].Parents[1]) || !strings.Contains(text, "[merge]") {
				t.Fatalf("log text does not show both parents:\n%s", text)
			}
			if strings.Count(text, "commit ") != 1 {
				t.Fatalf("log -n 1 printed more than one commit:\n%s", text)
			}

			var sh showJSON
			decodeJSON(t, f.mustRun(0, "show", f.spec, testRoot, log[2].ID, "--json"), &sh)
			if sh.Commit.Message != "people" || rowsOf(sh, "Person") != 3 || rowsOf(sh, "Knows") != 2 || rowsOf(sh, "WorksAt") != 1 {
				t.Fatalf("show: %+v", sh)
			}
			decodeJSON(t, f.mustRun(0, "show", f.spec, testRoot, "feature", "--json"), &sh)
			if sh.Commit.Message != "feature person" || rowsOf(sh, "Person") != 4 {
				t.Fatalf("show feature: %+v", sh)
			}
			decodeJSON(t, f.mustRun(0, "show", f.spec, testRoot, "main@2", "--json"), &sh)
			if sh.Commit.Message != "more people" || rowsOf(sh, "Person") != 4 || sh.ManifestVersion != 2 {
				t.Fatalf("show main@2: %+v", sh)
			}
			if out := f.mustRun(0, "show", f.spec, testRoot, "main"); !strings.Contains(out, "Person") || !strings.Contains(out, "Merge:") {
				t.Fatalf("show text:\n%s", out)
			}
			f.mustRun(1, "show", f.spec, testRoot, "nosuch")

			if out := f.mustRun(0, "schema", f.spec, testRoot); !strings.HasPrefix(out, "graphkernel-schema v1\n") || !strings.Contains(out, "@card(0..1)") {
				t.Fatalf("schema:\n%s", out)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("inspect commands wrote %d objects", w-before)
			}
		})
	}
}

func rowsOf(s showJSON, typ string) uint64 {
	for _, t := range s.Types {
		if t.Type == typ {
			return t.Rows
		}
	}
	return 1 << 63
}

// TestUsage pins the conventions: -h prints an example and exits 0 on
// every subcommand, and bad command lines (on every subcommand: missing
// arguments, an unknown flag) exit 2.
func TestUsage(t *testing.T) {
	f := newFixture(t, "sim")
	for _, c := range commands() {
		code, _, errs := f.run(c.name, "-h")
		if code != 0 || !strings.Contains(errs, "example:\n  graphkernel "+c.name) || !strings.Contains(errs, "-json") {
			t.Errorf("%s -h: exit %d\n%s", c.name, code, errs)
		}
		// Missing arguments or an unknown flag: a usage error (2) on
		// every subcommand.
		for _, args := range [][]string{{c.name}, {c.name, f.spec, testRoot, "--no-such-flag"}} {
			if code, _, errs := f.run(args...); code != 2 || !strings.Contains(errs, "usage: graphkernel "+c.name) {
				t.Errorf("%q: exit %d, want 2 with the usage line\n%s", args, code, errs)
			}
		}
	}
	for _, args := range [][]string{
		{},
		{"nosuch"},
		{"branches"},
		{"branches", f.spec, testRoot, "extra"},
		{"log", f.spec, testRoot, "-n", "0"},
		{"log", f.spec, testRoot, "--bogus"},
		{"branches", "ftp://x", testRoot},
	} {
		if code, _, errs := f.run(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errs)
		}
	}
	if code, _, _ := f.run("help"); code != 0 {
		t.Errorf("help: exit %d", code)
	}
	// A missing graph is a failure (1), not a usage error.
	if code, _, errs := f.run("branches", f.spec, "nograph"); code != 1 || !strings.Contains(errs, "nograph") {
		t.Errorf("missing graph: exit %d\n%s", code, errs)
	}
}

// TestJSONEverySubcommand: every subcommand's --json prints one valid
// JSON document on stdout and nothing else (a subcommand added without a
// case here fails the test).
func TestJSONEverySubcommand(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	dir := t.TempDir()
	cases := map[string][]string{ //detlint:ordered (looked up by name)
		"branches": {"branches", f.spec, testRoot},
		"log":      {"log", f.spec, testRoot},
		"show":     {"show", f.spec, testRoot, "main"},
		"schema":   {"schema", f.spec, testRoot},
		"verify":   {"verify", f.spec, testRoot},
		"recover":  {"recover", f.spec, testRoot},
		"diff":     {"diff", f.spec, testRoot, "main@1", "main"},
		"changes":  {"changes", f.spec, testRoot, "main@2"},
		"merge":    {"merge", f.spec, testRoot, "feature", "main", "--dry-run"},
		"maintain": {"maintain", f.spec, testRoot},
		"load":     {"load", f.spec, "demo", "main", "testdata/people.jsonl", "--schema", "testdata/people.schema"},
		"export":   {"export", f.spec, testRoot, "main", dir},
		"branch":   {"branch", "create", f.spec, testRoot, "json-branch"},
	}
	cases[schemaApplyName] = []string{"schema", "apply", f.spec, testRoot, "main", writeFile(t, dir, "same.schema", testSchema)} // no step
	cases[schemaDiffName] = []string{"schema", "diff", f.spec, testRoot, "main@1", "feature"}
	for _, c := range commands() {
		args, ok := cases[c.name]
		if !ok {
			t.Errorf("%s: no --json case", c.name)
			continue
		}
		out := f.mustRun(0, append(args, "--json")...)
		if !json.Valid([]byte(out)) {
			t.Errorf("%s --json: not one JSON document:\n%s", c.name, out)
		}
	}
}
