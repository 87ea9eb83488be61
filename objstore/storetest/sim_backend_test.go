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
