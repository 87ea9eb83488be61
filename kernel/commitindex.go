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
// and never wrote again). A corrupt index is an error, never a guess.
func (g *Graph) verifiedIndex(ctx context.Context, id format.ID) (format.CommitIndex, bool, error) {
	if x, ok := g.indexes.get(id.String()); ok {
		return x, true, nil
	}
	key := g.keys.CommitIndex(id)
	var obj objstore.Object
	err := g.withRetry(ctx, "read commit index", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return format.CommitIndex{}, false, nil
	}
	if err != nil {
		return format.CommitIndex{}, false, fmt.Errorf("read commit index %s: %w", key, err)
	}
	x, _, err := format.DecodeCommitIndex(obj.Data)
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
// itself. ok=false when the history under l has no complete reach.
func (g *Graph) manifestReach(ctx context.Context, l loaded) (lineage.Reach, bool, error) {
	if isLegacy(l) {
		return lineage.Reach{}, false, nil
	}
	x, ok, err := g.verifiedIndex(ctx, l.m.Head)
	if err != nil || !ok || !x.Complete {
		return lineage.Reach{}, false, err
	}
	return lineage.FromIndex(x).ForManifest(l.ref()), true, nil
}

// commitIndexFor builds the index of next's commit, which builds on head
// (and on the manifest holding its merged parent, if any): the join of
// their reaches under the handle's limits (lineage.JoinReach).
func (g *Graph) commitIndexFor(ctx context.Context, head loaded, next *format.Manifest) (format.CommitIndex, error) {
	at := format.ManifestRef{Branch: next.Branch.Name, Incarnation: next.Branch.Incarnation, Version: next.Version}
	x := format.CommitIndex{ID: next.Commit.ID, At: at}
	prev, ok, err := g.manifestReach(ctx, head)
	if err != nil || !ok {
		return x, err
	}
	var merged *lineage.Reach
	if mf := next.Commit.MergedFrom; mf != nil && !plant.Enabled(plant.ReachDropsMerge) {
		ml, err := g.manifestAt(ctx, *mf)
		if err != nil {
			return x, fmt.Errorf("merged-from manifest: %w", err)
		}
		r, ok, err := g.manifestReach(ctx, ml)
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

// writeCommitIndex writes x (an unconditional overwrite: each attempt of a
// publish targets a higher slot than the last). It is written before the
// manifest, so an index exists for every landed commit unless a
// collection deleted it with its manifest. An ambiguous outcome is read
// back (house rule 3): our bytes there end it, anything else (absent, or
// an earlier attempt's) writes again, within the retry budget. Guessing
// "written" would leave a landed commit without an index, and every later
// commit of its branch with an incomplete reach for good.
func (g *Graph) writeCommitIndex(ctx context.Context, x *format.CommitIndex) error {
	tok, err := g.token()
	if err != nil {
		return err
	}
	data, err := format.EncodeCommitIndex(x, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: invalid commit index for %s: %v", x.ID, err))
	}
	key := g.keys.CommitIndex(x.ID)
	err = g.withRetry(ctx, "write commit index", func() error {
		_, err := g.store.Put(ctx, key, data, objstore.Unconditional)
		if !objstore.IsAmbiguous(err) {
			return err
		}
		obj, gerr := g.store.Get(ctx, key)
		switch {
		case gerr == nil && bytes.Equal(obj.Data, data):
			return nil // it landed
		case gerr != nil && !errors.Is(gerr, objstore.ErrNotFound):
			return gerr // unknown still: retried if retryable, else the attempt fails before its manifest
		}
		// Not there (or not ours): a definite miss, written again; the
		// error no longer claims ambiguity, since nothing of it applied.
		return objstore.NewError(objstore.OpPut, key, objstore.ErrTransient, fmt.Errorf("ambiguous write read back as not applied: %v", err))
	})
	if err != nil {
		return fmt.Errorf("write commit index %s: %w", key, err)
	}
	return nil
}
