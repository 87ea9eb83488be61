package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

// Stray versions — HEAD ahead of the pin with the pinned content again (a
// writer's own undo, a roll-back's fence for a never-published table, a
// restore whose publish lost) — never wedge strict writers that read the
// published pin: strict compares the published pin, and HEAD's content
// against it.
func TestStrictWriterNotWedgedByRestoreVersions(t *testing.T) {
	strictOn := func(t *testing.T, g *kernel.Graph, table string) error {
		t.Helper()
		b := mustRecBranch(t, g)
		snap, _ := g.SnapshotAt(recCtx, b)
		pin, _ := snap.Table(table)
		th, _ := g.TableHead(recCtx, b, table)
		if th.Version == pin.Version {
			t.Fatalf("table %s: no stray above pin %d: the scenario is wrong", table, pin.Version)
		}
		_, err := g.Write(recCtx, b, []kernel.TableWrite{{Table: table, Strict: true, BaseVersion: pin.Version, Build: recAppend("s")}},
			kernel.LineageIntent{Actor: "strict"})
		return err
	}
	t.Run("writer's own undo", func(t *testing.T) {
		store := recInit(t)
		ws := []kernel.TableWrite{{Table: "a", Strict: true, BaseVersion: 1, Build: recAppend("a1")}, {Table: "b", Build: recAppend("b1")}}
		rv, done := recParkedWrite(t, store, 60, failpoint.BeforePublish, ws)
		recMustWrite(t, recOpenNow(t, store, 61, nil), "main", map[string]string{"a": "a2"}, "other")
		rv.Release()
		if r := <-done; !errors.Is(r.err, kernel.ErrVersionMismatch) {
			t.Fatalf("parked strict write: %v", r.err)
		}
		if err := strictOn(t, recOpenNow(t, store, 62, nil), "b"); err != nil {
			t.Fatalf("strict write over an undo copy: %v", err)
		}
	})
	t.Run("fence of a never-published table", func(t *testing.T) {
		store := recInit(t)
		recCrashWrite(t, store, "main", map[string]string{"a": "a1", "n": "n1"}, failpoint.AfterTableCommit, 1)
		recOpen(t, store, 63, nil) // rolls back: restores a, fences n
		if err := strictOn(t, recOpenNow(t, store, 64, nil), "n"); err != nil {
			t.Fatalf("strict write over a fence: %v", err)
		}
	})
	t.Run("real in-flight version still refuses", func(t *testing.T) {
		store := recInit(t)
		ws := []kernel.TableWrite{{Table: "a", Build: recAppend("a1")}}
		rv, done := recParkedWrite(t, store, 65, failpoint.BeforePublish, ws)
		err := strictOn(t, recOpenNow(t, store, 66, nil), "a")
		var mm *kernel.VersionMismatchError
		if !errors.As(err, &mm) {
			t.Fatalf("strict write under a live in-flight version: %v", err)
		}
		rv.Release()
		if r := <-done; r.err != nil {
			t.Fatal(r.err)
		}
	})
}
