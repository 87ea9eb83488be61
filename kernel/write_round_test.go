package kernel_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Tests of Write's round protocol (kernel/write.go): a failing Build, in
// any round, leaves no visible trace. Helpers carry a "wr" prefix.

var errWrBuild = errors.New("wr test: build refused")

// wrFailOn returns a Build that appends frag on its first n calls and then
// fails with errWrBuild (n = 0: fails at once), counting its calls.
func wrFailOn(frag string, n int, calls *int) func(kernel.TableVersion) (kernel.TableContent, error) {
	app := recAppend(frag)
	return func(p kernel.TableVersion) (kernel.TableContent, error) {
		*calls++
		if *calls > n {
			return kernel.TableContent{}, errWrBuild
		}
		return app(p)
	}
}

// wrOnce runs action once, before the first store call that passes match.
// It runs on the caller's goroutine (the store holds no lock in a hook), so
// the interleaving is deterministic.
type wrOnce struct {
	match  func(c *sim.Call) bool
	action func()
	fired  bool
}

func (h *wrOnce) before(_ context.Context, c *sim.Call) error {
	if h.fired || h.action == nil || !h.match(c) {
		return nil
	}
	h.fired = true
	h.action()
	return nil
}

// wrAssertUntouched checks the rule "a failed Write leaves no trace": no
// sidecar, the published state is want, and every table HEAD either is its
// published pin or repeats the pinned content (a restore copy, which is no
// newer state; versions are never deleted).
func wrAssertUntouched(t *testing.T, store *sim.Store, g *kernel.Graph, want kerneltest.State) {
	t.Helper()
	if sc := kerneltest.Sidecars(store, recRoot); len(sc) != 0 {
		t.Fatalf("failed write left sidecars %v", sc)
	}
	if got := recState(t, store); got.String() != want.String() {
		t.Fatalf("failed write changed the visible state:\nbefore %s\nafter  %s", want, got)
	}
	b := mustBranch(t, g, "main")
	snap, err := g.SnapshotAt(recCtx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b"} {
		pin, _ := snap.Table(table)
		head, err := g.TableHead(recCtx, b, table)
		if err != nil {
			t.Fatal(err)
		}
		if head == kernelRef(pin) {
			continue
		}
		top, err := g.ReadTable(recCtx, table, head)
		if err != nil {
			t.Fatal(err)
		}
		pinned, err := g.ReadPinned(recCtx, pin)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(top.Fragments, ",") != strings.Join(pinned.Fragments, ",") || top.Rows != pinned.Rows {
			t.Fatalf("table %s: HEAD v%d holds %v, unpublished content above the pin v%d (%v)",
				table, head.Version, top.Fragments, pin.Version, pinned.Fragments)
		}
	}
}

// TestWriteFailedBuildLeavesNoTrace pins that a two-table Write whose
// second table's Build fails returns that error as a definite failure
// (never "outcome unknown") and leaves no table HEAD moved past its pin and
// no sidecar:
//   - first round: every Build runs before the sidecar and before any table
//     commit, so nothing is written at all;
//   - rebase round: round 1 committed table a, then lost b's version number
//     to a concurrent writer; round 2's Build of b fails. Round 1's
//     sidecar can never roll forward (it lost on a mismatch), so the writer
//     must undo its dangling version of a and delete the sidecar instead of
//     leaving both behind as an ambiguous failure.
func TestWriteFailedBuildLeavesNoTrace(t *testing.T) {
	cases := []struct {
		name      string
		okBuilds  int  // b's Build succeeds this often, then fails
		competing bool // a concurrent writer takes b's next version in round 1
		wantCalls int  // b's Build calls
	}{
		{name: "first round", okBuilds: 0, wantCalls: 1},
		{name: "rebase round", okBuilds: 1, competing: true, wantCalls: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hook := &wrOnce{}
			store := recInit(t)
			store.SetHook(sim.HookFuncs{Before: hook.before})
			g := recOpenNow(t, store, 11, nil)
			other := recOpenNow(t, store, 12, nil)
			before := recState(t, store)
			if tc.competing {
				// Just before round 1 commits b: b's version is taken.
				hook.match = func(c *sim.Call) bool {
					return c.Op == objstore.OpPut && strings.HasPrefix(c.Key, recRoot+"/tables/b/")
				}
				hook.action = func() {
					recMustWrite(t, other, "main", map[string]string{"b": "b-other"}, "competing")
					before = recState(t, store)
				}
			}
			calls := 0
			writes := []kernel.TableWrite{
				{Table: "a", Build: recAppend("a-ours")},
				{Table: "b", Build: wrFailOn("b-ours", tc.okBuilds, &calls)},
			}
			_, err := g.Write(recCtx, mustBranch(t, g, "main"), writes, kernel.LineageIntent{Actor: "ours", Message: "two tables"})
			if !errors.Is(err, errWrBuild) {
				t.Fatalf("Write = %v, want the Build error", err)
			}
			if errors.Is(err, objstore.ErrAmbiguous) {
				t.Fatalf("Write = %v: a failed Build is a definite failure, not an unknown outcome", err)
			}
			if tc.competing != hook.fired || calls != tc.wantCalls {
				t.Fatalf("competing writer ran = %v, b built %d times: the scenario did not happen", hook.fired, calls)
			}
			wrAssertUntouched(t, store, g, before)
		})
	}
}

// TestWriteExhaustedByLostRoundsIsDefinite pins that a Write whose every
// round lost its publish to a concurrent writer (non-strict: it rebuilt
// each time) and that ran out of budget returns a *ContentionError that is
// definite, not ambiguous: each lost round's sidecar can never roll
// forward, so the writer undoes its dangling versions and deletes the last
// sidecar itself, leaving no trace.
func TestWriteExhaustedByLostRoundsIsDefinite(t *testing.T) {
	store := recInit(t)
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.Env(11, nil), RetryBudget: 3})
	if err != nil {
		t.Fatal(err)
	}
	other := recOpenNow(t, store, 12, nil)
	var before kerneltest.State
	racing, races := false, 0
	store.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		if racing || c.Op != objstore.OpPut || !isManifestKey(c.Key) {
			return nil
		}
		racing = true // our publish is about to write: publish a first
		races++
		recMustWrite(t, other, "main", map[string]string{"a": "a-other" + strconv.Itoa(races)}, "racer")
		before = recState(t, store)
		racing = false
		return nil
	}})
	_, err = g.Write(recCtx, mustBranch(t, g, "main"), []kernel.TableWrite{{Table: "a", Build: recAppend("a-ours")}}, kernel.LineageIntent{Actor: "ours"})
	store.SetHook(nil)
	var ce *kernel.ContentionError
	if !errors.As(err, &ce) || ce.Ambiguous || errors.Is(err, objstore.ErrAmbiguous) || races != 3 {
		t.Fatalf("Write = %v after %d lost rounds, want a definite *ContentionError after 3", err, races)
	}
	wrAssertUntouched(t, store, g, before)
}
