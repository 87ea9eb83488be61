package kernel

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/branchindex"
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

// createFrom writes the name marker and the fork marker, then version 0 of
// the next incarnation create-only. Losing that write re-reads: a live
// winner means ErrBranchExists; a winner that was already deleted again
// means "try the next incarnation" (bounded by the budget). The incarnation
// id is minted once, so the one fork marker names whichever attempt lands.
func (g *Graph) createFrom(ctx context.Context, name string, src loaded) (BranchRef, error) {
	// The new incarnation's id carries this clock's time, by which a
	// collector judges its fork's table versions before it sees the branch
	// (docs/gc.md §2 rule 7): a clock behind the source creates nothing.
	srcRef := fmt.Sprintf("the source %s#%d", src.m.Branch.Name, src.m.Branch.Incarnation)
	if err := g.checkClockAgainst(fmt.Sprintf("create branch %q", name), srcRef, &src.m); err != nil {
		return BranchRef{}, err
	}
	if err := g.writeNameMarker(ctx, name); err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	incID, err := g.mintID()
	if err != nil {
		return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
	}
	marker := format.ForkMarker{Source: src.m.Branch.IncarnationID, Child: name, ChildIncarnationID: incID}
	if !plant.Enabled(plant.SkipForkMarker) { // planted bug: the create is never indexed
		if err := g.writeForkMarker(ctx, &marker); err != nil {
			return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
		}
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
			// Every earlier attempt definitely lost its slot, so this
			// incarnation never lands: its marker is stale. Dropped
			// error: a stale marker is verified and ignored.
			_ = g.retireForkMarker(ctx, marker)
			return BranchRef{}, fmt.Errorf("create branch %q: %w", name, ErrBranchExists)
		}
		var curInc, floor uint64
		if found {
			curInc = cur.m.Branch.Incarnation
		} else if floor, err = g.incarnationFloor(ctx); err != nil { // read after the name lookup (docs/gc.md rule 1a)
			return BranchRef{}, fmt.Errorf("create branch %q: %w", name, err)
		}
		inc := branchindex.NextIncarnation(found, curInc, floor)
		b, ours, err := g.writeFork(ctx, format.BranchIdentity{Name: name, Incarnation: inc, IncarnationID: incID}, src)
		if err != nil || !ours {
			if err != nil {
				return b, err
			}
			continue
		}
		// Again after the manifest: a collection may have deleted the
		// marker between the first write and the manifest (the name had
		// no manifest then: docs/gc.md rule 10). Dropped error
		// (docs/invariants.md): the create landed; a missing marker only
		// hides the name from ListBranches until the next collection
		// puts it back.
		_ = g.writeNameMarker(ctx, name)
		return b, nil
	}
	return BranchRef{}, &ContentionError{Op: "create branch " + name, Attempts: g.budget}
}

// incarnationFloor reads the newest incarnation floor (LIST limit 1), 0
// when there is none.
func (g *Graph) incarnationFloor(ctx context.Context) (uint64, error) {
	var page objstore.ListPage
	err := g.withRetry(ctx, "read incarnation floor", func() (err error) {
		page, err = g.store.List(ctx, g.keys.IncarnationFloorPrefix(), "", 1)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read incarnation floor: %w", err)
	}
	if len(page.Keys) == 0 {
		return 0, nil
	}
	return g.keys.ParseIncarnationFloorKey(page.Keys[0])
}

func (g *Graph) writeFork(ctx context.Context, id format.BranchIdentity, src loaded) (BranchRef, bool, error) {
	name := id.Name
	m, err := lineage.Fork(&src.m, id)
	if err != nil {
		return BranchRef{}, false, fmt.Errorf("create branch %q: %w: %v", name, ErrInvalidArgument, err)
	}
	tok, err := g.token()
	if err != nil {
		return BranchRef{}, false, err
	}
	key := g.keys.Manifest(name, id.Incarnation, 0)
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
// Cost: the dependents check reads the fork markers of name's incarnation
// and the heads they name, so a delete reads O(forks of this incarnation
// that may be live), not O(branch names ever created); on a graph whose
// fork index is not complete yet (written before fork markers and not yet
// opened read-write by this version) it scans every name. After the
// tombstone lands, the deleted incarnation's own fork marker is retired.
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
	head, err := g.liveByName(ctx, name)
	if err != nil {
		return fmt.Errorf("delete branch: %w", err)
	}
	deps, err := g.dependents(ctx, head)
	if err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	if len(deps) > 0 {
		return &HasDependentsError{Branch: name, Dependents: deps}
	}
	req, err := g.newPublishReq(ctx, refOf(&head.m), nil, LineageIntent{Actor: "graphkernel", Message: "delete branch " + name}, nil)
	if err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	req.commit.Kind, req.tombstone = format.KindBranchDelete, true
	if _, err := g.publish(ctx, req); err != nil {
		return fmt.Errorf("delete branch %q: %w", name, err)
	}
	if x, ok := branchindex.MarkerFor(&head.m); ok {
		// Dropped error (docs/invariants.md): the tombstone landed, and a
		// marker of a deleted incarnation is verified and ignored.
		_ = g.retireForkMarker(ctx, x)
	}
	return nil
}

// BranchCursor is an opaque position in the branch-name index; "" starts
// at the first name.
type BranchCursor string

// BranchPage is one page of ListBranchesPage.
type BranchPage struct {
	// Branches are the live branches among the names this page examined,
	// sorted by name. A page may hold fewer than it examined, or none:
	// names of deleted branches are examined too.
	Branches []BranchRef
	// Next resumes after the last name examined; "" when every name was.
	Next BranchCursor
}

// ListBranchesPage examines at most limit branch names (0 means
// branchindex.DefaultPageNames; at most branchindex.MaxPageNames) after
// cursor, in name order, and returns the live branches among them. A page
// costs one LIST plus a head lookup (LIST + GET) per name examined, however
// many names were ever created. Names created after the cursor's position
// appear on later pages; a name is never returned twice in one pass.
func (g *Graph) ListBranchesPage(ctx context.Context, cursor BranchCursor, limit int) (BranchPage, error) {
	after, err := branchindex.DecodeCursor(string(cursor))
	if err != nil {
		return BranchPage{}, fmt.Errorf("list branches: %w: %v", ErrInvalidArgument, err)
	}
	names, more, err := g.namesPage(ctx, after, branchindex.PageNames(limit))
	if err != nil {
		return BranchPage{}, fmt.Errorf("list branches: %w", err)
	}
	var page BranchPage
	for _, name := range names {
		l, found, err := g.latest(ctx, name)
		if err != nil {
			return BranchPage{}, fmt.Errorf("list branches: %w", err)
		}
		if found && !l.m.Tombstone {
			page.Branches = append(page.Branches, refOf(&l.m))
		}
	}
	if more {
		page.Next = BranchCursor(branchindex.EncodeCursor(names[len(names)-1]))
	}
	return page, nil
}

// ListBranches returns a handle on every live branch, sorted by name, by
// paging through ListBranchesPage: it costs O(branch names ever created),
// deleted ones included, and refuses with ErrTooManyBranches past
// MaxBranchNames names. Services with many (or many deleted) branches
// should page with ListBranchesPage.
func (g *Graph) ListBranches(ctx context.Context) ([]BranchRef, error) {
	var out []BranchRef
	cursor := BranchCursor("")
	for pages := 0; pages < MaxBranchNames/branchindex.MaxPageNames; pages++ {
		page, err := g.ListBranchesPage(ctx, cursor, branchindex.MaxPageNames)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Branches...)
		if cursor = page.Next; cursor == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("list branches: %w: more than %d names (page with ListBranchesPage)", ErrTooManyBranches, MaxBranchNames)
}

// namesPage lists at most limit branch names after after (the R/names/
// index), in order; more reports that names may follow.
func (g *Graph) namesPage(ctx context.Context, after string, limit int) ([]string, bool, error) {
	prefix := g.keys.NamesPrefix()
	start := ""
	if after != "" {
		start = g.keys.NameMarker(after)
	}
	var page objstore.ListPage
	err := g.withRetry(ctx, "list branch names", func() (err error) {
		page, err = g.store.List(ctx, prefix, start, limit)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("list branch names: %w", err)
	}
	names := make([]string, 0, len(page.Keys))
	for _, k := range page.Keys {
		name := strings.TrimPrefix(k, prefix)
		if format.ValidateName(name) != nil {
			return nil, false, fmt.Errorf("branch name marker %q: %w", k, ErrCorrupt)
		}
		names = append(names, name)
	}
	return names, page.Truncated && len(names) > 0, nil
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
	return nil, fmt.Errorf("list branch names: %w: more than %d names", ErrTooManyBranches, MaxBranchNames)
}
