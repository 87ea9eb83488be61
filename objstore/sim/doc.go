// Package sim is a deterministic in-memory objstore.Store for the simulator
// and for tests.
//
// # Determinism
//
// Given the same Config.Seed and the same sequence of calls, a Store returns
// the same results, ETags, injected faults, latencies and counters, every
// run, in every process. It reads no wall clock, starts no goroutines, uses
// no global random source and never lets map iteration order reach a result:
// keys live in a sorted index. Entropy comes from two private PCG streams
// seeded from Config.Seed:
//
//   - the latency stream, drawn when a call is issued (before Hook.BeforeCall),
//     consumes exactly two values per call;
//   - the fault stream, drawn when a call executes (after BeforeCall and the
//     context check), consumes exactly four values per call whatever the
//     operation and the configured rates, so SetFaults never shifts which
//     values later calls see.
//
// Calls that fail key validation consume no entropy, reach no hook and are
// not counted as requests: they never left the client.
//
// ETags are a store-wide counter ("e1", "e2", ...): every successful write
// yields a new ETag, even for identical bytes. Deleting and recreating a key
// never revives an old ETag, and Clone keeps the counter, so a clone never
// reissues an ETag issued before it was cloned.
//
// # Fault model
//
// Faults are decided per executed call from the fault stream (see Faults):
//
//   - transient (any op): ErrTransient, no effect. Reads are never ambiguous.
//     A transient write is marked ambiguous half the time (seeded) — a real
//     client cannot always tell — but it was never applied either way.
//   - conflict (conditional Put only): ErrConflict, no effect, not ambiguous.
//   - lost acknowledgement (Put and Delete): the write is executed, then the
//     reply is lost: ErrTransient with Ambiguous set. Callers must read back.
//   - latency: uniform in [LatencyMin, LatencyMax] plus an occasional spike,
//     reported in Call.Latency for the simulator's clock; never slept.
//
// At most one error fault hits a call; transient wins over conflict, which
// wins over a lost acknowledgement.
//
// # Durability and machine crashes
//
// Every write through the Store is durable when it applies. Its Deferring
// view adds the deferral capabilities of objstore/fs
// (objstore.DeferredPutter, IntactDeferredPutter, DeferredPublisher): a
// deferred object is visible at once but volatile until synced, and
// MachineCrash, a power loss, loses, reverts or tears (seeded, from a
// third PCG stream that no call draws from) every volatile object. A
// torn object stays listed and every read of it reports
// objstore.ErrCorruptObject, as fs reports a torn file. See Deferring.
//
// # Hooks
//
// A Hook sees every call that passed key validation: BeforeCall runs before
// any effect or fault decision and may abort the call (the simulator uses
// this to park an actor, or to fail every call of a crashed one); AfterCall
// runs once the effect, if any, is durable and may replace the result. The
// store holds no lock while a hook runs, so a hook may block.
//
// Peek, Keys and Clone inspect the store while bypassing faults, hooks and
// counters; checkers use them to read the durable state at a crash cut.
package sim
