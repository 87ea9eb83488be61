package faulty_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/faulty"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

var ctx = context.Background()

// With every rate at zero the wrapper is the store it wraps: the whole
// conformance suite passes through it.
func TestConformanceWithoutFaults(t *testing.T) {
	storetest.RunWith(t, storetest.RunOptions{UniqueETags: true}, func(t *testing.T) objstore.Store {
		return faulty.New(sim.New(sim.Config{Seed: 1}), faulty.Config{Seed: 1})
	})
}

// Each injected fault keeps the contract: a transient fault applies
// nothing and is retryable; a lost acknowledgement applies the write and
// is ambiguous; the read outage after it fails reads transiently, then
// ends; switched off, the wrapper passes through.
func TestInjectedFaultsAreContractLegal(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  faulty.Config
		// want* describe one Put of "k" followed by reads.
		wantApplied, wantAmbiguous, wantRetryable bool
		outageReads                               int
	}{
		{"transient", faulty.Config{TransientRate: 1}, false, false, true, 0},
		{"lost ack", faulty.Config{LostAckRate: 1}, true, true, true, 0},
		{"lost ack then a read outage", faulty.Config{LostAckRate: 1, ReadOutageAfterLostAck: 3}, true, true, true, 3},
		{"no faults", faulty.Config{}, true, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := sim.New(sim.Config{Seed: 2})
			s := faulty.New(inner, tc.cfg)
			_, err := s.Put(ctx, "k", []byte("v"), objstore.CreateOnly)
			if got := objstore.IsAmbiguous(err); got != tc.wantAmbiguous {
				t.Fatalf("Put: %v, ambiguous %v, want %v", err, got, tc.wantAmbiguous)
			}
			if got := objstore.IsRetryable(err); got != tc.wantRetryable {
				t.Fatalf("Put: %v, retryable %v, want %v", err, got, tc.wantRetryable)
			}
			if _, gerr := inner.Get(ctx, "k"); (gerr == nil) != tc.wantApplied {
				t.Fatalf("inner Get after the Put: %v, want applied=%v", gerr, tc.wantApplied)
			}
			s.SetEnabled(tc.outageReads > 0) // only the outage is under test below
			for i := 0; i < tc.outageReads; i++ {
				if _, err := s.Get(ctx, "k"); !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) {
					t.Fatalf("outage read %d: %v, want a transient, unambiguous failure", i, err)
				}
			}
			s.SetEnabled(false)
			if _, err := s.Get(ctx, "k"); (err == nil) != tc.wantApplied {
				t.Fatalf("Get after the outage: %v", err)
			}
			st := s.Stats()
			if st.OutageReads != int64(tc.outageReads) || (st.LostAcks == 1) != tc.wantAmbiguous {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// A write the inner store refuses is never reported as applied: its error
// comes back as it was, not as a lost acknowledgement.
func TestRefusedWriteIsNotALostAck(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 3})
	if _, err := inner.Put(ctx, "k", []byte("v"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := faulty.New(inner, faulty.Config{LostAckRate: 1})
	_, err := s.Put(ctx, "k", []byte("w"), objstore.CreateOnly)
	if !errors.Is(err, objstore.ErrPreconditionFailed) || objstore.IsAmbiguous(err) {
		t.Fatalf("create-only over an existing key: %v, want the plain precondition failure", err)
	}
	if s.Stats().LostAcks != 0 {
		t.Fatal("counted a lost acknowledgement for a refused write")
	}
	// An invalid key is refused before any fault, as the contract says.
	s2 := faulty.New(sim.New(sim.Config{Seed: 3}), faulty.Config{TransientRate: 1})
	if _, err := s2.Get(ctx, "/bad//key"); !errors.Is(err, objstore.ErrInvalidKey) {
		t.Fatalf("invalid key under faults: %v, want ErrInvalidKey", err)
	}
}

// The same seed gives the same fault sequence on one goroutine; another
// seed a different one.
func TestFaultSequenceIsSeeded(t *testing.T) {
	seq := func(seed uint64) []bool {
		s := faulty.New(sim.New(sim.Config{Seed: 4}), faulty.Config{Seed: seed, TransientRate: 0.5})
		var out []bool
		for i := 0; i < 64; i++ {
			_, err := s.Get(ctx, "k")
			out = append(out, errors.Is(err, objstore.ErrTransient))
		}
		return out
	}
	a, b, c := seq(7), seq(7), seq(8)
	same := func(x, y []bool) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("seed 7 gave two different fault sequences")
	}
	if same(a, c) {
		t.Fatal("seeds 7 and 8 gave the same 64-call fault sequence")
	}
}
