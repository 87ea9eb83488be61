package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	gkfs "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// testSchema has every kind, a bounded @card and an unbounded edge.
const testSchema = `
node Person  { name: string  age: int64?  score: float64?  active: bool?  born: timestamp?  avatar: bytes? }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) { since: timestamp? }
edge Knows:   Person -> Person
`

const testRoot = "graphs/g1"

// fixture is one store with the command's app around it. spec is what the
// command line names the store by: "sim" (the test's sim store) or fs:DIR.
type fixture struct {
	t     *testing.T
	store *counting.Store
	spec  string
	clock *kernel.ManualClock
	env   kernel.Env
	// objects makes initGraph's handle write every fragment as an object
	// (data.Options.EmbedFragments -1), for tests that damage or collect
	// fragment objects; otherwise a small fragment rides its table
	// version (format 9).
	objects bool
	// versions makes initGraph's handle write every table version as an
	// object (kernel.Options.NoRiding), for tests whose subject is version
	// objects (damaging, deleting or counting them); otherwise a named
	// write's version rides its manifest (format 11).
	versions bool
}

// backends are the stores every subcommand is tested on.
var backends = []string{"sim", "fs"}

func newFixture(t *testing.T, backend string) *fixture {
	t.Helper()
	var inner objstore.Store
	spec := "sim"
	switch backend {
	case "sim":
		inner = sim.New(sim.Config{Seed: 1})
	case "fs":
		dir := t.TempDir()
		st, err := gkfs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		inner, spec = st, "fs:"+dir
	default:
		t.Fatalf("backend %q", backend)
	}
	return fixtureOn(t, inner, spec)
}

// fixtureOn is a fixture whose STORE spec resolves to inner (counted).
func fixtureOn(t *testing.T, inner objstore.Store, spec string) *fixture {
	clock := kernel.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &fixture{t: t, store: counting.New(inner), spec: spec, clock: clock,
		env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{7})}}
}

// app returns an app whose STORE spec resolves to the fixture's store.
func (f *fixture) app(stdout, stderr *bytes.Buffer) *app {
	return &app{stdout: stdout, stderr: stderr, env: f.env, now: f.clock.Now, testSpec: f.spec,
		open: func(ctx context.Context, spec string) (objstore.Store, error) {
			if spec == f.spec {
				return f.store, nil
			}
			return openStore(ctx, spec)
		}}
}

// run runs the command in-process and returns its exit status and output.
func (f *fixture) run(args ...string) (int, string, string) {
	f.t.Helper()
	var out, errb bytes.Buffer
	code := f.app(&out, &errb).run(context.Background(), args)
	return code, out.String(), errb.String()
}

// mustRun runs the command and fails the test unless it exits with want.
func (f *fixture) mustRun(want int, args ...string) string {
	f.t.Helper()
	code, out, errs := f.run(args...)
	if code != want {
		f.t.Fatalf("graphkernel %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

// initGraph creates the test graph and returns its data handle.
func (f *fixture) initGraph() *data.Graph {
	f.t.Helper()
	s, err := schema.Parse([]byte(testSchema))
	if err != nil {
		f.t.Fatal(err)
	}
	opts := data.Options{Kernel: kernel.Options{Env: f.env, NoRiding: f.versions}}
	if f.objects {
		opts.EmbedFragments = -1
	}
	g, err := data.Init(context.Background(), f.store, testRoot, s, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

func person(id, name string) data.Row { return data.Row{ID: id, Props: map[string]any{"name": name}} }
func edgeRow(id, from, to string) data.Row {
	return data.Row{ID: id, From: from, To: to}
}

// commit runs one transaction on branch name.
func (f *fixture) commit(g *data.Graph, branch, msg string, stage func(tx *data.Txn) error) kernel.Commit {
	f.t.Helper()
	ctx := context.Background()
	b, err := g.Branch(ctx, branch)
	if err != nil {
		f.t.Fatal(err)
	}
	tx, err := g.Begin(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := stage(tx); err != nil {
		f.t.Fatal(err)
	}
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: msg})
	if err != nil {
		f.t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	return c
}

// buildGraph makes a small history: two commits on main, a branch
// "feature" with one commit of its own, and a merge of feature into main.
func (f *fixture) buildGraph() *data.Graph {
	f.t.Helper()
	g := f.initGraph()
	f.commit(g, "main", "people", func(tx *data.Txn) error {
		if err := tx.Insert("Person", person("p1", "Ann"), person("p2", "Bob"), person("p3", "Cy")); err != nil {
			return err
		}
		if err := tx.Insert("Company", data.Row{ID: "c1", Props: map[string]any{"name": "Acme"}}); err != nil {
			return err
		}
		if err := tx.Insert("WorksAt", edgeRow("w1", "p1", "c1")); err != nil {
			return err
		}
		return tx.Insert("Knows", edgeRow("k1", "p1", "p2"), edgeRow("k2", "p2", "p3"))
	})
	ctx := context.Background()
	k := g.Kernel()
	main, _ := k.Branch(ctx, "main")
	if _, err := k.CreateBranch(ctx, "feature", main); err != nil {
		f.t.Fatal(err)
	}
	fc := f.commit(g, "feature", "feature person", func(tx *data.Txn) error {
		return tx.Insert("Person", person("p9", "Fay"))
	})
	f.commit(g, "main", "more people", func(tx *data.Txn) error {
		return tx.Upsert("Person", person("p4", "Dee"))
	})
	// A merge commit (lineage only: the kernel records both parents).
	if _, err := k.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "test", Message: "merge feature", MergedParent: &fc.ID}, nil); err != nil {
		f.t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	return g
}
