package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// treeCount is what the final store holds of index and fragment trees
// (format 10: ref chunks, level >= 1, above an index direction's level-0
// chunks or a paged version's fragment chunks), counted over the table
// versions the retained manifests of every live branch pin (each version
// once; with history off, its head's only) and, apart, over those its
// head pins.
type treeCount struct {
	versions, treeVersions         int // pinned by the live branches' retained manifests (heads')
	heads, headVersions, headTrees int // pinned by their heads
	indexRefs, fragRefs            int // distinct ref chunks under the pinned versions
	indexLevels, fragLevels        int // the most levels of ref chunks under one version
}

// countTrees counts the trees of the final store (no process runs any
// more) over the live branches' retained history, or their heads only,
// retrying on store errors.
func (r *procRun) countTrees(history bool) (treeCount, error) {
	var last error
	for a := 0; a < finalAttempts; a++ {
		tc, err := countTreesOnce(context.Background(), r.ps.st, r.root, history)
		if err == nil {
			return tc, nil
		}
		last = err
		time.Sleep(finalRetryPause)
	}
	return treeCount{}, fmt.Errorf("count the trees: %w", last)
}

func countTreesOnce(ctx context.Context, st objstore.Store, root string, history bool) (treeCount, error) {
	var tc treeCount
	g, err := kernel.Open(ctx, st, root, kernel.Options{Env: kernel.SystemEnv(), ReadOnly: true})
	if err != nil {
		return tc, err
	}
	branches, err := g.ListBranches(ctx)
	if err != nil {
		return tc, err
	}
	w := treeWalk{ctx: ctx, st: st, keys: format.NewKeys(root), index: map[string]int{}, frags: map[string]int{}}
	trees := map[string]bool{} // table version -> it carries a tree; counted once
	for _, b := range branches {
		head, err := g.SnapshotAt(ctx, b)
		if err != nil {
			return tc, err
		}
		tc.heads++
		for v := head.ManifestVersion(); ; v-- {
			snap, err := g.SnapshotAtVersion(ctx, b, v)
			if errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrNotFound) {
				break // collected history, or below the incarnation's first version
			}
			if err != nil {
				return tc, err
			}
			for _, pin := range snap.Tables() {
				id := fmt.Sprintf("%s/%s/%d/%s", pin.Name, pin.Fork, pin.Version, pin.Attempt)
				tree, seen := trees[id]
				if !seen {
					if tree, err = w.version(g, pin); err != nil {
						return tc, err
					}
					trees[id] = tree
					tc.versions++
					if tree {
						tc.treeVersions++
					}
				}
				if v == head.ManifestVersion() {
					tc.headVersions++
					if tree {
						tc.headTrees++
					}
				}
			}
			if v == 0 || !history {
				break
			}
		}
	}
	tc.indexRefs, tc.fragRefs, tc.indexLevels, tc.fragLevels = w.indexRefs, w.fragRefs, w.indexLevels, w.fragLevels
	return tc, nil
}

// treeWalk walks index and fragment chunks, counting each ref chunk once
// (a chunk is immutable: a subtree walked once is known).
type treeWalk struct {
	ctx                     context.Context
	st                      objstore.Store
	keys                    format.Keys
	index, frags            map[string]int // a chunk's key -> the levels of ref chunks at and below it
	indexRefs, fragRefs     int
	indexLevels, fragLevels int
}

// version walks the trees of the table version pin names and reports
// whether it has any.
func (w *treeWalk) version(g *kernel.Graph, pin kernel.TablePin) (bool, error) {
	tv, err := g.ReadPinned(w.ctx, pin)
	if err != nil {
		return false, err
	}
	idx, err := data.AdjacencyChunks(tv)
	if err != nil {
		return false, err
	}
	frags, err := data.FragmentChunks(tv)
	if err != nil {
		return false, err
	}
	il, err := w.walk(tv.Table, idx, 0, false)
	if err != nil {
		return false, err
	}
	fl, err := w.walk(tv.Table, frags, 0, true)
	if err != nil {
		return false, err
	}
	w.indexLevels, w.fragLevels = max(w.indexLevels, il), max(w.fragLevels, fl)
	return il > 0 || fl > 0, nil
}

// walk walks chunks of table (fragment chunks if frag, else index
// chunks), depth ref chunks below a table version, and returns the most
// levels of ref chunks at and below them.
func (w *treeWalk) walk(table string, chunks []string, depth int, frag bool) (int, error) {
	known, limit := w.index, data.MaxIndexLevels
	if frag {
		known, limit = w.frags, data.MaxFragmentLevels
	}
	if depth > limit {
		return 0, fmt.Errorf("a tree of %s deeper than %d levels: %w", table, limit, format.ErrCorrupt)
	}
	levels := 0
	for _, c := range chunks {
		id, err := ulid.ParseStrict(c)
		if err != nil {
			return 0, fmt.Errorf("chunk %q of %s: %v: %w", c, table, err, format.ErrCorrupt)
		}
		key := w.keys.Adjacency(table, id)
		l, ok := known[key]
		if !ok {
			if l, err = w.chunk(key, table, depth, frag); err != nil {
				return 0, err
			}
			known[key] = l
		}
		levels = max(levels, l)
	}
	return levels, nil
}

// chunk reads chunk key of table and returns the levels of ref chunks at
// and below it (0 for a level-0 chunk), counting it if it is a ref chunk.
func (w *treeWalk) chunk(key, table string, depth int, frag bool) (int, error) {
	obj, err := w.st.Get(w.ctx, key)
	if err != nil {
		return 0, err
	}
	var below []string
	if frag {
		_, below, err = data.FragmentChunkEntries(table, obj.Data)
	} else {
		var ref bool
		if below, ref, err = data.AdjacencyChunkEntries(obj.Data); !ref {
			below = nil
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	if len(below) == 0 {
		return 0, nil
	}
	if frag {
		w.fragRefs++
	} else {
		w.indexRefs++
	}
	l, err := w.walk(table, below, depth+1, frag)
	return l + 1, err
}
