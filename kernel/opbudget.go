package kernel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/graphkernel/graphkernel/objstore"
)

// DefaultOpRequestBudget is the number of store requests one public write
// operation may issue when Options.OpRequestBudget is 0.
//
// Why one overall budget: the retry loops nest (a write's rounds × its
// heal-first's sidecar passes × each publish's attempts × each read's
// retries), so per-loop budgets alone multiply to 64^3 and more requests
// under a persistent fault. The operation budget caps the product: an
// uncontended write costs about ten requests, a contended one with a heal
// a few hundred, so 16384 leaves room for heavy contention and faults while
// bounding the worst case to seconds on a local store and minutes on S3.
const DefaultOpRequestBudget = 1 << 14

// ErrRequestBudget matches *RequestBudgetError.
var ErrRequestBudget = errors.New("kernel: operation request budget exhausted")

// RequestBudgetError reports an operation that spent its request budget
// (Options.OpRequestBudget) before it finished. It matches ErrRequestBudget
// and ErrContention: like a spent retry budget it is retryable by the
// caller. An operation that ends with it while a write's outcome is unknown
// reports ambiguity as well (objstore.ErrAmbiguous), as every such exit does.
type RequestBudgetError struct {
	Op    string // the public operation
	Limit int    // its request budget
}

// Error implements error.
func (e *RequestBudgetError) Error() string {
	return fmt.Sprintf("kernel: %s spent its budget of %d store requests", e.Op, e.Limit)
}

// Is makes errors.Is(err, ErrRequestBudget) and errors.Is(err, ErrContention) hold.
func (e *RequestBudgetError) Is(target error) bool {
	return target == ErrRequestBudget || target == ErrContention
}

// opBudget is the request budget of one public operation, carried in its
// context. Nested public calls share the outermost operation's budget.
type opBudget struct {
	op    string
	limit int
	used  atomic.Int64
}

type opBudgetKey struct{}

// withOpBudget returns ctx carrying a fresh budget for op, unless ctx
// already carries one (a nested call).
func (g *Graph) withOpBudget(ctx context.Context, op string) context.Context {
	if _, ok := ctx.Value(opBudgetKey{}).(*opBudget); ok {
		return ctx
	}
	return g.freshOpBudget(ctx, op)
}

// freshOpBudget returns ctx carrying a fresh budget for op, replacing any
// it carried (one sidecar of an open-time sweep: the sweep's worst case is
// MaxSweepSidecars budgets, one per sidecar).
func (g *Graph) freshOpBudget(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opBudgetKey{}, &opBudget{op: op, limit: g.opRequests})
}

// take spends one request of ctx's budget, if it carries one.
func takeRequest(ctx context.Context) error {
	b, ok := ctx.Value(opBudgetKey{}).(*opBudget)
	if !ok {
		return nil
	}
	if b.used.Add(1) > int64(b.limit) {
		return &RequestBudgetError{Op: b.op, Limit: b.limit}
	}
	return nil
}

// budgetedStore charges every request to the operation budget in its
// context (requests of a context without one are not charged).
type budgetedStore struct{ inner objstore.Store }

func (s budgetedStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if err := takeRequest(ctx); err != nil {
		return objstore.Object{}, err
	}
	return s.inner.Get(ctx, key)
}

func (s budgetedStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if err := takeRequest(ctx); err != nil {
		return objstore.Attrs{}, err
	}
	return s.inner.Head(ctx, key)
}

func (s budgetedStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if err := takeRequest(ctx); err != nil {
		return objstore.ListPage{}, err
	}
	return s.inner.List(ctx, prefix, after, limit)
}

func (s budgetedStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if err := takeRequest(ctx); err != nil {
		return "", err
	}
	return s.inner.Put(ctx, key, data, cond)
}

func (s budgetedStore) Delete(ctx context.Context, key string) error {
	if err := takeRequest(ctx); err != nil {
		return err
	}
	return s.inner.Delete(ctx, key)
}

// PutDeferredIntact charges one request and passes the capability
// through (objstore.PutDeferredIntact: a durable Put on a store without it).
func (s budgetedStore) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	if err := takeRequest(ctx); err != nil {
		return "", false, err
	}
	return objstore.PutDeferredIntact(ctx, s.inner, key, data, cond)
}

// PutAfterDeferred charges one request (the sync is none) and passes the
// capability through (objstore.PutAfterDeferred).
func (s budgetedStore) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	if err := takeRequest(ctx); err != nil {
		return "", err
	}
	return objstore.PutAfterDeferred(ctx, s.inner, key, data, cond, deferred)
}

// GetMany charges one request per key (a key past the budget is not
// read: its result is the *RequestBudgetError) and passes the rest
// through objstore.GetMany to the inner store as one batch.
func (s budgetedStore) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	out := make([]objstore.GetResult, len(keys))
	var issue []string
	var at []int
	for i, k := range keys {
		if err := takeRequest(ctx); err != nil {
			out[i].Err = err
			continue
		}
		issue = append(issue, k)
		at = append(at, i)
	}
	if len(issue) == 0 {
		return out
	}
	for j, r := range objstore.GetMany(ctx, s.inner, issue) {
		out[at[j]] = r
	}
	return out
}

// PutMany charges one request per request (a request past the budget is
// not issued: its result is the *RequestBudgetError) and passes the rest
// through objstore.PutMany to the inner store as one batch. The budget
// only shrinks, so no issued request follows one past it: an issued
// request's After names only earlier requests the inner batch has
// (objstore.PutRequest), and its ordering holds there.
func (s budgetedStore) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	out := make([]objstore.PutResult, len(reqs))
	var issue []objstore.PutRequest
	var at []int
	for i, r := range reqs {
		if err := takeRequest(ctx); err != nil {
			out[i].Err = err
			continue
		}
		issue = append(issue, r)
		at = append(at, i)
	}
	if len(issue) == 0 {
		return out
	}
	for j, r := range objstore.PutMany(ctx, s.inner, issue) {
		out[at[j]] = r
	}
	return out
}
