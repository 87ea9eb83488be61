package sim

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/internal/detlint"
)

// The simulator's deterministic packages. goroutine.go is where the world
// starts its actor goroutines (exactly one runs at a time, see doc.go);
// workload/real.go runs scenarios on real stores with real time and real
// concurrency, by design outside the deterministic world.
var deterministic = []struct {
	dir   string
	allow []string
}{
	{".", []string{"goroutine.go"}},
	{"check", nil},
	{"workload", []string{"real.go"}},
	{"../model", []string{"reference.go"}}, // reference.go: the kernel work's
	{"../model/datamodel", nil},
}

// TestDeterministicPackages pins house rule 1 for the simulator: no wall
// clock, no global rand, no environment, no goroutines (but the world's
// actors), no unmarked map range.
func TestDeterministicPackages(t *testing.T) {
	for _, tags := range detlint.TagSets {
		for _, p := range deterministic {
			t.Run(strings.Join(append([]string{strings.TrimPrefix(p.dir, "../")}, tags...), "+"), func(t *testing.T) {
				findings, err := detlint.Check(p.dir, detlint.Options{AllowFiles: p.allow, Tags: tags})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range findings {
					t.Errorf("%s", f)
				}
			})
		}
	}
}
