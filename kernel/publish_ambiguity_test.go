package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// lostAckThen makes the next manifest Put land but lose its
// acknowledgement, then runs after() (once) on every later call: the
// exit path under test.
func lostAckThen(store *sim.Store, after func(ctx context.Context, c *sim.Call) error) {
	lost := false
	store.SetHook(sim.HookFuncs{
		Before: func(ctx context.Context, c *sim.Call) error {
			if lost {
				return after(ctx, c)
			}
			return nil
		},
		After: func(_ context.Context, c *sim.Call, applied bool, result error) error {
			if !lost && c.Op == objstore.OpPut && applied && strings.Contains(c.Key, "/branches/") {
				lost = true
				return objstore.NewAmbiguousError(objstore.OpPut, c.Key, objstore.ErrTransient, errors.New("ack lost"))
			}
			return result
		},
	})
}

// TestAmbiguitySurvivesEveryExit: once a manifest write's outcome is
// unknown, every way out of Publish and Write either resolves it by reading
// back or reports ambiguity (errors.Is(err, objstore.ErrAmbiguous)); the
// commit did land, so a definite error would make a caller write a
// duplicate.
func TestAmbiguitySurvivesEveryExit(t *testing.T) {
	exits := []struct {
		name  string
		after func(cancel context.CancelFunc) func(ctx context.Context, c *sim.Call) error
		also  error
	}{
		{"read rejected", func(context.CancelFunc) func(context.Context, *sim.Call) error {
			return func(_ context.Context, c *sim.Call) error {
				return objstore.NewError(c.Op, c.Key, objstore.ErrRejected, errors.New("refused"))
			}
		}, nil},
		{"context cancelled", func(cancel context.CancelFunc) func(context.Context, *sim.Call) error {
			return func(ctx context.Context, c *sim.Call) error {
				cancel()
				return ctx.Err()
			}
		}, context.Canceled},
	}
	calls := []struct {
		name string
		do   func(ctx context.Context, g *kernel.Graph) error
	}{
		{"Publish", func(ctx context.Context, g *kernel.Graph) error {
			b, err := g.Branch(ctx, "main")
			if err != nil {
				return err
			}
			_, err = g.Publish(ctx, b, nil, kernel.LineageIntent{Actor: "tester", Message: "lost ack"}, nil)
			return err
		}},
		{"Write", func(ctx context.Context, g *kernel.Graph) error {
			b, err := g.Branch(ctx, "main")
			if err != nil {
				return err
			}
			_, err = g.Write(ctx, b, recWrites(map[string]string{"a": "a1"}), kernel.LineageIntent{Actor: "tester", Message: "lost ack"})
			return err
		}},
	}
	for _, call := range calls {
		for _, exit := range exits {
			t.Run(call.name+"/"+exit.name, func(t *testing.T) {
				store := recInit(t)
				g := recOpenNow(t, store, 21, nil)
				depth := len(fullLog(t, g, mustRecBranch(t, g)))
				ctx, cancel := context.WithCancel(recCtx)
				defer cancel()
				lostAckThen(store, exit.after(cancel))
				err := call.do(ctx, g)
				store.SetHook(nil)
				if err == nil {
					t.Fatal("no error: the exit path under test was not taken")
				}
				if !errors.Is(err, objstore.ErrAmbiguous) {
					t.Errorf("error %v does not match objstore.ErrAmbiguous, but the commit may have landed", err)
				}
				if exit.also != nil && !errors.Is(err, exit.also) {
					t.Errorf("error %v does not match %v", err, exit.also)
				}
				var ce *kernel.ContentionError
				if errors.As(err, &ce) && !ce.Ambiguous {
					t.Errorf("ContentionError.Ambiguous is false on an ambiguous outcome: %v", err)
				}
				r2 := recOpen(t, store, 22, nil)
				if d := len(fullLog(t, r2, mustRecBranch(t, r2))); d != depth+1 {
					t.Fatalf("log has %d commits, want %d: the lost-ack commit should have landed", d, depth+1)
				}
			})
		}
	}
}

// TestContentionAmbiguityAgrees: ContentionError.Ambiguous and
// errors.Is(err, objstore.ErrAmbiguous) always agree, even when the last
// cause was an ambiguous store error that a read-back later settled.
func TestContentionAmbiguityAgrees(t *testing.T) {
	last := objstore.NewAmbiguousError(objstore.OpPut, "k", objstore.ErrTransient, errors.New("ack lost"))
	for _, amb := range []bool{false, true} {
		err := error(&kernel.ContentionError{Op: "publish", Attempts: 3, Ambiguous: amb, Last: last})
		if got := errors.Is(err, objstore.ErrAmbiguous); got != amb {
			t.Errorf("Ambiguous=%v but errors.Is(err, ErrAmbiguous)=%v", amb, got)
		}
		if !errors.Is(err, kernel.ErrContention) || !errors.Is(err, objstore.ErrTransient) {
			t.Errorf("Ambiguous=%v: the cause's other kinds must still match: %v", amb, err)
		}
	}
}

// TestCancelledWriteWithSidecarIsAmbiguous: a Write whose context ends
// after it wrote table versions (its sidecar names them) but before its
// manifest write has an open outcome: recovery may still roll it forward,
// so the error must match objstore.ErrAmbiguous as well as context.Canceled.
func TestCancelledWriteWithSidecarIsAmbiguous(t *testing.T) {
	store := recInit(t)
	g := recOpenNow(t, store, 31, nil)
	ctx, cancel := context.WithCancel(recCtx)
	defer cancel()
	store.SetHook(sim.HookFuncs{Before: func(ctx context.Context, c *sim.Call) error {
		if c.Op == objstore.OpPut && strings.Contains(c.Key, "/branches/") {
			cancel()
			return ctx.Err()
		}
		return nil
	}})
	b := mustRecBranch(t, g)
	_, err := g.Write(ctx, b, recWrites(map[string]string{"a": "a1"}), kernel.LineageIntent{Actor: "tester", Message: "cancelled"})
	store.SetHook(nil)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("error %v: want both context.Canceled and objstore.ErrAmbiguous (the sidecar may roll forward)", err)
	}
	if n := len(recSidecars(t, store)); n != 1 {
		t.Errorf("%d sidecars, want the write's 1 left for recovery", n)
	}
}
