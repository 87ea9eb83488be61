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
// write that failed as applied. A call with an invalid key (or List prefix)
// or an already-done ctx is never faulted: it goes to the inner store,
// which refuses it in its own words. Fault injection can be switched off
// (SetEnabled) for setup and quiet phases.
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
	// Seed seeds the fault draws (a math/rand/v2 PCG): one goroutine
	// making the same calls sees the same faults for the same seed,
	// whatever the inner store. Calls that draw nothing (disabled, an
	// invalid key, a done ctx) do not shift the sequence.
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
	// Calls is every call made through the wrapper, faulted or not,
	// enabled or not.
	Calls int64
	// Transient is the calls failed by TransientRate (not applied).
	Transient int64
	// LostAcks is the writes applied and then reported ambiguous.
	LostAcks int64
	// OutageReads is the reads failed by a read outage (not applied).
	OutageReads int64
}

// Faults is the number of faults of every kind injected.
func (s Stats) Faults() int64 { return s.Transient + s.LostAcks + s.OutageReads }

// Store is the wrapper; it implements objstore.Store with the inner
// store's semantics plus the injected faults of its Config, each of which
// is an answer the contract allows. It is safe for concurrent use.
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
// every call through unchanged and draws nothing (for setup and quiet
// phases). A read outage in progress is paused while off, not cancelled.
// Safe for concurrent use.
func (s *Store) SetEnabled(on bool) { s.enabled.Store(on) }

// Stats returns the counts so far. Safe for concurrent use; under
// concurrent calls each count is exact but the four are not read at one
// instant.
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

// draw decides the fault of one call. A call with an invalid key (for
// List: an invalid prefix) draws none: the inner store refuses it before
// any I/O, as the contract says. So does a call whose ctx is already
// done: the inner store reports the cancellation its own way (as the sim
// does, a cancelled call never reaches a fault).
func (s *Store) draw(ctx context.Context, op objstore.Op, key string, write bool) fault {
	s.calls.Add(1)
	if !s.enabled.Load() || ctx.Err() != nil {
		return none
	}
	validate := objstore.ValidateKey
	if op == objstore.OpList {
		validate = objstore.ValidatePrefix
	}
	if validate(op, key) != nil {
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

// Get implements objstore.Store; an injected fault is ErrTransient,
// unambiguous, and never reaches the inner store.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.draw(ctx, objstore.OpGet, key, false) == transient {
		return objstore.Object{}, transientErr(objstore.OpGet, key)
	}
	return s.inner.Get(ctx, key)
}

// Head implements objstore.Store; an injected fault is ErrTransient,
// unambiguous, and never reaches the inner store.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if s.draw(ctx, objstore.OpHead, key, false) == transient {
		return objstore.Attrs{}, transientErr(objstore.OpHead, key)
	}
	return s.inner.Head(ctx, key)
}

// List implements objstore.Store; an injected fault is ErrTransient,
// unambiguous, and never reaches the inner store.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if s.draw(ctx, objstore.OpList, prefix, false) == transient {
		return objstore.ListPage{}, transientErr(objstore.OpList, prefix)
	}
	return s.inner.List(ctx, prefix, after, limit)
}

// Put implements objstore.Store. A transient fault is ErrTransient,
// unambiguous, and never reaches the inner store. A lost acknowledgement
// is reported (ErrTransient, ambiguous) only for a write the inner store
// applied; an inner error comes back unchanged.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	f := s.draw(ctx, objstore.OpPut, key, true)
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

// Delete implements objstore.Store. A transient fault is ErrTransient,
// unambiguous, and never reaches the inner store. A lost acknowledgement
// is reported (ErrTransient, ambiguous) only for a delete the inner store
// applied; an inner error comes back unchanged.
func (s *Store) Delete(ctx context.Context, key string) error {
	f := s.draw(ctx, objstore.OpDelete, key, true)
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

var _ objstore.BatchGetter = (*Store)(nil)

// GetMany implements objstore.BatchGetter: each key draws its fault as
// its own Get would, in key order (so a seed gives the same faults as the
// fallback of one Get a key, and Stats counts a call a key); a faulted key
// is ErrTransient, unambiguous, and never reaches the inner store; the
// rest pass through objstore.GetMany to it in one batch.
func (s *Store) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	out := make([]objstore.GetResult, len(keys))
	var pass []string
	var at []int
	for i, k := range keys {
		if s.draw(ctx, objstore.OpGet, k, false) == transient {
			out[i].Err = transientErr(objstore.OpGet, k)
			continue
		}
		pass, at = append(pass, k), append(at, i)
	}
	for j, r := range objstore.GetMany(ctx, s.inner, pass) {
		out[at[j]] = r
	}
	return out
}

var _ objstore.BatchDeleter = (*Store)(nil)

// DeleteMany implements objstore.BatchDeleter: each key draws its fault as
// its own Delete would, in key order (so a seed gives the same faults as
// the fallback of one Delete a key, and Stats counts a call a key). A
// transient fault is ErrTransient, unambiguous, and that key never reaches
// the inner store; the rest pass through objstore.DeleteMany to it in one
// batch. A lost acknowledgement is reported (ErrTransient, ambiguous) only
// for a key the inner store deleted without error, and starts a read
// outage as Delete's does; an inner error comes back unchanged.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	errs := make([]error, len(keys))
	var pass []string
	var at []int
	var lost []bool
	for i, k := range keys {
		f := s.draw(ctx, objstore.OpDelete, k, true)
		if f == transient {
			errs[i] = transientErr(objstore.OpDelete, k)
			continue
		}
		pass, at, lost = append(pass, k), append(at, i), append(lost, f == lostAck)
	}
	for j, err := range objstore.DeleteMany(ctx, s.inner, pass) {
		if lost[j] && err == nil {
			s.lost()
			err = objstore.NewAmbiguousError(objstore.OpDelete, pass[j], objstore.ErrTransient, errInjected)
		}
		errs[at[j]] = err
	}
	return errs
}
