package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var ctx = context.Background()

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// testEnv is a deterministic Env: a manual clock and seeded ChaCha8 entropy.
func testEnv(seed uint64) kernel.Env {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return kernel.Env{Clock: kernel.NewManualClock(epoch), Entropy: rand.NewChaCha8(s)}
}

// storeFactory builds a fresh empty store for one test.
type storeFactory struct {
	name string
	new  func(t testing.TB) objstore.Store
}

// factories are the backends every publish/branch test runs on.
var factories = []storeFactory{
	{"sim", func(t testing.TB) objstore.Store { return sim.New(sim.Config{Seed: 1}) }},
	{"fs", func(t testing.TB) objstore.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"s3", func(t testing.TB) objstore.Store { return s3test.Shared(t).NewStore(t) }},
}

// TestMain stops the shared S3 test server after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := s3test.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "s3test.StopShared:", err)
	}
	os.Exit(code)
}

// eachStore runs f once per backend.
func eachStore(t *testing.T, f func(t *testing.T, store objstore.Store)) {
	for _, fac := range factories {
		t.Run(fac.name, func(t *testing.T) { f(t, fac.new(t)) })
	}
}

const root = "graphs/g"

var schema = []byte(`{"tables":["a","b"]}`)

func mustInit(t testing.TB, store objstore.Store, seed uint64) *kernel.Graph {
	t.Helper()
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: testEnv(seed)})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return g
}

func mustBranch(t testing.TB, g *kernel.Graph, name string) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(ctx, name)
	if err != nil {
		t.Fatalf("Branch(%q): %v", name, err)
	}
	return b
}

// commitTable commits a version of table with fragment frag and publishes it.
func commitTable(t testing.TB, g *kernel.Graph, b kernel.BranchRef, table, frag string) kernel.Commit {
	t.Helper()
	c, err := g.Write(ctx, b, []kernel.TableWrite{{Table: table, Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), frag), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "test", Message: table + "+" + frag})
	if err != nil {
		t.Fatalf("write %s on %s: %v", table, b, err)
	}
	return c
}

// fullLog returns b's whole history, newest first.
func fullLog(t testing.TB, g *kernel.Graph, b kernel.BranchRef) []kernel.Commit {
	t.Helper()
	var out []kernel.Commit
	cur := kernel.LogCursor("")
	for i := 0; ; i++ {
		page, err := g.Log(ctx, b, cur, 7)
		if err != nil {
			t.Fatalf("Log: %v", err)
		}
		out = append(out, page.Commits...)
		if page.Next == "" {
			return out
		}
		if i > 100000 {
			t.Fatal("log does not end")
		}
		cur = page.Next
	}
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func kernelRef(p kernel.TablePin) kernel.TableRef {
	return p.Ref()
}
