package check

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
)

const root = "g"

// fixture is a small real graph (built by the kernel on a fault-free sim
// store) plus the history that built it: three tagged commits on main, one
// table each, and a branch. The versions ride their manifests (format 11)
// unless newFixtureAs is asked for objects.
type fixture struct {
	store *objsim.Store
	h     *History
	tags  []string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureAs(t, false)
}

// newFixtureAs is newFixture writing every table version as an object
// when versions is set (kernel.Options.NoRiding), for mutations of
// version objects.
func newFixtureAs(t *testing.T, versions bool) fixture {
	t.Helper()
	ctx := context.Background()
	st := objsim.New(objsim.Config{Seed: 1})
	var seed [32]byte
	env := kernel.Env{Clock: kernel.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), Entropy: rand.NewChaCha8(seed)}
	g, err := kernel.Init(ctx, st, root, []byte("schema"), kernel.Options{Env: env, NoRiding: versions})
	if err != nil {
		t.Fatal(err)
	}
	var tick int64
	h := NewHistory(func() int64 { tick++; return tick })
	main, err := g.Branch(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{store: st, h: h}
	for i, table := range []string{"t0", "t1", "t0"} {
		tag := []string{"w.0", "w.1", "w.2"}[i]
		pc := h.BeginCommit(0, IncarnationKey("main", 1), tag, []TableWrite{{Table: table}})
		_, err := g.Write(ctx, main, []kernel.TableWrite{{Table: table, Build: func(kernel.TableVersion) (kernel.TableContent, error) {
			return kernel.TableContent{Metadata: map[string]string{MetaTag: tag}}, nil
		}}}, kernel.LineageIntent{Actor: "w", Message: MessageFor(tag)})
		if err != nil {
			t.Fatal(err)
		}
		pc.End(model.OK)
		f.tags = append(f.tags, tag)
	}
	if _, err := g.CreateBranch(ctx, "b1", main); err != nil {
		t.Fatal(err)
	}
	return f
}

// all runs every structural checker.
func (f fixture) all() []Violation {
	g, vs := LoadGraph(f.store, root)
	vs = append(vs, CheckChains(g)...)
	vs = append(vs, CheckForks(g)...)
	vs = append(vs, CheckCommits(g, f.h)...)
	vs = append(vs, CheckTableHeads(f.store, g)...)
	vs = append(vs, CheckNoSidecars(f.store, root)...)
	vs = append(vs, CheckAudits(f.store, root, nil)...)
	return vs
}

func (f fixture) manifestKey(v uint64) string { return format.NewKeys(root).Manifest("main", 1, v) }

func (f fixture) manifest(t *testing.T, v uint64) format.Manifest {
	b, ok := f.store.Peek(f.manifestKey(v))
	if !ok {
		t.Fatalf("no manifest v%d", v)
	}
	m, _, err := format.DecodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// putManifest writes m raw at its key (as a buggy kernel would).
func (f fixture) putManifest(t *testing.T, m format.Manifest) {
	b, err := format.EncodeManifest(&m, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	f.store.Put(context.Background(), f.manifestKey(m.Version), b, objstore.Unconditional)
}

// successor returns a valid next manifest of m with a fresh commit id and
// the given message.
func successor(m format.Manifest, msg string) format.Manifest {
	next := m
	next.Version++
	c := *m.Commit
	c.ID = ulid.MustNew(ulid.Timestamp(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)), strings.NewReader(strings.Repeat("x", 16)))
	c.Parents = []format.ID{m.Head}
	c.Kind = format.KindCommit
	c.Message = msg
	next.Commit, next.Head = &c, c.ID
	return next
}

// TestCheckersCatchCorruption is the proof that each structural checker can
// fail: a clean graph passes everything, and each mutation a buggy kernel
// could cause is reported under its own check name.
func TestCheckersCatchCorruption(t *testing.T) {
	for _, versions := range []bool{false, true} {
		f := newFixtureAs(t, versions)
		if vs := f.all(); len(vs) != 0 {
			t.Fatalf("clean fixture (versions as objects %t): %v", versions, vs)
		}
		m := f.manifest(t, 3)
		if p, _ := m.Pin("t1"); (p.Riding != "") == versions {
			t.Fatalf("versions as objects %t: main's t1 pin rides %t", versions, p.Riding != "")
		}
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T, f fixture)
		want   string
		// versions: the fixture writes versions as objects (the
		// mutation's subject is one).
		versions bool
	}{
		{"duplicate commit", func(t *testing.T, f fixture) {
			f.putManifest(t, successor(f.manifest(t, 3), MessageFor("w.1")))
		}, "commit-exactly-once", false},
		{"gap in the chain", func(t *testing.T, f fixture) {
			f.store.Delete(context.Background(), f.manifestKey(2))
		}, "linear-chain", false},
		{"wrong first parent", func(t *testing.T, f fixture) {
			next := successor(f.manifest(t, 3), MessageFor("w.9"))
			next.Commit.Parents = []format.ID{f.manifest(t, 1).Head}
			f.putManifest(t, next)
		}, "linear-chain", false},
		{"pin goes backwards", func(t *testing.T, f fixture) {
			// t0's pin of v1 (its riding payload names v1: a pin and
			// its payload go back together).
			m1 := f.manifest(t, 1)
			old, _ := m1.Pin("t0")
			next := successor(f.manifest(t, 3), "other")
			next.Tables = append([]format.TablePin(nil), next.Tables...)
			next.Tables[0] = old
			f.putManifest(t, next)
		}, "pin-backwards", false},
		{"acknowledged commit missing", func(t *testing.T, f fixture) {
			f.h.BeginCommit(0, IncarnationKey("main", 1), "w.3", nil).End(model.OK)
		}, "commit-exactly-once", false},
		{"failed commit visible", func(t *testing.T, f fixture) {
			f.h.commits["w.2"].outcome = model.Failed
		}, "failed-commit-visible", false},
		{"commit nobody made", func(t *testing.T, f fixture) {
			f.putManifest(t, successor(f.manifest(t, 3), MessageFor("ghost.0")))
		}, "unknown-commit", false},
		{"commit on the wrong branch", func(t *testing.T, f fixture) {
			f.h.commits["w.2"].key = IncarnationKey("b1", 1)
		}, "commit-wrong-branch", false},
		{"pinned table version missing", func(t *testing.T, f fixture) {
			m := f.manifest(t, 3)
			p, _ := m.Pin("t1")
			f.store.Delete(context.Background(), format.NewKeys(root).TableVersionRef("t1", p.Ref()))
		}, "table-head", true},
		{"riding table version has an object too", func(t *testing.T, f fixture) {
			m := f.manifest(t, 3)
			p, _ := m.Pin("t1")
			tv, err := format.RidingVersion(p)
			if err != nil {
				t.Fatal(err)
			}
			tv.Rides = false
			b, err := format.EncodeTableVersion(&tv, format.Token{1})
			if err != nil {
				t.Fatal(err)
			}
			f.store.Put(context.Background(), format.NewKeys(root).TableVersionRef("t1", p.Ref()), b, objstore.Unconditional)
		}, "table-head", false},
		{"sidecar left", func(t *testing.T, f fixture) {
			f.store.Put(context.Background(), format.NewKeys(root).SidecarPrefix()+"op1", []byte("x"), objstore.Unconditional)
		}, "sidecar-left", false},
		{"two audit records", func(t *testing.T, f fixture) {
			f.store.Put(context.Background(), format.NewKeys(root).AuditPrefix()+"op1/a", []byte("x"), objstore.Unconditional)
			f.store.Put(context.Background(), format.NewKeys(root).AuditPrefix()+"op1/b", []byte("x"), objstore.Unconditional)
		}, "audit-once", false},
		{"fork pins differ", func(t *testing.T, f fixture) {
			k := format.NewKeys(root).Manifest("b1", 1, 0)
			b, _ := f.store.Peek(k)
			m, _, _ := format.DecodeManifest(b)
			m.Tables = m.Tables[:1]
			enc, _ := format.EncodeManifest(&m, format.Token{2})
			f.store.Put(context.Background(), k, enc, objstore.Unconditional)
		}, "fork", false},
		{"corrupt manifest", func(t *testing.T, f fixture) {
			f.store.Put(context.Background(), f.manifestKey(1), []byte("garbage"), objstore.Unconditional)
		}, "format", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureAs(t, tc.versions)
			tc.mutate(t, f)
			vs := f.all()
			for _, v := range vs {
				if v.Check == tc.want {
					return
				}
			}
			t.Fatalf("want a %q violation, got %v", tc.want, vs)
		})
	}
}

// TestRecoveredSidecarNeedsAudit pins the other half of audit-once: a
// sidecar recovery resolved must have exactly one audit record.
func TestRecoveredSidecarNeedsAudit(t *testing.T) {
	f := newFixture(t)
	if vs := CheckAudits(f.store, root, []string{"op7"}); len(vs) != 1 || vs[0].Check != "audit-once" {
		t.Fatalf("missing audit: %v", vs)
	}
	f.store.Put(context.Background(), format.NewKeys(root).AuditPrefix()+"op7", []byte("x"), objstore.Unconditional)
	if vs := CheckAudits(f.store, root, []string{"op7"}); len(vs) != 0 {
		t.Fatalf("one audit: %v", vs)
	}
}

// TestLinearizableFindsAnomalies pins the porcupine runner: a clean history
// passes, a lost acknowledged commit and a stale value read fail, each in
// its own partition, and Unknown counts as a failure.
func TestLinearizableFindsAnomalies(t *testing.T) {
	var tick int64
	h := NewHistory(func() int64 { tick++; return tick })
	h.BeginCommit(0, "main#1", "a", []TableWrite{{Table: "t"}}).End(model.OK)
	h.BeginRead(1).End("main#1", []string{"a"}, []TableValue{{Table: "t", Value: "a"}})
	if res := Linearizable(h, time.Second); len(res.Failures) != 0 || res.Checks != 2 {
		t.Fatalf("clean history: %+v", res)
	}
	h.BeginCommit(0, "main#1", "b", []TableWrite{{Table: "t"}}).End(model.OK)
	h.BeginRead(1).End("main#1", []string{"a"}, []TableValue{{Table: "t", Value: "a"}})
	res := Linearizable(h, time.Second)
	if len(res.Failures) != 2 || res.Failures[0].Model != "chain" || res.Failures[1].Model != "value" ||
		res.Failures[1].Partition != "main#1/t" || res.Unknown != 0 {
		t.Fatalf("lost commit: %+v", res)
	}
	var unknown LinResult
	record(&unknown, "chain", []porcupine.Operation{{Input: model.ChainInput{Key: "k"}}}, porcupine.Unknown)
	if unknown.Unknown != 1 || len(unknown.Failures) != 1 || unknown.Failures[0].Violation().Check != "linearizability-unknown" {
		t.Fatalf("unknown not a failure: %+v", unknown)
	}
}
