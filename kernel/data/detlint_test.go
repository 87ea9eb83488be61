package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/detlint"
)

// TestDeterministic pins the determinism rule for the data plane and the
// schema package: no wall clock, global rand, environment or goroutines,
// and no map range whose order could reach an output or a decision.
func TestDeterministic(t *testing.T) {
	for _, tags := range detlint.TagSets {
		for _, dir := range []string{".", "../schema", "pred", "traverse", "compact", "../gc", "../maintain"} {
			findings, err := detlint.Check(dir, detlint.Options{Tags: tags})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("%v %s", tags, f)
			}
		}
	}
}
