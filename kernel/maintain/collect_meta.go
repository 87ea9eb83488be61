package maintain

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// The metadata sweeps of a collection (docs/gc.md rules 1, 1a, 8, 10):
// dead names' manifests (tombstone last, after the incarnation floor),
// name markers, fork markers, audit records and roll-back plans. The
// decisions are kernel/gc's; this file only lists, reads and deletes.

// nameGroups splits c.groups (listing order) into runs of one name.
func (c *collection) nameGroups() [][]incGroup {
	var out [][]incGroup
	for start := 0; start < len(c.groups); {
		end := start + 1
		for end < len(c.groups) && c.groups[end].key.Name == c.groups[start].key.Name {
			end++
		}
		out = append(out, c.groups[start:end])
		start = end
	}
	return out
}

// nameManifests is what the keep rules say of every listed manifest of one
// name, and what the load saw of its newest incarnation's head.
func (c *collection) nameManifests(gs []incGroup) (gc.NameManifests, gc.NameHead) {
	n := gc.NameManifests{Name: gs[0].key.Name}
	for _, g := range gs {
		for i, key := range g.keys {
			n.Keys = append(n.Keys, key)
			n.Incs = append(n.Incs, g.key.Inc)
			n.Kept = append(n.Kept, gc.KeepManifest(c.marks, c.known, key, g.key, g.versions[i]))
		}
	}
	n.Kept = gc.KeepIncarnationTops(n)
	s, ok := c.known.Incs[gs[0].key]
	h := gc.NameHead{Known: ok, Tombstone: s.Deleted, TombUnixNano: s.TombUnixNano, NewestVersion: ok && s.HeadVersion == gs[0].versions[0]}
	return n, h
}

// nameDecision is what the keep rules decided of one name's manifests.
type nameDecision struct {
	n    gc.NameManifests
	dead bool
}

// deletes reports whether the manifest sweep deletes the name's i-th
// listed key: all of a dead name's; of a live name, what no rule keeps,
// never its head.
func (d nameDecision) deletes(i int) bool {
	return d.dead || !(d.n.Kept[i] || (i == 0 && gc.KeepNameHead(false)))
}

// decideNames decides every name's manifests (gc.NameDead and the keep
// rules) from the marks as they are now. The plan is made from it before
// the leases are re-listed, and the sweep from it again after: marks only
// grow, so what the sweep deletes is within the plan (docs/gc.md rule 6).
func (c *collection) decideNames() []nameDecision {
	var out []nameDecision
	for _, gs := range c.nameGroups() {
		n, h := c.nameManifests(gs)
		out = append(out, nameDecision{n, gc.NameDead(n, h, c.p, c.now)})
	}
	return out
}

// sweepManifests deletes every manifest the keep rules reject: for a live
// name in listing order, its head always kept; for a dead name all of
// them, tombstone last, after the incarnation floor is above its
// incarnations (gc.FloorFor).
func (c *collection) sweepManifests(ctx context.Context) (bool, error) {
	names := c.decideNames()
	var deadIncs []uint64
	for _, d := range names {
		if d.dead {
			deadIncs = append(deadIncs, d.n.Incs[0])
		}
	}
	if err := c.raiseFloor(ctx, deadIncs); err != nil {
		return false, err
	}
	start, err := c.sweepStart(len(names))
	if err != nil {
		return false, err
	}
	// Every name's keys go in three waves, each in batches (deleteBatch):
	// the keys that head no incarnation, then the heads of older
	// incarnations, then a dead name's newest head. So each incarnation's
	// head goes after every other key of it (a collection killed midway
	// never leaves an incarnation without its head: a tombstone stays a
	// tombstone, never a headless rest that a later load takes for live
	// history), and a dead name's newest tombstone goes last (gc.DeadNameOrder).
	var waves [3][]string
	for k := range names {
		d := names[(start+k)%len(names)] // names in any order (gc.SweepStart)
		for i := len(d.n.Keys) - 1; i >= 0; i-- {
			if !d.deletes(i) {
				c.rep.Manifests.Kept++
				continue
			}
			w := manifestWave(d.n, i)
			waves[w] = append(waves[w], d.n.Keys[i])
		}
	}
	for _, wave := range waves {
		if _, done, err := c.deleteKeys(ctx, wave, &c.rep.Manifests.Deleted); err != nil || !done {
			return false, err
		}
	}
	for _, d := range names {
		if d.dead {
			c.deadNames = append(c.deadNames, d.n.Name)
		}
	}
	return true, nil
}

// manifestWave is the wave of sweepManifests that deletes n's i-th key:
// 0 for a key that heads no incarnation, 1 for an older incarnation's
// head, 2 for the name's newest head.
func manifestWave(n gc.NameManifests, i int) int {
	switch {
	case i == 0:
		return 2
	case n.Incs[i-1] != n.Incs[i]:
		return 1
	}
	return 0
}

// raiseFloor writes the incarnation floor gc.FloorFor asks for, before any
// tombstone of a dead name is deleted (docs/gc.md rule 1a), and deletes
// the floors below the newest afterwards.
func (c *collection) raiseFloor(ctx context.Context, deadIncs []uint64) error {
	if len(deadIncs) == 0 {
		return nil
	}
	prefix := c.m.keys.IncarnationFloorPrefix()
	var floors []string
	if err := c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		floors = append(floors, keys...)
		return nil
	}); err != nil {
		return err
	}
	var current uint64
	if len(floors) > 0 {
		n, err := c.m.keys.ParseIncarnationFloorKey(floors[0])
		if err != nil {
			return err
		}
		current = n
	}
	floor, write := gc.FloorFor(deadIncs, current)
	if !write {
		return nil
	}
	tok, err := c.m.token()
	if err != nil {
		return err
	}
	b, err := format.EncodeIncarnationFloor(&format.IncarnationFloor{Floor: floor, TimeUnixNano: c.now.UnixNano()}, tok)
	if err != nil {
		return err
	}
	if err := c.m.putStands(ctx, c.m.keys.IncarnationFloor(floor), b); err != nil {
		return fmt.Errorf("incarnation floor %d: %w", floor, err)
	}
	c.rep.Floor = floor
	for _, key := range floors { // every one below the floor just written
		if err := c.m.del(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// sweepNameMarkers deletes the marker of every name no manifest has
// (gc.KeepNameMarker), in batches (deleteKeys): a name this run deleted
// whole, or one it listed no manifest of and, looked up again before the
// delete, still has none (a branch created after the run's listing keeps
// its marker, so ListBranches never misses it). Then it looks the names
// whose markers it deleted up again and puts back the marker of any that
// has a manifest now (a create that landed meanwhile), and puts back the
// marker of a listed name that has none and still has a manifest
// (docs/gc.md rule 10).
func (c *collection) sweepNameMarkers(ctx context.Context) (bool, error) {
	has := map[string]bool{} // listed names; false: deleted whole by this run
	for _, g := range c.groups {
		has[g.key.Name] = true
	}
	for _, name := range c.deadNames {
		has[name] = false
	}
	garbage, marked, err := c.garbageNameMarkers(ctx, has)
	if err != nil {
		return false, err
	}
	if done, err := c.deleteNameMarkers(ctx, garbage); err != nil || !done {
		return false, err
	}
	var unmarked []string // listed names without a marker
	for _, g := range c.groups {
		if name := g.key.Name; has[name] && !marked[name] {
			marked[name] = true
			unmarked = append(unmarked, name)
		}
	}
	return true, c.recheckNames(ctx, unmarked)
}

// garbageNameMarkers lists the name markers and returns the names whose
// markers go (gc.KeepNameMarker, and for a name has does not hold, no
// manifest when looked up now) and every name that has a marker.
func (c *collection) garbageNameMarkers(ctx context.Context, has map[string]bool) (garbage []string, marked map[string]bool, err error) {
	prefix := c.m.keys.NamesPrefix()
	marked = map[string]bool{}
	var candidates, unlisted []string // names whose markers may go; those this run listed nothing of
	err = c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			segs, ok := splitKey(prefix, key)
			if !ok || len(segs) != 1 || format.ValidateName(segs[0]) != nil {
				c.rep.NameMarkers.Kept++ // not ours to judge
				continue
			}
			name := segs[0]
			marked[name] = true
			if gc.KeepNameMarker(name, has[name]) {
				c.rep.NameMarkers.Kept++
				continue
			}
			candidates = append(candidates, name)
			// planted bug (dead code without -tags simplant): a name listed
			// nowhere is not looked up, so a branch created after the
			// manifest listing loses its marker until the re-check
			if _, dead := has[name]; !dead && !plant.Enabled(plant.GCMarkerNoLookup) {
				unlisted = append(unlisted, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	late, err := c.namesWithManifests(ctx, unlisted)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range candidates {
		if late[name] {
			c.rep.NameMarkers.Kept++ // created after the listing
			continue
		}
		garbage = append(garbage, name)
	}
	return garbage, marked, nil
}

// deleteNameMarkers deletes the markers of names in batches, within the
// run's share (done=false when it ran out), then re-checks every name
// whose marker it may have deleted (recheckNames).
func (c *collection) deleteNameMarkers(ctx context.Context, names []string) (bool, error) {
	keys := make([]string, len(names))
	for i, name := range names {
		keys[i] = c.m.keys.NameMarker(name)
	}
	rest, done, err := c.deleteKeys(ctx, keys, &c.rep.NameMarkers.Deleted)
	c.rep.NameMarkers.Kept += len(rest)
	recheck := names[:len(names)-len(rest)]
	if err != nil {
		recheck = names // the failed batch's deletes may have applied
	}
	if rerr := c.recheckNames(ctx, recheck); err == nil {
		err = rerr
	}
	return done && err == nil, err
}

// recheckNames puts back the marker of every name in names (whose markers
// this run deleted, or found missing) that has a manifest now: a create
// that wrote its marker before the delete and its manifest after the
// run's listing, or a collector that crashed before its re-check; a name
// a concurrent collection deleted whole meanwhile gets none. Every
// LIST here starts after the deletes, so it sees any manifest that landed
// before them; a create landing later writes its marker again after its
// manifest, so after the delete.
func (c *collection) recheckNames(ctx context.Context, names []string) error {
	present, err := c.namesWithManifests(ctx, names)
	if err != nil {
		return err
	}
	for _, name := range names {
		if present[name] {
			if err := c.putNameMarker(ctx, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// namesWithManifests returns which of names have a manifest now: a LIST
// limit 1 of each, or, when that is more requests than listing every
// branch's manifests (about as many as this run listed), one listing of
// them all.
func (c *collection) namesWithManifests(ctx context.Context, names []string) (map[string]bool, error) {
	present := map[string]bool{}
	if len(names) <= 1+len(c.listed)/objstore.MaxListLimit {
		for _, name := range names {
			page, err := c.m.listLimit(ctx, c.m.keys.BranchPrefix(name), 1)
			if err != nil {
				return nil, err
			}
			present[name] = len(page.Keys) > 0
		}
		return present, nil
	}
	prefix := c.m.prefix("branches")
	err := c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			if segs, ok := splitKey(prefix, key); ok && len(segs) > 0 {
				present[segs[0]] = true
			}
		}
		return nil
	})
	return present, err
}

func (c *collection) putNameMarker(ctx context.Context, name string) error {
	tok, err := c.m.token()
	if err != nil {
		return err
	}
	if err := c.m.putStands(ctx, c.m.keys.NameMarker(name), format.EncodeNameMarker(name, tok)); err != nil {
		return fmt.Errorf("name marker %q: %w", name, err)
	}
	c.rep.NameMarkersRestored++
	return nil
}

// sweepForkMarkers deletes the fork markers of incarnations that can never
// be live (gc.KeepForkMarker).
func (c *collection) sweepForkMarkers(ctx context.Context) (bool, error) {
	prefix := c.m.prefix("forks")
	return c.sweep(ctx, prefix, &c.rep.ForkMarkers, func(key string) bool {
		segs, ok := splitKey(prefix, key)
		if !ok || len(segs) != 3 {
			return true
		}
		child, err := ulid.ParseStrict(segs[2])
		return err != nil || gc.KeepForkMarker(c.known, child, c.p, c.now)
	})
}

// sweepRecoveryRecords deletes the audit records and roll-back plans past
// their retention (gc.KeepAudit, gc.KeepPlan); quarantine records stay.
func (c *collection) sweepRecoveryRecords(ctx context.Context) (bool, error) {
	pending := map[format.ID]bool{}
	err := c.m.listAll(ctx, c.m.keys.SidecarPrefix(), maxListPages, func(keys []string) error {
		for _, key := range keys {
			if op, err := c.m.keys.ParseSidecarKey(key); err == nil {
				pending[op] = true
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	audits, done, err := c.sweepAudits(ctx, pending)
	if err != nil || !done {
		return false, err
	}
	return c.sweepPlans(ctx, pending, audits)
}

// sweepAudits decides every audit record; it returns what it decided per op.
func (c *collection) sweepAudits(ctx context.Context, pending map[format.ID]bool) (map[format.ID]gc.PlanAudit, bool, error) {
	prefix := c.m.keys.AuditPrefix()
	seen := map[format.ID]gc.PlanAudit{}
	done := true
	err := c.m.listAll(ctx, prefix, maxListPages, func(keys []string) error {
		for _, key := range keys {
			segs, ok := splitKey(prefix, key)
			if !ok || len(segs) != 2 {
				c.rep.Audits.Kept++
				continue
			}
			op, perr := ulid.ParseStrict(segs[0])
			if perr != nil {
				c.rep.Audits.Kept++
				continue
			}
			if !done {
				seen[op] = gc.PlanAuditKept
				c.rep.Audits.Kept++
				continue
			}
			keep, err := c.keepAudit(ctx, key, op, pending[op])
			if err != nil {
				return err
			}
			if keep {
				seen[op] = gc.PlanAuditKept
				c.rep.Audits.Kept++
				continue
			}
			if done = c.spend(); !done {
				seen[op] = gc.PlanAuditKept
				c.rep.Audits.Kept++
				continue
			}
			if err := c.m.del(ctx, key); err != nil {
				return err
			}
			seen[op] = gc.PlanAuditDeleted
			c.rep.Audits.Deleted++
		}
		return nil
	})
	return seen, done && err == nil, err
}

// keepAudit reads an audit record whose op is old enough to be judged;
// an unreadable one is kept.
func (c *collection) keepAudit(ctx context.Context, key string, op format.ID, pending bool) (bool, error) {
	if pending || !gc.AuditMayGo(op, c.p, c.now) {
		return true, nil
	}
	b, found, err := c.m.get(ctx, key)
	if err != nil || !found {
		return found, err
	}
	a, _, err := format.DecodeAudit(b)
	if err != nil {
		return true, nil // if in doubt, keep
	}
	return gc.KeepAudit(pending, a.TimeUnixNano, c.p, c.now), nil
}

// sweepPlans decides every roll-back plan by its op's sidecar and audit
// record; a plan without either is read for its commit id's time.
func (c *collection) sweepPlans(ctx context.Context, pending map[format.ID]bool, audits map[format.ID]gc.PlanAudit) (bool, error) {
	prefix := c.m.keys.RecoveryPlanPrefix()
	return c.sweepErr(ctx, prefix, &c.rep.Plans, func(key string) (bool, error) {
		segs, ok := splitKey(prefix, key)
		if !ok || len(segs) != 1 {
			return true, nil
		}
		op, perr := ulid.ParseStrict(segs[0])
		if perr != nil {
			return true, nil
		}
		a := audits[op]
		if pending[op] || a != gc.PlanAuditAbsent {
			return gc.KeepPlan(pending[op], a, format.ID{}, c.p, c.now), nil
		}
		b, found, err := c.m.get(ctx, key)
		if err != nil || !found {
			return true, err
		}
		plan, _, err := format.DecodeRecoveryPlan(b)
		if err != nil {
			return true, nil // if in doubt, keep
		}
		return gc.KeepPlan(false, a, plan.Commit, c.p, c.now), nil
	})
}

// sweepErr is sweep with a keep decision that may fail.
func (c *collection) sweepErr(ctx context.Context, prefix string, n *Counts, keep func(key string) (bool, error)) (bool, error) {
	var ferr error
	done, err := c.sweep(ctx, prefix, n, func(key string) bool {
		if ferr != nil {
			return true
		}
		k, err := keep(key)
		ferr = err
		return k || err != nil
	})
	if err == nil {
		err = ferr
	}
	return done && err == nil, err
}

// listLimit lists at most limit keys under prefix.
func (m *Maintainer) listLimit(ctx context.Context, prefix string, limit int) (objstore.ListPage, error) {
	var last error
	for i := 0; i < maxAttempts; i++ {
		p, err := m.store.List(ctx, prefix, "", limit)
		if err == nil {
			return p, nil
		}
		if !retryable(err) {
			return p, fmt.Errorf("maintain: list %s: %w", prefix, err)
		}
		last = err
	}
	return objstore.ListPage{}, fmt.Errorf("maintain: list %s: %d attempts: %w", prefix, maxAttempts, last)
}

// putStands writes b at key create-only, where any object already at key
// makes the same statement (an incarnation floor, a name marker): an
// existing one stands; an ambiguous outcome is read back.
func (m *Maintainer) putStands(ctx context.Context, key string, b []byte) error {
	var last error
	for i := 0; i < maxAttempts; i++ {
		_, err := m.store.Put(ctx, key, b, objstore.CreateOnly)
		switch {
		case err == nil || errors.Is(err, objstore.ErrPreconditionFailed):
			return nil
		case errors.Is(err, objstore.ErrAmbiguous):
			if _, found, gerr := m.get(ctx, key); gerr != nil || found {
				return gerr
			}
		case !retryable(err):
			return fmt.Errorf("maintain: put %s: %w", key, err)
		}
		last = err
	}
	return fmt.Errorf("maintain: put %s: %d attempts: %w", key, maxAttempts, last)
}

// putIndex writes b, a commit index, at key under cond (create-only, or
// If-Match over an unusable index: storeRebuilt), its name's durability
// deferred when the store can (objstore.PutDeferredIntact: whole after a
// crash, durable once synced). won=false when the condition failed, or an
// ambiguous outcome read back another's object (or a torn one); an
// ambiguous outcome that left nothing there writes again.
func (m *Maintainer) putIndex(ctx context.Context, key string, b []byte, cond objstore.Condition) (won bool, err error) {
	var last error
	for i := 0; i < maxAttempts; i++ {
		_, _, err := objstore.PutDeferredIntact(ctx, m.store, key, b, cond)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, objstore.ErrPreconditionFailed):
			return false, nil
		case errors.Is(err, objstore.ErrAmbiguous):
			obj, found, gerr := m.getObject(ctx, key)
			switch {
			case errors.Is(gerr, objstore.ErrCorruptObject):
				return false, nil
			case gerr != nil:
				return false, gerr
			case found:
				return bytes.Equal(obj.Data, b), nil
			}
		case !retryable(err):
			return false, fmt.Errorf("maintain: put %s: %w", key, err)
		}
		last = err
	}
	return false, fmt.Errorf("maintain: put %s: %d attempts: %w", key, maxAttempts, last)
}
