package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Walk bounds. The commit graph is a projection of manifests; walks that
// could be O(history) are bounded so a damaged store cannot loop them.
const (
	// MaxLogLimit is the largest Log page; <= 0 asks for DefaultLogLimit.
	MaxLogLimit     = 1000
	DefaultLogLimit = 100
	// MaxForkHops bounds consecutive commit-less fork manifests crossed
	// while walking back (a fork of a fork of ... with no commits).
	MaxForkHops = 1024
	// MaxWalkManifests bounds the manifests one history search or
	// merge-base walk reads.
	MaxWalkManifests = 1 << 20
)

// Head returns the commit at the head of b.
func (g *Graph) Head(ctx context.Context, b BranchRef) (Commit, error) {
	l, err := g.liveHead(ctx, b)
	if err != nil {
		return Commit{}, fmt.Errorf("head: %w", err)
	}
	c, err := g.headCommit(ctx, l)
	if err != nil {
		return Commit{}, fmt.Errorf("head of %s: %w", b, err)
	}
	return c, nil
}

// headCommit returns the commit that is l's head: l's own commit, or for a
// commit-less branch-create manifest the fork commit, found by following
// fork points.
func (g *Graph) headCommit(ctx context.Context, l loaded) (Commit, error) {
	for hop := 0; hop <= MaxForkHops; hop++ {
		if l.m.Commit != nil {
			return commitOf(l), nil
		}
		if isLegacy(l) { // v3 history: the head is a legacy commit or the fork commit
			if c, own, err := g.legacyOwnHead(ctx, l); err != nil || own {
				return c, err
			}
		}
		f := l.m.ForkOf
		next, err := g.manifestAt(ctx, format.ManifestRef{Branch: f.Branch, Incarnation: f.Incarnation, Version: f.ManifestVersion})
		if err != nil {
			return Commit{}, err
		}
		l = next
	}
	return Commit{}, fmt.Errorf("more than %d commit-less fork hops: %w", MaxForkHops, ErrCorrupt)
}

// previous returns the manifest before l in its branch's history: version-1
// of the same incarnation, or the fork point of a version-0 manifest.
func previous(l loaded) (format.ManifestRef, bool) {
	switch {
	case l.m.Version > 0:
		r := l.ref()
		r.Version--
		return r, true
	case l.m.ForkOf != nil:
		f := l.m.ForkOf
		return format.ManifestRef{Branch: f.Branch, Incarnation: f.Incarnation, Version: f.ManifestVersion}, true
	}
	return format.ManifestRef{}, false
}

// LogCursor is an opaque position in a branch's history; "" starts at the
// head.
type LogCursor string

// LogPage is one page of Log.
type LogPage struct {
	Commits []Commit  // newest first
	Next    LogCursor // "" when the history is exhausted
	// Reclaimed is set on the page where the walk met the retention
	// boundary: older history existed but garbage collection removed it
	// (docs/gc.md). Next is "" then.
	Reclaimed bool
}

func encodeCursor(r format.ManifestRef) LogCursor {
	return LogCursor(fmt.Sprintf("v1:%s:%d:%d", r.Branch, r.Incarnation, r.Version))
}

func decodeCursor(c LogCursor) (format.ManifestRef, error) {
	parts := strings.Split(string(c), ":")
	if len(parts) != 4 || parts[0] != "v1" {
		return format.ManifestRef{}, fmt.Errorf("%w: malformed log cursor %q", ErrInvalidArgument, c)
	}
	inc, err1 := strconv.ParseUint(parts[2], 10, 64)
	v, err2 := strconv.ParseUint(parts[3], 10, 64)
	if err1 != nil || err2 != nil || inc == 0 || format.ValidateName(parts[1]) != nil {
		return format.ManifestRef{}, fmt.Errorf("%w: malformed log cursor %q", ErrInvalidArgument, c)
	}
	return format.ManifestRef{Branch: parts[1], Incarnation: inc, Version: v}, nil
}

// Log returns up to limit commits of b's history, newest first, starting at
// cursor ("" = the head). It walks manifest versions backwards and crosses
// into the source branch at a fork point, so a branch's log ends with the
// history it was forked from. A page costs O(limit) reads whatever the depth.
func (g *Graph) Log(ctx context.Context, b BranchRef, cursor LogCursor, limit int) (LogPage, error) {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	limit = min(limit, MaxLogLimit)
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return LogPage{}, fmt.Errorf("log: %w", err)
	}
	at, more, off := head.ref(), true, 0
	if cursor != "" {
		if at, off, err = decodeLogCursor(cursor); err != nil {
			return LogPage{}, fmt.Errorf("log of %s: %w", b, err)
		}
	}
	page, err := g.logPage(ctx, at, more, off, limit)
	if err != nil {
		return LogPage{}, fmt.Errorf("log of %s: %w", b, err)
	}
	return page, nil
}

// LogFrom is Log from an arbitrary commit instead of a branch head: up to
// limit commits of id's history, newest first and id first, continuing at
// cursor when it is not "" (a Next of an earlier LogFrom or Log page). It
// works for commits of deleted branches too. The commit is found through
// its commit index (O(1) requests in depth on a cold handle), then a page
// costs O(limit) reads like Log.
func (g *Graph) LogFrom(ctx context.Context, id CommitID, cursor LogCursor, limit int) (LogPage, error) {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	limit = min(limit, MaxLogLimit)
	var at format.ManifestRef
	var off int
	var err error
	if cursor != "" {
		at, off, err = decodeLogCursor(cursor)
	} else {
		at, off, err = g.logStart(ctx, id)
	}
	if err != nil {
		return LogPage{}, fmt.Errorf("log from %s: %w", id, err)
	}
	page, err := g.logPage(ctx, at, true, off, limit)
	if err != nil {
		return LogPage{}, fmt.Errorf("log from %s: %w", id, err)
	}
	return page, nil
}

// logStart returns the log position of commit id: its manifest, and for a
// commit of a legacy segment its offset in that segment.
func (g *Graph) logStart(ctx context.Context, id CommitID) (format.ManifestRef, int, error) {
	at, err := g.locate(ctx, id)
	if err != nil {
		return format.ManifestRef{}, 0, err
	}
	l, err := g.manifestAt(ctx, at)
	if err != nil || !isLegacy(l) {
		return at, 0, err
	}
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return format.ManifestRef{}, 0, err
	}
	for off, c := range lin.UpTo(l.m.Version) {
		if c.ID == id {
			return at, off, nil
		}
	}
	return format.ManifestRef{}, 0, fmt.Errorf("commit %s is not in the legacy segment of %s v%d: %w", id, at.Branch, at.Version, ErrNotFound)
}

// logPage collects up to limit commits walking back from at (at offset off
// of a legacy segment); more=false means there is nothing to walk.
func (g *Graph) logPage(ctx context.Context, at format.ManifestRef, more bool, off, limit int) (LogPage, error) {
	var page LogPage
	for steps := 0; more && len(page.Commits) < limit; steps++ {
		if steps > limit+MaxForkHops {
			return LogPage{}, fmt.Errorf("walk exceeded %d steps: %w", limit+MaxForkHops, ErrCorrupt)
		}
		l, err := g.manifestAt(ctx, at)
		if errors.Is(err, ErrNotFound) {
			// Every manifest a walk steps to existed once: one that is
			// gone was collected. Stop cleanly at the boundary.
			page.Reclaimed, more = true, false
			break
		}
		if err != nil {
			return LogPage{}, err
		}
		if isLegacy(l) { // a legacy segment, then the incarnation's fork point
			if at, more, off, err = g.logLegacy(ctx, l, off, limit, &page); err != nil {
				return LogPage{}, err
			}
			continue
		}
		if off != 0 {
			return LogPage{}, fmt.Errorf("%w: cursor offset outside a legacy segment", ErrInvalidArgument)
		}
		if l.m.Commit != nil {
			page.Commits = append(page.Commits, commitOf(l))
		}
		at, more = previous(l)
	}
	if more {
		page.Next = encodeLogCursor(at, off)
	}
	return page, nil
}

// Commit returns the commit with id, wherever it was published (including
// on since-deleted branch incarnations), or ErrNotFound. A cache miss costs
// a search of the stored history, newest manifests first.
func (g *Graph) Commit(ctx context.Context, id CommitID) (Commit, error) {
	at, err := g.locate(ctx, id)
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", id, err)
	}
	l, err := g.manifestAt(ctx, at)
	if errors.Is(err, ErrNotFound) { // located, then collected
		return Commit{}, fmt.Errorf("commit %s: %w", id, ErrReclaimed)
	}
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", id, err)
	}
	c, err := g.commitIn(ctx, l, id)
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", id, err)
	}
	return c, nil
}

// locate returns the manifest that introduced commit id. It consults the
// handle's location cache, then the commit's index (verified against the
// manifest it names: two GETs whatever the depth), and only when there is
// no usable index scans the manifests (scanHistory).
func (g *Graph) locate(ctx context.Context, id CommitID) (format.ManifestRef, error) {
	if r, ok := g.locations.get(id.String()); ok {
		return r, nil
	}
	x, ok, err := g.verifiedIndex(ctx, id)
	if err != nil {
		return format.ManifestRef{}, err
	}
	if ok {
		return x.At, nil
	}
	return g.scanHistory(ctx, id)
}

// scanHistory finds the manifest that introduced commit id without any aid:
// it scans every branch name's manifests (all incarnations, newest first),
// noting every commit it passes. O(history), bounded by MaxWalkManifests.
func (g *Graph) scanHistory(ctx context.Context, id CommitID) (format.ManifestRef, error) {
	names, err := g.branchNames(ctx)
	if err != nil {
		return format.ManifestRef{}, err
	}
	st := scanState{budget: MaxWalkManifests}
	for _, name := range names {
		r, found, err := g.scanName(ctx, name, id, &st)
		if err != nil || found {
			return r, err
		}
	}
	if !st.truncated {
		// An incarnation floor means a collection deleted a dead name
		// whole (docs/gc.md rule 1a): its commits are gone without a trace
		// in the names left.
		floor, err := g.incarnationFloor(ctx)
		if err != nil {
			return format.ManifestRef{}, err
		}
		st.truncated = floor > 0
	}
	if st.truncated {
		// Garbage collection removed part of the history: the commit may
		// have been in it (docs/gc.md).
		return format.ManifestRef{}, fmt.Errorf("commit %s: not in the retained history: %w", id, ErrReclaimed)
	}
	return format.ManifestRef{}, fmt.Errorf("commit %s: %w", id, ErrNotFound)
}

// scanState is one history scan: its manifest budget, and whether it met
// history a collection truncated (an incarnation not starting at version
// 0, or missing incarnations).
type scanState struct {
	budget    int
	truncated bool
	// lastInc and lastV are the previous key's incarnation and version.
	lastInc, lastV uint64
}

// note records one listed manifest key (keys come newest first per name).
func (st *scanState) note(inc, v uint64) {
	switch {
	case st.lastInc == 0:
	case inc == st.lastInc:
		st.truncated = st.truncated || v+1 != st.lastV
	default:
		st.truncated = st.truncated || st.lastV != 0 || inc+1 != st.lastInc
	}
	st.lastInc, st.lastV = inc, v
}

// end closes one name's scan: its oldest incarnation must start at 1, v0.
func (st *scanState) end() {
	if st.lastInc != 0 {
		st.truncated = st.truncated || st.lastV != 0 || st.lastInc != 1
	}
	st.lastInc, st.lastV = 0, 0
}

// scanName reads the manifests of every incarnation of name, newest first,
// looking for commit id.
func (g *Graph) scanName(ctx context.Context, name string, id CommitID, st *scanState) (format.ManifestRef, bool, error) {
	after := ""
	searched := make(map[uint64]bool) // incarnations whose legacy lineage was searched
	for {
		var page objstore.ListPage
		err := g.withRetry(ctx, "scan "+name, func() (err error) {
			page, err = g.store.List(ctx, g.keys.BranchPrefix(name), after, objstore.MaxListLimit)
			return err
		})
		if err != nil {
			return format.ManifestRef{}, false, fmt.Errorf("scan %q: %w", name, err)
		}
		for _, key := range page.Keys {
			if st.budget--; st.budget < 0 {
				return format.ManifestRef{}, false, fmt.Errorf("history search exceeded %d manifests", MaxWalkManifests)
			}
			inc, v, err := g.keys.ParseManifestKey(name, key)
			if err != nil {
				return format.ManifestRef{}, false, err
			}
			st.note(inc, v)
			if searched[inc] {
				continue // older than a legacy manifest: covered by its lineage
			}
			l, err := g.manifestAt(ctx, format.ManifestRef{Branch: name, Incarnation: inc, Version: v})
			if errors.Is(err, ErrNotFound) {
				st.truncated = true // collected since the listing
				continue
			}
			if err != nil {
				return format.ManifestRef{}, false, err
			}
			if isLegacy(l) {
				searched[inc] = true
				if r, found, err := g.findLegacy(ctx, l, id); err != nil || found {
					return r, found, err
				}
				continue
			}
			if l.m.Commit != nil && l.m.Commit.ID == id {
				return l.ref(), true, nil
			}
		}
		if !page.Truncated || len(page.Keys) == 0 {
			st.end()
			return format.ManifestRef{}, false, nil
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

// MergeBase returns the best common ancestor of the heads of a and b (see
// lineage.MergeBase): merge commits' merged parents are followed, and
// MergeBase(b, b) is b's head. See MergeBaseOf for its cost.
func (g *Graph) MergeBase(ctx context.Context, a, b BranchRef) (Commit, error) {
	ha, err := g.Head(ctx, a)
	if err != nil {
		return Commit{}, fmt.Errorf("merge base: %w", err)
	}
	hb, err := g.Head(ctx, b)
	if err != nil {
		return Commit{}, fmt.Errorf("merge base: %w", err)
	}
	return g.MergeBaseOf(ctx, ha.ID, hb.ID)
}

// MergeBaseOf returns the best common ancestor of commits a and b, or
// ErrNotFound if they share none. With commit indexes (kernel/commitindex.go)
// it costs O(1) requests in branch-per-change histories, and O(compactions
// one side missed) in general (docs/format.md, "Commit index reach"), not
// O(depth); without, it walks both ancestries. The handle remembers each
// answer (the ancestry of two commits never changes), so asking again
// costs nothing, whatever its caches of manifests and indexes evicted
// since: a merge that retries after its first attempt's search ran past
// the grace period does not search again.
func (g *Graph) MergeBaseOf(ctx context.Context, a, b CommitID) (Commit, error) {
	key := mergeBaseKey(a, b)
	if c, ok := g.bases.get(key); ok {
		c.Parents = slices.Clone(c.Parents)
		return c, nil
	}
	c, ok, err := g.mergeBaseByReach(ctx, a, b)
	if err != nil {
		return Commit{}, fmt.Errorf("merge base: %w", err)
	}
	if !ok {
		if c, err = g.mergeBaseByWalk(ctx, a, b); err != nil {
			return Commit{}, err
		}
	}
	g.bases.put(key, c)
	c.Parents = slices.Clone(c.Parents)
	return c, nil
}

// mergeBaseKey names the unordered pair {a, b}: the merge base is
// symmetric.
func mergeBaseKey(a, b CommitID) string {
	if a.Compare(b) > 0 {
		a, b = b, a
	}
	return a.String() + "|" + b.String()
}

// errNoReach stops a reach merge base whose loader met a manifest without
// a complete verified reach: the caller walks instead.
var errNoReach = errors.New("kernel: no complete reach")

// mergeBaseByReach answers MergeBaseOf with lineage.ReachMergeBase over
// verified commit indexes. ok=false, with no error, when some reach on the
// way is unknown: the caller walks. A manifest it needs that a collection
// removed is ErrReclaimed; one it does not need (a tip the base reaches)
// is skipped.
func (g *Graph) mergeBaseByReach(ctx context.Context, a, b CommitID) (Commit, bool, error) {
	ra, ok, err := g.commitReach(ctx, a)
	if err != nil || !ok {
		return Commit{}, false, err
	}
	rb, ok, err := g.commitReach(ctx, b)
	if err != nil || !ok {
		return Commit{}, false, err
	}
	best, err := lineage.ReachMergeBaseHinted(ra, rb, g.reachLoader(ctx), g.readAhead(ctx))
	switch {
	case errors.Is(err, errNoReach):
		return Commit{}, false, nil
	case errors.Is(err, lineage.ErrNoCommonAncestor):
		return Commit{}, false, fmt.Errorf("merge base of %s and %s: %w", a, b, ErrNotFound)
	case errors.Is(err, lineage.ErrReachMissing):
		return Commit{}, false, fmt.Errorf("merge base of %s and %s: %w (%v)", a, b, ErrReclaimed, err)
	case err != nil:
		return Commit{}, false, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	l, err := g.lineageManifest(ctx, best.HeadAt)
	if err != nil {
		return Commit{}, false, err
	}
	return commitOf(l), true, nil
}

// reachLoader loads the verified reach of a manifest for
// lineage.ReachMergeBase: found=false when it was collected, errNoReach
// when it has no complete verified reach.
//
// A manifest the handle has cached may have been collected since (the
// cache never forgets one), and with it its commit index and the
// manifests a repair would rebuild its reach from. Its reach is then
// unknown, where a handle without the cached copy finds the manifest gone
// and the search sets it aside (answering when an accepted candidate
// reaches it: docs/gc.md rule 3b). So a cached manifest whose reach is
// unknown is looked up in the store again (reachInputsGone), and one that
// is gone answers found=false: the answer does not depend on the cache
// (TestMergeBaseOverACachedCollectedManifest; before, the search walked
// instead, and the walk met the collected history: ErrReclaimed).
//
// The same holds for a manifest a running collection is deleting, read
// after the manifest before it went and before it goes itself: its
// reach, its index lost, cannot be rebuilt, and the walk would follow it
// to the same collected manifest. So a manifest whose reach is unknown
// is also set aside when a manifest its reach is joined from (the one
// before it, the merged-from one) is gone (reachInputsGone;
// TestMergeBaseDuringTheCollectionOfAFold, simrun -workload lifetime
// -faults oscrash -seed 5). Setting aside is never a wrong answer: the
// search answers only when an accepted candidate reaches what it set
// aside, and ErrReclaimed otherwise.
func (g *Graph) reachLoader(ctx context.Context) lineage.ReachLoader {
	return func(at format.ManifestRef) (lineage.Reach, bool, error) {
		l, err := g.lineageManifest(ctx, at)
		if errors.Is(err, ErrReclaimed) {
			return lineage.Reach{}, false, nil
		}
		if err != nil {
			return lineage.Reach{}, false, err
		}
		r, ok, err := g.manifestReach(ctx, l)
		if err != nil {
			return lineage.Reach{}, false, err
		}
		if ok {
			return r, true, nil
		}
		gone, err := g.reachInputsGone(ctx, l)
		if err != nil {
			return lineage.Reach{}, false, err
		}
		if gone {
			return lineage.Reach{}, false, nil
		}
		return lineage.Reach{}, false, fmt.Errorf("manifest %s#%d v%d: %w", at.Branch, at.Incarnation, at.Version, errNoReach)
	}
}

// reachInputsGone reports whether manifest l, read earlier, or a manifest
// its reach is joined from is gone from the store now: the one before it
// (for a commit-less version 0, whose reach is its fork commit's, the
// manifest holding that commit) and, for a merge, the merged-from one.
// The ancestry walk would meet it (walkAncestry follows both), so a
// search sets l aside instead of walking. Of a legacy segment only l and
// a version 0's fork source are checked: its walk (walkLegacy) reads its
// own commits, not the manifest before it. It reads past the handle's
// cache.
func (g *Graph) reachInputsGone(ctx context.Context, l loaded) (bool, error) {
	refs := []format.ManifestRef{l.ref()}
	forkOnly := l.m.Version == 0 && (l.m.Commit == nil || l.m.Commit.ID != l.m.Head)
	if at, ok := previous(l); ok && (forkOnly || !isLegacy(l)) {
		refs = append(refs, at)
	}
	if c := l.m.Commit; c != nil && c.MergedFrom != nil && !isLegacy(l) {
		refs = append(refs, *c.MergedFrom)
	}
	for _, at := range refs {
		key := g.keys.Manifest(at.Branch, at.Incarnation, at.Version)
		err := g.withRetry(ctx, "read manifest", func() error { _, err := g.store.Get(ctx, key); return err })
		if errors.Is(err, objstore.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("read manifest %s: %w", key, err)
		}
	}
	return false, nil
}

// readAhead is the merge-base search's hint (lineage.ReachHint): it reads
// the folds the search is about to expand in two batches
// (objstore.GetMany), their manifests and then the commit indexes their
// commits name, into the handle's caches, so a walk down a chain of folds
// costs two rounds a link, not two a fold. It decides nothing: each is
// accepted as a single read would accept it (acceptManifest,
// acceptIndex), and one that fails here is read again singly by the load
// that needs it.
func (g *Graph) readAhead(ctx context.Context) lineage.ReachHint {
	return func(ats []format.ManifestRef) {
		var keys []string
		var refs []format.ManifestRef
		for _, at := range ats {
			key := g.keys.Manifest(at.Branch, at.Incarnation, at.Version)
			if _, ok := g.manifests.get(key); !ok {
				keys, refs = append(keys, key), append(refs, at)
			}
		}
		if len(keys) >= 2 {
			for i, r := range objstore.GetMany(ctx, g.store, keys) {
				if r.Err == nil {
					_, _ = g.acceptManifest(keys[i], refs[i], r.Object.Data) // a failure is met again by the load
				}
			}
		}
		var ids []format.ID
		keys = keys[:0]
		for _, at := range ats {
			l, ok := g.manifests.get(g.keys.Manifest(at.Branch, at.Incarnation, at.Version))
			if !ok || isLegacy(l) {
				continue
			}
			if _, ok := g.indexes.get(l.m.Head.String()); !ok {
				ids, keys = append(ids, l.m.Head), append(keys, g.keys.CommitIndex(l.m.Head))
			}
		}
		if len(keys) < 2 {
			return
		}
		for i, r := range objstore.GetMany(ctx, g.store, keys) {
			switch {
			case r.Err != nil:
			case plant.Enabled(plant.ReadAheadTrustsIndex): // planted bug (dead code without -tags simplant): cached unverified
				if x, _, err := format.DecodeCommitIndex(r.Object.Data); err == nil && x.ID == ids[i] {
					g.indexes.put(ids[i].String(), x)
				}
			default:
				_, _, _ = g.acceptIndex(ctx, ids[i], keys[i], r.Object.Data) // a failure is met again by the load
			}
		}
	}
}

// lineageManifest is manifestAt for a manifest the lineage names (a reach
// entry, a previous manifest, a merged-from location, a located commit):
// it existed, so its absence means a garbage collection removed it, which
// is ErrReclaimed and deliberately not ErrNotFound (MergeBaseOf's
// ErrNotFound means the two commits share no ancestor).
func (g *Graph) lineageManifest(ctx context.Context, at format.ManifestRef) (loaded, error) {
	l, err := g.manifestAt(ctx, at)
	if errors.Is(err, ErrNotFound) {
		return loaded{}, fmt.Errorf("manifest %s#%d v%d named by the lineage: %w (%v)", at.Branch, at.Incarnation, at.Version, ErrReclaimed, err)
	}
	return l, err
}

// commitReach returns the verified complete reach of commit id, if any.
// A commit whose index is missing or stale (its publisher crashed before
// writing it) is located without the aid and its index rebuilt from the
// manifests (repairIndex), so a merge base keeps its O(1) path.
func (g *Graph) commitReach(ctx context.Context, id CommitID) (lineage.Reach, bool, error) {
	x, ok, err := g.verifiedIndex(ctx, id)
	if err != nil {
		return lineage.Reach{}, false, err
	}
	if !ok || !x.Complete { // an incomplete one is rebuilt too (manifestReachDepth)
		at := x.At
		if !ok {
			if at, err = g.locate(ctx, id); err != nil {
				return lineage.Reach{}, false, err
			}
		}
		l, err := g.lineageManifest(ctx, at)
		if err != nil {
			return lineage.Reach{}, false, err
		}
		if x, ok, err = g.repairIndex(ctx, l, repairDepth); err != nil || !ok {
			return lineage.Reach{}, false, err
		}
	}
	if !x.Complete {
		return lineage.Reach{}, false, nil
	}
	return lineage.FromIndex(x), true, nil
}

// mergeBaseByWalk is MergeBaseOf without aids: it loads the full ancestry of
// both commits from the manifests and applies lineage.MergeBase.
func (g *Graph) mergeBaseByWalk(ctx context.Context, a, b CommitID) (Commit, error) {
	parents := make(map[format.ID][]format.ID)
	where := make(map[format.ID]format.ManifestRef)
	budget := MaxWalkManifests
	for _, id := range []CommitID{a, b} {
		start, err := g.locate(ctx, id)
		if err != nil {
			return Commit{}, fmt.Errorf("merge base: %w", err)
		}
		if err := g.walkAncestry(ctx, start, parents, where, &budget); err != nil {
			return Commit{}, fmt.Errorf("merge base: %w", err)
		}
	}
	base, ok := lineage.MergeBase(parents, a, b)
	if !ok {
		return Commit{}, fmt.Errorf("merge base of %s and %s: %w", a, b, ErrNotFound)
	}
	l, err := g.lineageManifest(ctx, where[base])
	if err != nil {
		return Commit{}, fmt.Errorf("merge base: %w", err)
	}
	c, err := g.commitIn(ctx, l, base)
	if err != nil {
		return Commit{}, fmt.Errorf("merge base: %w", err)
	}
	return c, nil
}

// walkAncestry loads every commit reachable from the manifest at start into
// parents (id -> parents) and where (id -> manifest), following previous
// manifests and merged-from locations.
func (g *Graph) walkAncestry(ctx context.Context, start format.ManifestRef, parents map[format.ID][]format.ID,
	where map[format.ID]format.ManifestRef, budget *int) error {
	seen := make(map[format.ManifestRef]bool)
	queue := []format.ManifestRef{start}
	for len(queue) > 0 {
		at := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[at] {
			continue
		}
		seen[at] = true
		if *budget--; *budget < 0 {
			return fmt.Errorf("ancestry walk exceeded %d manifests", MaxWalkManifests)
		}
		l, err := g.lineageManifest(ctx, at)
		if err != nil {
			return err
		}
		if isLegacy(l) { // a legacy segment: its commits, fork point and outside parents
			if err := g.walkLegacy(ctx, l, parents, where, &queue, budget); err != nil {
				return err
			}
			continue
		}
		if c := l.m.Commit; c != nil {
			if _, dup := where[c.ID]; dup {
				continue // already walked from here (the other head's ancestry)
			}
			parents[c.ID], where[c.ID] = c.Parents, at
			if c.MergedFrom != nil {
				queue = append(queue, *c.MergedFrom)
			}
		}
		if prev, ok := previous(l); ok {
			queue = append(queue, prev)
		}
	}
	return nil
}
