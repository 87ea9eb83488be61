package maintain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Bounds of one collection.
const (
	// DefaultMaxDeletes bounds the deletes of one Collect; a collection
	// that reaches it stops (Report.Complete false): run it again.
	DefaultMaxDeletes = 1 << 20
	// maxListPages bounds the pages listed under one prefix.
	maxListPages = 1 << 16
)

// Policy is a collection's retention (gc.Policy) and its bound.
type Policy struct {
	gc.Policy
	// MaxDeletes bounds the deletes of one run (0: DefaultMaxDeletes).
	MaxDeletes int
	// MaxDuration bounds one run by the collector's clock: its record
	// expires this long after it starts, and it issues no delete past the
	// expiry minus the skew margin (0: DefaultMaxDuration).
	MaxDuration time.Duration
}

// Counts is what a collection did with one category of objects.
type Counts struct {
	Deleted, Kept int
}

// Report is the outcome of one Collect, per category.
type Report struct {
	Manifests, TableVersions, Fragments, Adjacency, CommitIndexes, Leases Counts
	// Records counts stale collection records (R/gc/) of other
	// collectors: deleted, or kept while they may still bind a Pin.
	Records Counts
	// MergeBases counts the manifests kept as possible merge bases of
	// live branch pairs (rule 3b) that no other rule kept.
	MergeBases int
	// UnreadableVersions counts table versions named per attempt, pinned
	// by nothing kept, whose bytes failed their check or decode (an
	// attempt a crash tore before its manifest's write made it durable;
	// gc.UnreadableNamedIsGarbage): judged by their attempt's age alone
	// (kept while young, then deleted), marking nothing. A kept version
	// that is unreadable fails the collection instead.
	UnreadableVersions int
	// RidingVersions counts the distinct table versions riding kept
	// manifests (format 11) whose fragments and index objects the run
	// marked from the manifests' payloads (no object of them exists).
	RidingVersions int
	// IndexesRebuilt counts the commit indexes of kept manifests this
	// run rebuilt from the manifests (a reach whose index was missing,
	// torn, stale or incomplete: an OS crash may lose an index, which its
	// publish does not sync) and stored, create-only or If-Match over the
	// unusable one it read, before using the reach (one a writer stored
	// meanwhile is used instead, never overwritten): readers then find
	// the reaches the run kept merge bases by.
	IndexesRebuilt int
	// IndexesSynced counts the commit indexes this run took its kept
	// manifests' reaches from (read, or stored by it) and made durable
	// before deleting anything (none on a store that writes durably).
	IndexesSynced int
	// IndexesRewritten counts, of those, the indexes whose sync failed
	// (objstore.ErrSyncFailed: an fsync's EIO) and that the run wrote
	// again durably instead, since no later sync of them can be trusted.
	IndexesRewritten int
	// MergeBasesUnknown counts live heads whose reach could not be read
	// (no complete commit index and none rebuilt: a pre-index or migrated
	// history, or more than rebuildDepth commits without one), and
	// live pairs whose merge base needed such a reach or a manifest
	// already collected: their merge bases are not roots, and a later
	// merge may meet ErrReclaimed.
	MergeBasesUnknown int
	// ReachesUnknown counts kept manifests on the boundary of what the run
	// keeps (gc.ReachBoundary: an input of their reach deleted) whose
	// reach it could neither read nor rebuild, so could not make durable
	// (docs/gc.md rule 3c): a merge base through one may meet
	// ErrReclaimed should its commit index be lost.
	ReachesUnknown int
	// MergeBasesInexact: the merge-base work ran past gc.MaxBaseChecks, so
	// every position and fold the live heads' reaches name was kept too.
	MergeBasesInexact bool
	// Complete is false when MaxDeletes or MaxDuration stopped a sweep
	// early (docs/gc.md §7: once the manifest sweep is done, each later
	// category still gets its share), or OutOfTime stopped the run.
	Complete bool
	// OutOfTime: the run reached the time its record allows deleting in
	// (MaxDuration less the skew margin) while it was still loading or
	// marking, so it stopped reading there and deleted nothing after; what
	// it read stays in the Maintainer's cache for the next run (docs/gc.md
	// §7, "reads are bounded too").
	OutOfTime bool
	// Metadata (docs/gc.md rules 1a, 8, 10): name and fork markers, audit
	// records and roll-back plans deleted and kept, name markers put back
	// (a create raced the delete, or a collector crashed before its
	// re-check), and the incarnation floor this run wrote (0: none).
	NameMarkers, ForkMarkers, Audits, Plans Counts
	NameMarkersRestored                     int
	Floor                                   uint64
}

// incGroup is one branch incarnation's manifests, newest first.
type incGroup struct {
	key      gc.IncKey
	keys     []string
	versions []uint64
}

// collection is one run's loaded state.
type collection struct {
	m      *Maintainer
	p      gc.Policy
	now    time.Time
	marks  *gc.Marks
	known  *gc.Known
	groups []incGroup
	listed map[string]bool // every manifest key listManifests saw
	// listedAt is listed by location.
	listedAt map[format.ManifestRef]bool
	floors   map[gc.IncKey]uint64 // per incarnation, the lowest base_manifest of a pending sidecar
	reaches  []lineage.Reach      // the reach of every live head whose commit index is complete
	// reachOf caches the collector's verified reach loads (rule 3b), and
	// seen the manifests they decoded.
	reachOf map[format.ManifestRef]reachLoad
	seen    map[format.ManifestRef]format.Manifest
	// rebuilt holds the reaches this run rebuilt (rebuildReach) of
	// manifests holding their head commit and stored as their commits'
	// indexes (storeRebuilt).
	rebuilt map[format.ManifestRef]lineage.Reach
	// unsynced holds, by location, the head commit of each reach this run
	// took from a commit index not known durable (read, or stored by it):
	// syncIndexes makes those of kept manifests durable before anything is
	// deleted.
	unsynced map[format.ManifestRef]lineage.Reach
	// pendingPairs are the pairs' loads (gc.PairMemo) this run found,
	// cached by syncIndexes once the indexes they read are durable.
	pendingPairs []pendingPair
	// indexes holds commit indexes readAheadFolds read ahead, by key,
	// until readReachDepth takes them (at most maxPrefetchedIndexes).
	indexes map[string]objstore.Object
	// walked holds the index and fragment chunks (R/adj/) whose whole
	// subtree this run marked (unwalked); at most one entry per chunk,
	// within gc.MaxMarks.
	walked    map[gc.FragKey]bool
	expired   []string          // expired lease keys
	leases    map[string]bool   // lease keys the load read
	rec       format.Collection // this run's record (R/gc/<id>)
	recTok    format.Token
	deadNames []string // names whose every manifest this run deleted
	rep       Report
	budget    int
	// The progress rule (docs/gc.md §7, collect_progress.go): catUntil and
	// catBudget are the current category's share, garbageTables the table
	// versions the marking found unreachable, resume per swept prefix the
	// last key judged (a later pass resumes after it).
	catUntil      time.Time
	catBudget     int
	garbageTables []string
	resume        map[string]string
	// perKey and lastBatch time the last batched delete (batchSize).
	perKey    time.Duration
	lastBatch int
}

// Collect deletes what no retained state can reach (docs/gc.md): it loads
// the root set — every branch's retained manifests (by gc.Protected), the
// fork points and possible merge bases of live branches (gc.MergeBaseKeep), the
// versions of pending sidecars, live leases — marks what they reach across
// all branches (gc.Mark), then lists manifests, table versions, fragments,
// commit indexes and leases in pages and deletes each unreachable one
// (gc.Keep*). It never deletes anything younger than the grace period plus
// the skew margin that nothing reaches, schemas or quarantine records;
// metadata goes by its own rules (collect_meta.go: dead names, markers,
// audit records and plans). It is bounded (Policy.MaxDeletes, page counts), resumable (run
// it again) and crash-safe (each delete removes only an unreachable
// object; a dead name's keys go tombstone last). An unreadable sidecar, lease or reached object
// stops it before the sweep it would affect.
func (m *Maintainer) Collect(ctx context.Context, policy Policy) (Report, error) {
	p, err := policy.Policy.WithDefaults()
	if err != nil {
		return Report{}, err
	}
	c := &collection{m: m, p: p, now: m.now(), known: gc.NewKnown(), budget: policy.MaxDeletes, floors: map[gc.IncKey]uint64{},
		reachOf: map[format.ManifestRef]reachLoad{}, listed: map[string]bool{}, listedAt: map[format.ManifestRef]bool{}, seen: map[format.ManifestRef]format.Manifest{}, resume: map[string]string{},
		walked: map[gc.FragKey]bool{}}
	if c.budget <= 0 {
		c.budget = DefaultMaxDeletes
	}
	m.immut.beginRun()
	defer m.immut.endRun()
	if err := c.begin(ctx, policy.MaxDuration); err != nil {
		return c.rep, fmt.Errorf("collect: %w", err)
	}
	err = c.run(ctx)
	if errors.Is(err, errOutOfTime) {
		c.rep.OutOfTime, err = true, c.syncRead(ctx) // Complete stays false: nothing judged after the bound
	}
	if eerr := c.end(ctx); eerr != nil {
		err = errors.Join(err, eerr)
	}
	if err != nil {
		c.rep.Complete = false
		return c.rep, fmt.Errorf("collect: %w", err)
	}
	return c.rep, nil
}

// run loads and marks the root set, writes the plan and re-lists the
// leases (docs/gc.md rule 6), completes the marking (every kept table
// version read), then sweeps each category in order, each within its
// share of the time and deletes left (docs/gc.md §7).
func (c *collection) run(ctx context.Context) error {
	if err := c.load(ctx); err != nil {
		return err
	}
	if ok, err := c.decide(ctx); err != nil || !ok {
		return err
	}
	if err := c.relist(ctx); err != nil {
		return err
	}
	if err := c.markTables(ctx); err != nil {
		return err
	}
	if err := c.markRiding(ctx); err != nil {
		return err
	}
	return c.sweepAll(ctx)
}

// markRiding marks the fragments and index objects of every version that
// rides a root manifest (format 11): markTables marks only versions with
// an object to list. A payload that does not decode is an error (the
// manifest that carries it decoded, so this is a bug), never a skip.
func (c *collection) markRiding(ctx context.Context) error {
	for _, k := range c.marks.RidingKeys() {
		if err := c.inTime(); err != nil {
			return err
		}
		tv, err := c.ridingView(c.marks.Riding[k])
		if err != nil {
			return err
		}
		if err := c.marks.MarkFragments(tv.Table, tv.Fragments); err != nil {
			return err
		}
		if err := c.markFragmentChunks(ctx, tv); err != nil {
			return err
		}
		if err := c.markAdjacency(ctx, tv); err != nil {
			return err
		}
		c.rep.RidingVersions++
	}
	return nil
}

// load reads the root set and marks what it reaches.
func (c *collection) load(ctx context.Context) error {
	// The leases first: the re-list after the plan (relist) catches every
	// later one, so reading them early costs nothing and makes the window
	// a missing re-list would leave open as wide as the whole load.
	live, err := c.readLeases(ctx, false)
	if err != nil {
		return err
	}
	if err := c.listManifests(ctx); err != nil {
		return err
	}
	any, versions, err := c.loadSidecars(ctx)
	if err != nil {
		return err
	}
	var roots []gc.RootManifest
	for _, g := range c.groups {
		r, _, err := c.loadIncarnation(ctx, g) // its manifest reads stop at the bound (c.manifest)
		if err != nil {
			return err
		}
		roots = append(roots, r...) // a name's head: gc.NameDead, gc.KeepNameHead
	}
	bases, err := c.loadMergeBases(ctx, roots)
	if err != nil {
		return err
	}
	roots = append(roots, bases...)
	leased, err := c.leasesRoots(ctx, live)
	if err != nil {
		return err
	}
	if c.marks, err = gc.Mark(append(roots, leased...), any, versions); err != nil {
		return err
	}
	// The genesis manifest (main#1 v0, no pins) is the graph's identity:
	// the change feed's tokens name it. It is kept forever.
	c.marks.Manifests[c.m.keys.Manifest(format.MainBranch, 1, 0)] = true
	if err := c.loadBoundaryReaches(ctx); err != nil {
		return err
	}
	c.rep.IndexesRebuilt = len(refsOf(c.rebuilt, c.kept))
	return c.syncIndexes(ctx)
}

// syncIndexes makes durable, before anything is deleted, the commit
// indexes this run took the reaches of kept manifests from (read, or
// rebuilt and stored: storeRebuilt)
// (objstore.SyncDeferred; nothing to do on a store that writes durably),
// then caches those reaches for later runs. An index is written with no
// sync of its own (it follows its publish: docs/format.md), so an OS
// crash after the run could otherwise lose one the run kept merge bases
// by, after the run deleted the manifests a reader would need to rebuild
// it. Reaches a later run takes from the cache are durable already. A
// failure (an index gone since it was read) fails the run before any
// delete.
func (c *collection) syncIndexes(ctx context.Context) error {
	if err := c.inTime(); err != nil {
		return err
	}
	return c.syncReaches(ctx, c.kept)
}

// kept reports whether this run's marks keep the manifest at.
func (c *collection) kept(at format.ManifestRef) bool {
	return c.marks.Manifests[c.m.keys.Manifest(at.Branch, at.Incarnation, at.Version)]
}

// refsOf returns, in location order, the locations in m that want
// accepts.
func refsOf(m map[format.ManifestRef]lineage.Reach, want func(format.ManifestRef) bool) []format.ManifestRef {
	ats := make([]format.ManifestRef, 0, len(m))
	//detlint:ordered collects locations that are sorted next
	for at := range m {
		if want(at) {
			ats = append(ats, at)
		}
	}
	slices.SortFunc(ats, compareRefs)
	return ats
}

// syncRead is syncIndexes for a run that stopped at its time bound while
// loading: it syncs every index it read a reach from, kept or not (it
// decided nothing), and caches those reaches and the pairs' loads, so the
// next run starts further on (docs/gc.md §7, "reads are bounded too"). It
// deletes nothing, so it may run past the bound; a failure is returned.
func (c *collection) syncRead(ctx context.Context) error {
	return c.syncReaches(ctx, func(format.ManifestRef) bool { return true })
}

// syncReaches syncs the indexes of the unsynced reaches whose location
// want accepts, then caches those reaches and the pairs' loads.
func (c *collection) syncReaches(ctx context.Context, want func(format.ManifestRef) bool) error {
	ats := refsOf(c.unsynced, want)
	if len(ats) == 0 {
		c.cachePairs()
		return nil
	}
	keys := make([]string, 0, len(ats))
	for _, at := range ats {
		keys = append(keys, c.m.keys.CommitIndex(c.unsynced[at].ID))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if err := c.syncIndexKeys(ctx, keys); err != nil {
		return err
	}
	for _, at := range ats {
		c.m.immut.putReach(c.unsynced[at])
	}
	c.rep.IndexesSynced += len(keys)
	c.cachePairs()
	return nil
}

// syncIndexKeys makes the commit indexes at keys durable. If the sync
// fails as an fsync's EIO does (objstore.ErrSyncFailed), no later sync
// of them can be trusted (the store refuses one), so each is read back
// and written again durably over itself (If-Match on the ETag read: a new
// file, the same statement; never over an index someone else wrote
// since) — else every later run would fail on the same keys. Any other
// outcome of that write (lost condition, ambiguous, failed) fails the
// run before it deletes anything; the next run reads the index again.
func (c *collection) syncIndexKeys(ctx context.Context, keys []string) error {
	err := objstore.SyncDeferred(ctx, c.m.store, keys)
	if !errors.Is(err, objstore.ErrSyncFailed) {
		if err != nil {
			return fmt.Errorf("sync commit indexes: %w", err)
		}
		return nil
	}
	for _, key := range keys {
		if err := c.inTime(); err != nil {
			return err
		}
		obj, found, gerr := c.m.getObject(ctx, key)
		if gerr != nil || !found {
			return fmt.Errorf("sync commit indexes: %w; read back %s: found %v, %v", err, key, found, gerr)
		}
		if _, perr := c.m.store.Put(ctx, key, obj.Data, objstore.IfMatch(obj.ETag)); perr != nil {
			return fmt.Errorf("sync commit indexes: %w; write %s again: %w", err, key, perr)
		}
		c.rep.IndexesRewritten++
	}
	return nil
}

// cachePairs puts the pairs' loads this run found in the Maintainer's
// cache (their reaches are durable now: read from synced indexes, rebuilt
// and written, or cached by an earlier run that synced them).
func (c *collection) cachePairs() {
	for _, p := range c.pendingPairs {
		c.m.immut.putPair(p.a, p.b, p.loaded)
	}
	c.pendingPairs = nil
}

// compareRefs orders manifest locations by branch, incarnation, version.
func compareRefs(a, b format.ManifestRef) int {
	return cmp.Or(strings.Compare(a.Branch, b.Branch), cmp.Compare(a.Incarnation, b.Incarnation), cmp.Compare(a.Version, b.Version))
}

// listManifests groups every manifest key by incarnation.
func (c *collection) listManifests(ctx context.Context) error {
	prefix := c.m.prefix("branches")
	return c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			segs, ok := splitKey(prefix, key)
			if !ok || len(segs) != 3 {
				return fmt.Errorf("manifest key %q: %w", key, format.ErrCorrupt)
			}
			inc, v, err := c.m.keys.ParseManifestKey(segs[0], key)
			if err != nil {
				return err
			}
			ik := gc.IncKey{Name: segs[0], Inc: inc}
			if n := len(c.groups); n == 0 || c.groups[n-1].key != ik {
				c.groups = append(c.groups, incGroup{key: ik}) // a name's newest incarnation first (nameGroups)
			}
			g := &c.groups[len(c.groups)-1]
			g.keys, g.versions = append(g.keys, key), append(g.versions, v)
			c.listed[key] = true
			c.listedAt[format.ManifestRef{Branch: segs[0], Incarnation: inc, Version: v}] = true
		}
		return nil
	})
}

// manifest GETs and decodes one listed manifest; found=false when a
// concurrent collection deleted it since the listing. A manifest key is
// written create-only and never rewritten (an incarnation number is never
// reused, docs/gc.md rule 1a), so a key this run listed is read through
// the Maintainer's immutable cache: a hit for one a concurrent collection
// deleted since keeps more, never less (immutable.go).
func (c *collection) manifest(ctx context.Context, key string) (format.Manifest, bool, error) {
	if err := c.inTime(); err != nil {
		return format.Manifest{}, false, err
	}
	decode := func(b []byte) (format.Manifest, int, error) { return decodeManifestView(key, b) }
	if c.listed[key] {
		mf, found, err := readImmutableView(ctx, c.m, key, decode)
		if err != nil || !found {
			return format.Manifest{}, false, err
		}
		return mf, true, nil
	}
	b, found, err := c.m.get(ctx, key)
	if err != nil || !found {
		return format.Manifest{}, false, err
	}
	mf, _, err := decode(b)
	return mf, err == nil, err
}

// decodeManifest decodes the manifest at key.
func decodeManifest(key string, b []byte) (format.Manifest, error) {
	mf, _, err := format.DecodeManifest(b)
	if err != nil {
		return mf, fmt.Errorf("manifest %s (a graph not migrated to format %d is not collected): %w", key, format.FormatV4, err)
	}
	return mf, nil
}

// decodeManifestView decodes the manifest at key as a collection uses it:
// every riding version's payload (format 11) without the fragments it
// embeds (data.WithoutEmbeds: no collection reads them), with the bytes
// that left out. A collection keeps many manifests in the Maintainer's
// cache (rule 3b's merge bases), and each would otherwise hold its riding
// versions' embedded fragments: the cache filled with them and
// collections ran out of their bound (lifetime-10k -seed 3, session 24),
// as table versions' embeds once did (session 19).
func decodeManifestView(key string, b []byte) (format.Manifest, int, error) {
	mf, err := decodeManifest(key, b)
	if err != nil {
		return mf, 0, err
	}
	left := 0 // mf was just decoded: its pins are its own to change
	for i, p := range mf.Tables {
		if p.Riding == "" {
			continue
		}
		view, n, err := ridingWithoutEmbeds(p)
		if err != nil {
			return mf, 0, fmt.Errorf("manifest %s: %w", key, err)
		}
		if n == 0 {
			continue
		}
		payload, err := format.RidingPayload(&view)
		if err != nil {
			return mf, 0, fmt.Errorf("manifest %s: %w", key, err)
		}
		left += len(p.Riding) - len(payload)
		mf.Tables[i].Riding = payload
	}
	return mf, left, nil
}

// prefetchManifests reads the listed manifests at ats that this run has
// not loaded in batches (prefetchImmutable), so the reads that follow come
// from the Maintainer's cache.
func (c *collection) prefetchManifests(ctx context.Context, ats []format.ManifestRef) {
	if c.inTime() != nil {
		return // past the bound: the run reads nothing more
	}
	var keys []string
	for _, at := range ats {
		if _, ok := c.seen[at]; ok {
			continue
		}
		if key := c.m.keys.Manifest(at.Branch, at.Incarnation, at.Version); c.listed[key] {
			keys = append(keys, key)
		}
	}
	prefetchImmutable(ctx, c.m, keys, func(b []byte) (format.Manifest, int, error) { return decodeManifestView("", b) })
}

// loadIncarnation reads g's head and its protected manifests, records the
// incarnation in c.known and returns the protected ones as roots.
func (c *collection) loadIncarnation(ctx context.Context, g incGroup) ([]gc.RootManifest, string, error) {
	head, found, err := c.manifest(ctx, g.keys[0])
	if err != nil || !found {
		return nil, "", err // a head only vanishes when a concurrent collection found its incarnation expired
	}
	if err := c.checkClock(g, &head); err != nil {
		return nil, "", err
	}
	tomb := gc.TombstoneTime(head)
	loaded := []format.Manifest{head}
	times := []gc.ManifestTime{timeOf(head)}
	n, more := gc.Protected(times, len(g.keys), tomb, c.p, c.now)
	for more {
		mf, found, err := c.manifest(ctx, g.keys[len(loaded)])
		if err != nil {
			return nil, "", err
		}
		if !found { // a concurrent collection ended protection here
			n = len(loaded)
			break
		}
		loaded, times = append(loaded, mf), append(times, timeOf(mf))
		n, more = gc.Protected(times, len(g.keys), tomb, c.p, c.now)
	}
	if floor, ok := c.floors[g.key]; ok {
		n = gc.SidecarFloor(n, g.versions, floor)
		for len(loaded) < n {
			mf, found, err := c.manifest(ctx, g.keys[len(loaded)])
			if err != nil {
				return nil, "", err
			}
			if !found {
				n = len(loaded)
				break
			}
			loaded = append(loaded, mf)
		}
	}
	pins := map[string]uint64{}
	for _, p := range head.Tables {
		pins[p.Name] = p.Version
	}
	c.known.Add(g.key, gc.IncState{Fork: head.Branch.IncarnationID, HeadVersion: g.versions[0], Pins: pins, Expired: tomb != 0 && n == 0,
		Deleted: head.Tombstone, TombUnixNano: tomb})
	roots := make([]gc.RootManifest, 0, n+1)
	for i := 0; i < n; i++ {
		roots = append(roots, rootOf(g.keys[i], loaded[i]))
	}
	if f := head.ForkOf; f != nil && !head.Tombstone {
		// A live branch's fork point is its first merge base: keep the
		// source manifest and what it reaches while the branch lives.
		key := c.m.keys.Manifest(f.Branch, f.Incarnation, f.ManifestVersion)
		src, found, err := c.manifest(ctx, key)
		if err != nil {
			return nil, "", err
		}
		if found {
			r := rootOf(key, src)
			r.Fork = head.Branch.IncarnationID // a root of the child branch
			roots = append(roots, r)
		}
	}
	if !head.Tombstone {
		if err := c.noteReach(ctx, g, head); err != nil {
			return nil, "", err
		}
	}
	return roots, g.keys[0], nil
}

// noteReach records the reach of a live head (rule 3b's input), read from
// its head commit's index and checked against the manifest that shows the
// commit (see reachAt). A head whose reach cannot be read is counted in
// Report.MergeBasesUnknown.
func (c *collection) noteReach(ctx context.Context, g incGroup, head format.Manifest) error {
	at := format.ManifestRef{Branch: g.key.Name, Incarnation: g.key.Inc, Version: head.Version}
	c.seen[at] = head
	r, found, err := c.reachAt(ctx, at)
	if errors.Is(err, gc.ErrReachUnknown) || err == nil && !found {
		c.rep.MergeBasesUnknown++
		return nil
	}
	if err != nil {
		return err
	}
	c.reaches = append(c.reaches, r)
	return nil
}

// reachLoad is one cached reachAt answer.
type reachLoad struct {
	r     lineage.Reach
	found bool
	err   error
}

// reachAt is the collector's lineage.ReachLoader: the reach of the
// manifest at, from its head commit's index, trusted only when complete
// and when the manifest it names carries that commit (indexes are never
// authoritative), else rebuilt from the manifests (readReachDepth).
// found=false when the manifest (or, for a commit-less version 0, its
// fork commit's) is gone; gc.ErrReachUnknown when the index is absent,
// unreadable, incomplete or stale and the reach cannot be rebuilt within
// rebuildDepth. Answers are cached.
func (c *collection) reachAt(ctx context.Context, at format.ManifestRef) (lineage.Reach, bool, error) {
	return c.reachDepth(ctx, at, rebuildDepth)
}

// maxPrefetchedIndexes bounds the commit indexes one run holds read ahead.
const maxPrefetchedIndexes = 1 << 12

// readAheadFolds is the merge-base search's hint (lineage.ReachHint): it
// reads the folds the search is about to expand that this run has not
// loaded, their manifests and then the commit indexes their head commits
// name, in two batches (objstore.GetMany). Each expansion reads a fold's
// manifest, then its index, so a walk down a chain of folds (a branch
// that lagged main since many compactions) costs two rounds a link, not
// two a fold. It decides nothing: readReachDepth verifies a prefetched index
// as one it read itself.
func (c *collection) readAheadFolds(ctx context.Context, folds []format.ManifestRef) {
	if c.inTime() != nil {
		return // past the bound: the run reads nothing more
	}
	var ats []format.ManifestRef
	for _, at := range folds {
		if _, ok := c.reachOf[at]; ok {
			continue
		}
		if _, ok := c.m.immut.getReach(at); ok {
			continue
		}
		ats = append(ats, at)
	}
	if len(ats) < 2 || len(c.indexes) >= maxPrefetchedIndexes {
		return
	}
	c.prefetchManifests(ctx, ats)
	var keys []string
	for _, at := range ats {
		key := c.m.keys.Manifest(at.Branch, at.Incarnation, at.Version)
		if !c.listed[key] {
			continue
		}
		if v, ok := c.m.immut.get(key); ok {
			if mf, ok := v.(format.Manifest); ok {
				keys = append(keys, c.m.keys.CommitIndex(mf.Head))
			}
		}
	}
	if len(keys) < 2 {
		return
	}
	if c.indexes == nil {
		c.indexes = map[string]objstore.Object{}
	}
	for i, r := range objstore.GetMany(ctx, c.m.store, keys) {
		if r.Err == nil {
			c.indexes[keys[i]] = r.Object
		}
	}
}

// commitIndex reads the commit index at key: the object readAheadFolds
// read ahead (taken once), else the store's.
func (c *collection) commitIndex(ctx context.Context, key string) (objstore.Object, bool, error) {
	if obj, ok := c.indexes[key]; ok {
		delete(c.indexes, key)
		return obj, true, nil
	}
	return c.m.getObject(ctx, key)
}

// listedRef reports whether this run listed the manifest at.
func (c *collection) listedRef(at format.ManifestRef) bool {
	return c.listedAt[at]
}

// rebuildDepth bounds how many manifests one reach rebuild (rebuildReach)
// walks back for consecutive commits whose indexes are missing too: an
// OS crash loses at most 63 in a row per branch (the kernel makes the
// index of every 64th manifest version of a branch durable, whichever
// handle writes it: indexSyncEvery), so 256 leaves room for a few of
// those durable writes to have failed.
// Past it the reach is unknown, as it was before rebuilds; each run
// pays up to 2·256 reads again for such a reach (unknowns are not kept
// across runs).
const rebuildDepth = 256

// readReachDepth is the reach of the manifest at, read from its head
// commit's index or, without a usable one (absent, torn, undecodable,
// incomplete or stale: an index is an aid an OS crash may lose, since its
// publish does not sync it), rebuilt from the manifests at most depth
// back (rebuildReach). found=false when the manifest at is gone.
func (c *collection) readReachDepth(ctx context.Context, at format.ManifestRef, depth int) (lineage.Reach, bool, error) {
	mf, found, err := c.manifestRef(ctx, at)
	if err != nil || !found {
		return lineage.Reach{}, false, err
	}
	key := c.m.keys.CommitIndex(mf.Head)
	read, rerr := c.readIndex(ctx, key)
	if rerr != nil {
		return lineage.Reach{}, false, rerr
	}
	r, found, err := c.indexReach(ctx, at, mf, read)
	if !errors.Is(err, gc.ErrReachUnknown) || plant.Enabled(plant.GCNoReachRebuild) {
		return r, found, err
	}
	rebuilt, ok, rerr := c.rebuildReach(ctx, at, mf, depth)
	if rerr != nil && !errors.Is(rerr, gc.ErrReachUnknown) {
		return lineage.Reach{}, false, rerr
	}
	if !ok {
		return lineage.Reach{}, false, err // the index's reason
	}
	if rebuilt.HeadAt != at { // a commit-less version 0: its fork commit's reach, stored at that manifest
		return rebuilt, true, nil
	}
	return c.storeRebuilt(ctx, at, mf, rebuilt, read)
}

// indexRead is what one read of a commit index found: the object (with
// its ETag), none (found=false), or a torn one (objstore.ErrCorruptObject).
type indexRead struct {
	obj         objstore.Object
	found, torn bool
}

// readIndex reads the commit index at key (see commitIndex); a torn one
// is an answer, not an error.
func (c *collection) readIndex(ctx context.Context, key string) (indexRead, error) {
	obj, found, err := c.commitIndex(ctx, key)
	if errors.Is(err, objstore.ErrCorruptObject) {
		return indexRead{torn: true}, nil
	}
	return indexRead{obj: obj, found: found}, err
}

// storeRebuilt stores r, the reach of at rebuilt from the manifests
// (rebuildReach), as the index of at's head commit before the run uses
// it, and returns the reach to use: r, or the one a writer stored
// meanwhile. An index is never written over a usable one (docs/gc.md
// rule 3b): the run keeps merge bases by the reach it uses, and a reader
// must search by the same one, so the write is create-only when read
// found none, If-Match on its ETag over a stale, incomplete or
// undecodable one, and, over a torn one (the store's compare fails on
// it), a delete then create-only. A lost condition reads the index
// again: a usable one is used (and noted for syncIndexes, as any reach
// read), an unusable one replaced as above, at most maxAttempts times.
// The write's name is durable only once syncIndexes syncs it (kept
// manifests' indexes only; on a store without deferred durability it is
// durable at once).
func (c *collection) storeRebuilt(ctx context.Context, at format.ManifestRef, mf format.Manifest, r lineage.Reach, read indexRead) (lineage.Reach, bool, error) {
	x := r.Index()
	tok, err := c.m.token()
	if err != nil {
		return lineage.Reach{}, false, err
	}
	b, err := format.EncodeCommitIndex(&x, tok)
	if err != nil {
		return lineage.Reach{}, false, fmt.Errorf("rebuilt commit index of %v: %w", at, err)
	}
	key := c.m.keys.CommitIndex(x.ID)
	for range maxAttempts {
		cond := objstore.CreateOnly
		switch {
		case read.torn:
			if err := c.m.del(ctx, key); err != nil {
				return lineage.Reach{}, false, fmt.Errorf("rebuilt commit index of %v: %w", at, err)
			}
		case read.found:
			cond = objstore.IfMatch(read.obj.ETag)
		}
		won, err := c.m.putIndex(ctx, key, b, cond)
		if err != nil {
			return lineage.Reach{}, false, fmt.Errorf("rebuilt commit index of %v: %w", at, err)
		}
		if won {
			if c.rebuilt == nil {
				c.rebuilt = map[format.ManifestRef]lineage.Reach{}
			}
			c.rebuilt[at] = r
			return r, true, nil
		}
		if read, err = c.readIndex(ctx, key); err != nil {
			return lineage.Reach{}, false, err
		}
		got, found, err := c.indexReach(ctx, at, mf, read)
		if !errors.Is(err, gc.ErrReachUnknown) {
			return got, found, err // usable: a writer's (or another run's), never overwritten
		}
	}
	return lineage.Reach{}, false, fmt.Errorf("rebuilt commit index of %v: changed under %d writes: %w", at, maxAttempts, objstore.ErrPreconditionFailed)
}

// rebuildReach is the reach of the manifest mf at at computed from the
// manifests, as its publish computed its commit's index
// (kernel.commitIndexFrom): the reach of the manifest before it joined
// with the merged-from manifest's for a merge (lineage.JoinReach, under
// the writers' reach bounds, Options); for a
// commit-less version 0, its fork commit's manifest's plus at. Its inputs
// come from their indexes, or are rebuilt in turn, depth-1 deep. ok=false
// (unknown) when depth is spent, at is a manifest whose commit is not
// its head, or an input manifest is gone. A genesis reaches itself alone.
func (c *collection) rebuildReach(ctx context.Context, at format.ManifestRef, mf format.Manifest, depth int) (lineage.Reach, bool, error) {
	if depth <= 0 {
		return lineage.Reach{}, false, nil
	}
	if mf.Commit == nil || mf.Commit.ID != mf.Head {
		if mf.Version != 0 || mf.ForkOf == nil {
			return lineage.Reach{}, false, nil
		}
		f := mf.ForkOf
		fr, found, err := c.reachDepth(ctx, format.ManifestRef{Branch: f.Branch, Incarnation: f.Incarnation, Version: f.ManifestVersion}, depth-1)
		if err != nil || !found || fr.ID != mf.Head {
			return lineage.Reach{}, false, err
		}
		return fr.ForManifest(at), true, nil
	}
	if mf.Version == 0 {
		if mf.ForkOf != nil || mf.Commit.Kind != format.KindGenesis {
			return lineage.Reach{}, false, nil
		}
		return lineage.JoinReach(at, mf.Commit.ID, lineage.Reach{}, nil, c.m.reach, false), true, nil // as Init wrote it
	}
	prevAt := at
	prevAt.Version--
	prev, found, err := c.reachDepth(ctx, prevAt, depth-1)
	if err != nil || !found {
		return lineage.Reach{}, false, err
	}
	var merged *lineage.Reach
	if from := mf.Commit.MergedFrom; from != nil {
		r, found, err := c.reachDepth(ctx, *from, depth-1)
		if err != nil || !found {
			return lineage.Reach{}, false, err
		}
		merged = &r
	}
	return lineage.JoinReach(at, mf.Commit.ID, prev, merged, c.m.reach, false), true, nil
}

// reachDepth is reachAt whose rebuild, if the reach needs one, walks at
// most depth manifests back: a cached answer, else read (and rebuilt if
// need be). An answer is cached for the run unless it is unknown only
// for want of depth (a rebuild's input: another path may reach it with
// more). A reach read from an index is noted for syncIndexes, which puts
// it in the Maintainer's cache once the index is durable: a cached reach
// is one a later run may trust without reading the index, so it must be
// the reach the store will keep saying (an index lost to an OS crash
// after the read may be rebuilt by a writer with other reach limits).
func (c *collection) reachDepth(ctx context.Context, at format.ManifestRef, depth int) (lineage.Reach, bool, error) {
	if l, ok := c.reachOf[at]; ok {
		return l.r, l.found, l.err
	}
	if r, ok := c.m.immut.getReach(at); ok && c.listedRef(at) && c.listedRef(r.HeadAt) {
		c.reachOf[at] = reachLoad{r: r, found: true}
		return r, true, nil
	}
	if err := c.inTime(); err != nil {
		return lineage.Reach{}, false, err
	}
	r, found, err := c.readReachDepth(ctx, at, depth)
	if err == nil || depth == rebuildDepth && errors.Is(err, gc.ErrReachUnknown) {
		c.reachOf[at] = reachLoad{r: r, found: found, err: err}
	}
	if err == nil && found {
		c.noteUnsynced(at, r)
	}
	return r, found, err
}

// noteUnsynced notes that the reach r of at was taken from a commit index
// (written without a sync of its own, or stored by storeRebuilt). On a store that writes durably
// (no objstore.DeferredPutter) every index is durable once written, so r
// goes to the Maintainer's cache at once.
func (c *collection) noteUnsynced(at format.ManifestRef, r lineage.Reach) {
	if !c.m.defers {
		c.m.immut.putReach(r)
		return
	}
	if c.unsynced == nil {
		c.unsynced = map[format.ManifestRef]lineage.Reach{}
	}
	c.unsynced[at] = r
}

// indexReach is the reach of the manifest mf at at from its head
// commit's index as read found it: gc.ErrReachUnknown when the index is
// absent, torn, undecodable, incomplete or stale; found=false when the
// manifest the index names is gone.
func (c *collection) indexReach(ctx context.Context, at format.ManifestRef, mf format.Manifest, read indexRead) (lineage.Reach, bool, error) {
	if read.torn {
		// Torn by a crash (a publish writes its index wholly deferred):
		// an aid, so unknown, as one that does not decode.
		return lineage.Reach{}, false, fmt.Errorf("%v: torn commit index: %w", at, gc.ErrReachUnknown)
	}
	if !read.found {
		return lineage.Reach{}, false, fmt.Errorf("%v: no commit index: %w", at, gc.ErrReachUnknown)
	}
	x, _, err := format.DecodeCommitIndex(read.obj.Data)
	if err != nil {
		return lineage.Reach{}, false, fmt.Errorf("%v: %v: %w", at, err, gc.ErrReachUnknown) // an aid, never authoritative
	}
	shown, found, err := c.manifestRef(ctx, x.At)
	if err != nil || !found {
		return lineage.Reach{}, false, err
	}
	r, ok := headReach(at, mf, x, &shown)
	if !ok {
		return lineage.Reach{}, false, fmt.Errorf("%v: commit index not trusted: %w", at, gc.ErrReachUnknown)
	}
	return r, true, nil
}

// manifestRef is manifest by location, remembered in c.seen.
func (c *collection) manifestRef(ctx context.Context, at format.ManifestRef) (format.Manifest, bool, error) {
	if mf, ok := c.seen[at]; ok {
		return mf, true, nil
	}
	mf, found, err := c.manifest(ctx, c.m.keys.Manifest(at.Branch, at.Incarnation, at.Version))
	if err == nil && found {
		c.seen[at] = mf
	}
	return mf, found, err
}

// headReach is the reach of the manifest at (head), given the index x of
// its head commit and the manifest at x.At (shown, nil if absent): x's
// reach for a manifest carrying its commit, plus at for a commit-less
// one. ok=false unless x is complete and shown carries x's commit.
func headReach(at format.ManifestRef, head format.Manifest, x format.CommitIndex, shown *format.Manifest) (lineage.Reach, bool) {
	if shown == nil || !x.Complete || x.ID != head.Head || shown.Commit == nil || shown.Commit.ID != x.ID {
		return lineage.Reach{}, false
	}
	r := lineage.FromIndex(x)
	if head.Commit != nil {
		return r, x.At == at
	}
	return r.ForManifest(at), true
}

// loadMergeBases returns, as roots, what rule 3b keeps that no other rule
// keeps: every manifest a merge base of a live pair loads
// (gc.MergeBaseKeep over the collector's verified loader).
func (c *collection) loadMergeBases(ctx context.Context, roots []gc.RootManifest) ([]gc.RootManifest, error) {
	have := make(map[string]bool, len(roots))
	for _, r := range roots {
		have[r.Key] = true
	}
	if plant.Enabled(plant.GCNoMergeBase) { // planted bug: rule 3b skipped
		return nil, nil
	}
	load := func(at format.ManifestRef) (lineage.Reach, bool, error) { return c.reachAt(ctx, at) }
	res, err := gc.MergeBaseKeepHinted(c.reaches, load, pairMemo{c}, func(ats []format.ManifestRef) { c.readAheadFolds(ctx, ats) })
	if err != nil {
		return nil, err
	}
	c.rep.MergeBasesInexact = !res.Exact
	c.rep.MergeBasesUnknown += res.Unknown
	c.prefetchManifests(ctx, res.Keep)
	var out []gc.RootManifest
	for _, at := range res.Keep {
		key := c.m.keys.Manifest(at.Branch, at.Incarnation, at.Version)
		mf, ok := c.seen[at]
		if !ok {
			if mf, ok, err = c.manifestRef(ctx, at); err != nil {
				return nil, err
			}
		}
		if !ok || have[key] {
			continue // gone already: a merge base needing it answers ErrReclaimed (counted above)
		}
		have[key] = true
		out = append(out, rootOf(key, mf))
	}
	c.rep.MergeBases = len(out)
	return out, nil
}

// pairMemo is the collection's gc.PairMemo: the Maintainer's cache of
// each live pair's merge-base loads, replayed only when this run listed
// every manifest on the pair's list (one gone since: search it again).
type pairMemo struct{ c *collection }

func (p pairMemo) Pair(a, b format.ManifestRef) ([]format.ManifestRef, bool) {
	loaded, ok := p.c.m.immut.getPair(a, b)
	if !ok {
		return nil, false
	}
	for _, at := range loaded {
		if !p.c.listedRef(at) {
			return nil, false
		}
	}
	return loaded, true
}

// SetPair remembers a pair's loads. On a store that defers durability
// it waits for syncIndexes (pendingPairs): a replayed search reads no
// index, so it may only replay loads whose indexes are durable.
func (p pairMemo) SetPair(a, b format.ManifestRef, loaded []format.ManifestRef) {
	if p.c.m.defers {
		p.c.pendingPairs = append(p.c.pendingPairs, pendingPair{a: a, b: b, loaded: loaded})
		return
	}
	p.c.m.immut.putPair(a, b, loaded)
}

// pendingPair is one pair's loads waiting for syncIndexes.
type pendingPair struct {
	a, b   format.ManifestRef
	loaded []format.ManifestRef
}

// timeOf is a manifest's time for retention: its commit's, or for a
// branch-create manifest (no commit) the creation time in its incarnation
// id (a ULID minted when the branch was created).
func timeOf(m format.Manifest) gc.ManifestTime { return gc.ManifestTimeOf(m) }

func rootOf(key string, m format.Manifest) gc.RootManifest {
	r := gc.RootManifest{Key: key, Fork: m.Branch.IncarnationID, Pins: m.Tables}
	if m.Commit != nil {
		r.Commit = m.Commit.ID
	}
	return r
}

// loadSidecars returns what pending sidecars name: their written versions
// (on their fork) and the expected and read versions (fork unknown).
func (c *collection) loadSidecars(ctx context.Context) ([]gc.AnyFork, []gc.TableKey, error) {
	var any []gc.AnyFork
	var versions []gc.TableKey
	err := c.m.listAll(ctx, c.m.keys.SidecarPrefix(), maxListPages, func(keys []string) error {
		for _, key := range keys {
			b, found, err := c.m.get(ctx, key)
			if err != nil || !found {
				if err != nil {
					return err
				}
				continue // resolved meanwhile
			}
			s, _, err := format.DecodeSidecar(b)
			if err != nil {
				return fmt.Errorf("sidecar %s is unreadable (quarantine it first): %w", key, err)
			}
			for _, t := range s.Tables {
				versions = append(versions, gc.TableKey{Table: t.Table, Fork: t.Fork, Version: t.Commit})
				any = append(any, gc.AnyFork{Table: t.Table, Version: t.Expected})
			}
			for _, r := range s.Reads {
				any = append(any, gc.AnyFork{Table: r.Table, Version: r.Version})
			}
			ik := gc.IncKey{Name: s.Branch.Name, Inc: s.Branch.Incarnation}
			if f, ok := c.floors[ik]; !ok || s.BaseManifest < f {
				c.floors[ik] = s.BaseManifest
			}
		}
		return nil
	})
	return any, versions, err
}

// readLeases returns the live leases, and notes the expired ones for
// deletion. With again set (the re-list after the plan, docs/gc.md §5a)
// it reads only leases the first read did not see.
func (c *collection) readLeases(ctx context.Context, again bool) ([]format.Lease, error) {
	var live []format.Lease
	if c.leases == nil {
		c.leases = map[string]bool{}
	}
	err := c.m.listAll(ctx, c.m.keys.LeasePrefix(), maxListPages, func(keys []string) error {
		for _, key := range keys {
			if again && c.leases[key] {
				continue
			}
			c.leases[key] = true
			b, found, err := c.m.get(ctx, key)
			if err != nil || !found {
				if err != nil {
					return err
				}
				continue // released meanwhile
			}
			l, _, err := format.DecodeLease(b)
			if err != nil {
				return fmt.Errorf("lease %s is unreadable: %w", key, err)
			}
			if !gc.LeaseLive(l, c.p, c.now) {
				if !again {
					c.expired = append(c.expired, key)
				}
				continue
			}
			c.rep.Leases.Kept++
			live = append(live, l)
		}
		return nil
	})
	return live, err
}

// leasesRoots returns the manifests the leases hold, as roots.
func (c *collection) leasesRoots(ctx context.Context, live []format.Lease) ([]gc.RootManifest, error) {
	var roots []gc.RootManifest
	for _, l := range live {
		r, err := c.leaseRoots(ctx, l)
		if err != nil {
			return nil, err
		}
		roots = append(roots, r...)
	}
	return roots, nil
}

// leaseRoots returns the manifests lease l holds that exist: its snapshot,
// and for a history lease every listed manifest of its incarnation from
// the snapshot's version on.
func (c *collection) leaseRoots(ctx context.Context, l format.Lease) ([]gc.RootManifest, error) {
	refs := []format.ManifestRef{l.Snapshot}
	if l.Through {
		refs = refs[:0]
		ik := gc.IncKey{Name: l.Snapshot.Branch, Inc: l.Snapshot.Incarnation}
		for _, g := range c.groups {
			if g.key != ik {
				continue
			}
			for _, v := range g.versions {
				if ref := (format.ManifestRef{Branch: ik.Name, Incarnation: ik.Inc, Version: v}); gc.LeaseHolds(l, ref) {
					refs = append(refs, ref)
				}
			}
		}
	}
	var roots []gc.RootManifest
	for _, ref := range refs {
		mkey := c.m.keys.Manifest(ref.Branch, ref.Incarnation, ref.Version)
		mb, found, err := c.m.get(ctx, mkey)
		if err != nil {
			return nil, err
		}
		if !found {
			continue // pinned after it was reclaimed: Pin reports that to its caller
		}
		mf, _, err := format.DecodeManifest(mb)
		if err != nil {
			return nil, fmt.Errorf("leased manifest %s: %w", mkey, err)
		}
		roots = append(roots, rootOf(mkey, mf))
	}
	return roots, nil
}

// spend counts one delete against the budget and the current category's
// share; false when either is exhausted or the run's time is up.
func (c *collection) spend() bool {
	now := c.m.now()
	if c.budget <= 0 || c.catBudget <= 0 || !now.Before(c.catUntil) || !gc.MayDelete(c.rec, now) {
		return false
	}
	c.budget--
	c.catBudget--
	return true
}

// markTables decides every table version and marks the fragments and
// adjacency objects of every kept one (so nothing a kept version names is
// deleted); the rest are noted for deleteTables. It deletes nothing: the
// marking completes before any delete of a later category.
func (c *collection) markTables(ctx context.Context) error {
	prefix := c.m.prefix("tables")
	last := ""
	return c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		c.prefetchNamedVersions(ctx, prefix, keys)
		for _, key := range keys {
			tk, group, perr := parseTableKey(prefix, key)
			if perr != nil {
				return perr
			}
			newest := group != last && tk.Attempt == (format.ID{})
			if tk.Attempt == (format.ID{}) {
				last = group // attempt keys sort after the fork's counter keys
			}
			if tk.Table == "" {
				c.rep.TableVersions.Kept++ // not ours to judge
				continue
			}
			if tk.Attempt != (format.ID{}) {
				if tk, perr = c.attemptVersion(ctx, key, tk); perr != nil {
					return perr
				}
				if tk.Table == "" {
					c.rep.TableVersions.Kept++ // gone meanwhile, or not ours to judge
					continue
				}
			}
			if gc.KeepTableVersion(c.marks, c.known, tk, newest, c.p, c.now) {
				if err := c.inTime(); err != nil {
					return err
				}
				if err := c.markVersion(ctx, key, tk); err != nil {
					return err
				}
				c.rep.TableVersions.Kept++
				continue
			}
			c.garbageTables = append(c.garbageTables, key)
		}
		return nil
	})
}

// prefetchNamedVersions reads, in batches (prefetchImmutable), the table
// versions named per attempt on one listing page that markTables will
// read: those whose number only the object holds (attemptVersion), and
// the kept ones (young, or pinned: markVersion). A garbage one it can
// judge without reading stays unread, as without the prefetch.
func (c *collection) prefetchNamedVersions(ctx context.Context, prefix string, keys []string) {
	if c.inTime() != nil {
		return // past the bound: the run reads nothing more
	}
	var read []string
	for _, key := range keys {
		tk, _, err := parseTableKey(prefix, key)
		if err != nil || tk.Table == "" || tk.Attempt == (format.ID{}) {
			continue
		}
		young := gc.KeepTableVersion(&gc.Marks{}, c.known, tk, false, c.p, c.now)
		pinned, needsRead := gc.NamedVersion(c.marks, tk)
		if young || needsRead || gc.KeepTableVersion(c.marks, c.known, pinned, false, c.p, c.now) {
			read = append(read, key)
		}
	}
	prefetchImmutable(ctx, c.m, read, func(b []byte) (format.TableVersion, int, error) { return decodeVersionView("", b) })
}

// parseTableKey parses a key under the tables prefix: a counter-named
// version (<table>/<fork>/<inv(version)>) or one named per attempt
// (<table>/<fork>/a/<ulid>, format 8; its version number is read from the
// object, see attemptVersion). group is <table>/<fork>. A zero Table means
// a well-shaped key whose fork or name is not ours to judge.
func parseTableKey(prefix, key string) (gc.TableKey, string, error) {
	segs, ok := splitKey(prefix, key)
	named := ok && len(segs) == 4 && segs[2] == "a"
	if !ok || (len(segs) != 3 && !named) {
		return gc.TableKey{}, "", fmt.Errorf("table version key %q: %w", key, format.ErrCorrupt)
	}
	group := segs[0] + "/" + segs[1]
	fork, ferr := ulid.ParseStrict(segs[1])
	if named {
		a, aerr := ulid.ParseStrict(segs[3])
		if ferr != nil || aerr != nil || a.String() != segs[3] {
			return gc.TableKey{}, group, nil
		}
		return gc.TableKey{Table: segs[0], Fork: fork, Attempt: a}, group, nil
	}
	v, verr := format.ParseInverted(segs[2])
	if ferr != nil || verr != nil {
		return gc.TableKey{}, group, nil
	}
	return gc.TableKey{Table: segs[0], Fork: fork, Version: v}, group, nil
}

// attemptVersion completes the key of a version named per attempt with its
// version number (marks name pins by table, fork, version and attempt). It
// reads the object only when the marks cannot decide (gc.NamedVersion: a
// pinned one's number comes from its pin, an unpinned one's matters only
// when a sidecar's AnyFork mark names its table). A young attempt is not
// read either: the grace rule keeps it whatever it holds. Gone meanwhile
// returns the zero key.
func (c *collection) attemptVersion(ctx context.Context, key string, tk gc.TableKey) (gc.TableKey, error) {
	if gc.KeepTableVersion(&gc.Marks{}, c.known, tk, false, c.p, c.now) {
		return tk, nil // young: kept by the grace rule (markVersion reads it)
	}
	tk, read := gc.NamedVersion(c.marks, tk)
	if !read {
		return tk, nil
	}
	tv, found, err := c.tableVersion(ctx, key, true)
	if unreadable(err) && gc.UnreadableNamedIsGarbage(c.marks, tk) {
		c.rep.UnreadableVersions++
		return tk, nil // its number unknown: no mark can hold it
	}
	if err != nil || !found {
		return gc.TableKey{}, err
	}
	if tv.Table != tk.Table || tv.Fork != tk.Fork || tv.Attempt != tk.Attempt {
		return gc.TableKey{}, fmt.Errorf("table version %s: content names %s/%s/a/%s: %w", key, tv.Table, tv.Fork, tv.Attempt, format.ErrCorrupt)
	}
	tk.Version = tv.Version
	return tk, nil
}

// unreadable reports a read whose stored bytes failed the store's
// integrity check or decoded as corrupt (not a read that failed: those
// are errors whatever was read).
func unreadable(err error) bool {
	return errors.Is(err, objstore.ErrCorruptObject) || errors.Is(err, format.ErrCorrupt)
}

// markVersion marks the fragments a kept table version names.
func (c *collection) markVersion(ctx context.Context, key string, tk gc.TableKey) error {
	tv, found, err := c.tableVersion(ctx, key, tk.Attempt != (format.ID{}))
	if unreadable(err) && gc.UnreadableNamedIsGarbage(c.marks, tk) {
		c.rep.UnreadableVersions++
		return nil // kept while young, naming nothing it could publish
	}
	if err != nil || !found {
		return err // gone meanwhile: a concurrent collection deleted it
	}
	if err := c.marks.MarkFragments(tk.Table, tv.Fragments); err != nil {
		return err
	}
	if err := c.markFragmentChunks(ctx, tv); err != nil {
		return err
	}
	return c.markAdjacency(ctx, tv)
}

// ridingView decodes the version riding pin, without the fragments it
// embeds (data.WithoutEmbeds), through the Maintainer's cache of
// immutable values: a riding version is as immutable as an object (its
// identity is its table, fork and attempt), and decoding every kept one
// again each run made the simulator's collections a third slower.
func (c *collection) ridingView(pin format.TablePin) (format.TableVersion, error) {
	key := "riding\x00" + c.m.keys.TableVersionRef(pin.Name, pin.Ref()) // no store key holds a NUL
	if cached, ok := c.m.immut.get(key); ok {
		if tv, ok := cached.(format.TableVersion); ok {
			return tv, nil
		}
	}
	tv, left, err := ridingWithoutEmbeds(pin)
	if err != nil {
		return tv, err
	}
	c.m.immut.put(key, tv, max(1, len(pin.Riding)-left))
	return tv, nil
}

// ridingWithoutEmbeds decodes the version riding pin without the
// fragments it embeds (data.WithoutEmbeds), with the bytes left out.
func ridingWithoutEmbeds(pin format.TablePin) (format.TableVersion, int, error) {
	tv, err := format.RidingVersion(pin)
	if err != nil {
		return tv, 0, err
	}
	tv, left := data.WithoutEmbeds(tv)
	return tv, left, nil
}

// tableVersion reads and decodes the table version at key, without the
// fragments it embeds (data.WithoutEmbeds: no collection reads them); one
// named per attempt (named) is immutable, so it may come from the
// Maintainer's cache, charged only what it keeps. found=false when a
// concurrent collection deleted it.
func (c *collection) tableVersion(ctx context.Context, key string, named bool) (tv format.TableVersion, found bool, err error) {
	decode := func(b []byte) (format.TableVersion, int, error) { return decodeVersionView(key, b) }
	if named {
		return readImmutableView(ctx, c.m, key, decode)
	}
	b, found, err := c.m.get(ctx, key)
	if err != nil || !found {
		return tv, found, err
	}
	tv, _, err = decode(b)
	return tv, true, err
}

// decodeVersionView decodes the table version at key without the
// fragments it embeds (data.WithoutEmbeds), with the bytes that left out.
func decodeVersionView(key string, b []byte) (format.TableVersion, int, error) {
	tv, _, err := format.DecodeTableVersion(b)
	if err != nil {
		return tv, 0, fmt.Errorf("table version %s: %w", key, err)
	}
	tv, left := data.WithoutEmbeds(tv)
	return tv, left, nil
}

// markFragmentChunks marks a paged table version's fragment chunks (in
// the adjacency key space) and the fragments they list.
func (c *collection) markFragmentChunks(ctx context.Context, tv format.TableVersion) error {
	chunks, err := data.FragmentChunks(tv)
	if err != nil || len(chunks) == 0 {
		return err
	}
	_, err = c.markTree(ctx, tv.Table, chunks, 0, fragmentTree)
	return err
}

// markAdjacency marks an edge table version's adjacency index: its chunks
// and the pages they list.
func (c *collection) markAdjacency(ctx context.Context, tv format.TableVersion) error {
	chunks, err := data.AdjacencyChunks(tv)
	if err != nil || len(chunks) == 0 {
		return err
	}
	_, err = c.markTree(ctx, tv.Table, chunks, 0, indexTree)
	return err
}

// treeChunk is what marking reads of a chunk of a tree (an index or a
// fragment list): the leaves it lists (pages or fragments), or, for a ref
// chunk (format 10, docs/format.md "Paged index refs"), the chunks of the
// level below.
type treeChunk struct {
	leaves, below []string
}

// chunkTree is one kind of tree marking walks.
type chunkTree struct {
	what      string // "index" or "fragment", for errors
	maxLevels int
	decode    func(table string, b []byte) (treeChunk, error)
	mark      func(m *gc.Marks, table string, leaves []string) error
}

// indexTree is an index direction: chunks listing pages (adjacency
// objects).
var indexTree = chunkTree{what: "index", maxLevels: data.MaxIndexLevels,
	decode: func(_ string, b []byte) (treeChunk, error) {
		entries, below, err := data.AdjacencyChunkEntries(b)
		if below {
			return treeChunk{below: entries}, err
		}
		return treeChunk{leaves: entries}, err
	},
	mark: (*gc.Marks).MarkAdjacency}

// fragmentTree is a paged version's fragment list: chunks listing
// fragments.
var fragmentTree = chunkTree{what: "fragment", maxLevels: data.MaxFragmentLevels,
	decode: func(table string, b []byte) (treeChunk, error) {
		infos, below, err := data.FragmentChunkEntries(table, b)
		names := make([]string, len(infos))
		for i, f := range infos {
			names[i] = f.Name
		}
		return treeChunk{leaves: names, below: below}, err
	},
	mark: (*gc.Marks).MarkFragments}

// markTree marks chunks of table (of kind tr) and what they list, walked
// at most tr.maxLevels deep. A chunk another kept version shares and this
// run walked whole already is skipped (unwalked). It reports whether it
// walked every chunk whole: false when one was gone (its version is being
// collected concurrently).
func (c *collection) markTree(ctx context.Context, table string, chunks []string, depth int, tr chunkTree) (bool, error) {
	if depth > tr.maxLevels {
		return false, fmt.Errorf("%s chunks of %s deeper than %d levels: %w", tr.what, table, tr.maxLevels, format.ErrCorrupt)
	}
	chunks = c.unwalked(table, chunks)
	if err := c.marks.MarkAdjacency(table, chunks); err != nil {
		return false, err
	}
	for _, name := range chunks {
		id, err := ulid.ParseStrict(name)
		if err != nil {
			return false, fmt.Errorf("%s chunk %q of %s: %w", tr.what, name, table, format.ErrCorrupt)
		}
		if err := c.inTime(); err != nil {
			return false, err
		}
		ch, found, err := readImmutable(ctx, c.m, c.m.keys.Adjacency(table, id), func(b []byte) (treeChunk, error) {
			ch, err := tr.decode(table, b)
			if err != nil {
				return treeChunk{}, fmt.Errorf("%s chunk %s of %s: %w", tr.what, name, table, err)
			}
			return ch, nil
		})
		if err != nil || !found {
			return false, err // gone: its version is being collected concurrently
		}
		whole := true
		if len(ch.below) > 0 {
			whole, err = c.markTree(ctx, table, ch.below, depth+1, tr)
		} else {
			err = tr.mark(c.marks, table, ch.leaves)
		}
		if err != nil || !whole {
			return false, err
		}
		c.walked[gc.FragKey{Table: table, Name: name}] = true
	}
	return true, nil
}

// unwalked returns the chunks of table (in order) this run has not marked
// whole yet: a chunk is immutable, so one walk marks everything below it
// for every version that shares it. Only a walk that read its whole
// subtree records a chunk (a walk cut short by a chunk gone meanwhile
// records nothing above it), so a skipped chunk's subtree is marked.
func (c *collection) unwalked(table string, chunks []string) []string {
	out := chunks[:0:0]
	for _, name := range chunks {
		if !c.walked[gc.FragKey{Table: table, Name: name}] {
			out = append(out, name)
		}
	}
	return out
}

func (c *collection) sweepFragments(ctx context.Context) (bool, error) {
	prefix := c.m.prefix("data")
	return c.sweep(ctx, prefix, &c.rep.Fragments, func(key string) bool {
		segs, ok := splitKey(prefix, key)
		return !ok || len(segs) != 2 || gc.KeepFragment(c.marks, gc.FragKey{Table: segs[0], Name: segs[1]}, c.p, c.now)
	})
}

func (c *collection) sweepAdjacency(ctx context.Context) (bool, error) {
	prefix := c.m.prefix("adj")
	return c.sweep(ctx, prefix, &c.rep.Adjacency, func(key string) bool {
		segs, ok := splitKey(prefix, key)
		return !ok || len(segs) != 2 || gc.KeepAdjacency(c.marks, gc.FragKey{Table: segs[0], Name: segs[1]}, c.p, c.now)
	})
}

func (c *collection) sweepIndexes(ctx context.Context) (bool, error) {
	prefix := c.m.keys.CommitIndexPrefix()
	return c.sweep(ctx, prefix, &c.rep.CommitIndexes, func(key string) bool {
		segs, ok := splitKey(prefix, key)
		if !ok || len(segs) != 1 {
			return true
		}
		id, err := ulid.ParseStrict(segs[0])
		return err != nil || gc.KeepCommitIndex(c.marks, id, c.p, c.now)
	})
}

// sweepLeases deletes the expired leases (a second pass resumes where
// the first stopped).
func (c *collection) sweepLeases(ctx context.Context) (bool, error) {
	for len(c.expired) > 0 {
		if !c.spend() {
			return false, nil
		}
		if err := c.m.del(ctx, c.expired[0]); err != nil {
			return false, err
		}
		c.expired = c.expired[1:]
		c.rep.Leases.Deleted++
	}
	return true, nil
}

// sweep lists prefix and deletes every key keep rejects, within the
// share; once it is spent it stops listing (the keys not reached are not
// counted) and a later pass resumes after the last key it judged.
func (c *collection) sweep(ctx context.Context, prefix string, n *Counts, keep func(key string) bool) (bool, error) {
	done := true
	err := c.m.listFrom(ctx, prefix, c.resume[prefix], maxListPages, func(keys []string) error {
		var garbage []string // deleted together (deleteBatch), at the latest at the page's end or before stopping
		flush := func() error {
			if err := c.deleteBatch(ctx, garbage); err != nil {
				return err
			}
			n.Deleted += len(garbage)
			garbage = garbage[:0]
			return nil
		}
		for _, key := range keys {
			if keep(key) {
				n.Kept++
				c.resume[prefix] = key
				continue
			}
			if done = c.spend(); !done {
				if err := flush(); err != nil {
					return err
				}
				return errShareSpent // a later pass resumes at key
			}
			garbage = append(garbage, key)
			c.resume[prefix] = key // a flush deletes it before any return but an error's
			if len(garbage) >= c.batchSize() {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	if errors.Is(err, errShareSpent) {
		err = nil
	}
	return done && err == nil, err
}
