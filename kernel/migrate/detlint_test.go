package migrate

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/detlint"
)

// TestDeterministic pins the determinism rule for the migration package
// (the fixture writer included): no wall clock, global rand, environment,
// goroutines or order-leaking map ranges.
func TestDeterministic(t *testing.T) {
	for _, tags := range detlint.TagSets {
		findings, err := detlint.Check(".", detlint.Options{Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			t.Errorf("%v %s", tags, f)
		}
	}
}
