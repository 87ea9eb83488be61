package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// requestsOf is the per-operation request counts of c (bytes left out:
// they are not what "bounded" is about).
type requestsOf struct{ Get, Head, List, Put, Delete uint64 }

func reqs(c counting.Counts) requestsOf {
	return requestsOf{c.Get.Requests, c.Head.Requests, c.List.Requests, c.Put.Requests, c.Delete.Requests}
}

// branchOpCosts builds a graph in which churn branches were created from
// main and deleted, and churn more were created from "parent" and deleted,
// then measures on a fresh handle: one listing page of 10 names, a delete
// of a live branch forked from main, and a delete of parent.
func branchOpCosts(tb testing.TB, churn int) (page, del, delParent requestsOf) {
	tb.Helper()
	inner := sim.New(sim.Config{Seed: 1})
	g := mustInit(tb, inner, 1)
	main := mustBranch(tb, g, "main")
	parent, err := g.CreateBranch(ctx, "parent", main)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range churn {
		for _, c := range []struct {
			name string
			from kernel.BranchRef
		}{{fmt.Sprintf("gone-%05d", i), main}, {fmt.Sprintf("kid-%05d", i), parent}} {
			if _, err := g.CreateBranch(ctx, c.name, c.from); err != nil {
				tb.Fatal(err)
			}
			if err := g.DeleteBranch(ctx, c.name); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if _, err := g.CreateBranch(ctx, "target", main); err != nil {
		tb.Fatal(err)
	}
	cs := counting.NewWithLogLimit(inner, 0)
	fresh, err := kernel.Open(ctx, cs, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		tb.Fatal(err)
	}
	before := cs.Counts()
	if _, err := fresh.ListBranchesPage(ctx, "", 10); err != nil {
		tb.Fatal(err)
	}
	page = reqs(diff(cs.Counts(), before))
	before = cs.Counts()
	if err := fresh.DeleteBranch(ctx, "target"); err != nil {
		tb.Fatal(err)
	}
	del = reqs(diff(cs.Counts(), before))
	before = cs.Counts()
	if err := fresh.DeleteBranch(ctx, "parent"); err != nil {
		tb.Fatal(err)
	}
	delParent = reqs(diff(cs.Counts(), before))
	return page, del, delParent
}

// A listing page and a branch delete read a bounded number of objects
// however many branches were ever created and deleted: the same requests
// after 10 and after 500 deleted branches from main (and 10 or 500 deleted
// forks of the branch being deleted). Red with the O(names) scan the
// dependents check used to run, and red without the child's delete
// retiring its fork marker (parent's delete would read 500 dead heads).
func TestBranchOpsCostIsBounded(t *testing.T) {
	page10, del10, parent10 := branchOpCosts(t, 10)
	page500, del500, parent500 := branchOpCosts(t, 500)
	t.Logf("page of 10 names %+v, delete %+v, delete of a parent of dead forks %+v", page10, del10, parent10)
	if page10 != page500 || del10 != del500 || parent10 != parent500 {
		t.Fatalf("costs grow with deleted branches:\npage   %+v vs %+v\ndelete %+v vs %+v\nparent %+v vs %+v",
			page10, page500, del10, del500, parent10, parent500)
	}
	if want := (requestsOf{Get: 10, List: 11}); page10 != want {
		t.Fatalf("a page of 10 names cost %+v, want %+v (one LIST, then LIST + GET per name)", page10, want)
	}
}

// ListBranchesPage examines at most limit names per page; paging through
// every page returns exactly ListBranches, deleted names skipped.
func TestListBranchesPages(t *testing.T) {
	g := mustInit(t, sim.New(sim.Config{Seed: 1}), 1)
	main := mustBranch(t, g, "main")
	var want []string
	for i := range 9 {
		name := fmt.Sprintf("b%d", i)
		if _, err := g.CreateBranch(ctx, name, main); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := g.DeleteBranch(ctx, name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want = append(want, name)
	}
	want = append(want, "main")
	for _, limit := range []int{1, 2, 3, 10, 0} {
		var got []string
		cursor, pages := kernel.BranchCursor(""), 0
		for ; pages < 20; pages++ {
			p, err := g.ListBranchesPage(ctx, cursor, limit)
			if err != nil {
				t.Fatal(err)
			}
			if limit > 0 && len(p.Branches) > limit {
				t.Fatalf("limit %d: a page returned %d branches", limit, len(p.Branches))
			}
			got = append(got, names(p.Branches)...)
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if !cmp.Equal(got, want) {
			t.Fatalf("limit %d: pages gave %v, want %v", limit, got, want)
		}
	}
	all, err := g.ListBranches(ctx)
	if err != nil || !cmp.Equal(names(all), want) {
		t.Fatalf("ListBranches = %v, %v", names(all), err)
	}
	if _, err := g.ListBranchesPage(ctx, "nonsense", 1); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("bad cursor: %v", err)
	}
}

// refuseKeyStore refuses (ErrRejected) every Put whose key contains part.
type refuseKeyStore struct {
	objstore.Store
	part string
}

func (s *refuseKeyStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if strings.Contains(key, s.part) {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrRejected, errors.New("test: refused"))
	}
	return s.Store.Put(ctx, key, data, cond)
}

var fkeys = format.NewKeys(root)

// A create whose publish never landed leaves its fork marker behind; the
// marker changes nothing: the source can still be deleted and no branch
// appears. Red if the dependents check trusted markers without reading the
// child's head.
func TestStaleForkMarkerChangesNothing(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, inner, 1)
	a, err := g.CreateBranch(ctx, "a", mustBranch(t, g, "main"))
	if err != nil {
		t.Fatal(err)
	}
	blocked, err := kernel.Open(ctx, &refuseKeyStore{Store: inner, part: "/branches/ghost/"}, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocked.CreateBranch(ctx, "ghost", a); !errors.Is(err, objstore.ErrRejected) {
		t.Fatalf("blocked create: %v", err)
	}
	if ks := inner.Keys(fkeys.ForkMarkersPrefix(a.IncarnationID())); len(ks) != 1 || !strings.Contains(ks[0], "/ghost/") {
		t.Fatalf("the failed create left markers %v, want ghost's", ks)
	}
	before, _ := g.ListBranches(ctx)
	if err := g.DeleteBranch(ctx, "a"); err != nil {
		t.Fatalf("delete with a stale marker: %v", err)
	}
	after, _ := g.ListBranches(ctx)
	if !cmp.Equal(names(after), []string{"main"}) || !cmp.Equal(names(before), []string{"a", "main"}) {
		t.Fatalf("branches %v -> %v", names(before), names(after))
	}
}

// stripForkIndex deletes the flag and every fork marker: what a graph
// written before fork markers looks like, or one whose aids were deleted.
func stripForkIndex(t testing.TB, store *sim.Store) {
	t.Helper()
	keys := append(store.Keys(root+"/forks/"), fkeys.ForkIndexFlagKey())
	for _, k := range keys {
		if err := store.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}

func wantDependents(t testing.TB, g *kernel.Graph, name string, deps ...string) {
	t.Helper()
	err := g.DeleteBranch(ctx, name)
	var hd *kernel.HasDependentsError
	if !errors.As(err, &hd) || !cmp.Equal(hd.Dependents, deps) {
		t.Fatalf("DeleteBranch(%s) = %v, want dependents %v", name, err, deps)
	}
}

// A graph without fork markers (written before them, or with the flag and
// every marker deleted) still refuses to delete a branch with dependents:
// without the flag the check scans every name. A read-write open backfills
// the markers and the flag, after which the marker path gives the same
// answers. Red if the check trusted an empty marker listing without the
// flag.
func TestForkIndexAbsentFallsBackAndIsBackfilled(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, inner, 1)
	a, err := g.CreateBranch(ctx, "a", mustBranch(t, g, "main"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"c2", "c1", "gone"} {
		if _, err := g.CreateBranch(ctx, n, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.DeleteBranch(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	stripForkIndex(t, inner)
	wantDependents(t, g, "a", "c1", "c2")

	reopened, err := kernel.Open(ctx, inner, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	// Markers of the live forks a, c1, c2 (not of the deleted one), and the flag.
	if ks := inner.Keys(root + "/forks"); len(ks) != 4 {
		t.Fatalf("backfill wrote %q", ks)
	}
	wantDependents(t, reopened, "a", "c1", "c2")
	for _, n := range []string{"c1", "c2", "a"} {
		if err := reopened.DeleteBranch(ctx, n); err != nil {
			t.Fatalf("delete %s: %v", n, err)
		}
	}
	if ks := inner.Keys(root + "/forks/"); len(ks) != 0 {
		t.Fatalf("deletes left markers %q", ks)
	}
}

// The backfill is crash-safe and safe under concurrent openers: one that
// fails before its flag leaves no flag (answers stay right through the
// fallback), and the next openers, racing, all succeed with one flag and
// a complete index.
func TestForkIndexBackfillInterruptedAndConcurrent(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, inner, 1)
	a, err := g.CreateBranch(ctx, "a", mustBranch(t, g, "main"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.CreateBranch(ctx, "c", a); err != nil {
		t.Fatal(err)
	}
	stripForkIndex(t, inner)
	_, err = kernel.Open(ctx, &refuseKeyStore{Store: inner, part: "forks-complete"}, root, kernel.Options{Env: testEnv(2)})
	if !errors.Is(err, objstore.ErrRejected) {
		t.Fatalf("open with the flag write refused: %v", err)
	}
	if ks := inner.Keys(root + "/forks"); len(ks) != 2 {
		t.Fatalf("interrupted backfill left %q, want the two markers and no flag", ks)
	}
	wantDependents(t, g, "a", "c")

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = kernel.Open(ctx, inner, root, kernel.Options{Env: testEnv(uint64(10 + i))})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("opener %d: %v", i, err)
		}
	}
	if ks := inner.Keys(root + "/forks"); len(ks) != 3 {
		t.Fatalf("after concurrent backfills: %q", ks)
	}
	wantDependents(t, g, "a", "c")
}

// BenchmarkBranchOpCost reports the store requests of one listing page of
// 10 names (page-requests), of a delete of a branch forked from main
// (delete-requests) and of a delete of a branch whose own forks were all
// deleted (parent-delete-requests), after churn branches from main and
// churn forks of that parent were created and deleted. The figures are
// identical at every churn (TestBranchOpsCostIsBounded pins 10 vs 500).
// Run with -benchtime=1x: the setup builds 2*churn branches. Under -short
// (CI's smoke run) only the smallest churn.
func BenchmarkBranchOpCost(b *testing.B) {
	for _, churn := range benchsize.Smallest([]int{10, 1000, 10000}) {
		b.Run(fmt.Sprintf("deleted=%d", 2*churn), func(b *testing.B) {
			for range b.N {
				page, del, parent := branchOpCosts(b, churn)
				b.ReportMetric(float64(page.Get+page.List), "page-requests")
				b.ReportMetric(float64(del.Get+del.List+del.Put+del.Delete), "delete-requests")
				b.ReportMetric(float64(parent.Get+parent.List+parent.Put+parent.Delete), "parent-delete-requests")
			}
		})
	}
}
