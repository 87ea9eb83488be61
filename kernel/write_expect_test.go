package kernel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Tests of WriteWith's read expectations: tables a write read but does not
// write. The scenario writes table a and expects table b; a competing
// writer moves b after our round checked its reads and before our publish
// (at our first table commit), deterministically through a store hook.

// wrMoveBOnCommitOfA arms hook to publish a new version of b (through
// other) just before the first table-version write of a.
func wrMoveBOnCommitOfA(t *testing.T, hook *wrOnce, other *kernel.Graph) {
	hook.match = func(c *sim.Call) bool {
		return c.Op == objstore.OpPut && strings.HasPrefix(c.Key, recRoot+"/tables/a/")
	}
	hook.action = func() { recMustWrite(t, other, "main", map[string]string{"b": "b-other"}, "moves b") }
}

// wrPinOf returns the published version of table on main.
func wrPinOf(t *testing.T, g *kernel.Graph, table string) uint64 {
	t.Helper()
	s, err := g.SnapshotAt(recCtx, mustBranch(t, g, "main"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Table(table)
	return p.Version
}

// TestWriteWithStrictRead pins strict read expectations: a write expecting
// b at the version it read fails with *VersionMismatchError on b (refresh
// and retry) when b moved — already at the round's start as the writing
// handle's view shows (nothing written at all), or between the round's
// check and its publish (a definite failure that leaves no sidecar and no
// unpublished content above a's pin). A handle whose view is stale (it
// has not seen the move) cannot know at the start: its publish at view+1
// fails, the loaded head shows the move, and the failure is just as
// definite, leaving no sidecar and a's pin where it was (issue #32).
func TestWriteWithStrictRead(t *testing.T) {
	for _, name := range []string{"stale at start", "moved before publish", "stale view"} {
		t.Run(name, func(t *testing.T) {
			hook := &wrOnce{}
			store := recInit(t)
			store.SetHook(sim.HookFuncs{Before: hook.before})
			g := recOpenNow(t, store, 11, nil)
			other := recOpenNow(t, store, 12, nil)
			read := wrPinOf(t, g, "b")
			aPin := wrPinOf(t, g, "a")
			if name == "moved before publish" {
				wrMoveBOnCommitOfA(t, hook, other)
			} else {
				recMustWrite(t, other, "main", map[string]string{"b": "b-other"}, "moves b")
				if name == "stale at start" {
					g = recOpenNow(t, store, 13, nil) // its view shows the move
				}
			}
			before := recState(t, store)
			if move := hook.action; move != nil {
				hook.action = func() { move(); before = recState(t, store) }
			}
			writesBefore := store.Counters().Writes()
			_, err := g.WriteWith(recCtx, mustBranch(t, g, "main"), []kernel.TableWrite{{Table: "a", Build: recAppend("a-ours")}},
				kernel.LineageIntent{Actor: "ours"}, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "b", Version: read, Strict: true}}})
			var mm *kernel.VersionMismatchError
			if !errors.As(err, &mm) || mm.Table != "b" || mm.Expected != read || errors.Is(err, objstore.ErrAmbiguous) {
				t.Fatalf("WriteWith = %v, want a definite version mismatch on b (expected %d)", err, read)
			}
			switch name {
			case "stale at start":
				if w := store.Counters().Writes() - writesBefore; w != 0 {
					t.Fatalf("a write stale at its start made %d store writes", w)
				}
			case "moved before publish":
				if !hook.fired {
					t.Fatal("the competing write never ran")
				}
			case "stale view":
				if sc := recSidecars(t, store); len(sc) != 0 {
					t.Fatalf("sidecars left: %v", sc)
				}
				if got := wrPinOf(t, g, "a"); got != aPin {
					t.Fatalf("a pinned at %d, want %d", got, aPin)
				}
				return // its own restore version sits above a's pin (the writer's undo)
			}
			wrAssertUntouched(t, store, g, before)
		})
	}
}

// TestWriteWithNonStrictRead pins non-strict read expectations: when b
// moved, the next round calls Revalidate with b's newly published version
// before any Build; if it accepts, the write lands on top of the move (and
// expected that version); if it refuses, the write fails with its error and
// leaves no trace.
func TestWriteWithNonStrictRead(t *testing.T) {
	errRefused := errors.New("wr test: revalidation refused")
	for _, accept := range []bool{true, false} {
		name := map[bool]string{true: "revalidation accepts", false: "revalidation refuses"}[accept]
		t.Run(name, func(t *testing.T) {
			hook := &wrOnce{}
			store := recInit(t)
			store.SetHook(sim.HookFuncs{Before: hook.before})
			g := recOpenNow(t, store, 11, nil)
			other := recOpenNow(t, store, 12, nil)
			read := wrPinOf(t, g, "b")
			var seen []string
			revalidate := func(p kernel.TableVersion) error {
				seen = append(seen, strings.Join(p.Fragments, ","))
				if !accept {
					return errRefused
				}
				return nil
			}
			var before kerneltest.State
			wrMoveBOnCommitOfA(t, hook, other)
			move := hook.action
			hook.action = func() { move(); before = recState(t, store) }
			c, err := g.WriteWith(recCtx, mustBranch(t, g, "main"), []kernel.TableWrite{{Table: "a", Build: recAppend("a-ours")}},
				kernel.LineageIntent{Actor: "ours"}, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "b", Version: read, Revalidate: revalidate}}})
			if !hook.fired || len(seen) != 1 || seen[0] != "b0,b-other" {
				t.Fatalf("Revalidate saw %q (competing write ran: %v), want once, b's new version", seen, hook.fired)
			}
			if !accept {
				if !errors.Is(err, errRefused) || errors.Is(err, objstore.ErrAmbiguous) {
					t.Fatalf("WriteWith = %v, want the revalidation error", err)
				}
				wrAssertUntouched(t, store, g, before)
				return
			}
			if err != nil {
				t.Fatalf("WriteWith = %v", err)
			}
			if got := wrPinOf(t, g, "b"); got != read+1 {
				t.Fatalf("b pinned at %d, want the competing version %d", got, read+1)
			}
			head, err := g.Head(recCtx, mustBranch(t, g, "main"))
			if err != nil || head.ID != c.ID {
				t.Fatalf("head = %v %v, want our commit %s", head.ID, err, c.ID)
			}
			if sc := recSidecars(t, store); len(sc) != 0 {
				t.Fatalf("sidecars left: %v", sc)
			}
		})
	}
}

// TestWriteWithRejectsBadOptions pins the argument rules, checked before
// any I/O: a read expectation names a valid table at most once, never a
// written table; a non-strict one needs Revalidate; a write names at least
// one table; the kind is validated.
func TestWriteWithRejectsBadOptions(t *testing.T) {
	store := recInit(t)
	g := recOpenNow(t, store, 11, nil)
	b := mustBranch(t, g, "main")
	wa := []kernel.TableWrite{{Table: "a", Build: recAppend("x")}}
	strictB := kernel.ReadExpectation{Table: "b", Version: 1, Strict: true}
	cases := []struct {
		name   string
		writes []kernel.TableWrite
		opts   kernel.WriteOptions
		want   error
	}{
		{"no tables", nil, kernel.WriteOptions{}, kernel.ErrInvalidArgument},
		{"read twice", wa, kernel.WriteOptions{Expect: []kernel.ReadExpectation{strictB, strictB}}, kernel.ErrInvalidArgument},
		{"read of a written table", wa, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "a", Strict: true}}}, kernel.ErrInvalidArgument},
		{"non-strict without revalidate", wa, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "b", Version: 1}}}, kernel.ErrInvalidArgument},
		{"bad table name", wa, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "", Strict: true}}}, kernel.ErrInvalidName},
		{"bad kind", wa, kernel.WriteOptions{Kind: "Txn"}, kernel.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := store.Counters().Writes()
			_, err := g.WriteWith(recCtx, b, tc.writes, kernel.LineageIntent{Actor: "x"}, tc.opts)
			if !errors.Is(err, tc.want) || store.Counters().Writes() != before {
				t.Fatalf("WriteWith = %v with %d writes, want %v before any I/O", err, store.Counters().Writes()-before, tc.want)
			}
		})
	}
}

// TestRecoveryHonorsReadExpectations pins that recovery never rolls a
// crashed write forward over a moved read: the writer crashes after
// committing its version of a (before its publish) while expecting b; b
// then moves; the recoverer must roll the write back (its publish could
// never have succeeded), leaving the state with b's move and without ours.
// With b unmoved, the same crash rolls forward as usual.
func TestRecoveryHonorsReadExpectations(t *testing.T) {
	for _, strict := range []bool{true, false} {
		for _, moved := range []bool{true, false} {
			name := map[bool]string{true: "strict", false: "non-strict"}[strict] + map[bool]string{true: "/b moved", false: "/b unmoved"}[moved]
			t.Run(name, func(t *testing.T) {
				store := recInit(t)
				cs := &recCrashStore{Store: store}
				fps := recCrashingSet(cs)
				fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Crash})
				g := recOpenNow(t, cs, 11, fps)
				read := wrPinOf(t, g, "b")
				exp := kernel.ReadExpectation{Table: "b", Version: read, Strict: strict}
				if !strict {
					exp.Revalidate = func(kernel.TableVersion) error { return nil }
				}
				_, err := g.WriteWith(recCtx, mustBranch(t, g, "main"), []kernel.TableWrite{{Table: "a", Build: recAppend("a-ours")}},
					kernel.LineageIntent{Actor: "ours", Message: "crashing"}, kernel.WriteOptions{Expect: []kernel.ReadExpectation{exp}})
				if !errors.Is(err, failpoint.ErrCrashed) {
					t.Fatalf("crashing write: %v", err)
				}
				if moved {
					recMustWrite(t, recOpenNow(t, store, 12, nil), "main", map[string]string{"b": "b-other"}, "moves b")
				}
				recOpen(t, store, 13, nil) // past the lease: sweeps the crashed write's sidecar
				recNoSidecars(t, store)
				a := recOneAudit(t, store)
				want := format.DecisionRollForward
				if moved {
					want = format.DecisionRollBack
				}
				if a.Decision != want {
					t.Fatalf("recovery decided %v, want %v", a.Decision, want)
				}
				s := recState(t, store).String()
				if strings.Contains(s, "a-ours") == moved || strings.Contains(s, "b-other") != moved {
					t.Fatalf("state after recovery:\n%s", s)
				}
			})
		}
	}
}
