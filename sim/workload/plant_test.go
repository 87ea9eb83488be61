//go:build simplant

package workload

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// maxPlantSeeds is the bound: each planted bug must be caught within
// this many seeds of the workload it belongs to.
const maxPlantSeeds = 500

// controlSeeds is how many seeds, from 1, the control run replays with the
// plant off (besides the seed that caught it).
const controlSeeds = 20

// plantChecks names, for each planted bug, the checks whose violation is
// the symptom that bug must cause. Another violation does not count as
// catching it: a plant caught only by an unrelated failure proves nothing
// about the checker meant for it. stamp-first makes a migrated graph
// unreadable, which the migrate workload reports as a kernel error.
var plantChecks = map[string][]string{
	plant.DoubleAudit:          {"cuts"},
	plant.PrivatePlan:          {"cuts"},
	plant.IgnoreLostAck:        {"failed-commit-visible"},
	plant.ReparentOnce:         {"linear-chain"},
	plant.StaleCard:            {"cardinality"},
	plant.AdjShortIn:           {"read-consistency"},
	plant.UpsertKeepsRow:       {"reads-vs-model"},
	plant.PageSkip:             {"reads-vs-model"},
	plant.StampFirst:           {"kernel-error", "lineage", "format"},
	plant.TrustCommitIndex:     {"cold-lookup"},
	plant.ReachDropsMerge:      {"cold-lookup"},
	plant.ReachDropsBase:       {"cold-lookup"},
	plant.SkipForkMarker:       {"delete-dependents"},
	plant.FeedSkip:             {"feed-replay"},
	plant.TwoWayMerge:          {"merge-result"},
	plant.CompactDropsWrite:    {"lost-write"},
	plant.GCNoGrace:            {"retained-readable"},
	plant.GCBranchLocal:        {"retained-readable"},
	plant.GCNoMergeBase:        {"merge-base-kept"},
	plant.SkewUnchecked:        {"clock-skew"},
	plant.TombstoneReuse:       {"recreated-name"},
	plant.PinLeaseReadOnce:     {"pin-held"},
	plant.StaleViewCommit:      {"linear-chain"},
	plant.StaleSchemaValidate:  {"schema-card"},
	plant.RenameAsDrop:         {"schema-rename"},
	plant.CardTightenUnchecked: {"schema-card"},
	plant.GroupSharedFailure:   {"group-isolation", "failed-commit-visible"},
}

// TestPlantedBugsCaught proves the checkers can fail: with each planted
// kernel bug switched on, some seed of its workload (from 1, at most 500)
// reports a violation of the check meant for that bug, and the same seeds
// with the plant off are clean (the control run), so the catch is the
// plant's doing.
func TestPlantedBugsCaught(t *testing.T) {
	for _, name := range plant.All() {
		t.Run(name, func(t *testing.T) {
			w, ok := ForPlant(name)
			if !ok {
				t.Fatalf("no workload lists planted bug %s", name)
			}
			want, ok := plantChecks[name]
			if !ok {
				t.Fatalf("plantChecks has no expected check for planted bug %s", name)
			}
			caught := catchSeed(t, w, name, want)
			if caught == 0 {
				t.Fatalf("%s not caught by %v in %d seeds of %s (is its hook in the kernel?)", name, want, maxPlantSeeds, w.Name)
			}
			for _, seed := range controlRun(caught) {
				if r := Execute(w.Generate(seed, "default"), testOpts); r.Failed() {
					t.Fatalf("control run: %s seed %d fails with no plant on: %v", w.Name, seed, r.Violations[0])
				}
			}
		})
	}
}

// controlRun lists the seeds replayed with the plant off: the first
// controlSeeds, and the seed that caught the plant (the catch must be the
// plant's doing there). The seeds between them reported nothing the plant's
// check looks for, so replaying them proves nothing more and only costs time.
func controlRun(caught uint64) []uint64 {
	seeds := make([]uint64, 0, controlSeeds+1)
	for seed := uint64(1); seed <= controlSeeds; seed++ {
		seeds = append(seeds, seed)
	}
	if caught > controlSeeds {
		seeds = append(seeds, caught)
	}
	return seeds
}

// catchSeed returns the first seed (1..maxPlantSeeds) at which w, with the
// planted bug name on, reports a violation of one of the checks want, or 0.
func catchSeed(t *testing.T, w *Workload, name string, want []string) uint64 {
	t.Helper()
	if err := plant.Enable(name); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	for seed := uint64(1); seed <= maxPlantSeeds; seed++ {
		r := Execute(w.Generate(seed, "default"), testOpts)
		for _, v := range r.Violations {
			if slices.Contains(want, v.Check) {
				t.Logf("caught by %s seed %d: %v", w.Name, seed, v)
				return seed
			}
		}
	}
	return 0
}

// TestPlantedRegressionsFail replays every regression case that names a
// planted bug ("# plant: NAME"): with that bug on, the case must fail, so
// the case really pins the bug it was shrunk from.
func TestPlantedRegressionsFail(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	pinned := 0
	defer func() {
		if pinned == 0 {
			t.Errorf("no regression case in ../testdata names a planted bug: nothing was checked")
		}
	}()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "# plant: "); ok {
				name = strings.TrimSpace(v)
			}
		}
		if name == "" {
			continue
		}
		pinned++
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := plant.Enable(name); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = plant.Enable() }()
			if r := Execute(readCase(t, f), testOpts); !r.Failed() {
				t.Fatalf("with %s on, the case is clean: it no longer pins the bug", name)
			}
		})
	}
}
