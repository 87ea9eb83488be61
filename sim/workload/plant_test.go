//go:build simplant

package workload

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/sim/check"
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
	plant.AdjDeltaSkip:         {"read-consistency", "reads-vs-model", "cardinality"},
	plant.UpsertKeepsRow:       {"reads-vs-model"},
	plant.PageSkip:             {"reads-vs-model"},
	plant.FragEditDropsSubtree: {"reads-vs-model"},
	plant.EmbedCarryDrop:       {"feed-error"},
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
	plant.GCMarkerNoLookup:     {"branch-listed"},
	plant.StaleViewCommit:      {"linear-chain"},
	plant.StaleSchemaValidate:  {"schema-card"},
	plant.RenameAsDrop:         {"schema-rename"},
	plant.CardTightenUnchecked: {"schema-card"},
	plant.GroupSharedFailure:   {"group-isolation", "failed-commit-visible"},
	plant.PublishSkipsDeferred: {"table-head", "retained-readable"},
	plant.RidingDropped:        {"table-head", "feed-error"},
	plant.GCSkipsRiding:        {"retained-readable"},
	plant.RidingUnchecked:      {"riding-budget"},
}

// TestPlantedBugsCaught proves the checkers can fail: with each planted
// kernel bug switched on, some seed of its workload (from 1, at most 500)
// reports a violation of the check meant for that bug, and the same seeds
// with the plant off are clean (the control run), so the catch is the
// plant's doing.
//
// Many plants share a workload, so each plant-off run is made once per
// (workload, seed) and shared (controlRuns), on every core at once: with
// no plant on, runs are independent. Each plant's catch runs its seeds on
// every core too, with only that plant on (plant.Enable is a global
// switch, so plants are caught one after another); a plant with a
// catchHints seed tries that seed first.
func TestPlantedBugsCaught(t *testing.T) {
	control := newControlRuns()
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
			seeds := controlRun(caught)
			var keys []controlKey
			for _, seed := range seeds {
				keys = append(keys, controlKey{w, seed})
			}
			control.run(keys)
			for _, seed := range seeds {
				if r := control.result(w, seed); r.Failed() {
					t.Fatalf("control run: %s seed %d fails with no plant on: %v", w.Name, seed, r.Violations[0])
				}
			}
		})
	}
}

// catchHints are seeds known to catch a plant whose first catching seed
// is far from 1 (found by the scan from seed 1; core seeds are the
// slowest to run). catchSeed tries the hint first and scans from seed 1
// only if it no longer catches (a change shifted the schedules; update
// the hint to the seed the scan logs). Seeds 1..controlSeeds and the
// catching seed are replayed plant-off either way.
var catchHints = map[string]uint64{
	plant.IgnoreLostAck:    37,
	plant.ReachDropsBase:   23,
	plant.SkipForkMarker:   9,
	plant.ReachDropsMerge:  4,
	plant.GCMarkerNoLookup: 15,
}

// controlKey names one plant-off run.
type controlKey struct {
	w    *Workload
	seed uint64
}

// controlRuns holds the result of every plant-off run made so far, so a
// (workload, seed) that several plants' controls replay runs once.
type controlRuns struct{ done map[controlKey]*Result }

func newControlRuns() *controlRuns { return &controlRuns{done: map[controlKey]*Result{}} }

// run executes, with every plant off, each of keys not run before, on
// every core at once.
func (c *controlRuns) run(keys []controlKey) {
	var todo []controlKey
	for _, k := range keys {
		if _, ok := c.done[k]; !ok && !slices.Contains(todo, k) {
			todo = append(todo, k)
		}
	}
	if err := plant.Enable(); err != nil {
		panic(err) // no names: cannot fail
	}
	out := make([]*Result, len(todo))
	parallelSeeds(len(todo), func(int) bool { return false }, func(i int) {
		out[i] = Execute(todo[i].w.Generate(todo[i].seed, "default"), testOpts)
	})
	for i, k := range todo {
		c.done[k] = out[i]
	}
}

// result returns the plant-off run of w at seed, running it first if no
// control asked for it before.
func (c *controlRuns) result(w *Workload, seed uint64) *Result {
	k := controlKey{w, seed}
	c.run([]controlKey{k})
	return c.done[k]
}

// parallelSeeds calls f(i) for i = 0, 1, ... n-1 on GOMAXPROCS goroutines,
// handing out indexes in increasing order, and hands out none from the
// first i for which stop(i) reports true. Every index below the first
// stopped one is run.
func parallelSeeds(n int, stop func(i int) bool, f func(i int)) {
	var mu sync.Mutex
	next := 0
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || stop(next) {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				f(i)
			}
		})
	}
	wg.Wait()
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

// catchSeed returns a seed (1..maxPlantSeeds) at which w, with the planted
// bug name on, reports a violation of one of the checks want, or 0: the
// plant's catchHints seed if it has one and it catches, else the first
// such seed. Seeds run on every core at once, handed out in order; once a
// seed has caught the plant no later one is started, and every earlier
// one still finishes, so the answer is the first catching seed whatever
// the timing.
func catchSeed(t *testing.T, w *Workload, name string, want []string) uint64 {
	t.Helper()
	if err := plant.Enable(name); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	catches := func(seed uint64) (check.Violation, bool) {
		for _, v := range Execute(w.Generate(seed, "default"), testOpts).Violations {
			if slices.Contains(want, v.Check) {
				return v, true
			}
		}
		return check.Violation{}, false
	}
	if hint, ok := catchHints[name]; ok && hint <= maxPlantSeeds {
		if v, ok := catches(hint); ok {
			t.Logf("caught by %s seed %d (its catchHints seed): %v", w.Name, hint, v)
			return hint
		}
		t.Logf("catchHints seed %d of %s no longer catches %s: scanning from seed 1 (update the hint)", hint, w.Name, name)
	}
	var mu sync.Mutex
	caught := uint64(0)
	var why check.Violation
	parallelSeeds(maxPlantSeeds, func(i int) bool {
		mu.Lock()
		defer mu.Unlock()
		return caught != 0 && uint64(i)+1 > caught
	}, func(i int) {
		seed := uint64(i) + 1
		if v, ok := catches(seed); ok {
			mu.Lock()
			if caught == 0 || seed < caught {
				caught, why = seed, v
			}
			mu.Unlock()
		}
	})
	if caught != 0 {
		t.Logf("caught by %s seed %d: %v", w.Name, caught, why)
	}
	return caught
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
