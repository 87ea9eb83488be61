package fuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/sim/workload"
)

// scenarioGen draws a small core-workload scenario: up to four processes,
// each a short program of commits (strict or not, on main or a side branch,
// on shared and own tables), reads, snapshots, branch changes, merges and
// reopens, under a drawn fault profile and seed.
func scenarioGen() *rapid.Generator[*workload.Scenario] {
	return rapid.Custom(func(t *rapid.T) *workload.Scenario {
		s := &workload.Scenario{
			Workload:   "core",
			Seed:       rapid.Uint64().Draw(t, "seed"),
			Faults:     rapid.SampledFrom([]string{"none", "default", "heavy"}).Draw(t, "faults"),
			FaultPhase: 30 * time.Second,
			QuietPhase: time.Minute,
		}
		for i, n := 0, rapid.IntRange(1, 4).Draw(t, "actors"); i < n; i++ {
			a := workload.ActorPlan{Name: fmt.Sprintf("a%d", i)}
			for k, m := 0, rapid.IntRange(1, 10).Draw(t, "ops"); k < m; k++ {
				a.Ops = append(a.Ops, opGen(i).Draw(t, "op"))
			}
			s.Actors = append(s.Actors, a)
		}
		return s
	})
}

var allTables = "t0,t1,t2,w0,w1,w2,w3"

func opGen(actor int) *rapid.Generator[workload.Op] {
	return rapid.Custom(func(t *rapid.T) workload.Op {
		branch := rapid.SampledFrom([]string{"main", "main", "b1"}).Draw(t, "branch")
		op := workload.Op{Think: time.Duration(rapid.IntRange(0, 3000).Draw(t, "think_ms")) * time.Millisecond,
			Args: map[string]string{}}
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0, 1, 2, 3:
			tables := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"t0", "t1", fmt.Sprintf("w%d", actor)}), 1, 2,
				func(s string) string { return s }).Draw(t, "tables")
			op.Kind, op.Args["branch"], op.Args["tables"] = "commit", branch, strings.Join(tables, ",")
			if rapid.Bool().Draw(t, "strict") {
				op.Args["strict"] = "1"
			}
		case 4, 5:
			op.Kind, op.Args["branch"], op.Args["tables"] = "read", branch, allTables
		case 6:
			op.Kind, op.Args["branch"], op.Args["at"] = "snap", branch, rapid.SampledFrom([]string{"head", "old"}).Draw(t, "at")
		case 7:
			op.Kind = rapid.SampledFrom([]string{"recheck", "reopen"}).Draw(t, "misc")
		case 8:
			op.Kind, op.Args["name"], op.Args["from"] = "create", "b1", "main"
		default:
			op.Kind = rapid.SampledFrom([]string{"delete", "merge"}).Draw(t, "branchop")
			if op.Kind == "delete" {
				op.Args["name"] = "b1"
			} else {
				op.Args["from"], op.Args["into"] = "b1", "main"
			}
		}
		return op
	})
}

// checkScenario runs a drawn scenario and fails with its replayable case.
func checkScenario(t *rapid.T) {
	s := scenarioGen().Draw(t, "scenario")
	if r := workload.Execute(s, workload.Options{}); r.Failed() {
		t.Fatalf("violations %v\nreplay with: go run ./cmd/simrun -case FILE, FILE =\n%s", r.Violations, s)
	}
}

// TestSimScenarios runs a few drawn scenarios as a plain test (rapid
// shrinks any failure to a small case).
func TestSimScenarios(t *testing.T) {
	rapid.Check(t, checkScenario)
}

// FuzzSimScenario is the op-sequence fuzz target over the simulator: the
// fuzzer's bytes drive the scenario generator.
func FuzzSimScenario(f *testing.F) {
	// rapid turns the bytes into draws and skips an input that runs out
	// before the scenario is complete, so the seeds are long streams from a
	// fixed PRNG: every one of them runs a whole scenario in plain go test.
	for i := range uint64(5) {
		f.Add(seedBytes(i, 1<<14))
	}
	f.Fuzz(rapid.MakeFuzz(checkScenario))
}

// seedBytes is a deterministic pseudo-random byte stream for a seed input.
func seedBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(r.Uint32())
	}
	return out
}
