package kernel

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/oklog/ulid/v2"
)

// CommitID identifies a commit (a ULID).
type CommitID = format.ID

// ForkID identifies a table fork: the incarnation id of the branch
// incarnation that writes it (a ULID).
type ForkID = format.ID

// BranchRef is a handle on one incarnation of a branch. Every operation
// through it first checks that this incarnation is still the branch's live
// one, so a handle taken before a delete (and re-create) of its name fails
// with ErrBranchNotFound and can never read or write the new incarnation.
type BranchRef struct {
	name  string
	inc   uint64
	incID format.ID
}

// Name returns the branch name.
func (b BranchRef) Name() string { return b.name }

// Incarnation returns the incarnation number (1 for the first creation of a
// name, then 2, 3, ... after delete and re-create).
func (b BranchRef) Incarnation() uint64 { return b.inc }

// IncarnationID returns the incarnation's unique id, which is also the fork
// id its table versions are written under.
func (b BranchRef) IncarnationID() ForkID { return b.incID }

// String renders name#incarnation.
func (b BranchRef) String() string { return fmt.Sprintf("%s#%d", b.name, b.inc) }

func refOf(m *format.Manifest) BranchRef {
	return BranchRef{name: m.Branch.Name, inc: m.Branch.Incarnation, incID: m.Branch.IncarnationID}
}

// Branch returns a handle on the live incarnation of name, or
// ErrBranchNotFound. Every name but main costs a head lookup (LIST limit 1
// + GET, the GET often cached), which also applies the stamp guard to the
// branch's head. Main costs no request: main is never deleted or re-created
// (K8) and a migration keeps its incarnation, so the incarnation the
// handle's Open read (or Init wrote), already stamp-checked there, is
// main's live one for the life of the graph; a main head written later in
// a stamp this build refuses is refused by the first read through the ref.
// A done ctx fails Branch for every name, main included, with ctx's error.
func (g *Graph) Branch(ctx context.Context, name string) (BranchRef, error) {
	if name == format.MainBranch && g.main.name != "" {
		if err := ctx.Err(); err != nil {
			return BranchRef{}, fmt.Errorf("branch %q: %w", name, err)
		}
		return g.main, nil
	}
	l, err := g.liveByName(ctx, name)
	if err != nil {
		return BranchRef{}, err
	}
	return refOf(&l.m), nil
}

// liveByName loads the head manifest of name's live incarnation, or
// ErrBranchNotFound.
func (g *Graph) liveByName(ctx context.Context, name string) (loaded, error) {
	if err := format.ValidateName(name); err != nil {
		return loaded{}, fmt.Errorf("branch: %w", err)
	}
	l, found, err := g.latest(ctx, name)
	if err != nil {
		return loaded{}, fmt.Errorf("branch %q: %w", name, err)
	}
	if !found || l.m.Tombstone {
		return loaded{}, fmt.Errorf("branch %q: %w", name, ErrBranchNotFound)
	}
	return l, nil
}

// liveHead loads b's head manifest and checks that b's incarnation is still
// the live one.
func (g *Graph) liveHead(ctx context.Context, b BranchRef) (loaded, error) {
	if b.name == "" {
		return loaded{}, fmt.Errorf("%w: zero BranchRef", ErrInvalidArgument)
	}
	l, found, err := g.latest(ctx, b.name)
	if err != nil {
		return loaded{}, err
	}
	if err := checkLive(b, l, found); err != nil {
		return loaded{}, err
	}
	return l, nil
}

func checkLive(b BranchRef, l loaded, found bool) error {
	switch {
	case !found:
		return fmt.Errorf("branch %s: %w", b, ErrBranchNotFound)
	case l.m.Branch.IncarnationID != b.incID:
		return fmt.Errorf("branch %s: handle's incarnation was deleted (live: #%d): %w", b, l.m.Branch.Incarnation, ErrBranchNotFound)
	case l.m.Tombstone:
		return fmt.Errorf("branch %s: deleted: %w", b, ErrBranchNotFound)
	}
	return nil
}

// CommitIDFromString parses the canonical 26-character form of a commit id.
func CommitIDFromString(s string) (CommitID, error) {
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return CommitID{}, fmt.Errorf("%w: commit id %q: %v", ErrInvalidArgument, s, err)
	}
	return id, nil
}
