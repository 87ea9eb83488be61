package kernel_test

import (
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Every table version a Write commits is named, before it is written, by a
// durable sidecar of that write: same table, fork and version, same writer
// token. After the publish the sidecar is gone.
func TestWriteSidecarPrecedesEveryTableVersion(t *testing.T) {
	store := recInit(t)
	var mu sync.Mutex
	var problems []string
	var seen []format.Sidecar
	cs := &recCrashStore{Store: store}
	cs.putHook = func(key string, data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if recIsSidecarKey(key) {
			s, _, err := format.DecodeSidecar(data)
			if err != nil {
				problems = append(problems, fmt.Sprintf("sidecar %s: %v", key, err))
			}
			seen = append(seen, s)
			return nil
		}
		if !recIsTableKey(key) {
			return nil
		}
		env, err := format.DecodeEnvelope(data)
		if err != nil {
			problems = append(problems, err.Error())
			return nil
		}
		tv, _, _ := format.DecodeTableVersion(data)
		named := false
		for _, s := range recSidecars(t, store) {
			if st, ok := s.Table(tv.Table); ok && st.Fork == tv.Fork && st.Commit == tv.Version && st.Token == format.TokenHex(env.Token) {
				named = true
			}
		}
		if !named {
			problems = append(problems, fmt.Sprintf("table version %s written with no durable sidecar naming it", key))
		}
		return nil
	}
	g := recOpen(t, cs, 2, nil)
	main, _ := g.Branch(recCtx, "main")
	before, _ := g.SnapshotAt(recCtx, main)
	c, err := g.Write(recCtx, main, recWrites(map[string]string{"a": "a1", "b": "b1", "n": "n1"}),
		kernel.LineageIntent{Actor: "alice", Message: "three tables"})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(problems) > 0 {
		t.Fatalf("%s", strings.Join(problems, "\n"))
	}
	if len(seen) != 1 {
		t.Fatalf("%d sidecars written, want 1", len(seen))
	}
	s := seen[0]
	if s.Branch.Name != "main" || s.Branch.IncarnationID != main.IncarnationID() || s.Actor != "alice" ||
		s.Message != "three tables" || s.WriterKind != kernel.WriterKindWrite || s.CommitID != c.ID ||
		s.BaseManifest != before.ManifestVersion() || s.CreatedUnixNano == 0 {
		t.Fatalf("sidecar %+v (commit %s, base %d)", s, c.ID, before.ManifestVersion())
	}
	var tables []string
	for _, st := range s.Tables {
		tables = append(tables, st.Table)
		want := uint64(0)
		if p, ok := before.Table(st.Table); ok {
			want = p.Version
		}
		if st.Expected != want || st.Commit != want+1 {
			t.Errorf("table %s: expected %d commit %d, pinned %d", st.Table, st.Expected, st.Commit, want)
		}
	}
	if !cmp.Equal(tables, []string{"a", "b", "n"}) {
		t.Fatalf("sidecar tables %v\ndiff (-tables +[]string{'a', 'b', 'n'}):\n%s", tables, cmp.Diff(tables, []string{"a", "b", "n"}))
	}
	if left := recSidecars(t, store); len(left) != 0 {
		t.Fatalf("sidecar left after the publish: %+v", left)
	}
}

// A sidecar write that fails aborts the write before any table HEAD moves:
// no table version, no manifest, no sidecar.
func TestFailedSidecarWriteMovesNoHead(t *testing.T) {
	store := recInit(t)
	before := recState(t, store)
	tablesBefore := recTableKeys(store)
	cs := &recCrashStore{Store: store}
	cs.putHook = func(key string, _ []byte) error {
		if recIsSidecarKey(key) {
			return objstore.NewError(objstore.OpPut, key, objstore.ErrTransient, errors.New("injected: disk full"))
		}
		return nil
	}
	g, err := kernel.Open(recCtx, cs, recRoot, kernel.Options{CounterWrites: true, Env: recEnvSeed(3), RetryBudget: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = recWrite(g, "main", map[string]string{"a": "a1", "b": "b1"}, "doomed")
	if err == nil {
		t.Fatal("Write succeeded although its sidecar could not be written")
	}
	if got := recTableKeys(store); !slices.Equal(got, tablesBefore) {
		t.Fatalf("table versions changed: %v -> %v", tablesBefore, got)
	}
	if after := recState(t, store); after.String() != before.String() {
		t.Fatalf("state changed:\n%s\nvs\n%s", before, after)
	}
	if n := len(recSidecars(t, store)); n != 0 {
		t.Fatalf("%d sidecars left", n)
	}
}

// The writer's failpoints fire in protocol order, each exactly when the
// durable state says it should: the sidecar is durable and no table moved
// at AfterSidecarWrite; the sidecar is still there before the publish and
// after it.
func TestWriteFailpointOrder(t *testing.T) {
	store := recInit(t)
	tablesBefore := len(recTableKeys(store))
	fps := failpoint.NewSet()
	var order []string
	fps.SetDecider(func(n failpoint.Name) (failpoint.Action, bool) {
		sc, tv := len(kernelSidecarKeys(store)), len(recTableKeys(store))-tablesBefore
		order = append(order, fmt.Sprintf("%s sidecars=%d new-versions=%d", n, sc, tv))
		return failpoint.Action{}, false
	})
	g := recOpen(t, store, 4, fps)
	if _, err := recWrite(g, "main", map[string]string{"a": "a1", "b": "b1"}, "two"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		string(failpoint.AfterSidecarWrite) + " sidecars=1 new-versions=0",
		string(failpoint.AfterTableCommit) + " sidecars=1 new-versions=1",
		string(failpoint.AfterTableCommit) + " sidecars=1 new-versions=2",
		string(failpoint.BeforePublish) + " sidecars=1 new-versions=2",
		string(failpoint.PublishBeforeWrite) + " sidecars=1 new-versions=2",
		string(failpoint.AfterPublishBeforeSidecarDelete) + " sidecars=1 new-versions=2",
	}
	if !cmp.Equal(order, want) {
		t.Fatalf("failpoint order:\n%s\nwant:\n%s\ndiff (-order +want):\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"), cmp.Diff(order, want))
	}
}

// A crash right after the sidecar write leaves the sidecar durable and no
// table HEAD moved.
func TestCrashAfterSidecarWrite(t *testing.T) {
	store := recInit(t)
	tablesBefore := recTableKeys(store)
	cs := &recCrashStore{Store: store}
	fps := recCrashingSet(cs)
	fps.Arm(failpoint.AfterSidecarWrite, failpoint.Action{Kind: failpoint.Crash})
	g := recOpen(t, cs, 5, fps)
	_, err := recWrite(g, "main", map[string]string{"a": "a1"}, "crash")
	if !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("Write after crash: %v", err)
	}
	if n := len(recSidecars(t, store)); n != 1 {
		t.Fatalf("%d sidecars after a crash right after the sidecar write, want 1", n)
	}
	if got := recTableKeys(store); !slices.Equal(got, tablesBefore) {
		t.Fatalf("a table HEAD moved before the crash: %v", got)
	}
}

func kernelSidecarKeys(store *sim.Store) []string { return store.Keys(recKeys.SidecarPrefix()) }

func recEnvSeed(seed uint64) kernel.Env { return kerneltest.Env(seed, nil) }

// WriteAs records its writer kind in the sidecar (and so in any audit
// record); a malformed kind is refused before any I/O.
func TestWriteAsRecordsWriterKind(t *testing.T) {
	store := recInit(t)
	cs := &recCrashStore{Store: store}
	fps := recCrashingSet(cs)
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Crash})
	g := recOpenNow(t, cs, 8, fps)
	b, _ := g.Branch(recCtx, "main")
	if _, err := g.WriteAs(recCtx, "Bad Kind", b, recWrites(map[string]string{"a": "x"}), kernel.LineageIntent{}); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("bad kind: %v", err)
	}
	if _, err := g.WriteAs(recCtx, "txn", b, recWrites(map[string]string{"a": "a1"}), kernel.LineageIntent{}); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("crashing WriteAs: %v", err)
	}
	if s := recSidecars(t, store); len(s) != 1 || s[0].WriterKind != "txn" {
		t.Fatalf("sidecars %+v", s)
	}
	recOpen(t, store, 9, nil)
	if a := recOneAudit(t, store); a.WriterKind != "txn" {
		t.Fatalf("audit %+v", a)
	}
}
