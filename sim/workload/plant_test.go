//go:build simplant

package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// maxPlantSeeds is the bound: each planted bug must be caught within
// this many seeds of the workload it belongs to.
const maxPlantSeeds = 500

// TestPlantedBugsCaught proves the checkers can fail: with each planted
// kernel bug switched on, some seed of its workload (from 1, at most 500)
// reports a violation.
func TestPlantedBugsCaught(t *testing.T) {
	for _, name := range plant.All() {
		t.Run(name, func(t *testing.T) {
			w, ok := ForPlant(name)
			if !ok {
				t.Fatalf("no workload lists planted bug %s", name)
			}
			if err := plant.Enable(name); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = plant.Enable() }()
			for seed := uint64(1); seed <= maxPlantSeeds; seed++ {
				if r := Execute(w.Generate(seed, "default"), testOpts); r.Failed() {
					t.Logf("caught by %s seed %d: %v", w.Name, seed, r.Violations[0])
					return
				}
			}
			t.Fatalf("%s not caught in %d seeds of %s (is its hook in the kernel?)", name, maxPlantSeeds, w.Name)
		})
	}
}

// TestPlantedRegressionsFail replays every regression case that names a
// planted bug ("# plant: NAME"): with that bug on, the case must fail, so
// the case really pins the bug it was shrunk from.
func TestPlantedRegressionsFail(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.txt")
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
