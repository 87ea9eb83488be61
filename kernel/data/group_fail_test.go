package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestGroupEveryMemberFailsStrict pins a group in which no member is
// admitted (each one's strict table moved since its Begin; the simulator's
// data-group workload found it as a leader's panic that left its followers
// waiting): every member gets its own VersionMismatchError and nothing is
// published.
func TestGroupEveryMemberFailsStrict(t *testing.T) {
	g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{})
	stale := func() *Txn {
		return beginWith(t, g, func(tx *Txn) error { return tx.Update("Company", company("c1")) })
	}
	txns := []*Txn{stale(), stale(), stale()}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Company", company("c9")) }) // Company moves after their Begin
	v0 := manifestVersion(t, g)
	for i, o := range runQueue(t, g, txns) {
		var mm *kernel.VersionMismatchError
		if !errors.As(o.err, &mm) {
			t.Fatalf("member %d: %v, want its own VersionMismatchError", i, o.err)
		}
	}
	if v := manifestVersion(t, g); v != v0 {
		t.Fatalf("manifest v%d, want v%d: a group of failed members published", v, v0)
	}
}
