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

// recCrashWrite runs a write of frags on branch that crashes at the hit-th
// hit (from 1) of point.
func recCrashWrite(t *testing.T, store *sim.Store, branch string, frags map[string]string, point failpoint.Name, hit int) {
	t.Helper()
	cs := &recCrashStore{Store: store}
	fps := recCrashingSet(cs)
	fps.SetDecider(recNthHit(point, hit))
	g := recOpenNow(t, cs, 11, fps)
	if _, err := recWrite(g, branch, frags, "crashing write"); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("crashing write: %v", err)
	}
}

// recNthHit crashes at the n-th hit of point.
func recNthHit(point failpoint.Name, n int) failpoint.Decider {
	seen := 0
	return func(p failpoint.Name) (failpoint.Action, bool) {
		if p != point {
			return failpoint.Action{}, false
		}
		seen++
		return failpoint.Action{Kind: failpoint.Crash}, seen == n
	}
}

// recOneAudit returns the only audit record, failing unless there is exactly
// one.
func recOneAudit(t *testing.T, store *sim.Store) format.Audit {
	t.Helper()
	as, err := kerneltest.Audits(store, recRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 {
		t.Fatalf("%d audit records, want exactly 1: %+v", len(as), as)
	}
	return as[0]
}

func recNoSidecars(t *testing.T, store *sim.Store) {
	t.Helper()
	if left := kerneltest.Sidecars(store, recRoot); len(left) != 0 {
		t.Fatalf("sidecars left: %v", left)
	}
}

// Crash after every table commit, before the publish: every table rolled
// past expected, so the open rolls forward with one recovery commit (actor
// recovery, the writer's message) and one audit record.
func TestOpenRollsForward(t *testing.T) {
	store := recInit(t)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.BeforePublish, 1)
	sc := recSidecars(t, store)[0]
	g := recOpen(t, store, 12, nil)
	main, _ := g.Branch(recCtx, "main")
	head, err := g.Head(recCtx, main)
	if err != nil || head.Actor != kernel.RecoveryActor || head.Kind != format.KindRecovery || head.Message != "crashing write" {
		t.Fatalf("head after roll-forward %+v, %v", head, err)
	}
	snap, _ := g.SnapshotAt(recCtx, main)
	for _, st := range sc.Tables {
		if p, _ := snap.Table(st.Table); p.Version != st.Commit || p.Fork != st.Fork {
			t.Fatalf("table %s pinned %+v, want the sidecar's version %d", st.Table, p, st.Commit)
		}
	}
	a := recOneAudit(t, store)
	if a.Op != sc.Op || a.Decision != format.DecisionRollForward || a.Converged || a.RecoveryCommit != head.ID ||
		a.Actor != "tester" || a.WriterKind != kernel.WriterKindWrite || len(a.Tables) != 2 ||
		a.Tables[0].To != sc.Tables[0].Commit || a.Tables[0].FromPinned != sc.Tables[0].Expected || a.Tables[0].FromHead != sc.Tables[0].Commit {
		t.Fatalf("audit %+v for sidecar %+v", a, sc)
	}
	recNoSidecars(t, store)
}

// Crash after the first of two table commits: one table rolled past, one
// did not move, so the open rolls back: the moved table gets a restore
// version with the pinned content, the unmoved one a restore occupying the
// sidecar's version; one recovery commit; the graph reads as before.
func TestOpenRollsBack(t *testing.T) {
	store := recInit(t)
	pre := recState(t, store)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterTableCommit, 1)
	sc := recSidecars(t, store)[0]
	g := recOpen(t, store, 13, nil)
	if post := recState(t, store); post.String() != pre.String() {
		t.Fatalf("state after roll-back:\n%s\nwant:\n%s", post, pre)
	}
	main, _ := g.Branch(recCtx, "main")
	head, _ := g.Head(recCtx, main)
	if head.Actor != kernel.RecoveryActor || head.Kind != format.KindRecovery || !strings.HasPrefix(head.Message, kernel.RecoveryMessagePrefix) {
		t.Fatalf("head after roll-back %+v", head)
	}
	a := recOneAudit(t, store)
	if a.Op != sc.Op || a.Decision != format.DecisionRollBack || a.RecoveryCommit != head.ID {
		t.Fatalf("audit %+v", a)
	}
	for _, at := range a.Tables {
		st, _ := sc.Table(at.Table)
		th, _ := g.TableHead(recCtx, main, at.Table)
		snap, _ := g.SnapshotAt(recCtx, main)
		pin, _ := snap.Table(at.Table)
		// Every HEAD is back on its pin, and the sidecar's version number
		// is taken, so the crashed writer could never complete.
		if th.Version != pin.Version || at.To != pin.Version || th.Version < st.Commit {
			t.Fatalf("table %s: head %d pin %d audit %+v sidecar commit %d", at.Table, th.Version, pin.Version, at, st.Commit)
		}
	}
	recNoSidecars(t, store)
}

// Crash right after the sidecar write: nothing moved; the open rolls back
// and the graph reads as before.
func TestOpenRollsBackWhenNothingMoved(t *testing.T) {
	store := recInit(t)
	pre := recState(t, store)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "n": "n1"}, failpoint.AfterSidecarWrite, 1)
	recOpen(t, store, 14, nil)
	if post := recState(t, store); post.String() != pre.String() {
		t.Fatalf("state after roll-back:\n%s\nwant:\n%s", post, pre)
	}
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollBack {
		t.Fatalf("audit %+v", a)
	}
	recNoSidecars(t, store)
}

// Crash after the publish, before the sidecar delete: the intent is
// already visible; the open finishes it (audit naming the writer's commit,
// converged) without publishing anything.
func TestOpenFinishesPublishedWrite(t *testing.T) {
	store := recInit(t)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterPublishBeforeSidecarDelete, 1)
	sc := recSidecars(t, store)[0]
	before := recState(t, store)
	g := recOpen(t, store, 15, nil)
	main, _ := g.Branch(recCtx, "main")
	head, _ := g.Head(recCtx, main)
	if head.ID != sc.CommitID {
		t.Fatalf("head %+v: recovery published although the write was already visible", head)
	}
	if after := recState(t, store); after.String() != before.String() {
		t.Fatalf("state changed:\n%s\nwant:\n%s", after, before)
	}
	a := recOneAudit(t, store)
	if a.Decision != format.DecisionRollForward || !a.Converged || a.RecoveryCommit != sc.CommitID {
		t.Fatalf("audit %+v, want converged roll-forward naming %s", a, sc.CommitID)
	}
	recNoSidecars(t, store)
}

// A recoverer that crashes after its audit record and before the sidecar
// delete leaves the sidecar; the next open finishes it without a second
// record.
func TestRecoveryCrashAfterAuditWritesNoSecondRecord(t *testing.T) {
	for _, point := range []failpoint.Name{failpoint.BeforePublish, failpoint.AfterSidecarWrite} {
		t.Run(string(point), func(t *testing.T) {
			store := recInit(t)
			recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, point, 1)
			cs := &recCrashStore{Store: store}
			fps := recCrashingSet(cs)
			fps.Arm(failpoint.AfterAuditBeforeSidecarDelete, failpoint.Action{Kind: failpoint.Crash})
			if _, err := kernel.Open(recCtx, cs, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(16, fps, kerneltest.Later)}); !errors.Is(err, failpoint.ErrCrashed) {
				t.Fatalf("recoverer crashing after its audit: %v", err)
			}
			if n := len(kerneltest.Sidecars(store, recRoot)); n != 1 || recAuditTotal(store) != 1 {
				t.Fatalf("after the crash: %d sidecars, %d audits", n, recAuditTotal(store))
			}
			state := recState(t, store)
			recOpen(t, store, 17, nil)
			recOneAudit(t, store)
			recNoSidecars(t, store)
			if after := recState(t, store); after.String() != state.String() {
				t.Fatalf("the second recoverer changed the state:\n%s\nwant:\n%s", after, state)
			}
		})
	}
}

// A table whose HEAD is behind its published version is an invariant
// violation: the open fails loudly with a typed error and the sidecar stays.
func TestInvariantViolationFailsOpen(t *testing.T) {
	store := recInit(t)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.AfterSidecarWrite, 1)
	g := recOpenRO(t, store)
	main, _ := g.Branch(recCtx, "main")
	snap, _ := g.SnapshotAt(recCtx, main)
	pin, _ := snap.Table("a")
	if err := store.Delete(recCtx, recKeys.TableVersion("a", pin.Fork, pin.Version)); err != nil { // lose a published version
		t.Fatal(err)
	}
	_, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(18, nil, kerneltest.Later)})
	var ie *kernel.RecoveryInvariantError
	if !errors.As(err, &ie) || !errors.Is(err, kernel.ErrRecoveryInvariant) || ie.Table != "a" || ie.Pin != pin.Version {
		t.Fatalf("open over a HEAD behind its pin: %v", err)
	}
	if n := len(kerneltest.Sidecars(store, recRoot)); n != 1 || recAuditTotal(store) != 0 {
		t.Fatalf("%d sidecars, %d audits after a refused recovery", n, recAuditTotal(store))
	}
}

// A corrupt sidecar fails the open loudly and is kept; a newer-format
// sidecar is refused with the typed format error and kept. Read-only opens
// still work and read the manifest's truth.
func TestUnreadableSidecarsFailOpenAndStay(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
		make func(good []byte) []byte
	}{
		{"corrupt", kernel.ErrCorrupt, func(good []byte) []byte {
			b := append([]byte(nil), good...)
			b[len(b)/2] ^= 0x40
			return b
		}},
		{"newer-format", kernel.ErrUnsupportedFormat, func(good []byte) []byte {
			env, err := format.DecodeEnvelope(good)
			if err != nil {
				panic(err)
			}
			env.Stamp = format.CurrentFormat + 1
			return format.EncodeEnvelope(env)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := recInit(t)
			pre := recState(t, store)
			recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
			key := kerneltest.Sidecars(store, recRoot)[0]
			good, _ := store.Peek(key)
			bad := tc.make(good)
			if err := store.Delete(recCtx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Put(recCtx, key, bad, objstore.CreateOnly); err != nil {
				t.Fatal(err)
			}
			_, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(19, nil, kerneltest.Later)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("open over a %s sidecar: %v, want %v", tc.name, err, tc.want)
			}
			if got, ok := store.Peek(key); !ok || string(got) != string(bad) || recAuditTotal(store) != 0 {
				t.Fatalf("the %s sidecar was not kept as is (present %v, %d audits)", tc.name, ok, recAuditTotal(store))
			}
			if st := recState(t, store); st.String() != pre.String() {
				t.Fatalf("read-only state:\n%s\nwant:\n%s", st, pre)
			}
		})
	}
}

// The sidecar of a branch that was deleted (or deleted and re-created) is
// discarded with an audit record; nothing is published anywhere.
func TestSidecarOfDeletedBranchIsDiscarded(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		name := map[bool]string{false: "deleted", true: "recreated"}[recreate]
		t.Run(name, func(t *testing.T) {
			store := recInit(t)
			g := recOpen(t, store, 20, nil)
			main, _ := g.Branch(recCtx, "main")
			if _, err := g.CreateBranch(recCtx, "feat", main); err != nil {
				t.Fatal(err)
			}
			recCrashWrite(t, store, "feat", map[string]string{"a": "fa1"}, failpoint.BeforePublish, 1)
			sc := recSidecars(t, store)[0]
			if err := g.DeleteBranch(recCtx, "feat"); err != nil {
				t.Fatal(err)
			}
			if recreate {
				if _, err := g.CreateBranch(recCtx, "feat", main); err != nil {
					t.Fatal(err)
				}
			}
			pre := recState(t, store)
			recOpen(t, store, 21, nil)
			a := recOneAudit(t, store)
			if a.Op != sc.Op || a.Decision != format.DecisionDiscard || a.RecoveryCommit != (format.ID{}) {
				t.Fatalf("audit %+v", a)
			}
			recNoSidecars(t, store)
			if post := recState(t, store); post.String() != pre.String() {
				t.Fatalf("discard changed the graph:\n%s\nwant:\n%s", post, pre)
			}
		})
	}
}

// A read-only open never sweeps: no store write at all, the sidecar stays,
// and the reads are the manifest's truth.
func TestReadOnlyOpenDoesNotSweep(t *testing.T) {
	store := recInit(t)
	pre := recState(t, store)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.BeforePublish, 1)
	writes := store.Counters().Writes()
	g := recOpenRO(t, store)
	st, err := kerneltest.ReadState(recCtx, g)
	if err != nil || st.String() != pre.String() {
		t.Fatalf("read-only reads %v:\n%s\nwant:\n%s", err, st, pre)
	}
	if store.Counters().Writes() != writes || len(kerneltest.Sidecars(store, recRoot)) != 1 {
		t.Fatalf("read-only open wrote (%d writes) or removed the sidecar", store.Counters().Writes()-writes)
	}
}

func recOpenRO(t *testing.T, store *sim.Store) *kernel.Graph {
	t.Helper()
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, ReadOnly: true, Env: kerneltest.EnvAt(98, nil, kerneltest.Later)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
