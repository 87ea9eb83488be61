package workload

import (
	"fmt"
	"github.com/google/go-cmp/cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
	"github.com/graphkernel/graphkernel/sim/check"
)

// testOpts are the options of the package's runs: every checker on.
var testOpts = Options{}

// TestScenarioRoundTrip pins the case-file form: every generated scenario
// formats to text that parses back to an equal scenario.
func TestScenarioRoundTrip(t *testing.T) {
	for _, name := range Names() {
		w, _ := Lookup(name)
		if w.Generate == nil {
			continue
		}
		s := w.Generate(7, "default")
		back, err := Parse(strings.NewReader(s.String()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !cmp.Equal(s, back) {
			t.Fatalf("%s: round trip changed the scenario:\n%s\nvs\n%s\ndiff (-s +back):\n%s", name, s, back, cmp.Diff(s, back))
		}
	}
}

// TestRidingBudgetPerSeed: a workload with a RidingScale generates each
// seed's scenario with the riding budget ridingFor chooses (a pure
// function of the seed), every kind among seeds 1–12 — the format's
// maxima, a small manifest budget, a small version budget — and the case
// file keeps it ("riding V M"); a workload without one keeps the maxima.
func TestRidingBudgetPerSeed(t *testing.T) {
	w, _ := Lookup("contention")
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		s := w.Generate(seed, "default")
		if want := ridingFor(seed, w.RidingScale); s.Riding != want || w.Generate(seed, "default").Riding != want {
			t.Fatalf("seed %d: riding %+v, want %+v", seed, s.Riding, want)
		}
		switch {
		case s.Riding.ManifestBytes == 0:
			kinds["maxima"] = true
		case s.Riding.VersionBytes == 0:
			kinds["manifest"] = true
		default:
			kinds["version"] = true
		}
		back, err := Parse(strings.NewReader(s.String()))
		if err != nil || back.Riding != s.Riding || (s.Riding.ManifestBytes != 0) != strings.Contains(s.String(), "\nriding ") {
			t.Fatalf("seed %d: case file lost the riding budget %+v: %v", seed, s.Riding, err)
		}
	}
	if len(kinds) != 3 {
		t.Fatalf("seeds 1-12 chose only %v", kinds)
	}
	if c, _ := Lookup("core"); c.Generate(1, "default").Riding != (kernel.RidingBudget{}) {
		t.Fatal("core, which has no RidingScale, chose a riding budget")
	}
}

// TestParseRejects pins that malformed case files fail with the line.
func TestParseRejects(t *testing.T) {
	head := "simcase v1\nworkload core\nseed 1\nfaults none\nphases 1s 1s\n"
	cases := []struct{ name, text, want string }{
		{"no header", "workload core\n", "line 1"},
		{"unknown workload", "simcase v1\nworkload nope\nseed 1\nfaults none\nphases 1s 1s\n", "unknown workload"},
		{"op before actor", head + "  1s read branch=main\n", "line 6"},
		{"bad arg", head + "actor a\n  1s read branch\n", "line 7"},
		{"unknown op", head + "actor a\n  1s fly\n", "unknown op"},
		{"reserved name", head + "actor _init\n", "bad or repeated actor"},
		{"repeated name", head + "actor a\nactor a\n", "bad or repeated actor"},
		{"bad think", head + "actor a\n  soon read\n", "line 7"},
		{"bad clock", head + "actor a clock=late\n", "line 6"},
		{"clock out of bounds", head + "actor a clock=-25h\n", "clock offset"},
		{"zero quiet phase", "simcase v1\nworkload core\nseed 1\nfaults none\nphases 1s 0s\n", "out of bounds"},
		{"bad riding", head + "riding 10 lots\n", "line 6"},
		{"riding over the format", head + "riding 0 40000\n", "riding budget"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSameSeedSameRun pins determinism end to end: one scenario run twice
// gives the same trace hash and the same counts; two seeds differ.
func TestSameSeedSameRun(t *testing.T) {
	w, _ := Lookup("core")
	a := Execute(w.Generate(3, "heavy"), testOpts)
	b := Execute(w.Generate(3, "heavy"), testOpts)
	c := Execute(w.Generate(4, "heavy"), testOpts)
	if a.TraceHash != b.TraceHash || a.Ops != b.Ops || a.Commits != b.Commits || a.SimTime != b.SimTime {
		t.Fatalf("same seed, different runs: %x/%d/%d vs %x/%d/%d", a.TraceHash, a.Ops, a.Commits, b.TraceHash, b.Ops, b.Commits)
	}
	if a.TraceHash == c.TraceHash {
		t.Fatal("different seeds, same trace hash")
	}
}

// TestCleanRuns runs a few seeds of every workload under every fault
// profile: no violation, no Unknown verdict, and the runs must actually have
// injected faults, crashed and recovered processes, and checked partitions.
func TestCleanRuns(t *testing.T) {
	var faults uint64
	var crashes, recoveries, lin, commits int
	for _, name := range Names() {
		w, _ := Lookup(name)
		if w.Pending != "" || name == "mix" || w.Long {
			continue // mix only rotates the others; a long form is run by name
		}
		for _, prof := range []string{"none", "default", "heavy"} {
			for seed := uint64(1); seed <= 3; seed++ {
				r := Execute(w.Generate(seed, prof), testOpts)
				if r.Failed() || r.LinUnknown > 0 {
					t.Fatalf("%s/%s seed %d: %v", name, prof, seed, r.Violations)
				}
				faults += r.FaultsInjected
				crashes, recoveries, lin, commits = crashes+r.Crashes, recoveries+r.Recoveries, lin+r.LinChecks, commits+r.Commits
			}
		}
	}
	if faults == 0 || crashes == 0 || recoveries == 0 || lin == 0 || commits == 0 {
		t.Fatalf("runs exercised too little: faults %d crashes %d recoveries %d lin %d commits %d", faults, crashes, recoveries, lin, commits)
	}
}

// TestLivenessIsChecked pins that a run which cannot converge in its quiet
// phase is a violation: a quiet phase too short for the final commits.
func TestLivenessIsChecked(t *testing.T) {
	w, _ := Lookup("core")
	s := w.Generate(1, "none")
	s.QuietPhase = time.Millisecond
	r := Execute(s, testOpts)
	for _, v := range r.Violations {
		if v.Check == "liveness" {
			return
		}
	}
	t.Fatalf("no liveness violation: %v", r.Violations)
}

// TestShrinkMinimizes pins the shrinker on a synthetic failure: the run
// fails iff actor "b" still has an op with arg x=1; everything else goes.
func TestShrinkMinimizes(t *testing.T) {
	s := &Scenario{Workload: "core", Seed: 1, Faults: "none", FaultPhase: time.Minute, QuietPhase: time.Minute}
	for _, name := range []string{"a", "b", "c"} {
		a := ActorPlan{Name: name}
		for i := 0; i < 20; i++ {
			x := "0"
			if name == "b" && i == 13 {
				x = "1"
			}
			a.Ops = append(a.Ops, Op{Kind: "read", Args: map[string]string{"x": x}})
		}
		s.Actors = append(s.Actors, a)
	}
	run := func(c *Scenario) *Result {
		for _, a := range c.Actors {
			for _, op := range a.Ops {
				if a.Name == "b" && op.Arg("x") == "1" {
					return &Result{Violations: []check.Violation{{Check: "synthetic"}}}
				}
			}
		}
		return &Result{}
	}
	shrunk, _, runs := Shrink(s, run(s), 500, run)
	if len(shrunk.Actors) != 1 || shrunk.Actors[0].Name != "b" || len(shrunk.Actors[0].Ops) != 1 || shrunk.FaultPhase != 0 {
		t.Fatalf("shrunk to %s after %d runs", shrunk, runs)
	}
	if len(s.Actors) != 3 || s.Ops() != 60 {
		t.Fatal("Shrink modified its input")
	}
}

// TestRegressions replays every case under sim/testdata: each is a shrunk
// reproduction of a bug found once, and must stay clean.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression cases: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s := readCase(t, f)
			if r := Execute(s, testOpts); r.Failed() {
				t.Fatalf("regression: %v", r.Violations)
			}
		})
	}
}

func readCase(t *testing.T, path string) *Scenario {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRealStore runs one scaled-down core scenario and one data-group
// scenario (group commit among a service's real goroutines) on the
// filesystem store and on S3 (a real versitygw on 127.0.0.1) with real
// goroutines and time: same checkers, same porcupine. On fs it also runs
// the maint scenario, whose final zero-retention collection and leak check
// hold only if its grace, skew margin and leases shrink with the scenario's
// time scale (Run.margin).
func TestRealStore(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	stores := []struct {
		name string
		open func(t *testing.T) objstore.Store
	}{
		{"fs", func(t *testing.T) objstore.Store {
			st, err := fs.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"s3", func(t *testing.T) objstore.Store { return s3test.Shared(t).NewStore(t) }},
	}
	for _, sc := range stores {
		workloads := []string{"core", "data-group"}
		if sc.name == "fs" {
			workloads = append(workloads, "maint")
		}
		for _, wl := range workloads {
			name := sc.name
			if wl != "core" {
				name += "/" + wl
			}
			t.Run(name, func(t *testing.T) {
				w, _ := Lookup(wl)
				r := ExecuteReal(w.Generate(1, "none"), RealEnv{Store: sc.open(t), Root: "t/g", Clock: kernel.SystemEnv().Clock,
					Scale: 0.01, QuietBound: time.Minute}, testOpts)
				if r.Failed() || r.Commits == 0 || r.LinChecks == 0 || wl == "data-group" && r.Groups.Acked == 0 {
					t.Fatalf("commits %d lin %d groups %+v violations %v", r.Commits, r.LinChecks, r.Groups, r.Violations)
				}
				t.Logf("commits %d lin %d groups %+v", r.Commits, r.LinChecks, r.Groups)
			})
		}
	}
}

// TestMain stops the shared S3 test server after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := s3test.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "s3test.StopShared:", err)
	}
	os.Exit(code)
}

// The cuts workload reports the crashes and recoveries it really caused:
// every cut crashes a write or a recovery, and reopens resolve the
// sidecars its counter-named sweeps leave (its named sweeps, format 8,
// leave none: SweepCuts reports a sidecar there as a violation).
func TestCutsCountsCrashesAndRecoveries(t *testing.T) {
	w, ok := Lookup("cuts")
	if !ok {
		t.Fatal("no cuts workload")
	}
	r := Execute(w.Generate(1, "default"), Options{})
	if r.Failed() {
		t.Fatalf("cuts seed 1: %v", r.Violations)
	}
	if r.Crashes == 0 || r.Recoveries == 0 || r.Crashes > r.Cuts {
		t.Fatalf("cuts: crashes %d, recoveries %d, cuts %d: want crashes in 1..cuts and recoveries > 0", r.Crashes, r.Recoveries, r.Cuts)
	}
}

// TestSimulatedGraphsMixChunkForms: a data seed's processes write index
// chunks in both forms (jsonIndexChunks: JSON in about one process of
// four), so the final graph mixes JSON and binary chunks as a graph
// migrated from format 11 does, and every check runs over both. Red when
// every handle writes one form.
func TestSimulatedGraphsMixChunkForms(t *testing.T) {
	w, _ := Lookup("data")
	r := Execute(w.Generate(1, "default"), testOpts)
	if r.Failed() {
		t.Fatalf("data seed 1: %v", r.Violations[0])
	}
	if r.ChunkForms.JSON == 0 || r.ChunkForms.Binary == 0 {
		t.Fatalf("data seed 1 left index chunks %+v, want both forms", r.ChunkForms)
	}
}
