// Package model holds the sequential specifications the simulator checks
// recorded histories against with porcupine, and (in reference.go, owned by
// the kernel work) the reference model of the kernel API.
//
// Two porcupine models live here:
//
//   - Chain (chain.go): the commit chain of one branch incarnation. Commits
//     append their id; reads return the whole chain, oldest first.
//   - Value (value.go): the published value of one table on one branch
//     incarnation, a register with optional compare-and-set (strict writes).
//
// Both are porcupine.NondeterministicModel values: an operation whose outcome
// is ambiguous (the client cannot tell whether it took effect, for example a
// lost acknowledgement, an exhausted retry budget or a crash) may or may not
// have taken effect, so the model steps into both states. Definite failures
// never take effect; acknowledged successes always do, exactly once.
//
// Histories are partitioned by Input.Key (a branch incarnation for chains, an
// incarnation and table for values), in sorted key order so the partition
// order never depends on map iteration.
//
// The models are pure: no I/O, no clock, no goroutines. Running porcupine
// (which uses goroutines and a wall-clock timeout) is the caller's business.
package model
