package kernel_test

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// recParkedWrite starts a write of ws on main by a fresh epoch-clock handle
// that parks at point; it returns the rendezvous and the result channel.
func recParkedWrite(t *testing.T, store *sim.Store, seed uint64, point failpoint.Name, ws []kernel.TableWrite) (*failpoint.Rendezvous, chan recResult) {
	t.Helper()
	rv := failpoint.NewRendezvous()
	fps := failpoint.NewSet()
	fps.Arm(point, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rv, Times: 1})
	w := recOpenNow(t, store, seed, fps)
	b := mustRecBranch(t, w)
	done := make(chan recResult, 1)
	go func() {
		c, err := w.Write(recCtx, b, ws, kernel.LineageIntent{Actor: "live", Message: "live write"})
		done <- recResult{c, err}
	}()
	<-rv.Reached()
	return rv, done
}

type recResult struct {
	c   kernel.Commit
	err error
}

// recMessages counts the commits in main's history carrying msg.
func recMessages(t *testing.T, store *sim.Store, msg string) int {
	t.Helper()
	n := 0
	for _, m := range recState(t, store).Branches[0].History {
		if m == msg {
			n++
		}
	}
	return n
}

// A live writer that a recoverer (whose clock says the write is abandoned)
// rolled forward while it was parked before its publish reports success —
// the recovery commit that made its data visible — and never publishes its
// data a second time. For a strict write too: no false "failed".
func TestLiveWriterRolledForwardReportsSuccess(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-strict", true: "strict"}[strict], func(t *testing.T) {
			store := recInit(t)
			ws := []kernel.TableWrite{{Table: "a", Strict: strict, BaseVersion: 1, Build: recAppend("a1")}, {Table: "b", Build: recAppend("b1")}}
			rv, done := recParkedWrite(t, store, 50, failpoint.BeforePublish, ws)
			recOpen(t, store, 51, nil) // past the lease for this write: rolls it forward
			rv.Release()
			r := <-done
			if r.err != nil {
				t.Fatalf("live write rolled forward by recovery reported %v", r.err)
			}
			g := recOpenRO(t, store)
			head, _ := g.Head(recCtx, mustRecBranch(t, g))
			if r.c.ID != head.ID || r.c.Actor != kernel.RecoveryActor {
				t.Fatalf("returned %+v, head %+v", r.c, head)
			}
			if n := recMessages(t, store, "live write"); n != 1 {
				t.Fatalf("the write is in the history %d times", n)
			}
			tables := recState(t, store).Branches[0].Tables
			if !cmp.Equal(tables[0].Fragments, []string{"a0", "a1"}) || !cmp.Equal(tables[1].Fragments, []string{"b0", "b1"}) {
				t.Fatalf("tables %+v\ndiff (-tables[0].Fragments +[]string{'a0', 'a1'}):\n%s\ndiff (-tables[1].Fragments +[]string{'b0', 'b1'}):\n%s", tables, cmp.Diff(tables[0].Fragments, []string{"a0", "a1"}), cmp.Diff(tables[1].Fragments, []string{"b0", "b1"}))
			}
			recOneAudit(t, store)
			recNoSidecars(t, store)
		})
	}
}

// A live writer that a recoverer rolled back while it was parked (after
// its sidecar, or after its first table commit) is fenced: its create-only
// table write loses to the restore. A strict write returns the typed,
// retryable version mismatch and its data never appears; a non-strict one
// rebuilds and lands exactly once.
func TestLiveWriterRolledBackIsFenced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		point  failpoint.Name
		strict bool
	}{
		{"strict after sidecar", failpoint.AfterSidecarWrite, true},
		{"strict after first table", failpoint.AfterTableCommit, true},
		{"non-strict after sidecar", failpoint.AfterSidecarWrite, false},
		{"non-strict after first table", failpoint.AfterTableCommit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := recInit(t)
			ws := []kernel.TableWrite{{Table: "a", Strict: tc.strict, BaseVersion: 1, Build: recAppend("a1")}, {Table: "b", Build: recAppend("b1")}}
			rv, done := recParkedWrite(t, store, 52, tc.point, ws)
			recOpen(t, store, 53, nil) // rolls the parked write back
			rv.Release()
			r := <-done
			want := 1
			if tc.strict {
				var mm *kernel.VersionMismatchError
				if !errors.As(r.err, &mm) || !mm.Retryable() {
					t.Fatalf("strict write rolled back: %+v, %v; want a retryable version mismatch", r.c, r.err)
				}
				want = 0
			} else if r.err != nil {
				t.Fatalf("non-strict write rolled back: %v", r.err)
			}
			if n := recMessages(t, store, "live write"); n != want {
				t.Fatalf("the write is in the history %d times, want %d", n, want)
			}
			recNoSidecars(t, store)
			recCheckNoStrays(t, store)
		})
	}
}

// A writer that gives up after its sidecar (a strict table lost the race
// at the publish) cleans up before it returns the definite failure: nothing
// of it is visible, no sidecar is left, and no table it touched keeps its
// dangling content above the pin.
func TestWriterAbandonsItsOwnSidecar(t *testing.T) {
	store := recInit(t)
	ws := []kernel.TableWrite{{Table: "a", Strict: true, BaseVersion: 1, Build: recAppend("a1")}, {Table: "b", Build: recAppend("b1")}}
	rv, done := recParkedWrite(t, store, 54, failpoint.BeforePublish, ws)
	other := recOpenNow(t, store, 55, nil)
	recMustWrite(t, other, "main", map[string]string{"a": "a2"}, "other")
	rv.Release()
	r := <-done
	var mm *kernel.VersionMismatchError
	if !errors.As(r.err, &mm) || mm.Table != "a" || errors.Is(r.err, objstore.ErrAmbiguous) {
		t.Fatalf("strict write that lost: %+v, %v", r.c, r.err)
	}
	if n := recMessages(t, store, "live write"); n != 0 {
		t.Fatalf("a failed write is visible")
	}
	recNoSidecars(t, store)
	recCheckNoStrays(t, store)
}

// An injected error after the sidecar write (the store still works): before
// any table version, the writer deletes its sidecar and the failure is
// definite; after one, the write may still be completed by recovery, so the
// error is ambiguous and the sidecar stays — and a later recovery resolves
// it to the pre- or the post-state, with one audit record.
func TestInjectedErrorAfterSidecar(t *testing.T) {
	for _, tc := range []struct {
		point     failpoint.Name
		ambiguous bool
	}{
		{failpoint.AfterSidecarWrite, false},
		{failpoint.AfterTableCommit, true},
		{failpoint.BeforePublish, true},
	} {
		t.Run(string(tc.point), func(t *testing.T) {
			store := recInit(t)
			pre := recState(t, store)
			fps := failpoint.NewSet()
			fps.Arm(tc.point, failpoint.Action{Kind: failpoint.ReturnError})
			w := recOpenNow(t, store, 57, fps)
			_, err := recWrite(w, "main", map[string]string{"a": "a1", "b": "b1"}, "injected")
			if !errors.Is(err, failpoint.ErrInjected) || errors.Is(err, objstore.ErrAmbiguous) != tc.ambiguous {
				t.Fatalf("write with an injected error: %v (want ambiguous=%v)", err, tc.ambiguous)
			}
			if !tc.ambiguous {
				if st := recState(t, store); st.String() != pre.String() {
					t.Fatalf("state:\n%s\nwant:\n%s", st, pre)
				}
				recNoSidecars(t, store)
				return
			}
			if n := len(kerneltest.Sidecars(store, recRoot)); n != 1 {
				t.Fatalf("%d sidecars after an ambiguous failure, want 1", n)
			}
			if _, err := recOpenNow(t, store, 58, nil).Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
				t.Fatal(err)
			}
			recOneAudit(t, store)
			recNoSidecars(t, store)
			recCheckNoStrays(t, store)
		})
	}
}

// recCheckNoStrays fails if a table HEAD on main runs ahead of its pin with
// content that differs from the pinned content.
func recCheckNoStrays(t *testing.T, store *sim.Store) {
	t.Helper()
	g := recOpenRO(t, store)
	b := mustRecBranch(t, g)
	snap, _ := g.SnapshotAt(recCtx, b)
	for _, table := range []string{"a", "b", "n"} {
		pin, _ := snap.Table(table)
		th, err := g.TableHead(recCtx, b, table)
		if err != nil {
			t.Fatal(err)
		}
		if th.Version == pin.Version {
			continue
		}
		head, _ := g.ReadTable(recCtx, table, th)
		pinned, _ := g.ReadPinned(recCtx, pin)
		if !cmp.Equal(head.Fragments, pinned.Fragments) || head.Rows != pinned.Rows {
			t.Fatalf("table %s: HEAD v%d %v dangles above pin v%d %v\ndiff (-head.Fragments +pinned.Fragments):\n%s", table, th.Version, head.Fragments, pin.Version, pinned.Fragments, cmp.Diff(head.Fragments, pinned.Fragments))
		}
	}
}

// Concurrent non-strict writers on one table lose rounds and rebuild: every
// lost round's sidecar is retired by the writer's next round, so when all
// writes are acknowledged no sidecar, no audit record and no stray content
// is left, and each write is in the history once.
func TestLostRoundsLeaveNoSidecars(t *testing.T) {
	store := recInit(t)
	const writers = 6
	errs := make(chan error, writers)
	for i := range writers {
		g := recOpenNow(t, store, uint64(80+i), nil)
		go func() {
			_, err := g.Write(recCtx, mustRecBranch(t, g), []kernel.TableWrite{{Table: "a", Build: recAppend("w")}, {Table: "b", Build: recAppend("w")}},
				kernel.LineageIntent{Actor: "w", Message: "concurrent"})
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	recNoSidecars(t, store)
	if n := recAuditTotal(store); n != 0 {
		t.Fatalf("%d audit records without any crash", n)
	}
	if n := recMessages(t, store, "concurrent"); n != writers {
		t.Fatalf("%d commits for %d writes", n, writers)
	}
	recCheckNoStrays(t, store)
}
