package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestErrorsNameContextOnce: a missing branch or ref is named once in the
// error, not once per wrapping layer.
func TestErrorsNameContextOnce(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	for _, args := range [][]string{
		{"show", f.spec, testRoot, "nosuchref"},
		{"diff", f.spec, testRoot, "main", "nosuchref"},
		{"schema", "diff", f.spec, testRoot, "main", "nosuchref"},
		{"log", f.spec, testRoot, "nosuchref"},
		{"load", f.spec, testRoot, "nosuchref", "testdata/people.jsonl"},
		{"merge", f.spec, testRoot, "nosuchref", "main"},
		{"export", f.spec, testRoot, "nosuchref", t.TempDir()},
		{"branch", "delete", f.spec, testRoot, "nosuchref"},
	} {
		code, _, errs := f.run(args...)
		line, _, _ := strings.Cut(errs, "\n")
		if code != 1 || strings.Count(line, "nosuchref") != 1 || !strings.Contains(line, "branch not found") {
			t.Errorf("%q: exit %d, want the ref named once:\n%s", args, code, errs)
		}
	}
	code, _, errs := f.run("show", f.spec, testRoot, "nosuchref@3")
	if line, _, _ := strings.Cut(errs, "\n"); code != 1 || strings.Count(line, `"nosuchref@3"`) != 1 || strings.Count(line, `"nosuchref"`) != 1 {
		t.Errorf("BRANCH@VERSION of a missing branch: %s", errs)
	}
}

// TestJSONFailures: with --json, every subcommand's failure (exit 1) or
// usage error (exit 2) prints one JSON object with an "error" field on
// stdout (a subcommand without a case fails the test).
func TestJSONFailures(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	cases := map[string][]string{ //detlint:ordered (looked up by name)
		"branches": {"branches", f.spec, "nograph"},
		"log":      {"log", f.spec, testRoot, "nosuch"},
		"show":     {"show", f.spec, testRoot, "nosuch"},
		"schema":   {"schema", f.spec, "nograph"},
		"verify":   {"verify", f.spec, testRoot, "--keep-last", "0"},
		"recover":  {"recover", f.spec, "nograph"},
		"diff":     {"diff", f.spec, testRoot, "main", "nosuch"},
		"changes":  {"changes", f.spec, testRoot, "nosuch"},
		"merge":    {"merge", f.spec, testRoot, "nosuch", "main"},
		"maintain": {"maintain", f.spec, "nograph"},
		"load":     {"load", f.spec, testRoot, "nosuch", "testdata/people.jsonl"},
		"export":   {"export", f.spec, testRoot, "nosuch", t.TempDir()},
		"branch":   {"branch", "create", f.spec, testRoot, "feature"},
	}
	cases[schemaApplyName] = []string{"schema", "apply", f.spec, testRoot, "nosuch", writeFile(t, t.TempDir(), "s.schema", testSchema)}
	cases[schemaDiffName] = []string{"schema", "diff", f.spec, testRoot, "main", "nosuch"}
	for _, c := range commands() {
		args, ok := cases[c.name]
		if !ok {
			t.Errorf("%s: no --json failure case", c.name)
			continue
		}
		code, out, _ := f.run(append(args, "--json")...)
		var obj map[string]any
		if code == 0 || json.Unmarshal([]byte(out), &obj) != nil || obj["error"] == nil || obj["error"] == "" {
			t.Errorf("%s --json failure: exit %d, stdout not an object with an error:\n%s", c.name, code, out)
		}
	}
	// A usage error too.
	code, out, _ := f.run("log", f.spec, testRoot, "-n", "0", "--json")
	var e errorJSON
	if err := json.Unmarshal([]byte(out), &e); code != 2 || err != nil || e.Exit != 2 || !strings.Contains(e.Error, "-n 0") {
		t.Errorf("usage error with --json: exit %d\n%s", code, out)
	}
}

// TestVersionAndHelp: --version prints the build's version; every
// subcommand's help lists its flags in the --flag form the README uses.
func TestVersionAndHelp(t *testing.T) {
	f := newFixture(t, "sim")
	for _, arg := range []string{"--version", "version"} {
		code, out, _ := f.run(arg)
		if code != 0 || !strings.HasPrefix(out, "graphkernel ") || !strings.Contains(out, "go1.") {
			t.Errorf("%s: exit %d: %q", arg, code, out)
		}
	}
	for _, c := range commands() {
		_, _, errs := f.run(c.name, "-h")
		if !strings.Contains(errs, "\n  --json\n") || strings.Contains(errs, "\n  -json") {
			t.Errorf("%s -h: want --json, not -json:\n%s", c.name, errs)
		}
	}
	_, _, errs := f.run("merge", "-h")
	if !strings.Contains(errs, "fast-forward is not a pointer move") || !strings.Contains(errs, "two parents") {
		t.Errorf("merge -h does not say a fast-forward writes a two-parent commit:\n%s", errs)
	}
}

// TestStoreRootFromEnvironment: when the argument where STORE belongs is
// not a store spec, STORE is $GRAPHKERNEL_STORE and ROOT is
// $GRAPHKERNEL_ROOT if set (else that argument); an explicit STORE wins
// over the environment; an unset variable is a usage error naming it.
func TestStoreRootFromEnvironment(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	run := func(env map[string]string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		a := f.app(&out, &errb)
		a.getenv = func(k string) string { return env[k] }
		code := a.run(context.Background(), args)
		return code, out.String(), errb.String()
	}
	both := map[string]string{envStore: f.spec, envRoot: testRoot}
	storeOnly := map[string]string{envStore: f.spec}
	wrong := map[string]string{envStore: "fs:/nonexistent-gk", envRoot: "nograph"}
	for _, c := range []struct {
		name     string
		env      map[string]string
		args     []string
		want     int
		contains string
	}{
		{"both from env", both, []string{"log", "feature", "-n", "1"}, 0, "feature person"},
		{"both from env, no optional arg", both, []string{"log", "-n", "1"}, 0, "merge feature"},
		{"store from env, root given", storeOnly, []string{"log", testRoot, "feature", "-n", "1"}, 0, "feature person"},
		{"explicit store wins", wrong, []string{"log", f.spec, testRoot, "feature", "-n", "1"}, 0, "feature person"},
		{"branch action before store", both, []string{"branch", "create", "fromenv"}, 0, "created branch fromenv"},
		{"diff", both, []string{"diff", "main@1", "main", "--limit", "1"}, 0, "diff main@1 main"},
		{"unset", nil, []string{"log", testRoot}, 2, envStore},
		{"missing everything", nil, []string{"branches"}, 2, "usage"},
	} {
		code, out, errs := run(c.env, c.args...)
		if code != c.want || !strings.Contains(out+errs, c.contains) {
			t.Errorf("%s: %q: exit %d (want %d), want %q\nstdout:\n%s\nstderr:\n%s", c.name, c.args, code, c.want, c.contains, out, errs)
		}
	}
}
