// Package faulty is a seeded, fault-injecting objstore.Store that wraps any
// other store (sim, fs, S3), so the faults the simulator injects on its own
// store can be injected on real backends and across real processes.
//
// Every injected fault is one the Store contract allows, so the kernel must
// handle it exactly as it handles a real one:
//   - a transient fault fails the call with a retryable error (ErrTransient)
//     and does not apply it;
//   - a lost acknowledgement applies a Put or Delete on the inner store and
//     then reports it as ambiguous (ErrAmbiguous with ErrTransient): the
//     caller must read back;
//   - a read outage after a lost acknowledgement fails the next reads
//     transiently, so the read-back itself is tested.
//
// It never reports a spurious precondition failure, a fake not-found or a
// write that failed as applied.
package faulty

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/graphkernel/graphkernel/objstore"
)

// Config sets the fault rates, each a probability in [0, 1] per call.
type Config struct {
	// Seed seeds the fault draws: one goroutine calling the wrapper sees
	// the same fault sequence for the same seed.
	Seed uint64
	// TransientRate: the call fails with a retryable error and is not
	// applied (every method).
	TransientRate float64
	// LostAckRate: a Put or Delete is applied on the inner store, then
	// reported as ambiguous.
	LostAckRate float64
	// ReadOutageAfterLostAck: after a lost acknowledgement, the next N
	// reads (Get, Head, List) fail transiently.
	ReadOutageAfterLostAck int
}

// Stats counts the calls and the faults injected so far.
type Stats struct {
	Calls, Transient, LostAcks, OutageReads int64
}

// Faults is the number of faults of every kind injected.
func (s Stats) Faults() int64 { return s.Transient + s.LostAcks + s.OutageReads }

// Store is the wrapper. It is safe for concurrent use.
type Store struct {
	inner objstore.Store
	cfg   Config

	mu     sync.Mutex
	rng    *rand.Rand
	outage int // reads left in the current read outage

	enabled                                 atomic.Bool
	calls, transient, lostAcks, outageReads atomic.Int64
}

var _ objstore.Store = (*Store)(nil)

// errInjected is the cause of every injected fault.
var errInjected = errors.New("faulty: injected fault")

// New wraps inner with the faults of cfg, enabled. It panics on a rate
// outside [0, 1] or a negative outage (a caller bug).
func New(inner objstore.Store, cfg Config) *Store {
	for _, r := range []float64{cfg.TransientRate, cfg.LostAckRate} {
		if r < 0 || r > 1 || r != r {
			panic(fmt.Sprintf("faulty: rate %v outside [0, 1]", r))
		}
	}
	if cfg.ReadOutageAfterLostAck < 0 {
		panic("faulty: negative ReadOutageAfterLostAck")
	}
	s := &Store{inner: inner, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	s.enabled.Store(true)
	return s
}

// SetEnabled switches fault injection on or off; off, the wrapper passes
// every call through unchanged (for setup and quiet phases).
func (s *Store) SetEnabled(on bool) { s.enabled.Store(on) }

// Stats returns the counts so far.
func (s *Store) Stats() Stats {
	return Stats{Calls: s.calls.Load(), Transient: s.transient.Load(), LostAcks: s.lostAcks.Load(), OutageReads: s.outageReads.Load()}
}

// fault is what one call draws.
type fault uint8

const (
	none fault = iota
	transient
	lostAck
)

// draw decides the fault of one call. A call with an invalid key draws
// none: the inner store refuses it before any I/O, as the contract says.
func (s *Store) draw(op objstore.Op, key string, write bool) fault {
	s.calls.Add(1)
	if !s.enabled.Load() || objstore.ValidateKey(op, key) != nil {
		return none
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !write && s.outage > 0 {
		s.outage--
		s.outageReads.Add(1)
		return transient
	}
	if s.rng.Float64() < s.cfg.TransientRate {
		s.transient.Add(1)
		return transient
	}
	if write && s.rng.Float64() < s.cfg.LostAckRate {
		return lostAck
	}
	return none
}

// lost records a lost acknowledgement and starts its read outage.
func (s *Store) lost() {
	s.lostAcks.Add(1)
	s.mu.Lock()
	s.outage = s.cfg.ReadOutageAfterLostAck
	s.mu.Unlock()
}

func transientErr(op objstore.Op, key string) error {
	return objstore.NewError(op, key, objstore.ErrTransient, errInjected)
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.draw(objstore.OpGet, key, false) == transient {
		return objstore.Object{}, transientErr(objstore.OpGet, key)
	}
	return s.inner.Get(ctx, key)
}

// Head implements objstore.Store.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if s.draw(objstore.OpHead, key, false) == transient {
		return objstore.Attrs{}, transientErr(objstore.OpHead, key)
	}
	return s.inner.Head(ctx, key)
}

// List implements objstore.Store.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if s.draw(objstore.OpList, prefix, false) == transient {
		return objstore.ListPage{}, transientErr(objstore.OpList, prefix)
	}
	return s.inner.List(ctx, prefix, after, limit)
}

// Put implements objstore.Store. A lost acknowledgement is reported only
// for a write the inner store applied.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	f := s.draw(objstore.OpPut, key, true)
	if f == transient {
		return "", transientErr(objstore.OpPut, key)
	}
	etag, err := s.inner.Put(ctx, key, data, cond)
	if f != lostAck || err != nil {
		return etag, err
	}
	s.lost()
	return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errInjected)
}

// Delete implements objstore.Store. A lost acknowledgement is reported
// only for a delete the inner store applied.
func (s *Store) Delete(ctx context.Context, key string) error {
	f := s.draw(objstore.OpDelete, key, true)
	if f == transient {
		return transientErr(objstore.OpDelete, key)
	}
	err := s.inner.Delete(ctx, key)
	if f != lostAck || err != nil {
		return err
	}
	s.lost()
	return objstore.NewAmbiguousError(objstore.OpDelete, key, objstore.ErrTransient, errInjected)
}
