package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Commit indexes (format.CommitIndex) are the lineage aid that makes a
// cold handle's Commit, SnapshotAtCommit, CreateBranchAt, LogFrom and
// MergeBase cost O(1) requests in history depth. They are never
// authoritative: an index is used only after the manifest it names shows
// its commit, and a missing or stale one sends the lookup down the
// manifest walk, which gives the same answer (TestDeletedAidsChangeNoAnswer).

// indexCacheEntries bounds the verified commit indexes one handle keeps.
const indexCacheEntries = 1 << 16

// verifiedIndex returns the index of commit id once the manifest it names
// shows that commit; ok=false when there is none, or it is stale (it names
// a slot the commit did not land at: a publish attempt that lost its race
// and never wrote again), or the store reports it torn
// (objstore.ErrCorruptObject: a publish attempt's index is written wholly
// deferred and made durable only by its manifest's placement, so an
// attempt whose manifest never landed may leave one a crash tore; the
// lookup then walks the manifests, as for a missing one, and a complete
// repair deletes it and creates its own, writeCommitIndex). An index the
// store returned intact that does not decode is an error (ErrCorrupt),
// never a guess.
func (g *Graph) verifiedIndex(ctx context.Context, id format.ID) (format.CommitIndex, bool, error) {
	if x, ok := g.indexes.get(id.String()); ok {
		return x, true, nil
	}
	key := g.keys.CommitIndex(id)
	var obj objstore.Object
	err := g.withRetry(ctx, "read commit index", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrCorruptObject) {
		return format.CommitIndex{}, false, nil
	}
	if err != nil {
		return format.CommitIndex{}, false, fmt.Errorf("read commit index %s: %w", key, err)
	}
	return g.acceptIndex(ctx, id, key, obj.Data)
}

// acceptIndex decodes the bytes read at key, the commit index of id, and
// verifies it against the manifest it names (which it reads if the
// handle has not): ok=false for a stale one. A verified index is cached.
func (g *Graph) acceptIndex(ctx context.Context, id format.ID, key string, data []byte) (format.CommitIndex, bool, error) {
	x, _, err := format.DecodeCommitIndex(data)
	if err != nil {
		return format.CommitIndex{}, false, fmt.Errorf("read commit index %s: %w", key, err)
	}
	if x.ID != id {
		return format.CommitIndex{}, false, fmt.Errorf("read commit index %s: names commit %s: %w", key, x.ID, ErrCorrupt)
	}
	if plant.Enabled(plant.TrustCommitIndex) { // planted bug: the aid is taken for the truth
		g.indexes.put(id.String(), x)
		return x, true, nil
	}
	l, err := g.manifestAt(ctx, x.At)
	if errors.Is(err, ErrNotFound) {
		return format.CommitIndex{}, false, nil // stale: the slot it names stayed empty
	}
	if err != nil {
		return format.CommitIndex{}, false, fmt.Errorf("verify commit index %s: %w", key, err)
	}
	if l.m.Commit == nil || l.m.Commit.ID != id {
		return format.CommitIndex{}, false, nil // stale: someone else's commit holds that slot
	}
	g.indexes.put(id.String(), x)
	return x, true, nil
}

// manifestReach returns the reach of manifest l (see format.CommitIndex):
// its commit's, or for a commit-less manifest its fork commit's plus l
// itself. ok=false when the history under l has no complete reach. A
// published commit whose index is missing or stale (its writer crashed
// between the publish and the index write, or lost the index write) is
// given one rebuilt from the manifests (repairIndex), so a reader never
// loses the aid for good.
func (g *Graph) manifestReach(ctx context.Context, l loaded) (lineage.Reach, bool, error) {
	return g.manifestReachDepth(ctx, l, repairDepth)
}

// repairDepth bounds how many consecutive commits without an index one
// repair rebuilds (a crash between a publish and its index write leaves
// one; an OS crash loses the unsynced indexes of a run of commits, at
// most indexSyncEvery-1 in a row per branch; the next handle that needs
// the reach repairs them). Past it the reach is unknown and readers walk,
// as without any aid.
const repairDepth = 1024

// indexSyncEvery is how often a branch's commit index is made durable
// (indexDurable): a publish's index is written with no sync of its own
// (it follows the publish), so an OS crash may lose every index written
// since the OS last wrote its pages; making the index of every commit
// whose manifest version is a multiple of 64 durable bounds the run a
// crash can leave without one on a branch, whatever the OS does and
// however many handles take turns writing it, at 1/64 of the index's
// fsyncs.
const indexSyncEvery = 64

// indexDurable reports whether the index of the commit at is to be made
// durable: every indexSyncEvery-th manifest version of its branch. A pure
// function of the location, so every writer of the branch (and every
// repairer of the index) agrees on it.
func indexDurable(at format.ManifestRef) bool {
	return at.Version%indexSyncEvery == 0
}

func (g *Graph) manifestReachDepth(ctx context.Context, l loaded, depth int) (lineage.Reach, bool, error) {
	if isLegacy(l) {
		return lineage.Reach{}, false, nil
	}
	x, ok, err := g.verifiedIndex(ctx, l.m.Head)
	if err != nil {
		return lineage.Reach{}, false, err
	}
	if !ok || !x.Complete {
		// Missing, stale, or written incomplete (its publisher could not
		// read its parent's reach): rebuilt, and stored when complete, so
		// an incomplete index does not make every descendant's incomplete.
		if x, ok, err = g.repairIndex(ctx, l, depth); err != nil || !ok {
			return lineage.Reach{}, false, err
		}
	}
	if !x.Complete {
		return lineage.Reach{}, false, nil
	}
	return lineage.FromIndex(x).ForManifest(l.ref()), true, nil
}

// repairIndex rebuilds the index of l's head commit (found missing or
// stale) from the manifest holding it and the one before it, exactly as
// its publish would have (commitIndexForDepth), recursing at most depth
// commits into the past for indexes missing too. A writable handle stores
// it; every handle caches it. A genesis's is rebuilt as Init wrote it.
// ok=false when it cannot be rebuilt: the depth is spent, l is legacy, or
// a manifest it needs was collected (x is then incomplete, a location
// aid only).
func (g *Graph) repairIndex(ctx context.Context, l loaded, depth int) (format.CommitIndex, bool, error) {
	x, ok, err := g.rebuildIndex(ctx, l, depth)
	if err != nil || !ok {
		return x, ok, err
	}
	return g.storeIndex(ctx, x, false), true, nil
}

// rebuildIndex is repairIndex without storing the index it rebuilds (the
// indexes of older commits it rebuilds on the way are stored).
func (g *Graph) rebuildIndex(ctx context.Context, l loaded, depth int) (format.CommitIndex, bool, error) {
	if depth <= 0 || isLegacy(l) {
		return format.CommitIndex{}, false, nil
	}
	if l.m.Commit == nil || l.m.Commit.ID != l.m.Head { // a commit-less version 0: its fork commit's manifest
		at, ok := previous(l)
		if !ok || l.m.Version != 0 {
			return format.CommitIndex{}, false, nil
		}
		fl, found, err := g.manifestIfAny(ctx, at)
		if err != nil || !found || fl.m.Head != l.m.Head {
			return format.CommitIndex{}, false, err
		}
		return g.rebuildIndex(ctx, fl, depth-1)
	}
	at, ok := previous(l)
	if !ok || l.m.Version == 0 {
		if l.m.Version == 0 && l.m.ForkOf == nil && l.m.Commit.Kind == format.KindGenesis {
			return genesisIndex(l.m.Commit.ID, l.ref()), true, nil // as Init wrote it (durably: version 0 is a multiple of indexSyncEvery)
		}
		return format.CommitIndex{}, false, nil
	}
	pl, found, err := g.manifestIfAny(ctx, at)
	if err != nil || !found {
		return format.CommitIndex{}, false, err
	}
	x, err := g.commitIndexForDepth(ctx, pl, &l.m, depth-1)
	if err != nil {
		return format.CommitIndex{}, false, err
	}
	return x, true, nil
}

// RepairHeadIndex makes sure the commit at b's head has its commit index
// (format.CommitIndex), the aid collections and merge bases use. A writer
// that crashed between its publish and its index write leaves a head
// without one; readers rebuild it when they need it, but a collection
// that meets it first counts that head's merge bases unknown and keeps
// more than it must. repaired=true when it was missing or stale and this
// call rebuilt it from the manifests and wrote it (false when a usable
// one was written meanwhile: it is used, never overwritten,
// writeCommitIndex); a failed write is returned (wrapped once), unlike a
// reader's best-effort repair. A head
// whose index cannot be rebuilt (more than repairDepth commits without
// one, a legacy history, a collected manifest) is left as it is:
// repaired=false, no error. It changes no answer (indexes are never
// authoritative) and needs a writable handle (ErrReadOnly).
func (g *Graph) RepairHeadIndex(ctx context.Context, b BranchRef) (repaired bool, err error) {
	if g.readOnly {
		return false, fmt.Errorf("repair head index of %s: %w", b, ErrReadOnly)
	}
	l, err := g.liveHead(ctx, b)
	if err != nil {
		return false, fmt.Errorf("repair head index of %s: %w", b, err)
	}
	if isLegacy(l) {
		return false, nil
	}
	_, present, err := g.verifiedIndex(ctx, l.m.Head)
	if err != nil {
		return false, fmt.Errorf("repair head index of %s: %w", b, err)
	}
	if present {
		return false, nil
	}
	x, rebuilt, err := g.rebuildIndex(ctx, l, repairDepth)
	if err != nil {
		return false, fmt.Errorf("repair head index of %s: %w", b, err)
	}
	if !rebuilt {
		return false, nil
	}
	y, ours, err := g.writeCommitIndex(ctx, &x, false)
	if err != nil {
		return false, fmt.Errorf("repair head index of %s: %w", b, err)
	}
	g.indexes.put(y.ID.String(), y)
	return ours, nil
}

// manifestIfAny is manifestAt with a collected manifest as found=false.
func (g *Graph) manifestIfAny(ctx context.Context, at format.ManifestRef) (loaded, bool, error) {
	l, err := g.manifestAt(ctx, at)
	if errors.Is(err, ErrNotFound) {
		return loaded{}, false, nil
	}
	return l, err == nil, err
}

// storeIndex writes x, the index of a published commit built by this
// handle, unless the handle is read-only, and caches and returns the
// index to use: x, or the usable one its write found there
// (writeCommitIndex never overwrites one). A failed write is not the
// caller's failure: the index is an aid, and the next handle that needs
// it rebuilds it (repairIndex) — the designed fallback, as the sweep is
// for a failed sidecar delete.
func (g *Graph) storeIndex(ctx context.Context, x format.CommitIndex, mayExist bool) format.CommitIndex {
	if !g.readOnly {
		if y, _, err := g.writeCommitIndex(ctx, &x, mayExist); err == nil { // see above: repairIndex is the fallback
			x = y
		}
	}
	g.indexes.put(x.ID.String(), x)
	return x
}

// indexAfterPublish writes the index of l's commit, which this handle has
// just published (or found landed) on head (head.m.Commit == nil: not
// known, then l's previous manifest is read). It runs after the manifest
// write, never before it: a crash in between leaves a published commit
// without an index, which repairIndex rebuilds for the next handle that
// needs it. mayExist: an earlier attempt of the publish sent an index
// (storeIndex).
func (g *Graph) indexAfterPublish(ctx context.Context, head, l loaded, mayExist bool) {
	if prev, ok := previous(l); head.m.Commit != nil && ok && head.ref() == prev {
		x, err := g.commitIndexForDepth(ctx, head, &l.m, repairDepth)
		if err == nil {
			g.storeIndex(ctx, x, mayExist)
		}
		return // an error: nothing stored, repairIndex is the fallback
	}
	_, _, _ = g.repairIndex(ctx, l, repairDepth) // stores what it builds; a failure leaves it to the next reader
}

// commitIndexForDepth builds the index of next's commit, which builds on head
// (and on the manifest holding its merged parent, if any): the join of
// their reaches under the handle's limits (lineage.JoinReach). A reach it
// cannot know (an input without a complete index that cannot be rebuilt,
// a collected merged-from manifest) makes the index incomplete.
// Rebuilding an input's missing index recurses at most depth commits.
func (g *Graph) commitIndexForDepth(ctx context.Context, head loaded, next *format.Manifest, depth int) (format.CommitIndex, error) {
	return g.commitIndexFrom(head, next, reachSource{
		reach:    func(l loaded) (lineage.Reach, bool, error) { return g.manifestReachDepth(ctx, l, depth) },
		manifest: func(at format.ManifestRef) (loaded, bool, error) { return g.manifestIfAny(ctx, at) },
	})
}

// reachSource is where commitIndexFrom gets its inputs: the reach of a
// manifest (ok=false: not complete) and the manifest at a ref (found=false:
// collected).
type reachSource struct {
	reach    func(l loaded) (lineage.Reach, bool, error)
	manifest func(at format.ManifestRef) (loaded, bool, error)
}

// commitIndexFrom is commitIndexForDepth over src: the one place the
// index of a new commit is computed, from the store (after a publish or in
// a repair) or from the handle's caches alone (commitIndexCached).
func (g *Graph) commitIndexFrom(head loaded, next *format.Manifest, src reachSource) (format.CommitIndex, error) {
	at := format.ManifestRef{Branch: next.Branch.Name, Incarnation: next.Branch.Incarnation, Version: next.Version}
	x := format.CommitIndex{ID: next.Commit.ID, At: at}
	prev, ok, err := src.reach(head)
	if err != nil || !ok {
		return x, err
	}
	var merged *lineage.Reach
	if mf := next.Commit.MergedFrom; mf != nil && !plant.Enabled(plant.ReachDropsMerge) {
		ml, found, err := src.manifest(*mf)
		if err != nil || !found {
			return x, err
		}
		r, ok, err := src.reach(ml)
		if err != nil || !ok {
			return x, err
		}
		merged = &r
	}
	r := lineage.JoinReach(at, next.Commit.ID, prev, merged, g.reachLimits, false)
	if plant.Enabled(plant.ReachDropsBase) { // planted bug: a compaction drops its previous manifest's fold
		r.Folds = slices.DeleteFunc(r.Folds, func(f format.ReachEntry) bool { return f == prev.HeadEntry() })
	}
	return r.Index(), nil
}

// errNotCached is commitIndexCached's source failing: an input is not in
// the handle's caches, so the index is built after the publish instead.
var errNotCached = errors.New("kernel: commit index input not cached")

// commitIndexCached builds the index of next's commit (on head) from the
// handle's caches alone, with no request: ok=false when an input is not
// there (a verified index of head's commit or of the merged parent's, or
// the merged-from manifest). It gives what commitIndexForDepth would,
// since both compute it in commitIndexFrom from the same verified inputs.
func (g *Graph) commitIndexCached(head loaded, next *format.Manifest) (format.CommitIndex, bool) {
	x, err := g.commitIndexFrom(head, next, reachSource{
		reach: func(l loaded) (lineage.Reach, bool, error) {
			if isLegacy(l) {
				return lineage.Reach{}, false, nil
			}
			x, ok := g.indexes.get(l.m.Head.String())
			if !ok {
				return lineage.Reach{}, false, errNotCached
			}
			if !x.Complete {
				return lineage.Reach{}, false, errNotCached // built after the publish, which repairs it
			}
			return lineage.FromIndex(x).ForManifest(l.ref()), true, nil
		},
		manifest: func(at format.ManifestRef) (loaded, bool, error) {
			l, ok := g.manifests.get(g.keys.Manifest(at.Branch, at.Incarnation, at.Version))
			if !ok || isV3(l) {
				return loaded{}, false, errNotCached
			}
			return l, true, nil
		},
	})
	return x, err == nil
}

// maxIndexRounds bounds the conditional writes one writeCommitIndex
// makes, each after finding the key changed since it last looked.
const maxIndexRounds = 4

// errIndexLost is a conditional index write that found the key changed:
// its condition failed, or its outcome was ambiguous and another's
// object is there.
var errIndexLost = errors.New("kernel: commit index changed under its write")

// writeCommitIndex stores x, the index of a published commit, unless a
// usable one is there, and returns the index the key then holds for the
// handle to use: x, or the usable one it found. It never overwrites a
// usable index (one that verifies against the manifest it names and is
// complete), whoever wrote it — a collection keeps merge bases by the
// index it stores or reads (docs/gc.md rule 3b), so a reach written over
// it, another valid one under other reach bounds or an incomplete one,
// would send readers to manifests it deleted. The first write is
// create-only; when it loses, the index there is read: a usable one is
// adopted; a stale, incomplete (x complete) or undecodable one is
// replaced If-Match on the ETag read; a torn one (no ETag to match: the
// store's compare fails its check) is deleted and created again, by a
// complete x only. An ambiguous outcome is read back (house rule 3): our
// bytes there end it, another's is a lost condition, absence writes
// again. ours reports that the key holds x, written by this call.
// mayExist (an earlier publish attempt of this commit sent its index)
// starts with the read instead of a create-only write that would fail.
// Its name's durability is left to the store (objstore.PutDeferredIntact,
// never synced: on fs one fsync round, not two), but for the index of
// every indexSyncEvery-th commit of a branch (indexDurable: a durable Put): an index is
// never authoritative, so a crash may lose it (repairIndex rebuilds it)
// but never tears it.
func (g *Graph) writeCommitIndex(ctx context.Context, x *format.CommitIndex, mayExist bool) (_ format.CommitIndex, ours bool, err error) {
	data, err := g.encodeCommitIndex(x)
	if err != nil {
		return format.CommitIndex{}, false, err
	}
	key := g.keys.CommitIndex(x.ID)
	durable := indexDurable(x.At)
	cond, read := objstore.CreateOnly, mayExist
	for range maxIndexRounds {
		if !read {
			err := g.putIndex(ctx, key, data, cond, durable)
			if err == nil {
				return *x, true, nil
			}
			if !errors.Is(err, errIndexLost) {
				return format.CommitIndex{}, false, fmt.Errorf("write commit index %s: %w", key, err)
			}
		}
		read = false
		var obj objstore.Object
		err = g.withRetry(ctx, "read commit index", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			cond = objstore.CreateOnly
			continue
		case errors.Is(err, objstore.ErrCorruptObject):
			if !x.Complete {
				return *x, false, nil // an incomplete index replaces nothing; the torn one reads as absent
			}
			if err := g.withRetry(ctx, "delete torn commit index", func() error { return g.store.Delete(ctx, key) }); err != nil {
				return format.CommitIndex{}, false, fmt.Errorf("write commit index %s: %w", key, err)
			}
			cond = objstore.CreateOnly
			continue
		case err != nil:
			return format.CommitIndex{}, false, fmt.Errorf("write commit index %s: %w", key, err)
		}
		y, ok, err := g.acceptIndex(ctx, x.ID, key, obj.Data)
		switch {
		case err != nil && !errors.Is(err, ErrCorrupt):
			return format.CommitIndex{}, false, err
		case ok && (y.Complete || !x.Complete):
			return y, false, nil // usable (or no better than ours): never overwritten
		}
		cond = objstore.IfMatch(obj.ETag) // stale, incomplete or undecodable: replaced unless it changes again
	}
	return format.CommitIndex{}, false, fmt.Errorf("write commit index %s: changed under %d writes: %w", key, maxIndexRounds, errIndexLost)
}

// putIndex is one conditional write of a commit index (see
// writeCommitIndex), retried within the handle's budget while the store
// answers retryable; errIndexLost when the condition failed or an
// ambiguous outcome read back another's object.
func (g *Graph) putIndex(ctx context.Context, key string, data []byte, cond objstore.Condition, durable bool) error {
	return g.withRetry(ctx, "write commit index", func() error {
		var err error
		if durable {
			_, err = g.store.Put(ctx, key, data, cond)
		} else {
			_, _, err = objstore.PutDeferredIntact(ctx, g.store, key, data, cond)
		}
		if errors.Is(err, objstore.ErrPreconditionFailed) {
			return fmt.Errorf("%w: %v", errIndexLost, err)
		}
		if !objstore.IsAmbiguous(err) {
			return err
		}
		obj, gerr := g.store.Get(ctx, key)
		switch {
		case gerr == nil && bytes.Equal(obj.Data, data):
			return nil // it landed
		case gerr == nil || errors.Is(gerr, objstore.ErrCorruptObject):
			return fmt.Errorf("%w: ambiguous write read back another's object: %v", errIndexLost, err)
		case !errors.Is(gerr, objstore.ErrNotFound):
			return gerr // unknown still: retried if retryable
		}
		// Not there: a definite miss, written again; the error no longer
		// claims ambiguity, since nothing of it applied.
		return objstore.NewError(objstore.OpPut, key, objstore.ErrTransient, fmt.Errorf("ambiguous write read back as not applied: %v", err))
	})
}

// encodeCommitIndex encodes x under a fresh writer token.
func (g *Graph) encodeCommitIndex(x *format.CommitIndex) ([]byte, error) {
	tok, err := g.token()
	if err != nil {
		return nil, err
	}
	data, err := format.EncodeCommitIndex(x, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: invalid commit index for %s: %v", x.ID, err))
	}
	return data, nil
}

// genesisIndex is the index of the genesis commit id at at: it reaches
// itself alone.
func genesisIndex(id format.ID, at format.ManifestRef) format.CommitIndex {
	return format.CommitIndex{ID: id, At: at, Complete: true, Reach: []format.ReachEntry{{ManifestRef: at, Gen: 1}}, Gen: 1}
}
