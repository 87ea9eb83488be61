package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// TestReplayOfARealStoreNamesIt: a seed that failed on a real store
// (-store fs:DIR) must be replayed there, at the same -scale: the
// summary's replay line and the artifacts' seed.txt name both. They once
// named neither, so the replay they printed ran the simulator (the
// lifetime and maint leaks on fs, a scale artifact, replayed clean), and
// seed.txt pointed at a shrunk.txt that a real store's artifacts never
// hold (only the simulator shrinks).
func TestReplayOfARealStoreNamesIt(t *testing.T) {
	res := &workload.Result{Scenario: &workload.Scenario{Workload: "lifetime", Seed: 3, Faults: "default"},
		Violations: []check.Violation{{Check: "leak", Detail: "1 object"}}}
	c := &config{workload: "lifetime", faults: "default", store: "fs:/tmp/g", scale: 0.02, parallel: 1, shrinkRuns: 200}
	want := "./cmd/simrun -workload lifetime -faults default -seed 3 -store fs:/tmp/g -scale 0.02"

	var out bytes.Buffer
	writeTable(&out, summarize(c, []outcome{{seed: 3, res: res}}, time.Second, false))
	if !strings.Contains(out.String(), want+" -out DIR") {
		t.Errorf("summary's replay line does not name the store and scale (want %q):\n%s", want, out.String())
	}

	dir := t.TempDir()
	var errb bytes.Buffer
	if err := seedArtifacts(c, nil, outcome{seed: 3, res: res}, dir, &errb); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "seed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "replay: go run "+want+"\n") {
		t.Errorf("seed.txt's replay line does not name the store and scale (want %q):\n%s", want, b)
	}
	if strings.Contains(string(b), "shrunk") {
		t.Errorf("seed.txt names a shrunk case a real store's artifacts do not hold:\n%s", b)
	}

	// The simulator's lines stay as they were.
	c.store = "sim"
	out.Reset()
	writeTable(&out, summarize(c, []outcome{{seed: 3, res: res}}, time.Second, false))
	if !strings.Contains(out.String(), "./cmd/simrun -workload lifetime -faults default -seed 3 -out DIR\n") {
		t.Errorf("simulator's replay line changed:\n%s", out.String())
	}
}
