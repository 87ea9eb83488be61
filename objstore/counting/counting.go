// Package counting wraps any objstore.Store and counts the requests made
// through it, for cost tests ("a publish costs exactly one conditional
// write") and for benchmarks that report requests per operation.
//
// Every call made through the wrapper is counted, including calls the inner
// store rejects before I/O. Per-operation totals are always exact. A bounded
// call log additionally answers per-key-prefix questions (CountWhere); once
// the log overflows it is marked truncated and CountWhere panics rather than
// return a wrong number.
package counting

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/graphkernel/graphkernel/objstore"
)

// DefaultLogLimit is the call-log bound of New.
const DefaultLogLimit = 1 << 20

// OpCounts counts the calls of one operation. It is objstore.OpCounts: this
// wrapper counts every call made through it, including calls the inner store
// rejects before I/O, and counts as an error whatever the inner store
// returned.
type OpCounts = objstore.OpCounts

// Counts is a snapshot of the wrapper's totals; == compares snapshots. It is
// objstore.RequestCounts (Op, Requests and Writes are its methods).
type Counts = objstore.RequestCounts

// Record is one logged call.
type Record struct {
	Op objstore.Op
	// Key is the key, or the prefix for List; for a batched delete
	// (DeleteMany) its first key.
	Key string
	// Keys, for a batched delete only, are all its keys (one request).
	Keys []string
	// Cond is the Put condition (zero for other operations).
	Cond objstore.Condition
	// Round is the sequential round the call belongs to (Rounds, counted
	// from 1 after the last Reset): the requests of one PutMany share it.
	Round uint64
}

// Store is the counting wrapper. It is safe for concurrent use.
type Store struct {
	inner    objstore.Store
	logLimit int

	mu        sync.Mutex
	counts    Counts
	rounds    uint64
	log       []Record
	truncated bool
}

var _ objstore.Store = (*Store)(nil)

// New wraps inner with a call log of at most DefaultLogLimit records.
func New(inner objstore.Store) *Store { return NewWithLogLimit(inner, DefaultLogLimit) }

// NewWithLogLimit wraps inner with a call log of at most limit records.
// limit 0 keeps no log: CountWhere then panics after the first call.
// It panics on a negative limit or a nil inner store.
func NewWithLogLimit(inner objstore.Store, limit int) *Store {
	if inner == nil || limit < 0 {
		panic(fmt.Sprintf("counting: invalid wrapper (inner %v, log limit %d)", inner, limit))
	}
	return &Store{inner: inner, logLimit: limit}
}

// Inner returns the wrapped store.
func (s *Store) Inner() objstore.Store { return s.inner }

// Counts returns a snapshot of the totals.
func (s *Store) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Writes returns Put + Delete calls so far.
func (s *Store) Writes() uint64 { return s.Counts().Writes() }

// Reset zeroes the totals and empties the log (clearing truncation).
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = Counts{}
	s.rounds = 0
	s.log = nil
	s.truncated = false
}

// Truncated reports whether the log dropped calls since the last Reset.
func (s *Store) Truncated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated
}

// Log returns a copy of the logged calls in the order they started, and
// whether the log is complete (false once it was truncated).
func (s *Store) Log() ([]Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.log...), !s.truncated
}

// CountWhere returns how many logged calls of op had a key (List: prefix)
// starting with prefix; a batched delete counts once if any of its keys
// does. It panics if the log was truncated since the last
// Reset: a partial count would be silently wrong.
func (s *Store) CountWhere(op objstore.Op, prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.truncated {
		panic(fmt.Sprintf("counting: CountWhere(%s, %q) on a truncated call log (limit %d records); Reset between measurements or raise the limit",
			op, prefix, s.logLimit))
	}
	n := 0
	for _, r := range s.log {
		if r.Op != op {
			continue
		}
		if strings.HasPrefix(r.Key, prefix) || slices.ContainsFunc(r.Keys, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
			n++
		}
	}
	return n
}

// Rounds returns the sequential rounds of requests since the last Reset:
// every call is one round, except that the requests of one PutMany (or
// the Gets of one GetMany) share one (they are issued together). A caller that issues calls from several
// goroutines at once gets their sum, not its critical path.
func (s *Store) Rounds() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds
}

// start counts and logs one call, a round of its own; size is the Put
// payload (0 otherwise).
func (s *Store) start(r Record, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rounds++
	s.record(r, size)
}

// record counts and logs one call in the current round; s.mu is held.
func (s *Store) record(r Record, size int) {
	s.counts.CountRequest(r.Op, size)
	r.Round = s.rounds
	if len(s.log) < s.logLimit {
		s.log = append(s.log, r)
	} else {
		s.truncated = true
	}
}

// finish counts one call's outcome.
func (s *Store) finish(op objstore.Op, err error, bytesRead int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.counts.CountError(op)
	}
	s.counts.BytesRead += uint64(bytesRead)
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.start(Record{Op: objstore.OpGet, Key: key}, 0)
	obj, err := s.inner.Get(ctx, key)
	read := 0
	if err == nil {
		read = len(obj.Data)
	}
	s.finish(objstore.OpGet, err, read)
	return obj, err
}

// Head implements objstore.Store.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	s.start(Record{Op: objstore.OpHead, Key: key}, 0)
	attrs, err := s.inner.Head(ctx, key)
	s.finish(objstore.OpHead, err, 0)
	return attrs, err
}

// List implements objstore.Store.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	s.start(Record{Op: objstore.OpList, Key: prefix}, 0)
	page, err := s.inner.List(ctx, prefix, startAfter, limit)
	s.finish(objstore.OpList, err, 0)
	return page, err
}

// Put implements objstore.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	s.start(Record{Op: objstore.OpPut, Key: key, Cond: cond}, len(data))
	etag, err := s.inner.Put(ctx, key, data, cond)
	s.finish(objstore.OpPut, err, 0)
	return etag, err
}

// Delete implements objstore.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	s.start(Record{Op: objstore.OpDelete, Key: key}, 0)
	err := s.inner.Delete(ctx, key)
	s.finish(objstore.OpDelete, err, 0)
	return err
}

var _ objstore.DeferredPutter = (*Store)(nil)

// PutDeferred implements objstore.DeferredPutter: it is counted as a
// create-only Put and defers durability when the inner store can
// (objstore.PutDeferred), else it is the inner store's durable Put.
func (s *Store) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	s.start(Record{Op: objstore.OpPut, Key: key, Cond: objstore.CreateOnly}, len(data))
	etag, _, err := objstore.PutDeferred(ctx, s.inner, key, data)
	s.finish(objstore.OpPut, err, 0)
	return etag, err
}

// SyncDeferred implements objstore.DeferredPutter by passing keys to the
// inner store (objstore.SyncDeferred); it is not a request and is not
// counted.
func (s *Store) SyncDeferred(ctx context.Context, keys []string) error {
	return objstore.SyncDeferred(ctx, s.inner, keys)
}

var _ objstore.DeferredPublisher = (*Store)(nil)

// PutAfterDeferred implements objstore.DeferredPublisher: it is counted as
// one Put under cond (the sync of deferred is no request) and passes
// through objstore.PutAfterDeferred to the inner store.
func (s *Store) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	s.start(Record{Op: objstore.OpPut, Key: key, Cond: cond}, len(data))
	etag, err := objstore.PutAfterDeferred(ctx, s.inner, key, data, cond, deferred)
	s.finish(objstore.OpPut, err, 0)
	return etag, err
}

var _ objstore.IntactDeferredPutter = (*Store)(nil)

// PutDeferredIntact implements objstore.IntactDeferredPutter: counted as
// a Put under cond, passed through objstore.PutDeferredIntact.
func (s *Store) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	s.start(Record{Op: objstore.OpPut, Key: key, Cond: cond}, len(data))
	etag, deferred, err := objstore.PutDeferredIntact(ctx, s.inner, key, data, cond)
	s.finish(objstore.OpPut, err, 0)
	return etag, deferred, err
}

var _ objstore.BatchPutter = (*Store)(nil)

// PutMany implements objstore.BatchPutter: every request is counted and
// logged as the Put it is, all in one round (Rounds), and the batch passes
// through objstore.PutMany to the inner store (concurrent there if the
// inner store can, else sequential).
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	s.mu.Lock()
	s.rounds++
	for _, r := range reqs {
		s.record(Record{Op: objstore.OpPut, Key: r.Key, Cond: r.Cond}, len(r.Data))
	}
	s.mu.Unlock()
	out := objstore.PutMany(ctx, s.inner, reqs)
	for _, r := range out {
		s.finish(objstore.OpPut, r.Err, 0)
	}
	return out
}

var _ objstore.BatchGetter = (*Store)(nil)

// GetMany implements objstore.BatchGetter: every key is counted and logged
// as the Get it is (as the fallback of one Get a key would count it), all
// in one round (Rounds), and the batch passes through objstore.GetMany to
// the inner store (one call, or concurrent Gets, if the inner store can;
// else one Get a key). A batch over objstore.MaxGetBatch keys is split
// there, as objstore.GetMany splits it for any BatchGetter.
func (s *Store) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	s.mu.Lock()
	s.rounds++
	for _, k := range keys {
		s.record(Record{Op: objstore.OpGet, Key: k}, 0)
	}
	s.mu.Unlock()
	out := objstore.GetMany(ctx, s.inner, keys)
	for _, r := range out {
		read := 0
		if r.Err == nil {
			read = len(r.Object.Data)
		}
		s.finish(objstore.OpGet, r.Err, read)
	}
	return out
}

var _ objstore.BatchDeleter = (*Store)(nil)

// DeleteMany implements objstore.BatchDeleter, counted the way the
// backend bills it. When the inner store batches deletes
// (objstore.BatchDeleter: S3's DeleteObjects, the simulator's one call),
// the batch is one Delete request in one round, logged as one record
// naming every key (Record.Keys), an error if any key failed, and passes
// to the inner store's DeleteMany as it is (which refuses more than
// objstore.MaxDeleteBatch keys). Otherwise each key is the Delete it is
// (a request and a round a key, as objstore.DeleteMany's fallback makes
// them). Unlike a GetMany, whose keys are a Get each on every backend
// (S3 bills each of the concurrent GETs), a batched delete is one
// request.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	b, ok := s.inner.(objstore.BatchDeleter)
	if !ok {
		errs := make([]error, len(keys))
		for i, k := range keys {
			errs[i] = s.Delete(ctx, k)
		}
		return errs
	}
	if len(keys) == 0 {
		return nil
	}
	s.start(Record{Op: objstore.OpDelete, Key: keys[0], Keys: slices.Clone(keys)}, 0)
	errs := b.DeleteMany(ctx, keys)
	var failed error
	for _, err := range errs {
		if err != nil {
			failed = err
			break
		}
	}
	s.finish(objstore.OpDelete, failed, 0)
	return errs
}
