package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
)

// Faults configures seeded fault injection. The zero value injects nothing
// and reports zero latency. Every rate is a per-call probability in [0, 1].
type Faults struct {
	// TransientRate is the chance that any call fails with ErrTransient and
	// no effect. Half of the transient writes (seeded) are also marked
	// ambiguous, though none was applied.
	TransientRate float64
	// ConflictRate is the chance that a conditional Put fails with
	// ErrConflict and no effect.
	ConflictRate float64
	// LostAckRate is the chance that a Put or Delete is executed and its
	// reply then lost: ErrTransient with Ambiguous set.
	LostAckRate float64
	// LatencyMin and LatencyMax bound the uniform base latency of a call.
	// LatencyMax < LatencyMin is invalid; equal bounds give a fixed latency.
	LatencyMin, LatencyMax time.Duration
	// SpikeRate is the chance that SpikeLatency is added to a call.
	SpikeRate float64
	// SpikeLatency is the extra latency of a spike.
	SpikeLatency time.Duration
	// ReadOutageAfterLostAck is how many reads (Get, Head, List) fail
	// with ErrTransient and no effect right after each lost acknowledgement:
	// the outage that drives a writer's read-back into its error exits.
	// 0 turns it off; at most MaxReadOutage.
	ReadOutageAfterLostAck int
}

// MaxReadOutage bounds Faults.ReadOutageAfterLostAck.
const MaxReadOutage = 1000

// Validate reports whether f is usable: rates in [0, 1] and not NaN,
// non-negative latencies, LatencyMin <= LatencyMax.
func (f Faults) Validate() error {
	rates := []struct {
		name string
		v    float64
	}{
		{"TransientRate", f.TransientRate},
		{"ConflictRate", f.ConflictRate},
		{"LostAckRate", f.LostAckRate},
		{"SpikeRate", f.SpikeRate},
	}
	for _, r := range rates {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("sim: %s %v outside [0, 1]", r.name, r.v)
		}
	}
	if f.LatencyMin < 0 || f.SpikeLatency < 0 {
		return fmt.Errorf("sim: negative latency (min %v, spike %v)", f.LatencyMin, f.SpikeLatency)
	}
	if f.ReadOutageAfterLostAck < 0 || f.ReadOutageAfterLostAck > MaxReadOutage {
		return fmt.Errorf("sim: ReadOutageAfterLostAck %d outside [0, %d]", f.ReadOutageAfterLostAck, MaxReadOutage)
	}
	if f.LatencyMax < f.LatencyMin {
		return fmt.Errorf("sim: LatencyMax %v < LatencyMin %v", f.LatencyMax, f.LatencyMin)
	}
	return nil
}

// fault is the error fault decided for one executed call.
type fault uint8

const (
	faultNone fault = iota
	faultTransient
	faultTransientAmbiguous
	faultConflict
	faultLostAck
	faultReadOutage
)

// Stream selectors for the two PCG streams derived from Config.Seed.
const (
	streamLatency = 0x6c6174656e6379 // "latency"
	streamFaults  = 0x6661756c7473   // "faults"
)

// unit maps a uniform uint64 to a float64 in [0, 1).
func unit(u uint64) float64 { return float64(u>>11) / (1 << 53) }

// drawLatency consumes exactly two values of the latency stream and reports
// the call's simulated latency and whether it spiked.
func drawLatency(rng *rand.Rand, f Faults) (time.Duration, bool) {
	uSpike, uBase := rng.Uint64(), rng.Uint64()
	lat := f.LatencyMin
	if span := uint64(f.LatencyMax - f.LatencyMin); span > 0 {
		lat += time.Duration(uBase % (span + 1))
	}
	spike := unit(uSpike) < f.SpikeRate
	if spike {
		lat += f.SpikeLatency
	}
	return lat, spike
}

// drawFault consumes exactly four values of the fault stream and decides the
// error fault of one call to op under cond.
func drawFault(rng *rand.Rand, f Faults, op objstore.Op, cond objstore.Condition) fault {
	uTransient, uAmbiguous, uConflict, uLost := rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()
	isWrite := op == objstore.OpPut || op == objstore.OpDelete
	switch {
	case unit(uTransient) < f.TransientRate:
		if isWrite && uAmbiguous&1 == 1 {
			return faultTransientAmbiguous
		}
		return faultTransient
	case op == objstore.OpPut && cond.Kind != objstore.CondNone && unit(uConflict) < f.ConflictRate:
		return faultConflict
	case isWrite && unit(uLost) < f.LostAckRate:
		return faultLostAck
	}
	return faultNone
}
