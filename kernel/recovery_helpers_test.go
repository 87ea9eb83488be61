package kernel_test

import (
	"context"
	"errors"
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

// Helpers of the recovery tests (recovery_*_test.go). Names carry a "rec"
// prefix so they never collide with the core tests' helpers.

var recCtx = context.Background()

const recRoot = "rec/g"

var recKeys = format.NewKeys(recRoot)

// recInit creates a graph on a fresh sim store with tables a=[a0] and
// b=[b0] published on main, and returns the store.
func recInit(t testing.TB) *sim.Store {
	t.Helper()
	store := sim.New(sim.Config{Seed: 7})
	g, err := kernel.Init(recCtx, store, recRoot, []byte("recovery tests\n"), kernel.Options{CounterWrites: true, Env: kerneltest.Env(1, nil)})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	recMustWrite(t, g, "main", map[string]string{"a": "a0", "b": "b0"}, "setup")
	return store
}

// recOpen opens a read-write handle with its own entropy seed and a clock
// at kerneltest.Later: every sidecar a recOpenNow handle wrote is past the
// recovery lease for it.
func recOpen(t testing.TB, store objstore.Store, seed uint64, fps *failpoint.Set) *kernel.Graph {
	t.Helper()
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(seed, fps, kerneltest.Later)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return g
}

// recOpenNow opens a read-write handle whose clock starts at the epoch, as
// live writers' do: sidecars of other epoch handles are young to it. It
// builds on commits of recOpen handles (kerneltest.EpochSkewMargin).
func recOpenNow(t testing.TB, store objstore.Store, seed uint64, fps *failpoint.Set) *kernel.Graph {
	t.Helper()
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.Env(seed, fps), SkewMargin: kerneltest.EpochSkewMargin})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return g
}

// recAppend is a Build that appends frag to the pinned content.
func recAppend(frag string) func(kernel.TableVersion) (kernel.TableContent, error) {
	return func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), frag), Rows: p.Rows + 1}, nil
	}
}

// recWrites builds one non-strict TableWrite per table, sorted by table.
func recWrites(frags map[string]string) []kernel.TableWrite {
	var ws []kernel.TableWrite
	for table, frag := range frags {
		ws = append(ws, kernel.TableWrite{Table: table, Build: recAppend(frag)})
	}
	return ws
}

func recWrite(g *kernel.Graph, branch string, frags map[string]string, msg string) (kernel.Commit, error) {
	b, err := g.Branch(recCtx, branch)
	if err != nil {
		return kernel.Commit{}, err
	}
	return g.Write(recCtx, b, recWrites(frags), kernel.LineageIntent{Actor: "tester", Message: msg})
}

func recMustWrite(t testing.TB, g *kernel.Graph, branch string, frags map[string]string, msg string) kernel.Commit {
	t.Helper()
	c, err := recWrite(g, branch, frags, msg)
	if err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
	return c
}

// recState reads the visible state through a fresh read-only handle.
func recState(t testing.TB, store objstore.Store) kerneltest.State {
	t.Helper()
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, ReadOnly: true, Env: kerneltest.EnvAt(99, nil, kerneltest.Later)})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	s, err := kerneltest.ReadState(recCtx, g)
	if err != nil {
		t.Fatalf("ReadState: %v", err)
	}
	return s
}

// recSidecars decodes every sidecar in store.
func recSidecars(t testing.TB, store *sim.Store) []format.Sidecar {
	t.Helper()
	var out []format.Sidecar
	for _, k := range kerneltest.Sidecars(store, recRoot) {
		b, _ := store.Peek(k)
		s, _, err := format.DecodeSidecar(b)
		if err != nil {
			t.Fatalf("sidecar %s: %v", k, err)
		}
		out = append(out, s)
	}
	return out
}

// recAuditTotal is the number of audit records in store.
func recAuditTotal(store *sim.Store) int {
	n := 0
	for _, c := range kerneltest.AuditCounts(store, recRoot) {
		n += c
	}
	return n
}

// recTableKeys lists every table-version key.
func recTableKeys(store *sim.Store) []string {
	return store.Keys(recRoot + "/tables/")
}

var errRecCrashed = errors.New("rec test: process crashed")

// recCrashStore is one process's view of a store: after Crash, every call
// fails with errRecCrashed and has no effect.
type recCrashStore struct {
	objstore.Store
	mu      sync.Mutex
	crashed bool
	putHook func(key string, data []byte) error // runs before a Put; a non-nil error fails it with no effect
}

func (s *recCrashStore) Crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashed = true
}

func (s *recCrashStore) dead() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashed {
		return errRecCrashed
	}
	return nil
}

func (s *recCrashStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if err := s.dead(); err != nil {
		return objstore.Object{}, err
	}
	return s.Store.Get(ctx, key)
}

func (s *recCrashStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if err := s.dead(); err != nil {
		return objstore.Attrs{}, err
	}
	return s.Store.Head(ctx, key)
}

func (s *recCrashStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if err := s.dead(); err != nil {
		return objstore.ListPage{}, err
	}
	return s.Store.List(ctx, prefix, after, limit)
}

func (s *recCrashStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if err := s.dead(); err != nil {
		return "", err
	}
	if s.putHook != nil {
		if err := s.putHook(key, data); err != nil {
			return "", err
		}
	}
	return s.Store.Put(ctx, key, data, cond)
}

func (s *recCrashStore) Delete(ctx context.Context, key string) error {
	if err := s.dead(); err != nil {
		return err
	}
	return s.Store.Delete(ctx, key)
}

// recCrashingSet returns a failpoint set whose Crash actions kill store.
func recCrashingSet(store *recCrashStore) *failpoint.Set {
	fps := failpoint.NewSet()
	fps.OnCrash(store.Crash)
	return fps
}

func recIsSidecarKey(key string) bool { return strings.HasPrefix(key, recKeys.SidecarPrefix()) }

func recIsTableKey(key string) bool { return strings.HasPrefix(key, recRoot+"/tables/") }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
