package kernel_test

import (
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"pgregory.net/rapid"
)

// machine drives the kernel and the reference model side by side.
type machine struct {
	g       *kernel.Graph
	store   *sim.Store
	ref     *model.Reference
	handles map[string]kernel.BranchRef // live branch name -> handle
	stale   []kernel.BranchRef          // handles of deleted incarnations
	seq     int
	seed    uint64
}

var (
	smBranches = []string{"main", "a", "b", "c", "bad/name"}
	smTables   = []string{"t1", "t2", "t3"}
)

// refErr maps a reference-model error to the kernel sentinel it means.
func refErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, model.ErrRefProtected):
		return kernel.ErrProtectedBranch
	case errors.Is(err, model.ErrRefInvalidName):
		return kernel.ErrInvalidName
	case errors.Is(err, model.ErrRefExists):
		return kernel.ErrBranchExists
	case errors.Is(err, model.ErrRefNoBranch):
		return kernel.ErrBranchNotFound
	case errors.Is(err, model.ErrRefHasDependents):
		return kernel.ErrHasDependents
	case errors.Is(err, model.ErrRefNoCommit):
		return kernel.ErrNotFound
	case errors.Is(err, model.ErrRefInvalid):
		return kernel.ErrInvalidArgument
	}
	panic(fmt.Sprintf("unmapped reference error %v", err))
}

// sameOutcome fails unless the kernel error matches the reference outcome.
func sameOutcome(t *rapid.T, op string, kerr, rerr error) {
	want := refErr(rerr)
	if (kerr == nil) != (want == nil) || (want != nil && !errors.Is(kerr, want)) {
		t.Fatalf("%s: kernel error %v, reference error %v", op, kerr, rerr)
	}
}

func newMachine(t *rapid.T) *machine {
	faults := sim.Faults{}
	if rapid.Bool().Draw(t, "faults") {
		faults = sim.Faults{TransientRate: 0.03, ConflictRate: 0.03, LostAckRate: 0.03}
	}
	store := sim.New(sim.Config{Seed: rapid.Uint64().Draw(t, "seed"), Faults: faults})
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: testEnv(1)})
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	head, err := g.Head(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	return &machine{g: g, store: store, ref: model.NewReference(head.ID.String()), handles: map[string]kernel.BranchRef{"main": main}, seed: 2}
}

func (m *machine) handle(t *rapid.T, name string) (kernel.BranchRef, error) {
	if h, ok := m.handles[name]; ok {
		return h, nil
	}
	_, err := m.g.Branch(ctx, name)
	return kernel.BranchRef{}, err
}

func (m *machine) commit(t *rapid.T) {
	name := rapid.SampledFrom(smBranches).Draw(t, "branch")
	tables := rapid.SliceOfNDistinct(rapid.SampledFrom(smTables), 0, 2, rapid.ID[string]).Draw(t, "tables")
	writes := map[string]string{}
	var tw []kernel.TableWrite
	for _, tb := range tables {
		m.seq++
		v := fmt.Sprintf("v%d", m.seq)
		writes[tb] = v
		tw = append(tw, kernel.TableWrite{Table: tb, Build: func(kernel.TableVersion) (kernel.TableContent, error) {
			return kernel.TableContent{Fragments: []string{v}, Rows: 1}, nil
		}})
	}
	h, err := m.handle(t, name)
	var c kernel.Commit
	if err == nil {
		if len(tw) == 0 {
			c, err = m.g.Publish(ctx, h, nil, kernel.LineageIntent{Actor: "sm"}, nil)
		} else {
			c, err = m.g.Write(ctx, h, tw, kernel.LineageIntent{Actor: "sm"})
		}
	}
	if err != nil {
		_, rerr := m.ref.Head(name)
		sameOutcome(t, "commit on "+name, err, rerr)
		return
	}
	sameOutcome(t, "commit on "+name, nil, m.ref.CommitOn(name, c.ID.String(), writes))
}

func (m *machine) merge(t *rapid.T) {
	into := rapid.SampledFrom(m.ref.Branches()).Draw(t, "into")
	from := rapid.SampledFrom(m.ref.Branches()).Draw(t, "from")
	fromHead, _ := m.ref.Head(from)
	mp, err := kernel.CommitIDFromString(fromHead)
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.g.Publish(ctx, m.handles[into], nil, kernel.LineageIntent{Actor: "sm", MergedParent: &mp}, nil)
	if err != nil {
		intoHead, _ := m.ref.Head(into)
		sameOutcome(t, "merge", err, m.ref.Merge(into, "probe-"+intoHead, fromHead))
		return
	}
	sameOutcome(t, "merge", nil, m.ref.Merge(into, c.ID.String(), fromHead))
}

func (m *machine) createBranch(t *rapid.T) {
	name := rapid.SampledFrom(smBranches).Draw(t, "name")
	from := rapid.SampledFrom(m.ref.Branches()).Draw(t, "from")
	b, err := m.g.CreateBranch(ctx, name, m.handles[from])
	sameOutcome(t, "create "+name, err, m.ref.CreateBranch(name, from))
	if err == nil {
		m.handles[name] = b
	}
}

func (m *machine) createBranchAt(t *rapid.T) {
	name := rapid.SampledFrom(smBranches).Draw(t, "name")
	id := rapid.SampledFrom(m.ref.CommitIDs()).Draw(t, "commit")
	cid, _ := kernel.CommitIDFromString(id)
	b, err := m.g.CreateBranchAt(ctx, name, cid)
	sameOutcome(t, "create "+name+" at "+id, err, m.ref.CreateBranchAt(name, id))
	if err == nil {
		m.handles[name] = b
	}
}

func (m *machine) deleteBranch(t *rapid.T) {
	name := rapid.SampledFrom(smBranches).Draw(t, "name")
	err := m.g.DeleteBranch(ctx, name)
	deps, rerr := m.ref.DeleteBranch(name)
	sameOutcome(t, "delete "+name, err, rerr)
	var hd *kernel.HasDependentsError
	if errors.As(err, &hd) && !cmp.Equal(hd.Dependents, deps) {
		t.Fatalf("dependents %v, reference %v\ndiff (-hd.Dependents +deps):\n%s", hd.Dependents, deps, cmp.Diff(hd.Dependents, deps))
	}
	if err == nil {
		m.stale = append(m.stale, m.handles[name])
		delete(m.handles, name)
	}
}

// readAt reads every table at a commit and compares with the model.
func (m *machine) readAt(t *rapid.T) {
	id := rapid.SampledFrom(m.ref.CommitIDs()).Draw(t, "commit")
	cid, _ := kernel.CommitIDFromString(id)
	snap, err := m.g.SnapshotAtCommit(ctx, cid)
	if err != nil {
		t.Fatalf("snapshot at %s: %v", id, err)
	}
	got := map[string]string{}
	for _, pin := range snap.Tables() {
		tv, err := m.g.ReadPinned(ctx, pin)
		if err != nil || len(tv.Fragments) != 1 {
			t.Fatalf("read %s at %s: %+v %v", pin.Name, id, tv, err)
		}
		got[pin.Name] = tv.Fragments[0]
	}
	want, _ := m.ref.Tables(id)
	if !cmp.Equal(got, want) {
		t.Fatalf("tables at %s: kernel %v, reference %v\ndiff (-got +want):\n%s", id, got, want, cmp.Diff(got, want))
	}
	c, err := m.g.Commit(ctx, cid)
	rc, _ := m.ref.Commit(id)
	if err != nil || fmt.Sprint(c.Parents) != fmt.Sprint(toIDs(t, rc.Parents)) {
		t.Fatalf("commit %s: parents %v (%v), reference %v", id, c.Parents, err, rc.Parents)
	}
}

func toIDs(t *rapid.T, ss []string) []kernel.CommitID {
	var out []kernel.CommitID
	for _, s := range ss {
		id, err := kernel.CommitIDFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

func (m *machine) mergeBase(t *rapid.T) {
	a := rapid.SampledFrom(m.ref.Branches()).Draw(t, "a")
	b := rapid.SampledFrom(m.ref.Branches()).Draw(t, "b")
	c, err := m.g.MergeBase(ctx, m.handles[a], m.handles[b])
	want, rerr := m.ref.MergeBase(a, b)
	if err != nil || rerr != nil || c.ID.String() != want {
		t.Fatalf("MergeBase(%s,%s) = %s (%v), reference %s (%v)", a, b, c.ID, err, want, rerr)
	}
}

// coldLookup asks a fresh read-only handle (nothing cached, as after an
// open on S3) for a commit, the snapshot at it and the merge base of two
// commits: the commit indexes answer, or the manifest walk where a lost
// acknowledgement left one missing or stale.
func (m *machine) coldLookup(t *rapid.T) {
	m.seed++
	g, err := kernel.Open(ctx, m.store, root, kernel.Options{Env: testEnv(m.seed), ReadOnly: true})
	if err != nil {
		t.Fatalf("cold open: %v", err)
	}
	ids := m.ref.CommitIDs()
	a := rapid.SampledFrom(ids).Draw(t, "a")
	b := rapid.SampledFrom(ids).Draw(t, "b")
	ca, cb := toIDs(t, []string{a})[0], toIDs(t, []string{b})[0]
	c, err := g.Commit(ctx, ca)
	rc, _ := m.ref.Commit(a)
	if err != nil || fmt.Sprint(c.Parents) != fmt.Sprint(toIDs(t, rc.Parents)) {
		t.Fatalf("cold commit %s: parents %v (%v), reference %v", a, c.Parents, err, rc.Parents)
	}
	snap, err := g.SnapshotAtCommit(ctx, ca)
	if err != nil || snap.ManifestVersion() != c.ManifestVersion || snap.Branch() != c.Branch {
		t.Fatalf("cold snapshot at %s: %s v%d (%v), commit at %s v%d", a, snap.Branch(), snap.ManifestVersion(), err, c.Branch, c.ManifestVersion)
	}
	mb, err := g.MergeBaseOf(ctx, ca, cb)
	want, rerr := m.ref.MergeBaseOf(a, b)
	if err != nil || rerr != nil || mb.ID.String() != want {
		t.Fatalf("cold MergeBaseOf(%s,%s) = %s (%v), reference %s (%v)", a, b, mb.ID, err, want, rerr)
	}
}

// staleHandle uses a handle of a deleted incarnation: always refused.
func (m *machine) staleHandle(t *rapid.T) {
	if len(m.stale) == 0 {
		t.Skip("no stale handle")
	}
	h := rapid.SampledFrom(m.stale).Draw(t, "stale")
	_, err := m.g.Publish(ctx, h, nil, kernel.LineageIntent{}, nil)
	wantRapid(t, err, kernel.ErrBranchNotFound)
	_, err = m.g.TableHead(ctx, h, "t1")
	wantRapid(t, err, kernel.ErrBranchNotFound)
}

func wantRapid(t *rapid.T, err, target error) {
	if !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", err, target)
	}
}

// reopen swaps in a fresh handle (empty caches) over the same store.
func (m *machine) reopen(t *rapid.T) {
	m.seed++
	g, err := kernel.Open(ctx, m.store, root, kernel.Options{Env: testEnv(m.seed)})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	m.g = g
}

// check compares branches, heads and full logs after every action.
func (m *machine) check(t *rapid.T) {
	bs, err := m.g.ListBranches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(bs); !cmp.Equal(got, m.ref.Branches()) {
		t.Fatalf("branches %v, reference %v\ndiff (-got +m.ref.Branches()):\n%s", got, m.ref.Branches(), cmp.Diff(got, m.ref.Branches()))
	}
	for _, name := range m.ref.Branches() {
		var got []string
		cur := kernel.LogCursor("")
		for {
			page, err := m.g.Log(ctx, m.handles[name], cur, 4)
			if err != nil {
				t.Fatalf("log %s: %v", name, err)
			}
			for _, c := range page.Commits {
				got = append(got, c.ID.String())
			}
			if cur = page.Next; cur == "" {
				break
			}
		}
		want, _ := m.ref.Log(name)
		if !cmp.Equal(got, want) {
			t.Fatalf("log of %s: kernel %v, reference %v\ndiff (-got +want):\n%s", name, got, want, cmp.Diff(got, want))
		}
	}
}

// The public API agrees with the reference model over random sequences of
// commits, merges, branch creates/deletes, reads at commits, merge bases
// (also from cold handles) and stale-handle uses, on the sim store with and
// without faults.
func TestKernelMatchesReferenceModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"commit":         m.commit,
			"merge":          m.merge,
			"createBranch":   m.createBranch,
			"createBranchAt": m.createBranchAt,
			"deleteBranch":   m.deleteBranch,
			"readAt":         m.readAt,
			"mergeBase":      m.mergeBase,
			"coldLookup":     m.coldLookup,
			"staleHandle":    m.staleHandle,
			"reopen":         m.reopen,
			"":               m.check,
		})
	})
}

var _ = testing.Short
