package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// compactTable publishes a content-preserving version of table: the same
// rows in one fragment named merged.
func compactTable(t *testing.T, g *kernel.Graph, b kernel.BranchRef, table, merged string) kernel.Commit {
	t.Helper()
	c, err := g.WriteAs(ctx, "compact", b, []kernel.TableWrite{{Table: table, Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: []string{merged}, Rows: p.Rows, ContentPreserving: true}, nil
	}}}, kernel.LineageIntent{Actor: "maintenance", Message: "compact " + table})
	if err != nil {
		t.Fatalf("compact %s: %v", table, err)
	}
	return c
}

// TestStrictWriterSurvivesCompaction pins the expectation rule in the
// write path: a strict write based on version v succeeds when the table
// moved past v only through content-preserving versions — published before
// the write began, or (with WriteOptions.FollowCompactions, as the data
// plane's transactions write) published while the write was in its round:
// the write loses its create-only table write or its publish and rebuilds
// on the compacted version — and still fails when a data write moved it; a
// strict read expectation likewise follows a compaction.
func TestStrictWriterSurvivesCompaction(t *testing.T) {
	g := mustInit(t, sim.New(sim.Config{Seed: 1}), 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	commitTable(t, g, main, "a", "2") // a at v2
	var builtOn []uint64
	strict := func(base uint64, during func()) error {
		_, err := g.WriteWith(ctx, main, []kernel.TableWrite{{Table: "a", Strict: true, BaseVersion: base,
			Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
				builtOn = append(builtOn, p.Version)
				if during != nil {
					during()
					during = nil
				}
				return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "s"), Rows: p.Rows + 1}, nil
			}}}, kernel.LineageIntent{Actor: "strict"}, kernel.WriteOptions{FollowCompactions: true})
		return err
	}
	compactTable(t, g, main, "a", "c1") // v3, preserving v2
	if err := strict(2, nil); err != nil {
		t.Fatalf("strict on v2 after a compaction to v3: %v", err)
	}
	if builtOn[0] != 3 {
		t.Fatalf("built on %v, want the compacted v3", builtOn)
	}
	builtOn = nil
	// A compaction racing the write's round: it takes the version the
	// write was about to write, then publishes first.
	if err := strict(4, func() { compactTable(t, g, main, "a", "c2") }); err != nil {
		t.Fatalf("strict racing a compaction: %v", err)
	}
	if len(builtOn) != 2 || builtOn[1] != 5 {
		t.Fatalf("built on %v, want a rebuild on the compacted v5", builtOn)
	}
	snap, _ := g.SnapshotAt(ctx, main)
	pin, _ := snap.Table("a")
	tv, _ := g.ReadPinned(ctx, pin)
	if tv.Rows != 4 || len(tv.Fragments) != 2 || tv.Fragments[0] != "c2" || tv.ContentPreserving {
		t.Fatalf("final content %+v", tv)
	}
	// A data write racing the round still fails the strict write.
	base := pin.Version
	err := strict(base, func() { commitTable(t, g, main, "a", "d") })
	var mm *kernel.VersionMismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("strict racing a data write: %v, want a version mismatch", err)
	}
	// A strict read expectation follows a compaction of the read table.
	snap, _ = g.SnapshotAt(ctx, main)
	pinA, _ := snap.Table("a")
	compactTable(t, g, main, "a", "c3")
	_, err = g.WriteWith(ctx, main, []kernel.TableWrite{{Table: "b", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: []string{"b"}, Rows: 1}, nil
	}}}, kernel.LineageIntent{Actor: "reader"}, kernel.WriteOptions{Expect: []kernel.ReadExpectation{{Table: "a", Version: pinA.Version, Strict: true}}, FollowCompactions: true})
	if err != nil {
		t.Fatalf("strict read expectation across a compaction: %v", err)
	}
}
