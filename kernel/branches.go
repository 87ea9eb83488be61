package kernel

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// MaxBranchNames bounds how many branch names ListBranches (and the history
// search) will enumerate.
const MaxBranchNames = 100_000

// CreateBranch creates branch name from the head of from. The new
// incarnation's version-0 manifest copies from's table pins (nothing is
// copied in storage), records the fork point and adds no commit: its head is
// from's head. Concurrent creators of one name: exactly one wins, the others
// get ErrBranchExists.
func (g *Graph) CreateBranch(ctx context.Context, name string, from BranchRef) (BranchRef, error) {
	if err := g.checkCreate(name); err != nil {
		return BranchRef{}, err
	}
	ctx = g.withOpBudget(ctx, "create branch")
	src, err := g.liveHead(ctx, from)
	if err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q: source: %w", name, err)
	}
	return g.createFrom(ctx, name, src)
}

// CreateBranchAt creates branch name from the manifest that introduced
// commit (which may live on any branch, even a deleted one), or
// ErrNotFound. A branch-delete commit cannot be forked from.
func (g *Graph) CreateBranchAt(ctx context.Context, name string, commit CommitID) (BranchRef, error) {
	if err := g.checkCreate(name); err != nil {
		return BranchRef{}, err
	}
	ctx = g.withOpBudget(ctx, "create branch")
	at, err := g.locate(ctx, commit)
	if err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q at %s: %w", name, commit, err)
	}
	src, err := g.manifestAt(ctx, at)
	if err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q at %s: %w", name, commit, err)
	}
	if src.m.Tombstone {
		return BranchRef{}, fmt.Errorf("create branch %q at %s: %w: a branch-delete commit", name, commit, ErrInvalidArgument)
	}
	return g.createFrom(ctx, name, src)
}

func (g *Graph) checkCreate(name string) error {
	if err := g.checkWritable("create branch"); err != nil {
		return err
	}
	if err := format.ValidateName(name); err != nil {
		return fmt.Errorf("create branch: %w", err)
	}
	if name == format.MainBranch {
		return fmt.Errorf("create branch %q: main is never re-created: %w", name, ErrBranchExists)
	}
	return nil
}

// createFrom writes the name marker, then version 0 of the next incarnation
// create-only. Losing that write re-reads: a live winner means
// ErrBranchExists; a winner that was already deleted again means "try the
// next incarnation" (bounded by the budget).
func (g *Graph) createFrom(ctx context.Context, name string, src loaded) (BranchRef, error) {
	if err := g.writeNameMarker(ctx, name); err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	for attempt := 0; attempt < g.budget; attempt++ {
		if attempt > 0 {
			if err := g.backoff(ctx, attempt); err != nil {
				return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
			}
		}
		cur, found, err := g.latest(ctx, name)
		if err != nil {
			return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
		}
		if found && !cur.m.Tombstone {
			return BranchRef{}, fmt.Errorf("create branch %q: %w", name, ErrBranchExists)
		}
		inc := uint64(1)
		if found {
			inc = cur.m.Branch.Incarnation + 1
		}
		b, ours, err := g.writeFork(ctx, name, inc, src)
		if err != nil || ours {
			return b, err
		}
	}
	return BranchRef{}, &ContentionError{Op: "create branch " + name, Attempts: g.budget}
}

func (g *Graph) writeFork(ctx context.Context, name string, inc uint64, src loaded) (BranchRef, bool, error) {
	incID, err := g.mintID()
	if err != nil {
		return BranchRef{}, false, err
	}
	m, err := lineage.Fork(&src.m, format.BranchIdentity{Name: name, Incarnation: inc, IncarnationID: incID})
	if err != nil {
		return BranchRef{}, false, fmt.Errorf("create branch %q: %w: %v", name, ErrInvalidArgument, err)
	}
	tok, err := g.token()
	if err != nil {
		return BranchRef{}, false, err
	}
	key := g.keys.Manifest(name, inc, 0)
	ours, err := g.putCreateOnly(ctx, "create branch "+name, key, mustEncodeManifest(&m, tok))
	if err != nil || !ours {
		return BranchRef{}, false, err
	}
	g.manifests.put(key, loaded{m: m, token: tok})
	return refOf(&m), true, nil
}

// DeleteBranch deletes the live incarnation of name by publishing a
// tombstone manifest (with a branch-delete commit) through the same door as
// every publish; nothing is removed from storage. main is protected
// (ErrProtectedBranch). A branch that live branches were forked from is
// refused with *HasDependentsError naming them.
//
// Known gap: the dependents check and the tombstone publish are two steps;
// a branch forked from name between them becomes a dependent of a deleted
// incarnation. Its data stays readable (nothing is deleted), so this is a
// policy gap, not a safety one.
func (g *Graph) DeleteBranch(ctx context.Context, name string) error {
	if err := g.checkWritable("delete branch"); err != nil {
		return err
	}
	ctx = g.withOpBudget(ctx, "delete branch")
	if name == format.MainBranch {
		return fmt.Errorf("delete branch: %w", ErrProtectedBranch)
	}
	b, err := g.Branch(ctx, name)
	if err != nil {
		return fmt.Errorf("delete branch: %w", err)
	}
	deps, err := g.dependents(ctx, b)
	if err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	if len(deps) > 0 {
		return &HasDependentsError{Branch: name, Dependents: deps}
	}
	req, err := g.newPublishReq(ctx, b, nil, LineageIntent{Actor: "graphkernel", Message: "delete branch " + name}, nil)
	if err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	req.commit.Kind, req.tombstone = format.KindBranchDelete, true
	if _, err := g.publish(ctx, req); err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	return nil
}

// dependents lists (sorted) the live branches whose fork point is b's
// incarnation.
func (g *Graph) dependents(ctx context.Context, b BranchRef) ([]string, error) {
	live, err := g.liveManifests(ctx)
	if err != nil {
		return nil, err
	}
	var deps []string
	for _, l := range live {
		if f := l.m.ForkOf; f != nil && f.IncarnationID == b.incID && l.m.Branch.Name != b.name {
			deps = append(deps, l.m.Branch.Name)
		}
	}
	return deps, nil
}

// ListBranches returns a handle on every live branch, sorted by name.
func (g *Graph) ListBranches(ctx context.Context) ([]BranchRef, error) {
	live, err := g.liveManifests(ctx)
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	out := make([]BranchRef, 0, len(live))
	for _, l := range live {
		out = append(out, refOf(&l.m))
	}
	return out, nil
}

// liveManifests returns the head manifest of every live branch, by name.
func (g *Graph) liveManifests(ctx context.Context) ([]loaded, error) {
	names, err := g.branchNames(ctx)
	if err != nil {
		return nil, err
	}
	var live []loaded
	for _, name := range names {
		l, found, err := g.latest(ctx, name)
		if err != nil {
			return nil, err
		}
		if found && !l.m.Tombstone {
			live = append(live, l)
		}
	}
	return live, nil
}

// branchNames returns every name ever created (the R/names/ index), sorted.
// The index is never authoritative for existence; the chains are.
func (g *Graph) branchNames(ctx context.Context) ([]string, error) {
	prefix := g.keys.NamesPrefix()
	var names []string
	after := ""
	for len(names) <= MaxBranchNames {
		var page objstore.ListPage
		err := g.withRetry(ctx, "list branch names", func() (err error) {
			page, err = g.store.List(ctx, prefix, after, objstore.MaxListLimit)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list branch names: %w", err)
		}
		for _, k := range page.Keys {
			name := strings.TrimPrefix(k, prefix)
			if format.ValidateName(name) != nil {
				return nil, fmt.Errorf("branch name marker %q: %w", k, ErrCorrupt)
			}
			names = append(names, name)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			sort.Strings(names) // already key-ordered; keep it explicit
			return names, nil
		}
		after = page.Keys[len(page.Keys)-1]
	}
	return nil, fmt.Errorf("list branch names: more than %d names", MaxBranchNames)
}
