package objstore

import "fmt"

// OpCounts counts the calls of one operation. It is the per-operation part of
// RequestCounts, shared by every accounting store (objstore/sim,
// objstore/counting) so cost tests and benchmarks read one type.
type OpCounts struct {
	// Requests counts calls of the operation that the accounting store saw,
	// whatever their outcome. Which calls it sees depends on the store:
	// objstore/counting sees every call made through it, including calls
	// the inner store rejects before I/O (invalid keys); objstore/sim counts
	// only calls that passed key validation and Hook.BeforeCall.
	Requests uint64
	// Errors counts those of Requests whose result was an error of any kind,
	// including ErrNotFound and ErrPreconditionFailed. objstore/sim counts
	// the store's own result (injected faults included) before any
	// Hook.AfterCall replacement; objstore/counting counts what the inner
	// store returned.
	Errors uint64
}

// RequestCounts is a snapshot of a store's request accounting. It is a plain
// value: comparing two snapshots with == is meaningful, and subtracting
// field by field gives the cost of what ran in between.
type RequestCounts struct {
	Get, Head, List, Put, Delete OpCounts
	// BytesRead sums the data bytes of successful Gets (Get calls whose
	// result was no error); failed Gets add nothing.
	BytesRead uint64
	// BytesWritten sums the payload bytes of every counted Put request,
	// applied or not, succeeded or not: the bytes a client sends. It follows
	// Put.Requests, so it inherits that field's per-store difference
	// (objstore/counting includes Puts rejected for an invalid key;
	// objstore/sim does not).
	BytesWritten uint64
}

// Op returns the counts of op. It panics on an unknown op.
func (c RequestCounts) Op(op Op) OpCounts { return *c.op(op) }

// Requests returns the total requests over all operations.
func (c RequestCounts) Requests() uint64 {
	return c.Get.Requests + c.Head.Requests + c.List.Requests + c.Put.Requests + c.Delete.Requests
}

// Writes returns Put + Delete requests.
func (c RequestCounts) Writes() uint64 { return c.Put.Requests + c.Delete.Requests }

// CountRequest counts one request of op. For OpPut, payload (the data
// length) is added to BytesWritten; for every other op payload must be 0.
// It panics on an unknown op or a payload on a non-Put: both are bugs in the
// accounting store, not runtime conditions.
func (c *RequestCounts) CountRequest(op Op, payload int) {
	c.op(op).Requests++
	switch {
	case op == OpPut && payload >= 0:
		c.BytesWritten += uint64(payload)
	case payload != 0:
		panic(fmt.Sprintf("objstore: request accounting: payload %d on %s", payload, op))
	}
}

// CountError counts one failed request of op (see OpCounts.Errors). It
// panics on an unknown op.
func (c *RequestCounts) CountError(op Op) { c.op(op).Errors++ }

func (c *RequestCounts) op(op Op) *OpCounts {
	switch op {
	case OpGet:
		return &c.Get
	case OpHead:
		return &c.Head
	case OpList:
		return &c.List
	case OpPut:
		return &c.Put
	case OpDelete:
		return &c.Delete
	}
	panic(fmt.Sprintf("objstore: unknown op %q", op))
}
