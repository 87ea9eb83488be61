package kernel_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// offsetClock reads base shifted by off: a host whose clock is wrong.
type offsetClock struct {
	kernel.Clock
	off time.Duration
}

func (c offsetClock) Now() time.Time { return c.Clock.Now().Add(c.off) }

// skewHandle opens a second handle on store whose clock reads clock + off,
// with a one-minute skew margin.
func skewHandle(t *testing.T, store objstore.Store, clock kernel.Clock, off time.Duration, seed uint64) *kernel.Graph {
	t.Helper()
	env := testEnv(seed)
	env.Clock = offsetClock{Clock: clock, off: off}
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: env, SkewMargin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPublishBehindTheHeadRefuses pins the publish-time skew check
// (docs/gc.md §4): a process whose clock reads more than the skew margin
// before the branch head's commit time (or, for a branch's commit-less
// version 0, its incarnation's time) refuses every Write and Publish with a
// definite, non-retryable *ClockSkewError, publishing nothing and leaving
// no sidecar; within the margin it publishes.
func TestPublishBehindTheHeadRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		off    time.Duration
		branch string // "" = main; else a fresh branch (head without commit)
		refuse bool
	}{
		{"behind past the margin", -2 * time.Minute, "", true},
		{"behind past the margin, fresh branch", -2 * time.Minute, "feat", true},
		{"behind within the margin", -50 * time.Second, "", false},
		{"ahead", 2 * time.Hour, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			env := testEnv(1)
			g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: env, SkewMargin: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			b := mustBranch(t, g, "main")
			commitTable(t, g, b, "a", "1")
			if c.branch != "" {
				if b, err = g.CreateBranch(ctx, c.branch, b); err != nil {
					t.Fatal(err)
				}
			}
			h := skewHandle(t, store, env.Clock, c.off, 2)
			hb := mustBranch(t, h, b.Name())
			before := len(fullLog(t, g, b))
			_, werr := h.Write(ctx, hb, []kernel.TableWrite{{Table: "b", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
				return kernel.TableContent{Fragments: []string{"skewed"}, Rows: 1}, nil
			}}}, kernel.LineageIntent{Actor: "skewed", Message: "w"})
			_, perr := h.Publish(ctx, hb, nil, kernel.LineageIntent{Actor: "skewed", Message: "p"}, nil)
			_, cerr := h.CreateBranch(ctx, "child", hb)
			for _, err := range []error{werr, perr, cerr} {
				if !c.refuse {
					if err != nil {
						t.Fatalf("clock off by %s (margin 1m): %v", c.off, err)
					}
					continue
				}
				var se *kernel.ClockSkewError
				if !errors.As(err, &se) || !errors.Is(err, kernel.ErrClockSkew) || se.Retryable() || errors.Is(err, objstore.ErrAmbiguous) {
					t.Fatalf("clock off by %s: %v, want a definite *ClockSkewError", c.off, err)
				}
				if se.Margin != time.Minute || se.RefTime.Sub(se.Now) <= time.Minute {
					t.Fatalf("error fields %+v", se)
				}
			}
			want := before
			if !c.refuse {
				want += 2
			}
			if n := len(fullLog(t, g, b)); n != want {
				t.Fatalf("log has %d commits, want %d", n, want)
			}
			if left := kerneltest.Sidecars(store, root); len(left) != 0 {
				t.Fatalf("sidecars left: %v", left)
			}
			if _, err := g.Branch(ctx, "child"); c.refuse != errors.Is(err, kernel.ErrBranchNotFound) {
				t.Fatalf("branch child after the create: %v", err)
			}
		})
	}
}

// TestHeadAheadStopsCorrectWriters: a writer whose clock runs ahead by more
// than the margin cannot tell (nothing on the branch is newer than its
// clock) and publishes; its commit's time then lies in every correct
// writer's future, so they refuse with ErrClockSkew — loud, never lossy —
// until real time reaches that commit time less the margin (docs/gc.md §4).
func TestHeadAheadStopsCorrectWriters(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	env := testEnv(1)
	clock := env.Clock.(*kernel.ManualClock)
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: env, SkewMargin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	ahead := skewHandle(t, store, clock, 10*time.Minute, 2)
	commitTable(t, ahead, mustBranch(t, ahead, "main"), "a", "2")
	_, err = g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "correct", Message: "p"}, nil)
	if !errors.Is(err, kernel.ErrClockSkew) {
		t.Fatalf("publish under a head 10m in the future: %v, want ErrClockSkew", err)
	}
	clock.Advance(9*time.Minute + time.Second)
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "correct", Message: "p"}, nil); err != nil {
		t.Fatalf("publish once the head is within the margin: %v", err)
	}
}

// TestSkewRefusedAtPublishIsDefinite: a write whose round began under a
// head within the margin, but whose publish meets a head written meanwhile
// by a clock an hour ahead, refuses at the publish with a definite
// *ClockSkewError after its sidecar and table version exist: the check
// runs after the expectations held, so nothing of the write was published,
// and the write undoes its version and resolves its sidecar as for any
// definite failure (not an unknown outcome left to recovery).
func TestSkewRefusedAtPublishIsDefinite(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	env := testEnv(1)
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: env, SkewMargin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	ahead := skewHandle(t, store, env.Clock, time.Hour, 2)
	before := len(fullLog(t, g, main))
	_, err = g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		if _, err := ahead.Write(ctx, mustBranch(t, ahead, "main"), []kernel.TableWrite{{Table: "b", Build: func(kernel.TableVersion) (kernel.TableContent, error) {
			return kernel.TableContent{Fragments: []string{"ahead"}, Rows: 1}, nil
		}}}, kernel.LineageIntent{Actor: "ahead", Message: "b"}); err != nil {
			t.Errorf("ahead write: %v", err)
		}
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "2"), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "correct", Message: "a"})
	var se *kernel.ClockSkewError
	if !errors.As(err, &se) || errors.Is(err, objstore.ErrAmbiguous) || !strings.HasPrefix(se.Op, "publish on ") {
		t.Fatalf("write under a head an hour ahead: %v, want a definite *ClockSkewError from the publish", err)
	}
	if n := len(fullLog(t, g, main)); n != before+1 {
		t.Fatalf("log has %d commits, want %d (the ahead write only)", n, before+1)
	}
	if left := kerneltest.Sidecars(store, root); len(left) != 0 {
		t.Fatalf("sidecars left: %v", left)
	}
}
