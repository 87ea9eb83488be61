package sim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// A seeded store with every write's acknowledgement lost: the write lands,
// the caller sees an ambiguous transient error and resolves it by reading
// back. A hook sees each call's simulated latency.
func Example() {
	ctx := context.Background()
	var clock time.Duration
	s := sim.New(sim.Config{
		Seed:   42,
		Faults: sim.Faults{LostAckRate: 1, LatencyMin: time.Millisecond, LatencyMax: time.Millisecond},
		Hook: sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
			clock += c.Latency // the simulator advances its clock; nothing sleeps
			return nil
		}},
	})
	_, err := s.Put(ctx, "graph/head", []byte("v1"), objstore.CreateOnly)
	fmt.Println("ambiguous:", objstore.IsAmbiguous(err))
	obj, err := s.Get(ctx, "graph/head")
	fmt.Printf("read back: %s %s %v\n", obj.Data, obj.ETag, err)
	fmt.Println("simulated time:", clock, "faults:", s.FaultsInjected())
	// Output:
	// ambiguous: true
	// read back: v1 e1 <nil>
	// simulated time: 2ms faults: 1
}
