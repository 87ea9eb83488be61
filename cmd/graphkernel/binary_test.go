package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryQuickStart builds the command and runs the README's quick
// start against an fs store: load the shipped example, log, verify; and
// checks the exit statuses a script sees (0 ok, 1 problems, 2 usage).
func TestBinaryQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "graphkernel")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	store := "fs:" + filepath.Join(t.TempDir(), "graphs")
	run := func(want int, args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("graphkernel %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
		}
		return string(out)
	}
	if out := run(0, "load", store, "demo", "main", "testdata/people.jsonl", "--schema", "testdata/people.schema"); !strings.Contains(out, "loaded 11 rows") {
		t.Fatalf("load:\n%s", out)
	}
	if out := run(0, "log", store, "demo"); !strings.Contains(out, "load testdata/people.jsonl") || !strings.Contains(out, "[genesis]") {
		t.Fatalf("log:\n%s", out)
	}
	if out := run(0, "verify", store, "demo"); !strings.Contains(out, "ok: no problems") {
		t.Fatalf("verify:\n%s", out)
	}
	run(1, "verify", store, "nosuchgraph")
	run(2, "verify", store)
}
