package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestRetryStopsAtASyncFailure: an error whose cause is
// objstore.ErrSyncFailed (a deferred object's fsync failed, or a delete
// whose unlink was never made durable) is transient for the caller, who
// must write the object again, but the same request again can never
// succeed: the store fails it with the same cause until the key is
// written again. The retry loop returns it at once, still retryable and
// still naming its cause, instead of spending the handle's whole budget
// with backoff and answering ContentionError.
func TestRetryStopsAtASyncFailure(t *testing.T) {
	g, err := kernel.Init(ctx, sim.New(sim.Config{Seed: 1}), root, schema, kernel.Options{Env: testEnv(1)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		err   error
		calls int
	}{
		{"sync failed", objstore.NewError(objstore.OpDelete, "k", objstore.ErrTransient, objstore.ErrSyncFailed), 1},
		{"plain transient (control)", objstore.NewError(objstore.OpDelete, "k", objstore.ErrTransient, errors.New("503")), g.RetryBudget()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := g.WithRetryForTest(ctx, "delete k", func() error { calls++; return c.err })
			if calls != c.calls {
				t.Fatalf("%d calls, want %d (err %v)", calls, c.calls, err)
			}
			if !errors.Is(err, objstore.ErrTransient) {
				t.Fatalf("err %v is not retryable for the caller", err)
			}
			if errors.Is(c.err, objstore.ErrSyncFailed) != errors.Is(err, objstore.ErrSyncFailed) {
				t.Fatalf("err %v lost or gained its cause", err)
			}
		})
	}
}
