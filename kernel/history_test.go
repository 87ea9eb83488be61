package kernel_test

import (
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

func ids(cs []kernel.Commit) []kernel.CommitID {
	var out []kernel.CommitID
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// Log pages walk newest-first without gaps or repeats, and a branch's log
// crosses into its source at the fork point.
func TestLogPagination(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		genesis, _ := g.Head(ctx, main)
		want := []kernel.CommitID{genesis.ID}
		for i := range 23 {
			want = append([]kernel.CommitID{commitTable(t, g, main, "a", fmt.Sprint(i)).ID}, want...)
		}
		for _, limit := range []int{1, 5, 24, 1000} {
			var got []kernel.CommitID
			cur := kernel.LogCursor("")
			for pages := 0; ; pages++ {
				page, err := g.Log(ctx, main, cur, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Commits) > limit || (page.Next != "" && len(page.Commits) != limit) {
					t.Fatalf("limit %d: page of %d, next %q", limit, len(page.Commits), page.Next)
				}
				got = append(got, ids(page.Commits)...)
				if page.Next == "" {
					break
				}
				cur = page.Next
			}
			if !cmp.Equal(got, want) {
				t.Fatalf("limit %d: log %v, want %v\ndiff (-got +want):\n%s", limit, got, want, cmp.Diff(got, want))
			}
		}
		f, _ := g.CreateBranch(ctx, "f", main)
		fc := commitTable(t, g, f, "b", "x")
		commitTable(t, g, main, "a", "after-fork")
		flog := fullLog(t, g, f)
		if !cmp.Equal(ids(flog), append([]kernel.CommitID{fc.ID}, want...)) {
			t.Fatalf("branch log does not end with main's history at the fork\ndiff (-ids(flog) +append([]kernel.CommitID{fc.ID}, want...)):\n%s", cmp.Diff(ids(flog), append([]kernel.CommitID{fc.ID}, want...)))
		}
		assertLinear(t, flog)
		_, err := g.Log(ctx, main, "garbage", 5)
		wantErr(t, err, kernel.ErrInvalidArgument)
	})
}

// Commit(id) finds commits on main, on branches and on deleted branches,
// and reports ErrNotFound for unknown ids.
func TestCommitByID(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	mc := commitTable(t, g, main, "a", "m")
	f, _ := g.CreateBranch(ctx, "f", main)
	fc := commitTable(t, g, f, "a", "f")
	d, _ := g.CreateBranch(ctx, "d", main)
	dc := commitTable(t, g, d, "a", "d")
	if err := g.DeleteBranch(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	// A fresh handle has an empty cache, so this exercises the search.
	h, err := kernel.Open(ctx, store, root, kernel.Options{ReadOnly: true, Env: testEnv(5)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []kernel.Commit{mc, fc, dc} {
		got, err := h.Commit(ctx, want.ID)
		if err != nil || !cmp.Equal(got, want) {
			t.Fatalf("Commit(%s) = %+v, %v; want %+v\ndiff (-got +want):\n%s", want.ID, got, err, want, cmp.Diff(got, want))
		}
	}
	_, err = h.Commit(ctx, kernel.CommitID{9})
	wantErr(t, err, kernel.ErrNotFound)
}

func merge(t *testing.T, g *kernel.Graph, into kernel.BranchRef, from kernel.BranchRef) kernel.Commit {
	t.Helper()
	h, err := g.Head(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Publish(ctx, into, nil, kernel.LineageIntent{Actor: "t", Message: "merge " + from.Name(), MergedParent: &h.ID}, nil)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if c.Kind != "merge" || len(c.Parents) != 2 || c.Parents[1] != h.ID {
		t.Fatalf("merge commit %+v", c)
	}
	return c
}

// MergeBase: the fork point for diverged branches; after a merge, the
// merged head; MergeBase(b, b) = b's head; after merges both ways, the
// newer merge. (Criss-cross ties are pinned in kernel/lineage.)
func TestMergeBase(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		fork := commitTable(t, g, main, "a", "base")
		f, _ := g.CreateBranch(ctx, "f", main)
		commitTable(t, g, main, "a", "m1")
		f1 := commitTable(t, g, f, "b", "f1")
		mb := func(a, b kernel.BranchRef) kernel.CommitID {
			t.Helper()
			c, err := g.MergeBase(ctx, a, b)
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		if got := mb(main, f); got != fork.ID {
			t.Fatalf("diverged base %s, want fork %s", got, fork.ID)
		}
		mh, _ := g.Head(ctx, main)
		if got := mb(main, main); got != mh.ID {
			t.Fatalf("MergeBase(main, main) = %s, want head %s", got, mh.ID)
		}
		merge(t, g, main, f) // main now contains f1
		if got := mb(main, f); got != f1.ID {
			t.Fatalf("after merge: base %s, want f's head %s", got, f1.ID)
		}
		commitTable(t, g, f, "b", "f2")
		if got := mb(f, main); got != f1.ID {
			t.Fatalf("after more work: base %s, want %s", got, f1.ID)
		}
		m2 := merge(t, g, main, f) // main <- f2
		merge(t, g, f, main)       // f <- m2
		if got := mb(main, f); got != m2.ID {
			t.Fatalf("after merging both ways: base %s, want %s", got, m2.ID)
		}
	})
}

// A snapshot never changes after later commits, and its accessors hand out
// copies.
func TestSnapshotImmutability(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		c1 := commitTable(t, g, main, "a", "1")
		snap, err := g.SnapshotAt(ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		before := snap.Tables()
		tables := snap.Tables()
		tables[0].Version = 99
		commitTable(t, g, main, "a", "2")
		commitTable(t, g, main, "b", "1")
		if !cmp.Equal(snap.Tables(), before) || snap.Head() != c1.ID || snap.ManifestVersion() != 1 {
			t.Fatalf("snapshot changed: %+v\ndiff (-snap.Tables() +before):\n%s", snap.Tables(), cmp.Diff(snap.Tables(), before))
		}
		byCommit, err := g.SnapshotAtCommit(ctx, c1.ID)
		if err != nil || !cmp.Equal(byCommit.Tables(), before) {
			t.Fatalf("SnapshotAtCommit %+v %v\ndiff (-byCommit.Tables() +before):\n%s", byCommit.Tables(), err, cmp.Diff(byCommit.Tables(), before))
		}
		byVersion, err := g.SnapshotAtVersion(ctx, main, 1)
		if err != nil {
			t.Fatalf("SnapshotAtVersion: %v", err)
		}
		type view struct {
			Head    kernel.CommitID
			Version uint64
			Tables  any
		}
		viewOf := func(s kernel.Snapshot) view { return view{s.Head(), s.ManifestVersion(), s.Tables()} }
		if diff := cmp.Diff(viewOf(snap), viewOf(byVersion)); diff != "" {
			t.Fatalf("SnapshotAtVersion differs from the head snapshot (-head +byVersion):\n%s", diff)
		}
		_, err = g.SnapshotAtVersion(ctx, main, 99)
		wantErr(t, err, kernel.ErrNotFound)
		genesisSnap, _ := g.SnapshotAtVersion(ctx, main, 0)
		if len(genesisSnap.Tables()) != 0 {
			t.Fatalf("genesis snapshot %+v", genesisSnap.Tables())
		}
	})
}

// TableHead runs ahead of the published pin between a table commit and its
// publish; a strict Write against a stale base is refused; a non-strict
// Write rebases onto the current pin past an orphaned HEAD.
func TestWriteStrictAndRebase(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		commitTable(t, g, main, "a", "1")
		// An orphan: committed, never published (a crashed writer).
		u, err := g.CommitTableVersion(ctx, main, "a", kernel.TableContent{Fragments: []string{"orphan"}}, kernel.TableRef{})
		if err != nil || u.Version != 2 {
			t.Fatalf("orphan %+v %v", u, err)
		}
		th, _ := g.TableHead(ctx, main, "a")
		snap, _ := g.SnapshotAt(ctx, main)
		if pin, _ := snap.Table("a"); th.Version != 2 || pin.Version != 1 {
			t.Fatalf("head %d pin %d", th.Version, pin.Version)
		}
		strict := func(base uint64) error {
			_, err := g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Strict: true, BaseVersion: base,
				Build: func(p kernel.TableVersion) (kernel.TableContent, error) { return kernel.TableContent{Rows: 1}, nil }}}, kernel.LineageIntent{})
			return err
		}
		// Format 8: the write is named per attempt and builds on the pin; an
		// unpublished version (the orphan) is garbage, not newer state, so a
		// strict write on the published pin passes (format 7 refused it until
		// recovery or a non-strict write moved past the orphan).
		if err := strict(1); err != nil {
			t.Fatalf("strict on the published pin under an orphan: %v", err)
		}
		err = strict(1)
		var mm *kernel.VersionMismatchError
		if !errors.As(err, &mm) || mm.Expected != 1 || mm.Actual != 2 {
			t.Fatalf("strict on stale base: %v", err)
		}
		c := commitTable(t, g, main, "a", "2") // non-strict: builds on pin 2, lands at 3
		snap, _ = g.SnapshotAtCommit(ctx, c.ID)
		pin, _ := snap.Table("a")
		tv, _ := g.ReadPinned(ctx, pin)
		if pin.Version != 3 || pin.Attempt == (format.ID{}) || !cmp.Equal(tv.Fragments, []string{"2"}) || tv.BasedOn.Version != 2 {
			t.Fatalf("rebased pin %+v content %+v\ndiff (-tv.Fragments +[]string{'2'}):\n%s", pin, tv, cmp.Diff(tv.Fragments, []string{"2"}))
		}
		if err := strict(3); err != nil {
			t.Fatalf("strict on fresh base: %v", err)
		}
	})
}
