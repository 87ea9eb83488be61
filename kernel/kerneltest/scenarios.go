package kerneltest

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
)

// Append returns a Build that appends frag to the pinned content.
func Append(frag string) func(kernel.TableVersion) (kernel.TableContent, error) {
	return func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), frag), Rows: p.Rows + 1,
			Metadata: map[string]string{"last": frag}}, nil
	}
}

// WriteFrags writes one non-strict version per table (tables[i] gets
// frags[i]) on branch in one Write.
func WriteFrags(ctx context.Context, g *kernel.Graph, branch, msg string, tables, frags []string) error {
	b, err := g.Branch(ctx, branch)
	if err != nil {
		return err
	}
	ws := make([]kernel.TableWrite, len(tables))
	for i, t := range tables {
		ws[i] = kernel.TableWrite{Table: t, Build: Append(frags[i])}
	}
	_, err = g.Write(ctx, b, ws, kernel.LineageIntent{Actor: "kerneltest", Message: msg})
	return err
}

// WriterScenarios are the writer kinds of the kernel itself that move table
// HEADs before they publish, each as a cut scenario: the two-table write of
// the recovery issue, a write creating a new table, a strict write, a write
// on a forked branch, a single-table write and a compaction (a
// content-preserving maintenance write). Later writers (the data
// plane's transactions) add their own scenarios.
func WriterScenarios() []CutScenario {
	seed := func(ctx context.Context, g *kernel.Graph) error {
		return WriteFrags(ctx, g, "main", "seed", []string{"a", "b"}, []string{"a0", "b0"})
	}
	return []CutScenario{
		{Name: "two-table", Setup: seed, Write: func(ctx context.Context, g *kernel.Graph) error {
			return WriteFrags(ctx, g, "main", "cut write", []string{"a", "b"}, []string{"a1", "b1"})
		}},
		{Name: "two-table-one-new", Setup: seed, Write: func(ctx context.Context, g *kernel.Graph) error {
			return WriteFrags(ctx, g, "main", "cut write", []string{"a", "n"}, []string{"a1", "n1"})
		}},
		{Name: "strict", Setup: seed, Write: strictWrite},
		{Name: "forked-branch", Setup: func(ctx context.Context, g *kernel.Graph) error {
			if err := seed(ctx, g); err != nil {
				return err
			}
			main, err := g.Branch(ctx, "main")
			if err != nil {
				return err
			}
			_, err = g.CreateBranch(ctx, "feat", main)
			return err
		}, Write: func(ctx context.Context, g *kernel.Graph) error {
			return WriteFrags(ctx, g, "feat", "cut write", []string{"a", "b"}, []string{"fa1", "fb1"})
		}},
		{Name: "single-table", Setup: seed, Write: func(ctx context.Context, g *kernel.Graph) error {
			return WriteFrags(ctx, g, "main", "cut write", []string{"b"}, []string{"b1"})
		}},
		{Name: "compaction", Setup: func(ctx context.Context, g *kernel.Graph) error {
			if err := seed(ctx, g); err != nil {
				return err
			}
			return WriteFrags(ctx, g, "main", "seed 2", []string{"a"}, []string{"a1"})
		}, Write: compactWrite},
	}
}

// compactWrite is a maintenance write (writer kind compact): table a's
// fragments merged into one, marked content-preserving.
func compactWrite(ctx context.Context, g *kernel.Graph) error {
	b, err := g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	_, err = g.WriteAs(ctx, "compact", b, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: []string{strings.Join(p.Fragments, "+")}, Rows: p.Rows, ContentPreserving: true}, nil
	}}}, kernel.LineageIntent{Actor: "maintenance", Message: "compact a"})
	return err
}

// strictWrite updates a strictly against its pinned version, and b
// non-strictly, in one Write.
func strictWrite(ctx context.Context, g *kernel.Graph) error {
	b, err := g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	snap, err := g.SnapshotAt(ctx, b)
	if err != nil {
		return err
	}
	pin, ok := snap.Table("a")
	if !ok {
		return fmt.Errorf("table a is not pinned")
	}
	_, err = g.Write(ctx, b, []kernel.TableWrite{
		{Table: "a", Strict: true, BaseVersion: pin.Version, Build: Append("a1")},
		{Table: "b", Build: Append("b1")},
	}, kernel.LineageIntent{Actor: "kerneltest", Message: "cut write"})
	return err
}
