package sim

import (
	"context"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
)

// Call describes one store call to a Hook.
type Call struct {
	// Seq numbers the calls that passed key validation, from 1, in issue
	// order.
	Seq uint64
	// Op is the operation.
	Op objstore.Op
	// Key is the key, or the prefix for List; for a batched call
	// (DeleteMany, GetMany) its first key.
	Key string
	// Keys, for a batched call only (DeleteMany: Op OpDelete; GetMany:
	// Op OpGet), are all its keys (one request: one latency, one fault
	// decision, every key deleted or read together).
	Keys []string
	// Cond is the Put condition (zero for other operations).
	Cond objstore.Condition
	// Size is the request payload in bytes (Put only).
	Size int
	// Durability is the durability of a Put made through Deferring:
	// objstore.DeferAll (PutDeferred), objstore.DeferName
	// (PutDeferredIntact), or DurableNow (every other call).
	Durability objstore.Durability
	// After is the number of deferred keys a PutAfterDeferred made
	// durable before its own write (0 for every other call).
	After int
	// Latency is the simulated latency drawn for this call. The store
	// never sleeps; the simulator advances its clock by it.
	Latency time.Duration
}

// Hook observes and schedules calls. The store holds no lock while a hook
// method runs, so a hook may block (the simulator parks actors there). A hook
// must be safe for concurrent use if the store is used concurrently.
type Hook interface {
	// BeforeCall runs before any effect or fault decision. A non-nil error
	// aborts the call with no effect and is returned to the caller as is
	// (not wrapped), so a simulator "crashed" error propagates unchanged.
	BeforeCall(ctx context.Context, c *Call) error
	// AfterCall runs after the call's effect, if any, exactly once for each
	// call whose BeforeCall returned nil. effectApplied reports whether the
	// store changed; result is the error the store is about to return. A
	// non-nil return replaces the result error (and zeroes the result
	// values).
	AfterCall(ctx context.Context, c *Call, effectApplied bool, result error) error
}

// HookFuncs adapts two functions to a Hook. A nil function does nothing and
// returns nil.
type HookFuncs struct {
	Before func(ctx context.Context, c *Call) error
	After  func(ctx context.Context, c *Call, effectApplied bool, result error) error
}

// BeforeCall calls h.Before if set.
func (h HookFuncs) BeforeCall(ctx context.Context, c *Call) error {
	if h.Before == nil {
		return nil
	}
	return h.Before(ctx, c)
}

// AfterCall calls h.After if set.
func (h HookFuncs) AfterCall(ctx context.Context, c *Call, effectApplied bool, result error) error {
	if h.After == nil {
		return nil
	}
	return h.After(ctx, c, effectApplied, result)
}
