package sim

import (
	"fmt"

	"github.com/graphkernel/graphkernel/objstore"
)

// OpCounts counts the executed calls of one operation.
type OpCounts struct {
	// Requests counts calls that passed BeforeCall, whatever their outcome.
	Requests uint64
	// Errors counts those whose store result was an error (including
	// ErrNotFound, ErrPreconditionFailed and injected faults), before any
	// AfterCall replacement.
	Errors uint64
}

// FaultCounts counts injected faults by kind.
type FaultCounts struct {
	// Transient counts injected transient errors (no effect), including the
	// ambiguous ones.
	Transient uint64
	// TransientAmbiguous counts the transient writes marked ambiguous; a
	// subset of Transient.
	TransientAmbiguous uint64
	// Conflict counts injected ErrConflict on conditional Puts.
	Conflict uint64
	// LostAck counts writes executed whose reply was then lost.
	LostAck uint64
	// Spike counts latency spikes (not errors).
	Spike uint64
}

// Errors returns the number of injected error faults:
// Transient + Conflict + LostAck.
func (f FaultCounts) Errors() uint64 { return f.Transient + f.Conflict + f.LostAck }

// Counters is a snapshot of a Store's request accounting. It is a plain
// value: comparing two snapshots with == is meaningful.
type Counters struct {
	Get, Head, List, Put, Delete OpCounts
	// BytesRead sums the data bytes of successful Gets.
	BytesRead uint64
	// BytesWritten sums the payload bytes of every Put request that passed
	// BeforeCall, applied or not: the bytes a client sends.
	BytesWritten uint64
	// Aborted counts calls a Hook aborted in BeforeCall (not in Requests).
	Aborted uint64
	// Faults counts injected faults by kind.
	Faults FaultCounts
}

// Op returns the counts of op. It panics on an unknown op.
func (c Counters) Op(op objstore.Op) OpCounts { return *c.op(op) }

// Requests returns the total requests over all operations.
func (c Counters) Requests() uint64 {
	return c.Get.Requests + c.Head.Requests + c.List.Requests + c.Put.Requests + c.Delete.Requests
}

// Writes returns Put + Delete requests.
func (c Counters) Writes() uint64 { return c.Put.Requests + c.Delete.Requests }

func (c *Counters) op(op objstore.Op) *OpCounts {
	switch op {
	case objstore.OpGet:
		return &c.Get
	case objstore.OpHead:
		return &c.Head
	case objstore.OpList:
		return &c.List
	case objstore.OpPut:
		return &c.Put
	case objstore.OpDelete:
		return &c.Delete
	}
	panic(fmt.Sprintf("sim: unknown op %q", op))
}

func (c *Counters) countFault(f fault) {
	switch f {
	case faultTransient:
		c.Faults.Transient++
	case faultTransientAmbiguous:
		c.Faults.Transient++
		c.Faults.TransientAmbiguous++
	case faultConflict:
		c.Faults.Conflict++
	case faultLostAck:
		c.Faults.LostAck++
	}
}
