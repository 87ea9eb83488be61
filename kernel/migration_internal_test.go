package kernel

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// The migration registry agrees with the floor and the ceiling: its lowest
// source is LowestRegisteredMigrationSource (= OldestSupportedFormat, which
// the build itself enforces), and its steps chain without gaps up to
// CurrentFormat, so every supported stamp has a way forward.
func TestMigrationRegistryMatchesFloor(t *testing.T) {
	if LowestRegisteredMigrationSource != format.OldestSupportedFormat {
		t.Fatalf("lowest migration source %d, floor %d", LowestRegisteredMigrationSource, format.OldestSupportedFormat)
	}
	if len(migrations) == 0 || migrations[0].From != LowestRegisteredMigrationSource {
		t.Fatalf("registry %v does not start at %d", migrations, LowestRegisteredMigrationSource)
	}
	for i, m := range migrations {
		if m.To != m.From+1 || i > 0 && m.From != migrations[i-1].To {
			t.Fatalf("registry step %d (%d->%d) breaks the chain", i, m.From, m.To)
		}
	}
	if last := migrations[len(migrations)-1].To; last != format.CurrentFormat {
		t.Fatalf("registry ends at %d, current is %d", last, format.CurrentFormat)
	}
}
