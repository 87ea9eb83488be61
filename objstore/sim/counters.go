package sim

import "github.com/graphkernel/graphkernel/objstore"

// OpCounts counts the executed calls of one operation. It is
// objstore.OpCounts; see there for what this store counts.
type OpCounts = objstore.OpCounts

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
	// ReadOutage counts reads failed by the outage after a lost
	// acknowledgement (Faults.ReadOutageAfterLostAck).
	ReadOutage uint64
	// Spike counts latency spikes (not errors).
	Spike uint64
}

// Errors returns the number of injected error faults:
// Transient + Conflict + LostAck.
func (f FaultCounts) Errors() uint64 { return f.Transient + f.Conflict + f.LostAck }

// Counters is a snapshot of a Store's request accounting. It is a plain
// value: comparing two snapshots with == is meaningful.
//
// The embedded objstore.RequestCounts counts calls that passed key
// validation and Hook.BeforeCall (see objstore.OpCounts for how that differs
// from objstore/counting); its Op, Requests and Writes methods are promoted.
type Counters struct {
	objstore.RequestCounts
	// Aborted counts calls a Hook aborted in BeforeCall (not in Requests).
	Aborted uint64
	// Faults counts injected faults by kind.
	Faults FaultCounts
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
	case faultReadOutage:
		c.Faults.ReadOutage++
	}
}
