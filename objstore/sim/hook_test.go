package sim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// recorder logs hook events and what the store held at each, via Peek (which
// also proves the store holds no lock while a hook runs).
type recorder struct {
	s      *sim.Store
	events []string
}

func (r *recorder) BeforeCall(_ context.Context, c *sim.Call) error {
	_, exists := r.s.Peek(c.Key)
	r.events = append(r.events, fmt.Sprintf("before #%d %s %s size=%d exists=%v", c.Seq, c.Op, c.Key, c.Size, exists))
	return nil
}

func (r *recorder) AfterCall(_ context.Context, c *sim.Call, applied bool, result error) error {
	_, exists := r.s.Peek(c.Key)
	r.events = append(r.events, fmt.Sprintf("after #%d applied=%v err=%v exists=%v", c.Seq, applied, result != nil, exists))
	return nil
}

// TestHookOrdering: BeforeCall sees the store before the effect, AfterCall
// after it, with effectApplied telling whether the store changed.
func TestHookOrdering(t *testing.T) {
	ctx := t.Context()
	r := &recorder{}
	s := sim.New(sim.Config{Seed: 1, Hook: r})
	r.s = s
	_, _ = s.Put(ctx, "k", []byte("abc"), objstore.CreateOnly)
	_, _ = s.Put(ctx, "k", []byte("x"), objstore.CreateOnly) // precondition fails
	_, _ = s.Get(ctx, "k")
	_ = s.Delete(ctx, "k")
	_ = s.Delete(ctx, "k") // missing: no change
	_, _ = s.List(ctx, "k", "", 1)
	want := []string{
		"before #1 put k size=3 exists=false", "after #1 applied=true err=false exists=true",
		"before #2 put k size=1 exists=true", "after #2 applied=false err=true exists=true",
		"before #3 get k size=0 exists=true", "after #3 applied=false err=false exists=true",
		"before #4 delete k size=0 exists=true", "after #4 applied=true err=false exists=false",
		"before #5 delete k size=0 exists=false", "after #5 applied=false err=false exists=false",
		"before #6 list k size=0 exists=false", "after #6 applied=false err=false exists=false",
	}
	if !slices.Equal(r.events, want) {
		t.Fatalf("hook events:\n%q\nwant:\n%q", r.events, want)
	}
}

// TestBeforeCallAbortHasNoEffect: an error from BeforeCall is returned as
// is, nothing changes, AfterCall is skipped and the call is counted as
// aborted, not as a request.
func TestBeforeCallAbortHasNoEffect(t *testing.T) {
	ctx := t.Context()
	crashed := errors.New("actor crashed")
	afterCalls := 0
	s := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{
		Before: func(context.Context, *sim.Call) error { return crashed },
		After: func(context.Context, *sim.Call, bool, error) error {
			afterCalls++
			return nil
		},
	}})
	if _, err := s.Put(ctx, "k", []byte("v"), objstore.Unconditional); err != crashed {
		t.Fatalf("Put = %v, want the hook's error unchanged", err)
	}
	if err := s.Delete(ctx, "k"); err != crashed {
		t.Fatalf("Delete = %v, want the hook's error unchanged", err)
	}
	if _, ok := s.Peek("k"); ok || s.Len() != 0 {
		t.Fatal("an aborted Put was applied")
	}
	c := s.Counters()
	if afterCalls != 0 || c.Aborted != 2 || c.Requests() != 0 || c.BytesWritten != 0 {
		t.Fatalf("after %d aborted calls: AfterCall ran %d times, counters %+v", 2, afterCalls, c)
	}
}

// TestAfterCallReplacesResult: a non-nil AfterCall error replaces the
// result and zeroes the values, but cannot undo an applied effect.
func TestAfterCallReplacesResult(t *testing.T) {
	ctx := t.Context()
	lost := errors.New("reply dropped by the simulator")
	var sawResult []error
	s := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{
		After: func(_ context.Context, _ *sim.Call, _ bool, result error) error {
			sawResult = append(sawResult, result)
			return lost
		},
	}})
	etag, err := s.Put(ctx, "k", []byte("v"), objstore.CreateOnly)
	if err != lost || etag != "" {
		t.Fatalf("Put = %q, %v; want \"\", the hook's error", etag, err)
	}
	if data, ok := s.Peek("k"); !ok || string(data) != "v" {
		t.Fatal("the effect was undone by AfterCall")
	}
	obj, err := s.Get(ctx, "k")
	if err != lost || obj.Data != nil || obj.ETag != "" {
		t.Fatalf("Get = %+v, %v; want zero, the hook's error", obj, err)
	}
	_, _ = s.Put(ctx, "k", nil, objstore.CreateOnly)
	if len(sawResult) != 3 || sawResult[0] != nil || !errors.Is(sawResult[2], objstore.ErrPreconditionFailed) {
		t.Fatalf("AfterCall saw results %v", sawResult)
	}
	keep := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{}})
	if _, err := keep.Put(ctx, "k", nil, objstore.Unconditional); err != nil {
		t.Fatalf("a nil AfterCall result must keep the store's result: %v", err)
	}
}

// TestInvalidKeySkipsEverything: key validation comes first: no hook, no
// counters, no entropy consumed.
func TestInvalidKeySkipsEverything(t *testing.T) {
	ctx := t.Context()
	calls := 0
	hook := sim.HookFuncs{Before: func(context.Context, *sim.Call) error { calls++; return nil }}
	s := sim.New(sim.Config{Seed: 1, Faults: sim.Faults{TransientRate: 1}, Hook: hook})
	_, errG := s.Get(ctx, "a//b")
	_, errH := s.Head(ctx, "")
	_, errL := s.List(ctx, "/x", "", 1)
	_, errP := s.Put(ctx, "a/", nil, objstore.CreateOnly)
	errD := s.Delete(ctx, "..")
	for _, err := range []error{errG, errH, errL, errP, errD} {
		if !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("got %v, want ErrInvalidKey", err)
		}
	}
	if calls != 0 || s.Counters() != (sim.Counters{}) {
		t.Fatalf("invalid keys reached the hook %d times; counters %+v", calls, s.Counters())
	}
	_, errC := s.Put(ctx, "k", nil, objstore.Condition{Kind: 9})
	if !errors.Is(errC, objstore.ErrPreconditionFailed) || calls != 0 {
		t.Fatalf("unknown condition kind: %v (hook calls %d)", errC, calls)
	}
}

// TestCancelledContextHasNoEffect: a call whose context is done by the time
// it executes fails with ErrTransient wrapping the context error, is not
// ambiguous and changes nothing.
func TestCancelledContextHasNoEffect(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var applied []bool
	s := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{
		Before: func(context.Context, *sim.Call) error { cancel(); return nil }, // cancelled while parked
		After: func(_ context.Context, _ *sim.Call, a bool, _ error) error {
			applied = append(applied, a)
			return nil
		},
	}})
	_, err := s.Put(ctx, "k", []byte("v"), objstore.Unconditional)
	if !errors.Is(err, objstore.ErrTransient) || !errors.Is(err, context.Canceled) || objstore.IsAmbiguous(err) {
		t.Fatalf("Put = %v, want non-ambiguous ErrTransient wrapping context.Canceled", err)
	}
	if s.Len() != 0 || !slices.Equal(applied, []bool{false}) {
		t.Fatalf("cancelled Put applied (len %d, hook saw %v)", s.Len(), applied)
	}
	if c := s.Counters(); c.Put.Requests != 1 || c.Put.Errors != 1 {
		t.Fatalf("counters %+v", c)
	}
}
