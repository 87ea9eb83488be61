package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Paged index refs (docs/format.md, "Paged index refs", format 10): a
// direction of an index (data.adj.out, data.adj.in, data.adj.id) whose
// level-0 chunks would need more than the handle's inline bound of refs in
// the table version is listed through ref chunks: a ref chunk of level L
// (a kind-14 chunk with "level":L) lists up to IndexRefChunkRefs chunks of
// level L-1 in the chunk layout ("pages" holds their refs, each with its
// level), and the table version lists the top level's refs. The tree
// partitions the (key, id) order exactly as the flat list did: a ref's
// range is its first leaf's first row to its last leaf's last key, its
// rows the sum below it. A lookup descends one path (O(log n) chunks); a
// commit rewrites the leaf chunks its changes fall in and the ref chunks
// above them (copy-on-write, one per level), keeping every other subtree
// by ref; the version's index refs stay O(1).
const (
	// FormatIndexTrees is the first format whose writers list an index
	// direction through ref chunks; a build below it writes every
	// direction inline.
	FormatIndexTrees = 10
	// IndexRefChunkRefs bounds the refs one ref chunk lists.
	IndexRefChunkRefs = 64
	// WriteFanout is the most refs a chunk this build writes lists, at
	// every level (pages in a level-0 chunk, chunks in a ref chunk):
	// smaller than the readers' bounds, so that a lookup's path reads
	// small chunks (docs/perf.md "Paged index refs at 10^7").
	WriteFanout = 16
	// DefaultInlineIndexRefs is the most refs a table version this build
	// writes lists per index direction before it adds a level.
	DefaultInlineIndexRefs = 1
	// maxIndexLevels bounds a tree's height: a reader refuses more, and a
	// commit that would write more fails with ErrTreeTooTall (reachable
	// only at IndexFanout 2, whose splits of three refs are two and one).
	maxIndexLevels = 16
)

// inlineIndexRefs is this handle's bound on the refs of one direction in
// a table version.
func (g *Graph) inlineIndexRefs() int {
	if g.idxInline > 0 {
		return g.idxInline
	}
	return DefaultInlineIndexRefs
}

// refChunkRefs bounds the refs of a ref chunk this handle writes.
func (g *Graph) refChunkRefs() int {
	if g.idxFanout > 1 {
		return min(g.idxFanout, IndexRefChunkRefs)
	}
	return WriteFanout
}

// leafChunkPages bounds the pages of a level-0 chunk of direction d of t
// this handle writes (smaller only in tests, to build trees from small
// tables).
func (g *Graph) leafChunkPages(t *Table, d adjDir) int {
	if g.idxLeafPages > 0 {
		return min(g.idxLeafPages, d.chunkPages(t))
	}
	return min(WriteFanout, d.chunkPages(t))
}

// writePageRows bounds the rows of a page of direction d of t this handle
// writes (smaller only in tests).
func (g *Graph) writePageRows(t *Table, d adjDir) int {
	if g.idxPageRows > 0 {
		return min(g.idxPageRows, d.pageRows(t))
	}
	return d.pageRows(t)
}

// --- reading ----------------------------------------------------------------

// leafChunksHolding returns, in order, the level-0 chunks under refs
// (one level, ascending, possibly overlapping at their ends) whose key
// range holds key, loading only the ref chunks on those paths.
func (r *reader) leafChunksHolding(ctx context.Context, t *Table, d adjDir, refs []adjRef, key string) ([]adjRef, error) {
	var hold []adjRef
	for _, ref := range refs {
		if ref.LoKey <= key && key <= ref.HiKey {
			hold = append(hold, ref)
		}
	}
	if plant.Enabled(plant.PageSkip) && len(hold) > 0 && hold[0].Level > 0 && hold[len(hold)-1] == refs[len(refs)-1] { // planted bug: the last ref chunk is skipped
		hold = hold[:len(hold)-1]
	}
	var out []adjRef
	for _, ref := range hold {
		if ref.Level == 0 {
			out = append(out, ref)
			continue
		}
		c, err := r.chunk(ctx, t, d, ref)
		if err != nil {
			return nil, err
		}
		below, err := r.leafChunksHolding(ctx, t, d, c.Pages, key)
		if err != nil {
			return nil, err
		}
		out = append(out, below...)
	}
	return out, nil
}

// coveringLeaf returns the level-0 chunk under refs (one level, strictly
// disjoint: an id index) whose range holds id, loading one ref chunk per
// level.
func (r *reader) coveringLeaf(ctx context.Context, t *Table, d adjDir, refs []adjRef, id string) (adjRef, bool, error) {
	for range maxIndexLevels + 1 {
		ref, ok := covering(refs, id)
		if !ok || ref.Level == 0 {
			return ref, ok, nil
		}
		c, err := r.chunk(ctx, t, d, ref)
		if err != nil {
			return adjRef{}, false, err
		}
		refs = c.Pages
	}
	return adjRef{}, false, corruptFragment("table "+t.Name, "index deeper than %d levels", maxIndexLevels)
}

// leafChunks returns every level-0 chunk under refs, in order, loading
// every ref chunk (repacking and whole-index readers).
func (r *reader) leafChunks(ctx context.Context, t *Table, d adjDir, refs []adjRef) ([]adjRef, error) {
	if len(refs) == 0 || refs[0].Level == 0 {
		return refs, nil
	}
	var out []adjRef
	for _, ref := range refs {
		c, err := r.chunk(ctx, t, d, ref)
		if err != nil {
			return nil, err
		}
		below, err := r.leafChunks(ctx, t, d, c.Pages)
		if err != nil {
			return nil, err
		}
		out = append(out, below...)
	}
	return out, nil
}

// --- writing ------------------------------------------------------------------

// writeRefChunks cuts refs (of level level-1) into ref chunks of level
// level, writes each and returns their refs.
func (c adjWriter) writeRefChunks(ctx context.Context, t *Table, d adjDir, refs []adjRef, level int) ([]adjRef, error) {
	return c.writeChunksAt(ctx, t, d, refs, level, c.g.refChunkRefs(), false)
}

// rootRefs returns the refs a table version lists for a direction whose
// top level is refs: refs itself while they are at most the handle's
// inline bound, else the refs of ref chunks written above them, level by
// level, until they are.
func (c adjWriter) rootRefs(ctx context.Context, t *Table, d adjDir, refs []adjRef) ([]adjRef, error) {
	for format.CurrentFormat >= FormatIndexTrees && len(refs) > c.g.inlineIndexRefs() {
		level := refs[0].Level + 1
		if level > maxIndexLevels {
			return nil, fmt.Errorf("index %s of %s needs more than %d levels: %w", d, t.Name, maxIndexLevels, ErrTreeTooTall)
		}
		var err error
		if refs, err = c.writeRefChunks(ctx, t, d, refs, level); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// --- consumers outside the data plane ---------------------------------------

// AdjacencyChunkEntries returns the names an adjacency, id or ref chunk
// object (its stored bytes) lists, and whether they name chunks (a ref
// chunk, level >= 1: its entries are chunks to read in turn) rather than
// pages. Garbage collection, the simulator's leak check and verify walk a
// version's index through it.
func AdjacencyChunkEntries(b []byte) (names []string, chunks bool, err error) {
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, false, err
	}
	c, err := decodeChunkPayload(payload)
	if err != nil {
		return nil, false, fmt.Errorf("adjacency chunk: %v: %w", err, format.ErrCorrupt)
	}
	if c.Level < 0 || c.Level > maxIndexLevels {
		return nil, false, fmt.Errorf("adjacency chunk of level %d: %w", c.Level, format.ErrCorrupt)
	}
	names = make([]string, len(c.Pages))
	for i, p := range c.Pages {
		names[i] = p.Name
	}
	return names, c.Level > 0, nil
}

// MaxIndexLevels bounds the levels of ref chunks above an index's
// level-0 chunks: a walker that descends further has met a corrupt (or
// cyclic) index.
const MaxIndexLevels = maxIndexLevels
