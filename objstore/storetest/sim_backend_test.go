package storetest_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// The simulator's store, faults off: it must mean exactly what the real
// backends mean. It guarantees a fresh ETag per write.
func init() {
	register("sim", func(t *testing.T) objstore.Store {
		return sim.New(sim.Config{Seed: 1})
	}, storetest.RunOptions{UniqueETags: true})
}

// The simulator's store seen as deferring durability (sim.Deferring, the
// machine-crash profile's store): the same contract, with the deferral
// capabilities of fs.
func init() {
	register("sim-deferring", func(t *testing.T) objstore.Store {
		return sim.New(sim.Config{Seed: 1}).Deferring()
	}, storetest.RunOptions{UniqueETags: true})
}
