package kernel

// Reading format-3 (v3) history. A v3 manifest carries table pins but no
// lineage; its incarnation's lineage is the set of legacy commit objects
// under R/legacy/commits/<branch>/<inv(inc)>/ (unmigrated) or the legacy
// block of the incarnation's migration manifest (migrated). Either way the
// kernel reads it as a migrate.Lineage and projects it into history as a
// "legacy segment": the commits of the incarnation up to the manifest
// version a walk reached, newest first under the v3 head rule, followed by
// the incarnation's fork point. Reading never writes.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
)

// legacyCacheEntries bounds the per-handle cache of legacy lineages.
const legacyCacheEntries = 256

// isV3 reports a lineage-less v3 manifest (read by DecodeManifestAnyStamp).
func isV3(l loaded) bool { return l.m.FormatStamp == format.FormatV3 }

// isLegacy reports a manifest whose history is a legacy segment: a v3
// manifest or a migration manifest (legacy block).
func isLegacy(l loaded) bool { return isV3(l) || l.m.Legacy != nil }

// withLegacyHead fills in the head of a v3 manifest: the v3 head as of its
// version (the fork commit if its incarnation had no commit yet).
func (g *Graph) withLegacyHead(ctx context.Context, l loaded) (loaded, error) {
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return loaded{}, err
	}
	head, err := lin.HeadOf(&l.m)
	if err != nil {
		return loaded{}, err
	}
	l.m.Head = head
	return l, nil
}

// lineageOf returns the legacy lineage of l's incarnation: from l's own
// legacy block, or (v3 manifest) from the incarnation's migration manifest
// if it was migrated since, else from the legacy commit objects.
func (g *Graph) lineageOf(ctx context.Context, l loaded) (*migrate.Lineage, error) {
	if l.m.Legacy != nil {
		key := "block:" + g.keys.Manifest(l.m.Branch.Name, l.m.Branch.Incarnation, l.m.Version)
		if lin, ok := g.legacy.get(key); ok {
			return lin, nil
		}
		lin, err := migrate.NewLineage(l.m.Legacy.Commits, l.m.Version-1)
		if err != nil {
			return nil, fmt.Errorf("legacy block of %s v%d: %w", l.ref().Branch, l.m.Version, err)
		}
		g.rememberLineage(key, l.m.Branch, lin)
		return lin, nil
	}
	if !isV3(l) {
		panic(fmt.Sprintf("kernel: lineageOf: %s v%d is no legacy manifest", l.m.Branch.Name, l.m.Version))
	}
	return g.v3Lineage(ctx, l)
}

func (g *Graph) rememberLineage(key string, b format.BranchIdentity, lin *migrate.Lineage) {
	g.legacy.put(key, lin)
	for _, c := range lin.Commits() {
		g.locations.put(c.ID.String(), format.ManifestRef{Branch: b.Name, Incarnation: b.Incarnation, Version: c.ManifestVersion})
	}
}

// v3Lineage returns the lineage of the incarnation of the v3 manifest l.
// Legacy objects are immutable and only v3 writers wrote them, so a lineage
// read once stays true (a migration folds exactly it) and is cached.
func (g *Graph) v3Lineage(ctx context.Context, l loaded) (*migrate.Lineage, error) {
	name, inc := l.m.Branch.Name, l.m.Branch.Incarnation
	key := "inc:" + name + "/" + strconv.FormatUint(inc, 10)
	if lin, ok := g.legacy.get(key); ok {
		return lin, nil
	}
	top, err := g.newestOfIncarnation(ctx, name, inc)
	if err != nil {
		return nil, err
	}
	var lin *migrate.Lineage
	if isV3(top) {
		commits, err := g.readLegacyCommits(ctx, name, inc)
		if err != nil {
			return nil, err
		}
		if lin, err = migrate.NewLineage(commits, top.m.Version); err != nil {
			return nil, fmt.Errorf("legacy lineage of %s#%d: %w", name, inc, err)
		}
	} else {
		mig, err := g.migrationManifest(ctx, name, inc, l.m.Version, top.m.Version)
		if err != nil {
			return nil, err
		}
		if lin, err = g.lineageOf(ctx, mig); err != nil {
			return nil, err
		}
	}
	g.rememberLineage(key, l.m.Branch, lin)
	return lin, nil
}

// newestOfIncarnation loads the newest manifest of one incarnation.
func (g *Graph) newestOfIncarnation(ctx context.Context, name string, inc uint64) (loaded, error) {
	var page objstore.ListPage
	prefix := g.keys.IncarnationPrefix(name, inc)
	err := g.withRetry(ctx, "load newest of "+name, func() (err error) {
		page, err = g.store.List(ctx, prefix, "", 1)
		return err
	})
	if err != nil {
		return loaded{}, fmt.Errorf("load newest of %s#%d: %w", name, inc, err)
	}
	if len(page.Keys) == 0 {
		return loaded{}, fmt.Errorf("incarnation %s#%d has no manifests: %w", name, inc, ErrCorrupt)
	}
	_, v, err := g.keys.ParseManifestKey(name, page.Keys[0])
	if err != nil {
		return loaded{}, err
	}
	return g.rawManifestAt(ctx, format.ManifestRef{Branch: name, Incarnation: inc, Version: v})
}

// migrationManifest finds the first v4 manifest of an incarnation whose
// version lo is v3 and version hi is v4 (stamps only rise along a chain),
// by binary search: O(log(hi-lo)) cached GETs. It must carry the folded
// lineage.
func (g *Graph) migrationManifest(ctx context.Context, name string, inc, lo, hi uint64) (loaded, error) {
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		l, err := g.rawManifestAt(ctx, format.ManifestRef{Branch: name, Incarnation: inc, Version: mid})
		if err != nil {
			return loaded{}, err
		}
		if isV3(l) {
			lo = mid
		} else {
			hi = mid
		}
	}
	l, err := g.rawManifestAt(ctx, format.ManifestRef{Branch: name, Incarnation: inc, Version: hi})
	if err != nil {
		return loaded{}, err
	}
	if l.m.Legacy == nil {
		return loaded{}, fmt.Errorf("%s#%d v%d: the first v4 manifest after v3 ones carries no legacy lineage: %w",
			name, inc, hi, ErrCorrupt)
	}
	return l, nil
}

// readLegacyCommits reads every legacy commit object of one incarnation.
// An empty prefix is the only "no legacy data"; any other failure (a store
// error after retries, a listed object that is gone, a corrupt object) is
// returned.
func (g *Graph) readLegacyCommits(ctx context.Context, name string, inc uint64) ([]format.LegacyCommit, error) {
	prefix := g.keys.LegacyCommitsPrefix(name, inc)
	var out []format.LegacyCommit
	after := ""
	for {
		var page objstore.ListPage
		err := g.withRetry(ctx, "list legacy commits", func() (err error) {
			page, err = g.store.List(ctx, prefix, after, objstore.MaxListLimit)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list legacy commits %s: %w", prefix, err)
		}
		for _, key := range page.Keys {
			if len(out) >= format.MaxLegacyCommits {
				return nil, fmt.Errorf("%w: more than %d legacy commits under %s", migrate.ErrTooLarge, format.MaxLegacyCommits, prefix)
			}
			c, err := g.readLegacyCommit(ctx, name, inc, key)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return out, nil
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

func (g *Graph) readLegacyCommit(ctx context.Context, name string, inc uint64, key string) (format.LegacyCommit, error) {
	id, err := g.keys.ParseLegacyCommitKey(name, inc, key)
	if err != nil {
		return format.LegacyCommit{}, err
	}
	var obj objstore.Object
	err = g.withRetry(ctx, "read legacy commit", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		// Listed, then gone: legacy objects are never deleted. Not benign.
		return format.LegacyCommit{}, fmt.Errorf("legacy commit %s was listed but is gone (%v): %w", key, err, ErrCorrupt)
	}
	if err != nil {
		return format.LegacyCommit{}, fmt.Errorf("read legacy commit %s: %w", key, err)
	}
	c, _, err := format.DecodeLegacyCommit(obj.Data)
	if err != nil {
		return format.LegacyCommit{}, fmt.Errorf("read legacy commit %s: %w", key, err)
	}
	if c.ID != id {
		return format.LegacyCommit{}, fmt.Errorf("legacy commit %s names commit %s: %w", key, c.ID, ErrCorrupt)
	}
	return c, nil
}

// legacyCommitOf projects a legacy commit of incarnation b.
func legacyCommitOf(b format.BranchIdentity, c format.LegacyCommit) Commit {
	return Commit{ID: c.ID, Parents: append([]CommitID(nil), c.Parents...), Kind: c.Kind(), Actor: c.Actor,
		Message: c.Message, Time: time.Unix(0, c.TimeUnixNano).UTC(), Branch: b.Name, Incarnation: b.Incarnation,
		ManifestVersion: c.ManifestVersion}
}

// commitIn returns commit id, which the manifest l introduced (v4) or whose
// incarnation's legacy lineage holds it (legacy).
func (g *Graph) commitIn(ctx context.Context, l loaded, id CommitID) (Commit, error) {
	if !isLegacy(l) {
		if l.m.Commit == nil || l.m.Commit.ID != id {
			return Commit{}, fmt.Errorf("commit %s is not in %s v%d: %w", id, l.m.Branch.Name, l.m.Version, ErrNotFound)
		}
		return commitOf(l), nil
	}
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return Commit{}, err
	}
	c, ok := lin.Find(id)
	if !ok {
		return Commit{}, fmt.Errorf("commit %s is not in the legacy lineage of %s#%d: %w", id, l.m.Branch.Name, l.m.Branch.Incarnation, ErrNotFound)
	}
	return legacyCommitOf(l.m.Branch, c), nil
}

// legacyOwnHead returns the head commit of the legacy manifest l when it is
// one of l's incarnation's own commits; ok=false means the head is the fork
// commit (l then has a fork point to follow).
func (g *Graph) legacyOwnHead(ctx context.Context, l loaded) (Commit, bool, error) {
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return Commit{}, false, err
	}
	if c, ok := lin.Find(l.m.Head); ok {
		return legacyCommitOf(l.m.Branch, c), true, nil
	}
	if l.m.ForkOf == nil {
		return Commit{}, false, fmt.Errorf("%s#%d v%d: %w", l.m.Branch.Name, l.m.Branch.Incarnation, l.m.Version, migrate.ErrNoLineage)
	}
	return Commit{}, false, nil
}

// findLegacy looks for commit id in the legacy lineage of l's incarnation.
func (g *Graph) findLegacy(ctx context.Context, l loaded, id CommitID) (format.ManifestRef, bool, error) {
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return format.ManifestRef{}, false, err
	}
	c, ok := lin.Find(id)
	if !ok {
		return format.ManifestRef{}, false, nil
	}
	return format.ManifestRef{Branch: l.m.Branch.Name, Incarnation: l.m.Branch.Incarnation, Version: c.ManifestVersion}, true, nil
}

func forkRef(f *format.ForkPoint) format.ManifestRef {
	return format.ManifestRef{Branch: f.Branch, Incarnation: f.Incarnation, Version: f.ManifestVersion}
}

// logLegacy appends l's legacy segment, from offset off, to page until it
// holds limit commits. It returns where the walk continues: still inside
// this segment (at l, offset > 0), at the incarnation's fork point, or
// nowhere (more=false).
func (g *Graph) logLegacy(ctx context.Context, l loaded, off, limit int, page *LogPage) (format.ManifestRef, bool, int, error) {
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return format.ManifestRef{}, false, 0, err
	}
	seg := lin.UpTo(l.m.Version)
	if off > len(seg) {
		return format.ManifestRef{}, false, 0, fmt.Errorf("%w: log cursor offset %d beyond a legacy segment of %d", ErrInvalidArgument, off, len(seg))
	}
	for ; off < len(seg) && len(page.Commits) < limit; off++ {
		page.Commits = append(page.Commits, legacyCommitOf(l.m.Branch, seg[off]))
	}
	if off < len(seg) {
		return l.ref(), true, off, nil
	}
	if f := l.m.ForkOf; f != nil {
		return forkRef(f), true, 0, nil
	}
	return format.ManifestRef{}, false, 0, nil
}

// encodeLogCursor extends encodeCursor with an offset into a legacy segment.
func encodeLogCursor(r format.ManifestRef, off int) LogCursor {
	if off == 0 {
		return encodeCursor(r)
	}
	return LogCursor(fmt.Sprintf("%s:%d", encodeCursor(r), off))
}

// decodeLogCursor reverses encodeLogCursor.
func decodeLogCursor(c LogCursor) (format.ManifestRef, int, error) {
	s := string(c)
	if strings.Count(s, ":") != 4 {
		r, err := decodeCursor(c)
		return r, 0, err
	}
	i := strings.LastIndexByte(s, ':')
	off, err := strconv.Atoi(s[i+1:])
	if err != nil || off <= 0 || strconv.Itoa(off) != s[i+1:] {
		return format.ManifestRef{}, 0, fmt.Errorf("%w: malformed log cursor %q", ErrInvalidArgument, c)
	}
	r, err := decodeCursor(LogCursor(s[:i]))
	return r, off, err
}

// walkLegacy is walkAncestry's step for a legacy manifest: it records every
// commit of l's segment and queues what lies outside it: the fork point,
// and the manifests of parents from other incarnations (v3 merges).
func (g *Graph) walkLegacy(ctx context.Context, l loaded, parents map[format.ID][]format.ID,
	where map[format.ID]format.ManifestRef, queue *[]format.ManifestRef, budget *int) error {
	lin, err := g.lineageOf(ctx, l)
	if err != nil {
		return err
	}
	var fork format.ID
	if f := l.m.ForkOf; f != nil {
		fork = f.CommitID
		*queue = append(*queue, forkRef(f))
	}
	var outside []format.ID
	for _, c := range lin.UpTo(l.m.Version) {
		if *budget--; *budget < 0 {
			return fmt.Errorf("ancestry walk exceeded %d manifests and commits", MaxWalkManifests)
		}
		if _, dup := where[c.ID]; dup {
			continue
		}
		parents[c.ID] = append([]format.ID(nil), c.Parents...)
		where[c.ID] = format.ManifestRef{Branch: l.m.Branch.Name, Incarnation: l.m.Branch.Incarnation, Version: c.ManifestVersion}
		for _, p := range c.Parents {
			if _, own := lin.Find(p); !own && p != fork {
				outside = append(outside, p)
			}
		}
	}
	for _, p := range outside {
		if _, known := where[p]; known {
			continue
		}
		r, err := g.locate(ctx, p)
		if errors.Is(err, ErrNotFound) {
			continue // an unknown parent has no known ancestry
		}
		if err != nil {
			return err
		}
		*queue = append(*queue, r)
	}
	return nil
}
