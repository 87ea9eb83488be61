//go:build simplant

package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// With the planted bug "frag-edit-drops-subtree", the cold one-row update
// of TestFragEditUpdateLandsBesideUnreadSubtrees rewrites the leaf chunk
// holding the row into a chunk of the same summary (fragments, rows, id
// envelope), and the edit keeps the head's chunk by ref instead (and,
// level by level, the head's ref chunks above it): the version lists
// exactly the head's leaf chunks, every count a reader checks agrees
// (Count answers every row), and the update is lost — p00000 reads as
// before (the simulator's reads-vs-model catches it: workload data-drops).
func TestPlantedFragEditDropsSubtreeLosesAnUpdate(t *testing.T) {
	if err := plant.Enable(plant.FragEditDropsSubtree); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	before, after, name, _ := updateBesideUnreadSubtrees(t)
	if name != "x" {
		t.Fatalf("frag-edit-drops-subtree: Get p00000 = name %v; want the stale x (the update lost)", name)
	}
	if len(after) != len(before) {
		t.Fatalf("frag-edit-drops-subtree: %d leaf chunks after, %d before; want the head's", len(after), len(before))
	}
	for i := range before {
		if after[i].Name != before[i].Name {
			t.Fatalf("frag-edit-drops-subtree: leaf chunk %d is %s, the head's %s; want the head's list kept whole", i, after[i].Name, before[i].Name)
		}
	}
}
