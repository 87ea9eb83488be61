package kernel_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"pgregory.net/rapid"
)

// aidHistory is a random history built through the public API: commits,
// branches forked from heads and from old commits, merges in every
// direction (criss-cross included) and branch deletes.
type aidHistory struct {
	store   *sim.Store
	commits []kernel.CommitID // every commit, tombstones included
	forks   []kernel.CommitID // commits a branch may be forked from or merge (no tombstones)
}

func buildAidHistory(t *rapid.T) aidHistory {
	store := sim.New(sim.Config{Seed: 1})
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: testEnv(rapid.Uint64().Draw(t, "env")),
		// Small reach bounds (0: the defaults) so merges compact reaches into folds.
		ReachEntries: rapid.SampledFrom([]int{0, 2, 3}).Draw(t, "reach-entries"), ReachFolds: rapid.SampledFrom([]int{0, 2}).Draw(t, "reach-folds")})
	if err != nil {
		t.Fatal(err)
	}
	h := aidHistory{store: store}
	head := func(name string) (kernel.BranchRef, kernel.Commit, bool) {
		b, err := g.Branch(ctx, name)
		if errors.Is(err, kernel.ErrBranchNotFound) {
			return kernel.BranchRef{}, kernel.Commit{}, false
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.Head(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		return b, c, true
	}
	_, genesis, _ := head("main")
	h.commits, h.forks = []kernel.CommitID{genesis.ID}, []kernel.CommitID{genesis.ID}
	names := []string{"main", "x", "y", "z"}
	for i, n := 0, rapid.IntRange(1, 30).Draw(t, "steps"); i < n; i++ {
		b, bh, live := head(rapid.SampledFrom(names).Draw(t, "branch"))
		switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
		case op == 0 && live: // commit
			c, err := g.Publish(ctx, b, nil, kernel.LineageIntent{Actor: "t", Message: fmt.Sprint(i)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.commits, h.forks = append(h.commits, c.ID), append(h.forks, c.ID)
		case op == 1 && live: // merge any earlier commit in
			from := rapid.SampledFrom(h.forks).Draw(t, "merged")
			if from == bh.ID {
				continue // a branch cannot merge its own head
			}
			c, err := g.Publish(ctx, b, nil, kernel.LineageIntent{Actor: "t", MergedParent: &from}, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.commits, h.forks = append(h.commits, c.ID), append(h.forks, c.ID)
		case op == 2 && !live: // fork at the head of a live branch or at an old commit
			name := b.Name()
			if name == "" {
				name = rapid.SampledFrom(names[1:]).Draw(t, "new")
			}
			at := rapid.SampledFrom(h.forks).Draw(t, "at")
			if _, err := g.CreateBranchAt(ctx, name, at); err != nil && !errors.Is(err, kernel.ErrBranchExists) {
				t.Fatal(err)
			}
		case op == 3 && live && b.Name() != "main": // delete (refused while it has dependents)
			err := g.DeleteBranch(ctx, b.Name())
			if errors.Is(err, kernel.ErrHasDependents) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := g.Log(ctx, b, "", 1)
			if err == nil && len(c.Commits) > 0 {
				h.commits = append(h.commits, c.Commits[0].ID)
			}
		}
	}
	return h
}

func coldHandle(t interface{ Fatal(...any) }, store objstore.Store) *kernel.Graph {
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(99), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// lookupAnswers is everything the lineage aids speed up, as answered by one
// cold handle: each commit, the snapshot at it, and the merge base of every
// pair of fork-able commits.
func lookupAnswers(t *rapid.T, g *kernel.Graph, h aidHistory) []string {
	var out []string
	for _, id := range h.commits {
		c, err := g.Commit(ctx, id)
		out = append(out, fmt.Sprintf("commit %s: %+v %v", id, c, err))
		s, err := g.SnapshotAtCommit(ctx, id)
		out = append(out, fmt.Sprintf("snapshot %s: %s#%d v%d %v %v", id, s.Branch(), s.Incarnation(), s.ManifestVersion(), s.Tables(), err))
		p, err := g.LogFrom(ctx, id, "", 5)
		out = append(out, fmt.Sprintf("log from %s: %v %q %v", id, p.Commits, p.Next, err))
	}
	for _, a := range h.forks {
		for _, b := range h.forks {
			c, err := g.MergeBaseOf(ctx, a, b)
			out = append(out, fmt.Sprintf("base %s %s: %s %v", a, b, c.ID, err))
		}
	}
	return out
}

// The O(1) lookups agree with the plain walk over random histories with
// branches, merges (criss-cross included) and deletes: every commit is
// found by its index where the scan finds it, and the merge base from
// reaches, which every commit of such a history has, equals the merge base
// of the full ancestry walk, with reaches compacted into folds (small
// Options.ReachEntries/ReachFolds) or not.
func TestLineageAidsMatchTheWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := buildAidHistory(t)
		g := coldHandle(t, h.store)
		for _, id := range h.commits {
			got, err := g.Commit(ctx, id)
			want, werr := g.LocateByScanForTest(ctx, id)
			if err != nil || werr != nil || !cmp.Equal(got, want) {
				t.Fatalf("commit %s: index %+v (%v), scan %+v (%v)\n%s", id, got, err, want, werr, cmp.Diff(got, want))
			}
			page, err := g.LogFrom(ctx, id, "", 4) // id, then its first-parent chain
			if err != nil || len(page.Commits) == 0 || page.Commits[0].ID != id {
				t.Fatalf("LogFrom(%s) = %+v, %v", id, page, err)
			}
			for i := 1; i < len(page.Commits); i++ {
				if page.Commits[i].ID != page.Commits[i-1].Parents[0] {
					t.Fatalf("LogFrom(%s): entry %d is %s, not the first parent of %s", id, i, page.Commits[i].ID, page.Commits[i-1].ID)
				}
			}
		}
		for _, a := range h.forks {
			for _, b := range h.forks {
				got, ok, err := g.MergeBaseByReachForTest(ctx, a, b)
				want, werr := g.MergeBaseByWalkForTest(ctx, a, b)
				if err != nil || werr != nil || !ok {
					t.Fatalf("merge base %s %s: reach ok=%v %v, walk %v", a, b, ok, err, werr)
				}
				if !cmp.Equal(got, want) {
					t.Fatalf("merge base %s %s: reach %s, walk %s\n%s", a, b, got.ID, want.ID, cmp.Diff(got, want))
				}
			}
		}
	})
}

// Deleting any commit indexes (the aids are never authoritative) changes
// no answer: a cold handle over the store without them answers every
// commit, snapshot and merge-base question exactly as one over the full
// store.
func TestDeletedAidsChangeNoAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := buildAidHistory(t)
		want := lookupAnswers(t, coldHandle(t, h.store), h)
		keys := format.NewKeys(root)
		gone := rapid.SliceOfDistinct(rapid.SampledFrom(h.commits), rapid.ID[kernel.CommitID]).Draw(t, "deleted")
		for _, id := range gone {
			if err := h.store.Delete(ctx, keys.CommitIndex(id)); err != nil && !errors.Is(err, objstore.ErrNotFound) {
				t.Fatal(err)
			}
		}
		got := lookupAnswers(t, coldHandle(t, h.store), h)
		if d := cmp.Diff(got, want); d != "" {
			t.Fatalf("answers changed after deleting %d indexes (-without +with):\n%s", len(gone), d)
		}
	})
}

// coldCost builds a main of depth commits with branches x and y forked at
// the start (y with one commit of its own), then counts the requests of a
// cold handle's Commit of the middle commit and MergeBase(x, y).
func coldCost(t testing.TB, depth int) (commit, base counting.Counts) {
	t.Helper()
	cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
	g := mustInit(t, cs, 1)
	main := mustBranch(t, g, "main")
	x, err := g.CreateBranch(ctx, "x", main)
	if err != nil {
		t.Fatal(err)
	}
	y, err := g.CreateBranch(ctx, "y", main)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Publish(ctx, y, nil, kernel.LineageIntent{Actor: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	var mid kernel.CommitID
	for i := range depth {
		c, err := g.Publish(ctx, x, nil, kernel.LineageIntent{Actor: "t"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == depth/2 {
			mid = c.ID
		}
	}
	cold := coldHandle(t, cs)
	before := cs.Counts()
	if c, err := cold.Commit(ctx, mid); err != nil || c.ID != mid {
		t.Fatalf("commit %s: %+v %v", mid, c, err)
	}
	commit = diff(cs.Counts(), before)
	cold = coldHandle(t, cs)
	before = cs.Counts()
	if _, err := cold.MergeBase(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	return commit, diff(cs.Counts(), before)
}

// Lineage lookups on a cold handle cost the same requests at every depth
// (counts, not times): Commit is the index GET plus the manifest it names;
// MergeBase is two head lookups, two indexes and the one shared tip.
func TestColdLookupCostIsFlat(t *testing.T) {
	depths := []int{10, 300}
	if !testing.Short() {
		depths = append(depths, 3000)
	}
	var firstCommit, firstBase counting.Counts
	for i, depth := range depths {
		commit, base := coldCost(t, depth)
		if commit.Requests() != 2 || commit.Get.Requests != 2 {
			t.Fatalf("depth %d: cold Commit cost %+v, want 2 GETs", depth, commit)
		}
		if base.Requests() > 10 || base.Writes() != 0 {
			t.Fatalf("depth %d: cold MergeBase cost %+v, want at most 10 reads", depth, base)
		}
		if i == 0 {
			firstCommit, firstBase = commit, base
			continue
		}
		if commit.Requests() != firstCommit.Requests() || base.Requests() != firstBase.Requests() {
			t.Fatalf("depth %d: cold lookups %d/%d requests, depth %d: %d/%d", depth, commit.Requests(), base.Requests(),
				depths[0], firstCommit.Requests(), firstBase.Requests())
		}
	}
}

// A commit index left by a publish attempt that never landed names a slot
// another commit then took: a cold handle must not take that commit for
// the orphan, so every lookup of the orphan id is ErrNotFound. Without the
// verification against the manifest, SnapshotAtCommit would return the
// other commit's snapshot (the planted bug trust-commit-index). A publish
// sends its index in one batch with its manifest (kernel publishWrite),
// so an attempt that loses the slot and then fails, or crashes, leaves
// one; the test writes one as such an attempt does.
func TestStaleCommitIndexMisplacesNothing(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	other, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := other.ID
	id[15] ^= 0xff // a commit id that never landed
	x := format.CommitIndex{ID: id, At: format.ManifestRef{Branch: other.Branch, Incarnation: other.Incarnation, Version: other.ManifestVersion}}
	b, err := format.EncodeCommitIndex(&x, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, format.NewKeys(root).CommitIndex(id), b, objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	orphan := orphanIndex(t, store, other)
	cold := coldHandle(t, store)
	if s, err := cold.SnapshotAtCommit(ctx, orphan); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("SnapshotAtCommit(orphan) = %s v%d (head %s), %v; want ErrNotFound", s.Branch(), s.ManifestVersion(), s.Head(), err)
	}
	if c, err := cold.Commit(ctx, orphan); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("Commit(orphan) = %+v, %v; want ErrNotFound", c, err)
	}
	if _, err := cold.MergeBaseOf(ctx, orphan, other.ID); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("MergeBaseOf(orphan, other) = %v; want ErrNotFound", err)
	}
}

// orphanIndex returns the one commit index that names landed's slot but
// not landed's commit.
func orphanIndex(t *testing.T, store *sim.Store, landed kernel.Commit) kernel.CommitID {
	t.Helper()
	keys := format.NewKeys(root)
	page, err := store.List(ctx, keys.CommitIndexPrefix(), "", objstore.MaxListLimit)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range page.Keys {
		obj, err := store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		x, _, err := format.DecodeCommitIndex(obj.Data)
		if err != nil {
			t.Fatal(err)
		}
		if x.ID != landed.ID && x.At.Branch == landed.Branch && x.At.Version == landed.ManifestVersion {
			return x.ID
		}
	}
	t.Fatalf("no orphan index at %s v%d among %v", landed.Branch, landed.ManifestVersion, page.Keys)
	return kernel.CommitID{}
}

// TestRiddenIndexFollowsTheRetry: a publish sends its commit's index in
// one batch with its manifest (publishWrite), so an attempt that loses the
// slot race leaves an index naming the slot another commit took. The
// retry that lands must leave the index naming its own slot: a cold
// handle then finds the commit through its index (a verified one, not a
// repair) at the version it landed at. Red if a landed retry relies on
// the index the lost attempt wrote.
func TestRiddenIndexFollowsTheRetry(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := mustInit(t, cs, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1") // g's view is current, its head's index cached
	other, err := kernel.Open(ctx, cs, root, kernel.Options{Env: testEnv(7)})
	if err != nil {
		t.Fatal(err)
	}
	taken := commitTable(t, other, mustBranch(t, other, "main"), "a", "2") // the slot g's view points at
	cs.Reset()
	landed := commitTable(t, g, main, "a", "3")
	if landed.ManifestVersion != taken.ManifestVersion+1 {
		t.Fatalf("landed at v%d, want v%d (after the commit that took v%d)", landed.ManifestVersion, taken.ManifestVersion+1, taken.ManifestVersion)
	}
	keys := format.NewKeys(root)
	if n := cs.CountWhere(objstore.OpPut, keys.CommitIndex(landed.ID)); n != 2 {
		t.Fatalf("%d writes of the landed commit's index, want 2 (one riding the lost attempt's manifest, one after the retry)", n)
	}
	obj, err := cs.Get(ctx, keys.CommitIndex(landed.ID))
	if err != nil {
		t.Fatal(err)
	}
	x, _, err := format.DecodeCommitIndex(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	if x.At.Version != landed.ManifestVersion || !x.Complete {
		t.Fatalf("index names v%d (complete %v), want the landed v%d, complete", x.At.Version, x.Complete, landed.ManifestVersion)
	}
}
