package maintain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/lineage"
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
	// MergeBasesUnknown counts live heads whose reach could not be read
	// (no complete commit index: a pre-index or migrated history, or one
	// reaching more than format.MaxReachEntries incarnations): their merge
	// bases are not roots, and a later merge may meet ErrReclaimed.
	MergeBasesUnknown int
	// MergeBasesInexact: the domination checks ran past gc.MaxBaseChecks,
	// so every tip of every live pair's common reach was kept.
	MergeBasesInexact bool
	// Complete is false when MaxDeletes stopped the run early.
	Complete bool
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
	m         *Maintainer
	p         gc.Policy
	now       time.Time
	marks     *gc.Marks
	known     *gc.Known
	groups    []incGroup
	floors    map[gc.IncKey]uint64   // per incarnation, the lowest base_manifest of a pending sidecar
	reaches   [][]format.ManifestRef // the reach of every live head whose commit index is complete
	expired   []string               // expired lease keys
	leases    map[string]bool        // lease keys the load read
	rec       format.Collection      // this run's record (R/gc/<id>)
	recTok    format.Token
	deadNames []string // names whose every manifest this run deleted
	rep       Report
	budget    int
}

// Collect deletes what no retained state can reach (docs/gc.md): it loads
// the root set — every branch's retained manifests (by gc.Protected), the
// fork points and possible merge bases of live branches (gc.MergeBaseRoots), the
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
	c := &collection{m: m, p: p, now: m.now(), known: gc.NewKnown(), budget: policy.MaxDeletes, floors: map[gc.IncKey]uint64{}}
	if c.budget <= 0 {
		c.budget = DefaultMaxDeletes
	}
	if err := c.begin(ctx, policy.MaxDuration); err != nil {
		return c.rep, fmt.Errorf("collect: %w", err)
	}
	err = c.run(ctx)
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
// leases (docs/gc.md rule 6), then sweeps each category in order.
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
	for _, step := range []func(context.Context) (bool, error){c.sweepManifests, c.sweepTables, c.sweepFragments, c.sweepAdjacency, c.sweepIndexes, c.sweepLeases,
		c.sweepNameMarkers, c.sweepForkMarkers, c.sweepRecoveryRecords, c.sweepRecords} {
		done, err := step(ctx)
		if err != nil || !done {
			return err
		}
	}
	c.rep.Complete = true
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
		r, _, err := c.loadIncarnation(ctx, g)
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
	return nil
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
		}
		return nil
	})
}

// manifest GETs and decodes one listed manifest; found=false when a
// concurrent collection deleted it since the listing.
func (c *collection) manifest(ctx context.Context, key string) (format.Manifest, bool, error) {
	b, found, err := c.m.get(ctx, key)
	if err != nil || !found {
		return format.Manifest{}, false, err
	}
	mf, _, err := format.DecodeManifest(b)
	if err != nil {
		return format.Manifest{}, false, fmt.Errorf("manifest %s (a graph not migrated to format %d is not collected): %w", key, format.CurrentFormat, err)
	}
	return mf, true, nil
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
// commit: the head itself, or for a commit-less head (a branch's version
// 0) the manifest the index names. An index that is absent, unreadable,
// incomplete or names a manifest not showing its commit is not trusted
// (indexes are never authoritative): the head is counted in
// Report.MergeBasesUnknown.
func (c *collection) noteReach(ctx context.Context, g incGroup, head format.Manifest) error {
	b, found, err := c.m.get(ctx, c.m.keys.CommitIndex(head.Head))
	if err != nil {
		return err
	}
	var x format.CommitIndex
	var shown *format.Manifest
	if found {
		if x, _, err = format.DecodeCommitIndex(b); err != nil {
			found = false // an aid, never authoritative: unreadable is unknown
		}
	}
	at := format.ManifestRef{Branch: g.key.Name, Incarnation: g.key.Inc, Version: head.Version}
	if found && x.At == at {
		shown = &head
	} else if found {
		mf, ok, err := c.manifest(ctx, c.m.keys.Manifest(x.At.Branch, x.At.Incarnation, x.At.Version))
		if err != nil {
			return err
		}
		if ok {
			shown = &mf
		}
	}
	reach, ok := headReach(at, head, x, shown)
	if !ok {
		c.rep.MergeBasesUnknown++
		return nil
	}
	c.reaches = append(c.reaches, reach)
	return nil
}

// headReach is the reach of the live head manifest at, given the index x
// of its head commit and the manifest at x.At (shown, nil if absent):
// x.Reach for a head carrying its commit, x.Reach plus at for a
// commit-less one. ok=false unless x is complete and shown carries x's
// commit.
func headReach(at format.ManifestRef, head format.Manifest, x format.CommitIndex, shown *format.Manifest) ([]format.ManifestRef, bool) {
	if shown == nil || !x.Complete || x.ID != head.Head || shown.Commit == nil || shown.Commit.ID != x.ID {
		return nil, false
	}
	if head.Commit != nil {
		return x.Reach, x.At == at
	}
	return lineage.ManifestReach(at, x.Reach)
}

// loadMergeBases returns, as roots, the possible merge bases of every
// live branch pair (rule 3b) that are not roots already: the tips of the
// pairs' common reaches that are not dominated everywhere
// (gc.MergeBaseRoots) — what MergeBase needs present, and a merge's base
// snapshot. It reads each candidate tip's manifest and commit index for
// its reach; a tip whose reach it cannot read dominates nothing.
func (c *collection) loadMergeBases(ctx context.Context, roots []gc.RootManifest) ([]gc.RootManifest, error) {
	have := make(map[string]bool, len(roots))
	for _, r := range roots {
		have[r.Key] = true
	}
	if plant.Enabled(plant.GCNoMergeBase) { // planted bug: rule 3b skipped
		return nil, nil
	}
	found := map[format.ManifestRef]format.Manifest{}
	reachOf := map[format.ManifestRef][]format.ManifestRef{}
	for _, tip := range gc.MergeBaseTips(c.reaches) {
		mf, ok, err := c.manifest(ctx, c.m.keys.Manifest(tip.Branch, tip.Incarnation, tip.Version))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // collected earlier: MergeBase skips it if a kept tip reaches it
		}
		found[tip] = mf
		r, ok, err := c.tipReach(ctx, tip, mf)
		if err != nil {
			return nil, err
		}
		if ok {
			reachOf[tip] = r
		}
	}
	keep, exact := gc.MergeBaseRoots(c.reaches, reachOf)
	c.rep.MergeBasesInexact = !exact
	var out []gc.RootManifest
	for _, tip := range keep {
		key := c.m.keys.Manifest(tip.Branch, tip.Incarnation, tip.Version)
		mf, ok := found[tip]
		if !ok || have[key] {
			continue
		}
		have[key] = true
		out = append(out, rootOf(key, mf))
	}
	c.rep.MergeBases = len(out)
	return out, nil
}

// tipReach is the reach of the commit the manifest at tip carries, from
// its commit index, trusted only when complete and naming tip; ok=false
// for a commit-less manifest or an index that is absent, unreadable,
// incomplete or stale.
func (c *collection) tipReach(ctx context.Context, tip format.ManifestRef, mf format.Manifest) ([]format.ManifestRef, bool, error) {
	if mf.Commit == nil {
		return nil, false, nil
	}
	b, found, err := c.m.get(ctx, c.m.keys.CommitIndex(mf.Commit.ID))
	if err != nil || !found {
		return nil, false, err
	}
	x, _, err := format.DecodeCommitIndex(b)
	if err != nil || !x.Complete || x.ID != mf.Commit.ID || x.At != tip {
		return nil, false, nil // an aid, never authoritative: not trusted
	}
	return x.Reach, true, nil
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

// spend counts one delete against the budget; false when exhausted.
func (c *collection) spend() bool {
	if c.budget <= 0 || !gc.MayDelete(c.rec, c.m.now()) {
		return false
	}
	c.budget--
	return true
}

// sweepTables decides every table version, marks the fragments of every
// kept one (so nothing a kept version names is deleted) and deletes the
// rest.
func (c *collection) sweepTables(ctx context.Context) (bool, error) {
	prefix := c.m.prefix("tables")
	last, done := "", true
	err := c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			segs, ok := splitKey(prefix, key)
			if !ok || len(segs) != 3 {
				return fmt.Errorf("table version key %q: %w", key, format.ErrCorrupt)
			}
			fork, ferr := ulid.ParseStrict(segs[1])
			v, verr := format.ParseInverted(segs[2])
			group := segs[0] + "/" + segs[1]
			newest := group != last
			last = group
			if ferr != nil || verr != nil || !done {
				c.rep.TableVersions.Kept++ // not ours to judge, or out of budget
				continue
			}
			tk := gc.TableKey{Table: segs[0], Fork: fork, Version: v}
			if gc.KeepTableVersion(c.marks, c.known, tk, newest, c.p, c.now) {
				if err := c.markVersion(ctx, key, tk); err != nil {
					return err
				}
				c.rep.TableVersions.Kept++
				continue
			}
			if done = c.spend(); !done {
				c.rep.TableVersions.Kept++
				continue
			}
			if err := c.m.del(ctx, key); err != nil {
				return err
			}
			c.rep.TableVersions.Deleted++
		}
		return nil
	})
	return done && err == nil, err
}

// markVersion marks the fragments a kept table version names.
func (c *collection) markVersion(ctx context.Context, key string, tk gc.TableKey) error {
	b, found, err := c.m.get(ctx, key)
	if err != nil || !found {
		return err // gone meanwhile: a concurrent collection deleted it
	}
	tv, _, err := format.DecodeTableVersion(b)
	if err != nil {
		return fmt.Errorf("table version %s: %w", key, err)
	}
	if err := c.marks.MarkFragments(tk.Table, tv.Fragments); err != nil {
		return err
	}
	return c.markAdjacency(ctx, tv)
}

// markAdjacency marks an edge table version's adjacency index: its chunks
// and the pages they list.
func (c *collection) markAdjacency(ctx context.Context, tv format.TableVersion) error {
	chunks, err := data.AdjacencyChunks(tv)
	if err != nil || len(chunks) == 0 {
		return err
	}
	if err := c.marks.MarkAdjacency(tv.Table, chunks); err != nil {
		return err
	}
	for _, name := range chunks {
		id, err := ulid.ParseStrict(name)
		if err != nil {
			return fmt.Errorf("adjacency chunk %q of %s: %w", name, tv.Table, format.ErrCorrupt)
		}
		b, found, err := c.m.get(ctx, c.m.keys.Adjacency(tv.Table, id))
		if err != nil || !found {
			return err // gone: its version is being collected concurrently
		}
		pages, err := data.AdjacencyChunkPages(b)
		if err != nil {
			return fmt.Errorf("adjacency chunk %s of %s: %w", name, tv.Table, err)
		}
		if err := c.marks.MarkAdjacency(tv.Table, pages); err != nil {
			return err
		}
	}
	return nil
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

func (c *collection) sweepLeases(ctx context.Context) (bool, error) {
	for _, key := range c.expired {
		if !c.spend() {
			return false, nil
		}
		if err := c.m.del(ctx, key); err != nil {
			return false, err
		}
		c.rep.Leases.Deleted++
	}
	return true, nil
}

// sweep lists prefix and deletes every key keep rejects, within budget.
func (c *collection) sweep(ctx context.Context, prefix string, n *Counts, keep func(key string) bool) (bool, error) {
	done := true
	err := c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			if !done || keep(key) {
				n.Kept++
				continue
			}
			if done = c.spend(); !done {
				n.Kept++
				continue
			}
			if err := c.m.del(ctx, key); err != nil {
				return err
			}
			n.Deleted++
		}
		return nil
	})
	return done && err == nil, err
}
