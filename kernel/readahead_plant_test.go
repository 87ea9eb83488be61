//go:build simplant

package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// With the planted bug "read-ahead-trusts-index" the merge-base search's
// read-ahead caches a commit index it fetched without checking that the
// manifest it names holds its commit: a stale index gives its commit X
// another commit's place and reach, and the merge base of X with main's
// head (X itself) comes out as that other commit, where a handle that read
// singly answers X. The correct build rejects it
// (TestReadAheadRejectsAStaleIndex, the control: it runs plant-off in this
// build too).
func TestPlantedReadAheadTrustsAStaleIndex(t *testing.T) {
	enablePlant(t, plant.ReadAheadTrustsIndex)
	store, x, head := staleAheadIndex(t)
	base, own := readAheadAnswers(t, store, x, head)
	singlyBase, singlyOwn := readAheadAnswers(t, failingBatches{store}, x, head)
	t.Logf("read ahead: merge base %s, of %s and the head %s; read singly: %s, %s", base, x, own, singlyBase, singlyOwn)
	if own == x.String() || singlyOwn != x.String() {
		t.Fatalf("read-ahead-trusts-index changed no answer: the merge base of %s and the head is %s read ahead, %s read singly", x, own, singlyOwn)
	}
}
