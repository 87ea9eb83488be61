package faulty_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/detlint"
)

// TestNoNondeterminismSources: the package's non-test code reads no wall
// clock, uses no global or crypto random source, reads no environment and
// starts no goroutine, so every fault comes from the seeded PCG.
func TestNoNondeterminismSources(t *testing.T) {
	for _, tags := range detlint.TagSets {
		findings, err := detlint.Check(".", detlint.Options{Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			t.Errorf("%v: %s", tags, f)
		}
	}
}
