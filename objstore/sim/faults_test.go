package sim_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// between fails t unless lo <= got <= hi.
func between(t *testing.T, what string, got, lo, hi uint64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %d, want within [%d, %d]", what, got, lo, hi)
	}
}

// TestFaultRatesRoughlyHonored: over 10k calls per kind, each injected rate
// lands within loose bounds (about 6 standard deviations).
func TestFaultRatesRoughlyHonored(t *testing.T) {
	const n = 10000
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 9, Faults: sim.Faults{TransientRate: 0.1}})
	for i := range n {
		if _, err := s.Put(ctx, fmt.Sprintf("t/%d", i), nil, objstore.Unconditional); err != nil && !errors.Is(err, objstore.ErrTransient) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	c := s.Counters()
	between(t, "transient of 10k puts (10%)", c.Faults.Transient, 820, 1180)
	between(t, "ambiguous among transient writes (half)", c.Faults.TransientAmbiguous, c.Faults.Transient*35/100, c.Faults.Transient*65/100)
	between(t, "objects written", uint64(s.Len()), n-1180, n-820)

	s = sim.New(sim.Config{Seed: 9, Faults: sim.Faults{ConflictRate: 0.2, LostAckRate: 0.3}})
	for i := range n {
		_, _ = s.Put(ctx, fmt.Sprintf("c/%d", i), nil, objstore.CreateOnly)
	}
	c = s.Counters()
	between(t, "conflicts of 10k conditional puts (20%)", c.Faults.Conflict, 1760, 2240)
	// A lost ack is only drawn when no conflict hit: 0.8 * 0.3 = 24%.
	between(t, "lost acks of 10k conditional puts (24%)", c.Faults.LostAck, 2140, 2660)

	s = sim.New(sim.Config{Seed: 9, Faults: sim.Faults{ConflictRate: 1, SpikeRate: 0.05, SpikeLatency: time.Second}})
	for range n {
		_, _ = s.Head(ctx, "k")
	}
	c = s.Counters()
	if c.Faults.Conflict != 0 {
		t.Errorf("%d conflicts injected on Head; conflicts are for conditional Puts only", c.Faults.Conflict)
	}
	between(t, "spikes of 10k calls (5%)", c.Faults.Spike, 370, 630)
}

// TestLatencyWithinBounds: every latency lies in [min, max] or, for a
// spike, in [min+spike, max+spike], and both ends of the range occur.
func TestLatencyWithinBounds(t *testing.T) {
	f := sim.Faults{LatencyMin: 3 * time.Millisecond, LatencyMax: 7 * time.Millisecond, SpikeRate: 0.1, SpikeLatency: time.Second}
	var lats []time.Duration
	hook := sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		lats = append(lats, c.Latency)
		return nil
	}}
	s := sim.New(sim.Config{Seed: 3, Faults: f, Hook: hook})
	for range 2000 {
		_, _ = s.Head(t.Context(), "k")
	}
	lo, hi, spikes := time.Hour, time.Duration(0), 0
	for _, l := range lats {
		base := l
		if l >= f.SpikeLatency {
			base -= f.SpikeLatency
			spikes++
		}
		if base < f.LatencyMin || base > f.LatencyMax {
			t.Fatalf("latency %v outside [%v, %v] (+spike)", l, f.LatencyMin, f.LatencyMax)
		}
		lo, hi = min(lo, base), max(hi, base)
	}
	if hi-lo < 3*time.Millisecond || spikes == 0 {
		t.Errorf("latency range [%v, %v] with %d spikes: the distribution is not spread", lo, hi, spikes)
	}
	if uint64(spikes) != s.Counters().Faults.Spike {
		t.Errorf("hook saw %d spikes, counters say %d", spikes, s.Counters().Faults.Spike)
	}
}

// TestLostAckIsApplied: a lost acknowledgement reports an ambiguous
// transient error, yet the write (or delete) happened.
func TestLostAckIsApplied(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 1, Faults: sim.Faults{LostAckRate: 1}})
	_, err := s.Put(ctx, "k", []byte("v"), objstore.CreateOnly)
	wantAmbiguousTransient(t, err, objstore.OpPut, "k")
	if data, ok := s.Peek("k"); !ok || string(data) != "v" {
		t.Fatalf("lost-ack Put not applied: %q %v", data, ok)
	}
	err = s.Delete(ctx, "k")
	wantAmbiguousTransient(t, err, objstore.OpDelete, "k")
	if _, ok := s.Peek("k"); ok {
		t.Fatal("lost-ack Delete not applied")
	}
	if got := s.Counters().Faults.LostAck; got != 2 {
		t.Fatalf("LostAck counter = %d, want 2", got)
	}
	if obj, err := s.Get(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("reads are never lost-acked: Get = %v, %v", obj, err)
	}
}

func wantAmbiguousTransient(t *testing.T, err error, op objstore.Op, key string) {
	t.Helper()
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Kind != objstore.ErrTransient || !oe.Ambiguous || oe.Op != op || oe.Key != key {
		t.Fatalf("%s %q: got %v, want an ambiguous ErrTransient", op, key, err)
	}
}

// TestTransientIsNotApplied: an injected transient failure never has an
// effect; writes are marked ambiguous only some of the time, reads never.
func TestTransientIsNotApplied(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 5, Faults: sim.Faults{TransientRate: 1}})
	ambiguous := 0
	for i := range 200 {
		key := fmt.Sprintf("k%d", i)
		_, err := s.Put(ctx, key, []byte("v"), objstore.Unconditional)
		if !errors.Is(err, objstore.ErrTransient) {
			t.Fatalf("Put: %v, want ErrTransient", err)
		}
		if objstore.IsAmbiguous(err) {
			ambiguous++
		}
		if _, err := s.Get(ctx, key); !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) {
			t.Fatalf("Get: %v, want a non-ambiguous ErrTransient", err)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("%d transient Puts were applied", s.Len())
	}
	if ambiguous == 0 || ambiguous == 200 {
		t.Fatalf("%d of 200 transient writes ambiguous; want some but not all", ambiguous)
	}
	s.SetFaults(sim.Faults{})
	mustPut(t, s, "keep", "v")
	s.SetFaults(sim.Faults{TransientRate: 1})
	if err := s.Delete(ctx, "keep"); !errors.Is(err, objstore.ErrTransient) {
		t.Fatalf("Delete: %v", err)
	}
	if _, ok := s.Peek("keep"); !ok {
		t.Fatal("a transient Delete was applied")
	}
}

// TestConflictOnlyOnConditionalPuts: conflicts never hit plain writes and
// never apply.
func TestConflictOnlyOnConditionalPuts(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 5, Faults: sim.Faults{ConflictRate: 1}})
	etag := mustPut(t, s, "k", "v1")
	for _, cond := range []objstore.Condition{objstore.CreateOnly, objstore.IfMatch(etag)} {
		_, err := s.Put(ctx, "k", []byte("v2"), cond)
		var oe *objstore.Error
		if !errors.As(err, &oe) || oe.Kind != objstore.ErrConflict || oe.Ambiguous {
			t.Fatalf("conditional Put: %v, want a non-ambiguous ErrConflict", err)
		}
	}
	if data, _ := s.Peek("k"); string(data) != "v1" {
		t.Fatalf("a conflicted Put was applied: %q", data)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatalf("Delete under ConflictRate 1: %v", err)
	}
}

// TestSetFaultsKeepsStreamsAligned: turning faults off and on again leaves
// later calls with the same fault decisions as a store never reconfigured.
func TestSetFaultsKeepsStreamsAligned(t *testing.T) {
	ctx := t.Context()
	f := sim.Faults{TransientRate: 0.3}
	a, b := sim.New(sim.Config{Seed: 11, Faults: f}), sim.New(sim.Config{Seed: 11, Faults: f})
	var outA, outB []bool
	for i := range 300 {
		if i == 100 {
			b.SetFaults(sim.Faults{})
		}
		if i == 200 {
			b.SetFaults(f)
		}
		_, errA := a.Head(ctx, "k")
		_, errB := b.Head(ctx, "k")
		if i >= 200 {
			outA = append(outA, errors.Is(errA, objstore.ErrTransient))
			outB = append(outB, errors.Is(errB, objstore.ErrTransient))
		}
	}
	if fmt.Sprint(outA) != fmt.Sprint(outB) {
		t.Fatal("fault decisions diverged after SetFaults toggled")
	}
}

// TestFaultsValidate: bad configurations are rejected, by Validate and by
// New and SetFaults panicking.
func TestFaultsValidate(t *testing.T) {
	bad := []sim.Faults{
		{TransientRate: -0.1}, {ConflictRate: 1.5}, {LostAckRate: nan()}, {SpikeRate: 2},
		{LatencyMin: 2, LatencyMax: 1}, {LatencyMin: -1}, {SpikeLatency: -1},
	}
	for _, f := range bad {
		if f.Validate() == nil {
			t.Errorf("Validate(%+v) = nil", f)
		}
		wantPanic(t, fmt.Sprintf("New(%+v)", f), func() { sim.New(sim.Config{Faults: f}) })
		wantPanic(t, fmt.Sprintf("SetFaults(%+v)", f), func() { sim.New(sim.Config{}).SetFaults(f) })
	}
	if err := noisy.Validate(); err != nil {
		t.Errorf("Validate(noisy) = %v", err)
	}
}

func nan() float64 { z := 0.0; return z / z }

func wantPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func mustPut(t *testing.T, s *sim.Store, key, data string) string {
	t.Helper()
	etag, err := s.Put(t.Context(), key, []byte(data), objstore.Unconditional)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return etag
}

// TestReadOutageAfterLostAck: after a lost acknowledgement, exactly the
// configured number of reads fail with ErrTransient and no effect, then
// reads succeed again; writes are not part of the outage.
func TestReadOutageAfterLostAck(t *testing.T) {
	ctx := context.Background()
	s := sim.New(sim.Config{Seed: 3, Faults: sim.Faults{LostAckRate: 1, ReadOutageAfterLostAck: 3}})
	if _, err := s.Put(ctx, "k", []byte("v"), objstore.CreateOnly); !objstore.IsAmbiguous(err) {
		t.Fatalf("Put: %v, want a lost acknowledgement", err)
	}
	s.SetFaults(sim.Faults{ReadOutageAfterLostAck: 3}) // no further lost acks; the outage in flight stays
	for i := range 3 {
		if _, err := s.Get(ctx, "k"); !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) {
			t.Fatalf("read %d of the outage: %v, want a plain ErrTransient", i+1, err)
		}
	}
	if obj, err := s.Get(ctx, "k"); err != nil || string(obj.Data) != "v" {
		t.Fatalf("read after the outage: %q, %v; want the applied write", obj.Data, err)
	}
	if n := s.Counters().Faults.ReadOutage; n != 3 {
		t.Errorf("ReadOutage counter %d, want 3", n)
	}
	if err := (sim.Faults{ReadOutageAfterLostAck: sim.MaxReadOutage + 1}).Validate(); err == nil {
		t.Error("an outage beyond sim.MaxReadOutage validated")
	}
}
