package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/graphkernel/graphkernel/objstore"
)

// Config configures a Store.
type Config struct {
	// Seed seeds the latency and fault streams.
	Seed uint64
	// Faults are the initial fault rates; SetFaults changes them.
	Faults Faults
	// Hook, if non-nil, sees every call that passed key validation.
	Hook Hook
}

// object is one stored version. A torn object (left by MachineCrash in
// place of a deferred object that never became durable) has no data: every
// read of it reports objstore.ErrCorruptObject, as objstore/fs reports a
// torn file.
type object struct {
	data []byte
	etag string
	torn bool
}

// Store is the deterministic in-memory objstore.Store. It is safe for
// concurrent use; determinism additionally needs the calls to be issued and
// executed in a deterministic order, which the simulator guarantees.
type Store struct {
	mu         sync.Mutex
	cfg        Config // cfg.Faults and cfg.Hook track SetFaults and SetHook
	latencyRNG *rand.Rand
	faultRNG   *rand.Rand
	readOutage int // reads still to fail after the last lost ack
	objects    map[string]object
	keys       index
	etagSeq    uint64
	callSeq    uint64
	counters   Counters
	// volatile holds, per key whose visible version is not yet durable
	// (written through Deferring and not synced), what the key durably
	// holds (durability.go). Only writes through Deferring add to it.
	volatile   map[string]pending
	crashRNG   *rand.Rand // MachineCrash's stream, made on first use
	syncRNG    *rand.Rand // Deferring.SyncDeferred's fault stream, made on first use
	syncFaults uint64
	failSyncs  int // syncs still to fail (FailSyncs)
}

var _ objstore.Store = (*Store)(nil)

// New returns an empty Store. It panics if cfg.Faults is invalid (see
// Faults.Validate): a bad configuration is a bug in the test, not a runtime
// condition.
func New(cfg Config) *Store {
	if err := cfg.Faults.Validate(); err != nil {
		panic(err.Error())
	}
	return &Store{
		cfg:        cfg,
		latencyRNG: rand.New(rand.NewPCG(cfg.Seed, streamLatency)),
		faultRNG:   rand.New(rand.NewPCG(cfg.Seed, streamFaults)),
		objects:    make(map[string]object),
	}
}

// SetFaults replaces the fault configuration for later calls. It panics if f
// is invalid. It does not shift the random streams.
func (s *Store) SetFaults(f Faults) {
	if err := f.Validate(); err != nil {
		panic(err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Faults = f
	s.readOutage = min(s.readOutage, f.ReadOutageAfterLostAck)
}

// SetHook replaces the hook for later calls (nil removes it).
func (s *Store) SetHook(h Hook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Hook = h
}

// Counters returns a snapshot of the request accounting.
func (s *Store) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters
}

// FaultsInjected returns the number of injected error faults so far.
func (s *Store) FaultsInjected() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters.Faults.Errors()
}

// Get implements objstore.Store. The returned bytes are a private copy.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	if err := objstore.ValidateKey(objstore.OpGet, key); err != nil {
		return objstore.Object{}, err
	}
	return run(ctx, s, Call{Op: objstore.OpGet, Key: key}, func() (objstore.Object, bool, error) {
		obj, err := s.getLocked(key)
		return obj, false, err
	})
}

// Head implements objstore.Store.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if err := objstore.ValidateKey(objstore.OpHead, key); err != nil {
		return objstore.Attrs{}, err
	}
	return run(ctx, s, Call{Op: objstore.OpHead, Key: key}, func() (objstore.Attrs, bool, error) {
		obj, ok := s.objects[key]
		if !ok {
			return objstore.Attrs{}, false, notFound(objstore.OpHead, key)
		}
		if obj.torn {
			return objstore.Attrs{}, false, corrupt(objstore.OpHead, key)
		}
		return objstore.Attrs{Size: int64(len(obj.data)), ETag: obj.etag}, false, nil
	})
}

// List implements objstore.Store. It costs O(log n + limit).
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	if err := objstore.ValidatePrefix(objstore.OpList, prefix); err != nil {
		return objstore.ListPage{}, err
	}
	limit = objstore.ClampLimit(limit)
	return run(ctx, s, Call{Op: objstore.OpList, Key: prefix}, func() (objstore.ListPage, bool, error) {
		return s.listLocked(prefix, startAfter, limit), false, nil
	})
}

// Put implements objstore.Store. data is copied; the caller may reuse it.
// An unknown condition kind fails with ErrPreconditionFailed before any I/O
// (the contract has no invalid-argument kind).
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
		return "", err
	}
	if cond.Kind > objstore.CondIfMatch {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("sim: unknown condition kind %d", cond.Kind))
	}
	c := Call{Op: objstore.OpPut, Key: key, Cond: cond, Size: len(data)}
	return run(ctx, s, c, func() (string, bool, error) {
		return s.putLocked(key, data, cond, objstore.DurableNow)
	})
}

// Delete implements objstore.Store. Deleting a missing key succeeds and
// reports no effect to the hook.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := objstore.ValidateKey(objstore.OpDelete, key); err != nil {
		return err
	}
	_, err := run(ctx, s, Call{Op: objstore.OpDelete, Key: key}, func() (struct{}, bool, error) {
		return struct{}{}, s.deleteLocked(key), nil
	})
	return err
}

// deleteLocked removes key, durably at once (a volatile version of it is
// forgotten: a machine crash cannot bring it back), and reports whether
// it existed. s.mu is held.
func (s *Store) deleteLocked(key string) bool {
	if _, ok := s.objects[key]; !ok {
		return false
	}
	delete(s.objects, key)
	delete(s.volatile, key) // a delete is durable at once
	if !s.keys.remove(key) {
		panic(fmt.Sprintf("sim: key %q in objects but not in index", key))
	}
	return true
}

var _ objstore.BatchDeleter = (*Store)(nil)

// DeleteMany implements objstore.BatchDeleter as one call (Call.Keys): one
// latency and one fault decision for the whole request, as S3's
// DeleteObjects is one round trip. A transient fault fails every key; a
// lost acknowledgement deletes them all and reports each ambiguous. An
// invalid key fails alone; more than objstore.MaxDeleteBatch keys fail
// every key. The hook sees the call applied when any key existed.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	if errs := objstore.OversizedBatch(keys); errs != nil {
		return errs
	}
	errs := make([]error, len(keys))
	var valid []string
	var at []int
	for i, k := range keys {
		if errs[i] = objstore.ValidateKey(objstore.OpDelete, k); errs[i] == nil {
			valid, at = append(valid, k), append(at, i)
		}
	}
	if len(valid) == 0 {
		return errs
	}
	_, err := run(ctx, s, Call{Op: objstore.OpDelete, Key: valid[0], Keys: valid}, func() (struct{}, bool, error) {
		applied := false
		for _, k := range valid {
			applied = s.deleteLocked(k) || applied
		}
		return struct{}{}, applied, nil
	})
	for _, i := range at {
		errs[i] = err
	}
	return errs
}

var _ objstore.BatchGetter = (*Store)(nil)

// GetMany implements objstore.BatchGetter as one call (Call.Keys, Op
// OpGet): one latency and one fault decision for the whole request, one
// Get request in Counters (as DeleteMany is one Delete request). Each key
// is answered as Get would answer it (ErrNotFound, a torn object's
// corruption, its bytes counted in BytesRead); a fault, a cancelled ctx or
// a hook's error fails every key of the call (an *objstore.Error naming
// each key). An invalid key fails alone and is not sent; more than
// objstore.MaxGetBatch keys fail every key.
func (s *Store) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	if out := objstore.OversizedGetBatch(keys); out != nil {
		return out
	}
	out := make([]objstore.GetResult, len(keys))
	var valid []string
	var at []int
	for i, k := range keys {
		if out[i].Err = objstore.ValidateKey(objstore.OpGet, k); out[i].Err == nil {
			valid, at = append(valid, k), append(at, i)
		}
	}
	if len(valid) == 0 {
		return out
	}
	got, err := run(ctx, s, Call{Op: objstore.OpGet, Key: valid[0], Keys: valid}, func() ([]objstore.GetResult, bool, error) {
		res := make([]objstore.GetResult, len(valid))
		for j, k := range valid {
			res[j].Object, res[j].Err = s.getLocked(k)
		}
		return res, false, nil
	})
	for j, i := range at {
		if err != nil {
			out[i].Err = forKey(err, keys[i])
			continue
		}
		out[i] = got[j]
	}
	return out
}

// getLocked is Get's effect on key. s.mu is held.
func (s *Store) getLocked(key string) (objstore.Object, error) {
	obj, ok := s.objects[key]
	if !ok {
		return objstore.Object{}, notFound(objstore.OpGet, key)
	}
	if obj.torn {
		return objstore.Object{}, corrupt(objstore.OpGet, key)
	}
	s.counters.BytesRead += uint64(len(obj.data))
	return objstore.Object{Data: clone(obj.data), ETag: obj.etag}, nil
}

// forKey is a batched call's error as one key's: an *objstore.Error
// (which names the call's first key) copied to name key; any other error
// (a hook's, returned as is) unchanged.
func forKey(err error, key string) error {
	e, ok := err.(*objstore.Error)
	if !ok {
		return err
	}
	c := *e
	c.Key = key
	return &c
}

// run drives one validated call: issue (seq, latency), BeforeCall, execute
// under the lock (count, context check, fault decision, effect), AfterCall.
// effect runs with s.mu held and reports whether the store changed.
func run[T any](ctx context.Context, s *Store, c Call, effect func() (T, bool, error)) (T, error) {
	var zero T
	hook := s.issue(&c)
	if hook != nil {
		if err := hook.BeforeCall(ctx, &c); err != nil {
			s.mu.Lock()
			s.counters.Aborted++
			s.mu.Unlock()
			return zero, err
		}
	}
	res, applied, err := execute(ctx, s, &c, effect)
	if hook != nil {
		if herr := hook.AfterCall(ctx, &c, applied, err); herr != nil {
			return zero, herr
		}
	}
	if err != nil {
		return zero, err
	}
	return res, nil
}

// issue numbers the call, draws its latency and returns the hook to use.
func (s *Store) issue(c *Call) Hook {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callSeq++
	c.Seq = s.callSeq
	lat, spike := drawLatency(s.latencyRNG, s.cfg.Faults)
	c.Latency = lat
	if spike {
		s.counters.Faults.Spike++
	}
	return s.cfg.Hook
}

// execute counts the call, decides its fault and applies its effect.
func execute[T any](ctx context.Context, s *Store, c *Call, effect func() (T, bool, error)) (T, bool, error) {
	var zero T
	s.mu.Lock()
	defer s.mu.Unlock()
	payload := 0
	if c.Op == objstore.OpPut {
		payload = c.Size
	}
	s.counters.CountRequest(c.Op, payload)
	f := drawFault(s.faultRNG, s.cfg.Faults, c.Op, c.Cond)
	isRead := c.Op == objstore.OpGet || c.Op == objstore.OpHead || c.Op == objstore.OpList
	if isRead && f == faultNone && s.readOutage > 0 {
		s.readOutage--
		f = faultReadOutage
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// A cancelled call never reaches the store: no effect, no fault.
		s.counters.CountError(c.Op)
		return zero, false, objstore.NewError(c.Op, c.Key, objstore.ErrTransient, ctxErr)
	}
	s.counters.countFault(f)
	res, applied, err := zero, false, error(nil)
	switch f {
	case faultTransient, faultTransientAmbiguous, faultConflict, faultReadOutage:
		err = injected(c, f)
	default:
		res, applied, err = effect()
		if f == faultLostAck {
			res, err = zero, injected(c, f)
			s.readOutage = s.cfg.Faults.ReadOutageAfterLostAck
		}
	}
	if err != nil {
		s.counters.CountError(c.Op)
	}
	return res, applied, err
}

// injected builds the error of an injected fault.
func injected(c *Call, f fault) error {
	cause := fmt.Errorf("sim: injected fault (call %d)", c.Seq)
	switch f {
	case faultTransient:
		return objstore.NewError(c.Op, c.Key, objstore.ErrTransient, cause)
	case faultReadOutage:
		return objstore.NewError(c.Op, c.Key, objstore.ErrTransient,
			fmt.Errorf("sim: injected read outage after a lost acknowledgement (call %d)", c.Seq))
	case faultTransientAmbiguous:
		return objstore.NewAmbiguousError(c.Op, c.Key, objstore.ErrTransient, cause)
	case faultConflict:
		return objstore.NewError(c.Op, c.Key, objstore.ErrConflict, cause)
	case faultLostAck:
		return objstore.NewAmbiguousError(c.Op, c.Key, objstore.ErrTransient,
			fmt.Errorf("sim: injected lost acknowledgement (call %d)", c.Seq))
	}
	panic(fmt.Sprintf("sim: no error for fault %d", f))
}

func notFound(op objstore.Op, key string) error {
	return objstore.NewError(op, key, objstore.ErrNotFound, nil)
}

// corrupt is the error of a read of a torn object: ErrRejected whose cause
// is objstore.ErrCorruptObject, as objstore/fs reports a torn file.
func corrupt(op objstore.Op, key string) error {
	return objstore.NewError(op, key, objstore.ErrRejected,
		fmt.Errorf("sim: torn by a machine crash: %w", objstore.ErrCorruptObject))
}

// putLocked applies a Put whose condition is checked here, its object
// durable now or deferred as dur says (durability.go). s.mu is held.
func (s *Store) putLocked(key string, data []byte, cond objstore.Condition, dur objstore.Durability) (string, bool, error) {
	cur, exists := s.objects[key]
	switch {
	case cond.Kind == objstore.CondIfMatch && exists && cur.torn:
		// objstore/fs reads the current object to compare: a torn one
		// fails its integrity check.
		return "", false, corrupt(objstore.OpPut, key)
	case cond.Kind == objstore.CondCreateOnly && exists:
		return "", false, objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("create-only: key exists"))
	case cond.Kind == objstore.CondIfMatch && !exists:
		return "", false, objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("if-match %q: key missing", cond.ETag))
	case cond.Kind == objstore.CondIfMatch && cur.etag != cond.ETag:
		return "", false, objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("if-match %q: current etag %q", cond.ETag, cur.etag))
	}
	s.noteDurability(key, cur, exists, dur)
	etag := s.nextETag()
	if !exists {
		s.keys.insert(key)
	}
	s.objects[key] = object{data: clone(data), etag: etag}
	return etag, true, nil
}

// nextETag issues a fresh ETag. s.mu is held.
func (s *Store) nextETag() string {
	s.etagSeq++
	return "e" + strconv.FormatUint(s.etagSeq, 10)
}

// listLocked returns one List page. s.mu is held.
func (s *Store) listLocked(prefix, startAfter string, limit int) objstore.ListPage {
	// The least string > startAfter is startAfter+"\x00".
	from := startAfter + "\x00"
	if prefix > from {
		from = prefix
	}
	var page objstore.ListPage
	for c := s.keys.seek(from); ; c = s.keys.next(c) {
		k, ok := s.keys.at(c)
		if !ok || !strings.HasPrefix(k, prefix) {
			return page
		}
		if len(page.Keys) == limit {
			page.Truncated = true
			return page
		}
		page.Keys = append(page.Keys, k)
	}
}

func clone(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
