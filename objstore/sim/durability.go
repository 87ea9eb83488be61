package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/graphkernel/graphkernel/objstore"
)

// pending is what a key whose visible version is volatile durably holds:
// the object it held before its first write not yet durable (durable, if
// existed), and whether its visible version's data is volatile too (all:
// written with PutDeferred, which a crash may tear).
type pending struct {
	durable object
	existed bool
	all     bool
	// syncFailed: a sync naming the key failed since it was written (an
	// fsync's EIO). The OS let its pages go clean without reaching the
	// disk, so the key stays volatile however often it is synced again
	// (Linux reports a writeback error once); the store refuses to sync
	// it again (objstore.ErrSyncFailed) unless the view forgets.
	syncFailed bool
}

// streamCrash selects MachineCrash's PCG stream ("oscrash"), streamSync
// SyncDeferred's ("sync").
const (
	streamCrash = 0x6f736372617368
	streamSync  = 0x73796e63
)

// Deferring is a Store seen as a store that defers durability the way
// objstore/fs does: it implements objstore.DeferredPutter,
// objstore.IntactDeferredPutter and objstore.DeferredPublisher with their
// contracts, so a deferred object is visible at once but survives a
// MachineCrash only once synced. The Store itself implements none of
// them (every write through it is durable at once), so runs that never
// ask for the view keep their traces.
//
// Durability follows objstore/fs:
//
//   - PutDeferred (objstore.DeferAll) is a create-only Put whose object,
//     data and name alike, is volatile: a crash may lose it, tear it (the
//     key stays, every read reports objstore.ErrCorruptObject) or keep it.
//   - PutDeferredIntact (objstore.DeferName) is a Put under its condition
//     whose name is volatile: a crash leaves the key as it durably was
//     before (absent, or the object it replaced) or this object, whole;
//     never torn.
//   - SyncDeferred makes the named keys' visible versions durable. A key
//     that does not exist fails it (ErrTransient naming the first such key
//     in key order, as fs fails to open it), and so does, with chance
//     Faults.TransientRate (drawn from its own stream, one draw a call), an
//     injected fsync failure (ErrTransient naming the first key); then
//     none of the keys is made durable (the contract lets none be assumed
//     durable).
//   - A failed sync (injected: SyncDeferred's and PutAfterDeferred's
//     fault draws, FailSyncs) marks every volatile key it named as failed
//     (objstore.ErrSyncFailed): as on Linux, whose fsync reports a
//     writeback error once and then succeeds over pages it marked clean,
//     no later sync makes such a key durable (a MachineCrash may still
//     lose or tear it). The store remembers: a later SyncDeferred or
//     PutAfterDeferred naming a failed key fails again (ErrTransient with
//     cause objstore.ErrSyncFailed, nothing made durable), until the key
//     is written again; the Forgetful view lets such a sync succeed, the
//     OS's answer, with the key still volatile (what a store that trusted
//     a second fsync would report).
//   - PutAfterDeferred makes the deferred keys durable first, as
//     SyncDeferred does, and then writes key durably under its condition
//     (fs syncs them in the round of its temp file, before it places the
//     name, so they are durable even if the condition then fails). A key
//     SyncDeferred would fail on fails it before key is written, with a
//     definite ErrTransient naming that key.
//   - Put and Delete are durable at once, and make the key's state
//     durable (a Put over a volatile object, a Delete of one).
//
// Put, PutDeferred, PutDeferredIntact and PutAfterDeferred are store
// calls (hook, faults, counters, latency: Call.Durability and Call.After
// tell them apart); SyncDeferred is no request (fs makes it no request
// either): no hook, no count, no latency, and its one fault draw comes
// from a stream of its own, so it shifts no call's. objstore.PutMany on
// the view runs its requests one after another (no BatchPutter), each as
// its single-object call, After settled by objstore.PutConcurrently, so a
// request's After keys are durable once it succeeds, as on fs.
//
// A crash of a process (an actor) loses nothing: the operating system
// still has every write. MachineCrash is the power loss.
type Deferring struct {
	*Store
	forget bool // Forgetful: a failed key's later sync succeeds, still volatile
}

// Deferring returns s seen as a store that defers durability (see
// Deferring). Every view of s shares s's state.
func (s *Store) Deferring() *Deferring { return &Deferring{Store: s} }

// Forgetful returns s seen as Deferring, but as a store that does not
// remember a failed sync: a later sync of the key succeeds and the key
// stays volatile (the OS's answer, passed on). Tests of callers use it:
// a caller must never publish an object whose sync failed by syncing it
// again.
func (s *Store) Forgetful() *Deferring { return &Deferring{Store: s, forget: true} }

// FailSyncs makes the next n syncs of deferred keys fail as an fsync's
// EIO does (SyncDeferred, or PutAfterDeferred's sync of its deferred
// keys: see Deferring), before any fault draw; a test's deterministic
// injection.
func (s *Store) FailSyncs(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failSyncs += n
}

// injectedSyncFailure reports whether the next sync of deferred keys fails:
// one FailSyncs'd, else one draw from the sync stream at the transient
// rate. s.mu is held.
func (s *Store) injectedSyncFailure() bool {
	if s.failSyncs > 0 {
		s.failSyncs--
		return true
	}
	if s.syncRNG == nil {
		s.syncRNG = rand.New(rand.NewPCG(s.cfg.Seed, streamSync))
	}
	return unit(s.syncRNG.Uint64()) < s.cfg.Faults.TransientRate
}

// failSync records a failed sync of keys: every volatile one is marked
// failed (see pending.syncFailed). It returns the sync's error, naming
// the first key. s.mu is held.
func (s *Store) failSync(keys []string) error {
	s.syncFaults++
	for _, k := range keys {
		if p, ok := s.volatile[k]; ok {
			p.syncFailed = true
			s.volatile[k] = p
		}
	}
	return objstore.NewError(objstore.OpPut, keys[0], objstore.ErrTransient,
		fmt.Errorf("sync deferred write: sim: injected fsync failure: %w", objstore.ErrSyncFailed))
}

var (
	_ objstore.DeferredPutter       = (*Deferring)(nil)
	_ objstore.IntactDeferredPutter = (*Deferring)(nil)
	_ objstore.DeferredPublisher    = (*Deferring)(nil)
)

// PutDeferred implements objstore.DeferredPutter: a create-only Put whose
// object is volatile until synced (objstore.DeferAll).
func (d *Deferring) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
		return "", err
	}
	s := d.Store
	c := Call{Op: objstore.OpPut, Key: key, Cond: objstore.CreateOnly, Size: len(data), Durability: objstore.DeferAll}
	return run(ctx, s, c, func() (string, bool, error) {
		return s.putLocked(key, data, objstore.CreateOnly, objstore.DeferAll)
	})
}

// PutDeferredIntact implements objstore.IntactDeferredPutter: a Put under
// cond whose name is volatile until synced (objstore.DeferName). deferred
// is always true.
func (d *Deferring) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
		return "", true, err
	}
	if cond.Kind > objstore.CondIfMatch {
		return "", true, objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("sim: unknown condition kind %d", cond.Kind))
	}
	s := d.Store
	c := Call{Op: objstore.OpPut, Key: key, Cond: cond, Size: len(data), Durability: objstore.DeferName}
	etag, err := run(ctx, s, c, func() (string, bool, error) {
		return s.putLocked(key, data, cond, objstore.DeferName)
	})
	return etag, true, err
}

// SyncDeferred implements objstore.DeferredPutter: it makes the keys'
// visible versions durable, or none of them on an error (see Deferring).
// It is no store call.
func (d *Deferring) SyncDeferred(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		if err := objstore.ValidateKey(objstore.OpPut, k); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return objstore.NewError(objstore.OpPut, keys[0], objstore.ErrTransient, fmt.Errorf("sync deferred write: %w", err))
	}
	s := d.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.injectedSyncFailure() {
		return s.failSync(keys) // an fsync that fails (fs: EIO): nothing is made durable
	}
	return s.syncLocked(keys, d.forget)
}

// PutAfterDeferred implements objstore.DeferredPublisher: one Put call
// that makes the deferred keys durable and then writes key durably under
// cond (see Deferring).
func (d *Deferring) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	s := d.Store
	if len(deferred) == 0 {
		return s.Put(ctx, key, data, cond)
	}
	if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
		return "", err
	}
	for _, k := range deferred {
		if err := objstore.ValidateKey(objstore.OpPut, k); err != nil {
			return "", err
		}
	}
	if cond.Kind > objstore.CondIfMatch {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("sim: unknown condition kind %d", cond.Kind))
	}
	c := Call{Op: objstore.OpPut, Key: key, Cond: cond, Size: len(data), After: len(deferred)}
	return run(ctx, s, c, func() (string, bool, error) {
		if s.injectedSyncFailure() {
			return "", false, s.failSync(deferred) // fs: the round of the temp file fails before the name is placed
		}
		if err := s.syncLocked(deferred, d.forget); err != nil {
			return "", false, err
		}
		return s.putLocked(key, data, cond, objstore.DurableNow)
	})
}

// syncLocked makes keys' visible versions durable, or fails with none made
// durable if one does not exist or, unless forget, one's sync failed
// before (objstore.ErrSyncFailed). A failed key is never made durable
// (forget: it stays volatile and the sync succeeds, as the OS answers a
// second fsync). s.mu is held.
func (s *Store) syncLocked(keys []string, forget bool) error {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if _, ok := s.objects[k]; !ok {
			return objstore.NewError(objstore.OpPut, k, objstore.ErrTransient,
				fmt.Errorf("sync deferred write: sim: deferred key %q does not exist", k))
		}
		if s.volatile[k].syncFailed && !forget {
			return objstore.NewError(objstore.OpPut, k, objstore.ErrTransient,
				fmt.Errorf("sync deferred write: sim: an earlier sync of %q failed: %w", k, objstore.ErrSyncFailed))
		}
	}
	for _, k := range sorted {
		if !s.volatile[k].syncFailed {
			delete(s.volatile, k)
		}
	}
	return nil
}

// noteDurability records a write of key about to replace cur (if exists)
// with durability dur: a durable write makes the key's state durable, a
// deferred one keeps (or starts) the record of what the key durably
// holds. s.mu is held.
func (s *Store) noteDurability(key string, cur object, exists bool, dur objstore.Durability) {
	if dur == objstore.DurableNow {
		delete(s.volatile, key)
		return
	}
	if s.volatile == nil {
		s.volatile = map[string]pending{}
	}
	p, ok := s.volatile[key]
	if !ok {
		p = pending{durable: cur, existed: exists}
	}
	p.all = dur == objstore.DeferAll
	p.syncFailed = false // a new write: a new file, whose sync has not failed
	s.volatile[key] = p
}

// SyncFaults returns the number of fsync failures SyncDeferred injected
// (no request: not in Counters).
func (s *Store) SyncFaults() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncFaults
}

// CrashReport counts what one MachineCrash did to the volatile objects.
type CrashReport struct {
	// Lost counts keys a crash left absent (a deferred create lost).
	Lost int
	// Reverted counts keys a crash left holding the object they durably
	// held before (a deferred replacement lost).
	Reverted int
	// Torn counts keys a crash left torn (objstore.ErrCorruptObject).
	Torn int
	// Kept counts volatile objects that survived whole.
	Kept int
}

// Volatile returns the number of keys whose visible version a
// MachineCrash may lose.
func (s *Store) Volatile() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.volatile)
}

// IsVolatile reports whether key's visible version is not yet durable.
func (s *Store) IsVolatile(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.volatile[key]
	return ok
}

// MachineCrash is a power loss: every volatile object (see Deferring) is,
// key by key in key order and drawn from the store's own crash stream
// (seeded from Config.Seed, two draws a key): kept whole with chance keep;
// else, if its data was deferred too (PutDeferred) and with chance tear,
// torn; else lost, the key back to what it durably held (absent, or the
// object a PutDeferredIntact replaced, with its ETag). Afterwards nothing
// is volatile. It bypasses hooks, faults and counters; the caller (the
// simulator) crashes every process of the machine with it. It panics if
// keep or tear is outside [0, 1].
func (s *Store) MachineCrash(keep, tear float64) CrashReport {
	if !(keep >= 0 && keep <= 1 && tear >= 0 && tear <= 1) {
		panic(fmt.Sprintf("sim: MachineCrash(keep %v, tear %v) outside [0, 1]", keep, tear))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashRNG == nil {
		s.crashRNG = rand.New(rand.NewPCG(s.cfg.Seed, streamCrash))
	}
	keys := make([]string, 0, len(s.volatile))
	//detlint:ordered collects keys, sorted next
	for k := range s.volatile {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rep CrashReport
	for _, k := range keys {
		p := s.volatile[k]
		uKeep, uTear := s.crashRNG.Uint64(), s.crashRNG.Uint64()
		switch {
		case unit(uKeep) < keep:
			rep.Kept++
		case p.all && unit(uTear) < tear:
			s.objects[k] = object{etag: s.nextETag(), torn: true}
			rep.Torn++
		case p.existed:
			s.objects[k] = p.durable
			rep.Reverted++
		default:
			delete(s.objects, k)
			if !s.keys.remove(k) {
				panic(fmt.Sprintf("sim: volatile key %q not in the index", k))
			}
			rep.Lost++
		}
	}
	s.volatile = nil
	return rep
}

// Torn reports whether key holds an object a MachineCrash tore (every
// read of it reports objstore.ErrCorruptObject; Peek returns no bytes).
func (s *Store) Torn(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objects[key].torn
}
