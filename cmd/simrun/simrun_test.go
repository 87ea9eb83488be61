package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// TestMain lets -rerun re-execute this test binary as simrun's second
// process: invoked with the hidden child flag, it is simrun.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "-"+childFlag || os.Args[1] == "-"+writerFlag) {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// simrun runs the command in-process and returns its exit status and output.
func simrun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func decode(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, out)
	}
	return m
}

// issueKeys are the JSON key names the simulator issue fixes.
var issueKeys = []string{"seeds", "ops", "commits", "faults_injected", "crashes", "recoveries", "migrations", "cuts",
	"lin_checks", "lin_unknown", "violations", "sim_seconds", "wall_seconds", "failing_seeds"}

// TestJSONSummaryKeys pins the summary contract: every issue key, spelled
// exactly; deterministic only with -rerun, trace_hash only for one seed;
// failing_seeds a list.
func TestJSONSummaryKeys(t *testing.T) {
	code, out, errs := simrun(t, "-seeds", "10", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	m := decode(t, out)
	for _, k := range issueKeys {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	for _, k := range []string{"deterministic", "trace_hash"} {
		if _, ok := m[k]; ok {
			t.Errorf("key %q present without its condition", k)
		}
	}
	if fs, ok := m["failing_seeds"].([]any); !ok || len(fs) != 0 {
		t.Errorf("failing_seeds = %v, want an empty list", m["failing_seeds"])
	}
	if m["seeds"].(float64) != 10 || m["ops"].(float64) == 0 || m["lin_checks"].(float64) == 0 {
		t.Errorf("summary counts nothing: %v", m)
	}
	for _, k := range []string{"sim_wall_ratio", "seeds_per_minute"} {
		if m[k].(float64) <= 0 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
}

// TestSeedReplays pins -seed: one seed, run twice, reports the same
// trace_hash; another seed another one.
func TestSeedReplays(t *testing.T) {
	hash := func(seed string) string {
		code, out, errs := simrun(t, "-seed", seed, "-json")
		if code != 0 {
			t.Fatalf("seed %s: exit %d: %s%s", seed, code, out, errs)
		}
		h, _ := decode(t, out)["trace_hash"].(string)
		if len(h) != 64 {
			t.Fatalf("seed %s: trace_hash %q", seed, h)
		}
		return h
	}
	if a, b := hash("12"), hash("12"); a != b {
		t.Fatalf("seed 12 replayed to %s then %s", a, b)
	}
	if hash("12") == hash("13") {
		t.Fatal("seeds 12 and 13 share a trace hash")
	}
}

// TestRerunAcrossProcesses pins -rerun: every seed runs again in a second
// process (this binary, see TestMain) and the hashes agree.
func TestRerunAcrossProcesses(t *testing.T) {
	code, out, errs := simrun(t, "-seeds", "6", "-rerun", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if det, ok := decode(t, out)["deterministic"].(bool); !ok || !det {
		t.Fatalf("deterministic = %v\n%s", decode(t, out)["deterministic"], errs)
	}
}

// TestViolationArtifactsAndExit pins the failure path: a case that cannot
// converge (its quiet phase is a millisecond) exits 1 and leaves the seed,
// violations, case, trace and a shrunk reproduction that fails the same way.
func TestViolationArtifactsAndExit(t *testing.T) {
	dir := t.TempDir()
	c := "simcase v1\nworkload core\nseed 5\nfaults none\nphases 20s 1ms\nactor w0\n" +
		"  1s commit branch=main tables=t0\n  1s commit branch=main tables=t1\nactor r0\n  1s read branch=main tables=t0,t1\n"
	casePath := filepath.Join(dir, "case.txt")
	if err := os.WriteFile(casePath, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, errs := simrun(t, "-case", casePath, "-out", out, "-shrink-runs", "30")
	if code != 1 || !strings.Contains(stdout, "liveness") {
		t.Fatalf("exit %d, want 1 with a liveness violation:\n%s%s", code, stdout, errs)
	}
	got, _ := filepath.Glob(filepath.Join(out, "*", "*"))
	var names []string
	for _, g := range got {
		names = append(names, filepath.Base(g))
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "case.txt seed.txt shrunk.txt trace.txt violations.txt" {
		t.Fatalf("artifacts %v", names)
	}
	shrunk := filepath.Join(filepath.Dir(got[0]), "shrunk.txt")
	if code, stdout, _ := simrun(t, "-case", shrunk); code != 1 || !strings.Contains(stdout, "liveness") {
		t.Fatalf("shrunk case replays with exit %d:\n%s", code, stdout)
	}
}

// TestUsageErrors pins exit status 2 for bad invocations.
func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{"-workload", "nope"},
		{"-faults", "nope"},
		{"-store", "ftp://x"},
		{"-rerun", "-store", "fs:/tmp/x"},
		{"-plant", "no-such-bug"},
		{"-procs", "2"},
		{"-store", "s3test"},
		{"-procs", "-1", "-store", "fs:/tmp/x"},
		{"-procs", "2", "-store", "fs:/tmp/x", "-workload", "data"}, // no process version
		{"-procs", "2", "-store", "fs:/tmp/x", "-index-fanout", "1"},
		{"-procs", "2", "-store", "fs:/tmp/x", "-index-fanout", "-4"},
		{"-index-fanout", "4"}, // shapes -procs handles only
		{"extra"},
	}
	if !plant.Built {
		cases = append(cases, []string{"-plant", plant.ReparentOnce}) // planted bugs need -tags simplant
	}
	for _, args := range cases {
		if code, _, _ := simrun(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestProgressBar pins the bar's rendering (drawn only on a terminal).
func TestProgressBar(t *testing.T) {
	if got := bar(15, 30, 2, 10); got != "[#####.....] 15/30 seeds, 2 failing" {
		t.Fatalf("bar = %q", got)
	}
	if got := bar(7, 1<<31, 0, 10); got != "7 seeds, 0 failing" {
		t.Fatalf("unbounded bar = %q", got)
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Fatal("a buffer is not a terminal")
	}
}

// TestStatusLinesWithoutTerminal: with stdout not a terminal (here a
// buffer) simrun prints status lines on stderr: one at the first seed,
// then one every -status-every (1 ns here: a line per seed); stdout stays
// the JSON summary.
func TestStatusLinesWithoutTerminal(t *testing.T) {
	code, out, errs := simrun(t, "-seeds", "2", "-parallel", "1", "-json", "-status-every", "1ns")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	decode(t, out)
	for _, want := range []string{"simrun: 1/2 seeds, 0 failing, ", "simrun: 2/2 seeds, 0 failing, "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(errs, "ETA") || !strings.Contains(errs, "elapsed\n") {
		t.Errorf("status lines without an ETA or elapsed time:\n%s", errs)
	}
}
