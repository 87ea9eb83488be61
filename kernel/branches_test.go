package kernel_test

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
)

func names(bs []kernel.BranchRef) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name())
	}
	return out
}

// Branch names follow the rules; main can be neither deleted nor
// re-created; an existing name cannot be created again.
func TestBranchNameRulesAndMainProtection(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		for _, bad := range []string{"", ".x", "-x", "a/b", "a b", "ü", string(make([]byte, 65))} {
			_, err := g.CreateBranch(ctx, bad, main)
			wantErr(t, err, kernel.ErrInvalidName)
		}
		_, err := g.CreateBranch(ctx, "main", main)
		wantErr(t, err, kernel.ErrBranchExists)
		err = g.DeleteBranch(ctx, "main")
		wantErr(t, err, kernel.ErrProtectedBranch)
		wantErr(t, err, kernel.ErrInvalidName)
		if _, err := g.CreateBranch(ctx, "f.1_x-y", main); err != nil {
			t.Fatal(err)
		}
		_, err = g.CreateBranch(ctx, "f.1_x-y", main)
		wantErr(t, err, kernel.ErrBranchExists)
		wantErr(t, g.DeleteBranch(ctx, "nope"), kernel.ErrBranchNotFound)
		bs, err := g.ListBranches(ctx)
		if err != nil || !cmp.Equal(names(bs), []string{"f.1_x-y", "main"}) {
			t.Fatalf("ListBranches = %v, %v\ndiff (-names(bs) +[]string{'f.1_x-y', 'main'}):\n%s", names(bs), err, cmp.Diff(names(bs), []string{"f.1_x-y", "main"}))
		}
	})
}

// Concurrent creators of one name: exactly one wins, the rest get
// ErrBranchExists.
func TestConcurrentCreateOneWinner(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		const n = 6
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(uint64(100 + i))})
				if err == nil {
					_, err = h.CreateBranch(ctx, "race", main)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, kernel.ErrBranchExists):
				t.Fatalf("loser error %v", err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d winners", wins)
		}
	})
}

// Deleting a branch that live branches were forked from is refused, naming
// them; once they are gone the delete succeeds.
func TestDeleteRefusedWithDependents(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		a, err := g.CreateBranch(ctx, "a", main)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"c2", "c1"} {
			if _, err := g.CreateBranch(ctx, n, a); err != nil {
				t.Fatal(err)
			}
		}
		head, _ := g.Head(ctx, a)
		if _, err := g.CreateBranchAt(ctx, "other", head.ID); err != nil { // forks main's manifest, not a's
			t.Fatal(err)
		}
		err = g.DeleteBranch(ctx, "a")
		var hd *kernel.HasDependentsError
		if !errors.As(err, &hd) || !errors.Is(err, kernel.ErrHasDependents) || !cmp.Equal(hd.Dependents, []string{"c1", "c2"}) || hd.Branch != "a" {
			t.Fatalf("got %v\ndiff (-hd.Dependents +[]string{'c1', 'c2'}):\n%s", err, cmp.Diff(hd.Dependents, []string{"c1", "c2"}))
		}
		for _, n := range []string{"c1", "c2", "a"} {
			if err := g.DeleteBranch(ctx, n); err != nil {
				t.Fatalf("delete %s: %v", n, err)
			}
		}
		bs, _ := g.ListBranches(ctx)
		if !cmp.Equal(names(bs), []string{"main", "other"}) {
			t.Fatalf("branches %v\ndiff (-names(bs) +[]string{'main', 'other'}):\n%s", names(bs), cmp.Diff(names(bs), []string{"main", "other"}))
		}
	})
}

// After delete and re-create, a handle on the old incarnation can neither
// read nor write, and the new incarnation sees none of the old one's
// lineage or table versions.
func TestIncarnationIsolation(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		old, err := g.CreateBranch(ctx, "x", main)
		if err != nil {
			t.Fatal(err)
		}
		oldCommit := commitTable(t, g, old, "a", "old-data")
		if _, err := g.CommitTableVersion(ctx, old, "b", kernel.TableContent{Rows: 1}, kernel.TableRef{}); err != nil {
			t.Fatal(err) // an unpublished table HEAD on the old fork
		}
		if err := g.DeleteBranch(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		_, err = g.Branch(ctx, "x")
		wantErr(t, err, kernel.ErrBranchNotFound)
		fresh, err := g.CreateBranch(ctx, "x", main)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Incarnation() != old.Incarnation()+1 || fresh.IncarnationID() == old.IncarnationID() {
			t.Fatalf("incarnations %v -> %v", old, fresh)
		}
		for name, call := range map[string]func() error{
			"Publish": func() error { _, err := g.Publish(ctx, old, nil, kernel.LineageIntent{}, nil); return err },
			"CommitTableVersion": func() error {
				_, err := g.CommitTableVersion(ctx, old, "a", kernel.TableContent{}, kernel.TableRef{})
				return err
			},
			"Write":      func() error { commitErr := writeErr(g, old, "a"); return commitErr },
			"TableHead":  func() error { _, err := g.TableHead(ctx, old, "a"); return err },
			"Head":       func() error { _, err := g.Head(ctx, old); return err },
			"Log":        func() error { _, err := g.Log(ctx, old, "", 10); return err },
			"SnapshotAt": func() error { _, err := g.SnapshotAt(ctx, old); return err },
			"SnapshotAtVersion": func() error {
				_, err := g.SnapshotAtVersion(ctx, old, 1)
				return err
			},
		} {
			if err := call(); !errors.Is(err, kernel.ErrBranchNotFound) {
				t.Errorf("%s with an old handle: %v, want ErrBranchNotFound", name, err)
			}
		}
		for _, table := range []string{"a", "b"} {
			th, err := g.TableHead(ctx, fresh, table)
			if err != nil || th != (kernel.TableRef{}) {
				t.Fatalf("new incarnation sees old fork's %s: %+v %v", table, th, err)
			}
		}
		log := fullLog(t, g, fresh)
		if countIn(log, oldCommit.ID) != 0 || len(log) != 1 {
			t.Fatalf("new incarnation's log %v leaks old lineage", log)
		}
		// The old incarnation's commit is still in storage and findable by id.
		if c, err := g.Commit(ctx, oldCommit.ID); err != nil || c.Incarnation != old.Incarnation() {
			t.Fatalf("old commit by id: %+v %v", c, err)
		}
		// And the new incarnation writes normally, starting its own fork.
		c := commitTable(t, g, fresh, "a", "new-data")
		snap, _ := g.SnapshotAtCommit(ctx, c.ID)
		if pin, _ := snap.Table("a"); pin.Fork != fresh.IncarnationID() || pin.Version != 1 {
			t.Fatalf("fresh pin %+v", pin)
		}
	})
}

func writeErr(g *kernel.Graph, b kernel.BranchRef, table string) error {
	_, err := g.Write(ctx, b, []kernel.TableWrite{{Table: table, Build: func(kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{}, nil
	}}}, kernel.LineageIntent{})
	return err
}

// Writes on one branch are invisible on every other branch, in both
// directions, and a fork inherits its source's pins without copying.
func TestBranchWriteIsolation(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		commitTable(t, g, main, "a", "m1")
		f, err := g.CreateBranch(ctx, "f", main)
		if err != nil {
			t.Fatal(err)
		}
		inherited, _ := g.TableHead(ctx, f, "a")
		if inherited.Fork != main.IncarnationID() || inherited.Version != 1 {
			t.Fatalf("inherited head %+v", inherited)
		}
		commitTable(t, g, f, "a", "f1")
		commitTable(t, g, f, "b", "f1")
		commitTable(t, g, main, "a", "m2")
		ms, _ := g.SnapshotAt(ctx, main)
		fs, _ := g.SnapshotAt(ctx, f)
		ma, _ := ms.Table("a")
		fa, _ := fs.Table("a")
		if _, ok := ms.Table("b"); ok {
			t.Fatal("main sees f's table b")
		}
		if ma.Fork != main.IncarnationID() || ma.Version != 2 || fa.Fork != f.IncarnationID() || fa.Version != 2 {
			t.Fatalf("pins main %+v f %+v", ma, fa)
		}
		mt, _ := g.ReadPinned(ctx, ma)
		ft, _ := g.ReadPinned(ctx, fa)
		if !cmp.Equal(mt.Fragments, []string{"m1", "m2"}) || !cmp.Equal(ft.Fragments, []string{"m1", "f1"}) {
			t.Fatalf("contents main %v f %v\ndiff (-mt.Fragments +[]string{'m1', 'm2'}):\n%s\ndiff (-ft.Fragments +[]string{'m1', 'f1'}):\n%s", mt.Fragments, ft.Fragments, cmp.Diff(mt.Fragments, []string{"m1", "m2"}), cmp.Diff(ft.Fragments, []string{"m1", "f1"}))
		}
	})
}
