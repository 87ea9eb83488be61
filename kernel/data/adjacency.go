package data

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// The adjacency index of an edge table version (docs/format.md,
// "Adjacency index"): per direction, the version's edges sorted by (key,
// id) — key is from for "out", to for "in" — cut into pages of at most
// AdjPageRows rows (Arrow IPC files like fragments), listed in order by
// chunks of at most AdjChunkPages pages (kind-14 envelopes of JSON), which
// the table version lists in order under data.adj.out and data.adj.in.
// Pages and chunks partition the (key, id) order: a row belongs to the last
// page whose first (key, id) is not after it. Everything is immutable and
// written before the publish under fresh names; a commit rewrites only the
// pages (and their chunks) holding a changed edge's old or new (key, id).
const (
	AdjPageRows   = 1024
	AdjChunkPages = 64
	metaAdjPrefix = "data.adj." // + "out" | "in"
)

// adjDir is a direction of the index: 0 out (key from), 1 in (key to),
// or 2 the id index of a node table (idindex.go), whose chunks share the
// adjacency chunks' kind, layout and key space with dir "id".
type adjDir int

const (
	dirOut adjDir = 0
	dirIn  adjDir = 1
	dirID  adjDir = 2
)

// col is the key column of an edge direction (out or in only).
func (d adjDir) col() int { return [2]int{colFrom, colTo}[d] }
func (d adjDir) String() string {
	return [3]string{"out", "in", "id"}[d]
}

// chunkPages bounds the pages one chunk of direction d of table t lists.
func (d adjDir) chunkPages(t *Table) int {
	switch {
	case d == dirID && t.Edge:
		return EdgeIDChunkPages
	case d == dirID:
		return IDChunkPages
	}
	return AdjChunkPages
}

// adjRef names a page (in a chunk) or a chunk (in the table version): its
// name, its first row's key and id, its last row's key, its row count and
// its exact size and CRC-32C.
type adjRef struct {
	Name   string `json:"name"`
	LoKey  string `json:"lo"`
	LoID   string `json:"lo_id"`
	HiKey  string `json:"hi"`
	Rows   uint64 `json:"rows"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
	// Level is the level of the chunk a ref names (indextree.go): 0 for
	// a chunk listing pages (and for a page), L >= 1 for a ref chunk
	// listing level L-1 chunks. Omitted when 0 (every format-7 ref).
	Level int `json:"level,omitempty"`
}

// adjChunk is the payload of a chunk object. A level-0 chunk lists pages;
// a ref chunk (Level >= 1, format 8) lists chunks of level Level-1 in
// Pages.
type adjChunk struct {
	Table string   `json:"table"`
	Dir   string   `json:"dir"`
	Level int      `json:"level,omitempty"`
	Pages []adjRef `json:"pages"`
}

// after reports whether ref's first row sorts after (key, id).
func (ref adjRef) after(key, id string) bool {
	return key < ref.LoKey || (key == ref.LoKey && id < ref.LoID)
}

// checkRefs verifies a ref list: sane names and ranges, one level
// (at most maxIndexLevels) for all, strictly ascending first rows, no
// overlap, rows adding up to want (when want >= 0).
func checkRefs(refs []adjRef, limit int, want int64) error {
	var rows uint64
	for i, r := range refs {
		if _, err := ulid.ParseStrict(r.Name); err != nil || r.Rows == 0 || r.Bytes == 0 || r.LoKey > r.HiKey || r.Level < 0 || r.Level > maxIndexLevels || r.Level != refs[0].Level {
			return fmt.Errorf("adjacency ref %+v is not sane", r)
		}
		if i > 0 && (refs[i-1].after(r.LoKey, r.LoID) || refs[i-1].LoKey == r.LoKey && refs[i-1].LoID == r.LoID || refs[i-1].HiKey > r.LoKey) {
			return fmt.Errorf("adjacency refs %s and %s out of order or overlapping", refs[i-1].Name, r.Name)
		}
		rows += r.Rows
	}
	if len(refs) > limit || (want >= 0 && rows != uint64(want)) {
		return fmt.Errorf("%d adjacency refs holding %d rows (limit %d refs, want %d rows)", len(refs), rows, limit, want)
	}
	return nil
}

// maxChunkRefs bounds the chunks of one direction in a table version.
const maxChunkRefs = 1 << 16

// parseAdjacency reads the index refs of a table version's metadata:
// ok=false when the version has none (node tables, versions written before
// the index existed). With an adjacency delta of deltaRows rows
// (adjdelta.go; the caller decoded it) each direction's refs count rows
// minus the delta's, and are not empty.
func parseAdjacency(md map[string]string, rows, deltaRows uint64) (refs [2][]adjRef, ok bool, err error) {
	out, hasOut := md[metaAdjPrefix+dirOut.String()]
	in, hasIn := md[metaAdjPrefix+dirIn.String()]
	if !hasOut && !hasIn {
		if _, hasDelta := md[metaAdjDeltaKey]; hasDelta {
			return refs, false, fmt.Errorf("an adjacency delta without an adjacency index")
		}
		return refs, false, nil
	}
	if !hasOut || !hasIn {
		return refs, false, fmt.Errorf("adjacency index has one direction only")
	}
	if deltaRows > rows {
		return refs, false, fmt.Errorf("adjacency delta of %d rows in a version of %d", deltaRows, rows)
	}
	for d, raw := range [2]string{out, in} {
		if err := json.Unmarshal([]byte(raw), &refs[d]); err != nil {
			return refs, false, fmt.Errorf("adjacency %s: %v", adjDir(d), err)
		}
		if err := checkRefs(refs[d], maxChunkRefs, int64(rows-deltaRows)); err != nil {
			return refs, false, fmt.Errorf("adjacency %s: %v", adjDir(d), err)
		}
		if deltaRows > 0 && len(refs[d]) == 0 {
			return refs, false, fmt.Errorf("an adjacency delta beside an empty adjacency %s", adjDir(d))
		}
	}
	return refs, true, nil
}

// --- reading ----------------------------------------------------------------

// getChecked GETs an adjacency object.
func (r *reader) getChecked(ctx context.Context, t *Table, ref adjRef) ([]byte, error) {
	id, err := ulid.ParseStrict(ref.Name)
	if err != nil {
		return nil, corruptFragment(ref.Name, "adjacency name is not a ULID")
	}
	if bb := r.budget; bb != nil {
		if bb.spent+int64(ref.Bytes) > bb.max {
			return nil, &traverse.LimitError{Limit: "bytes", Max: bb.max, Got: bb.spent + int64(ref.Bytes)}
		}
		bb.spent += int64(ref.Bytes)
	}
	b, err := r.g.get(ctx, r.g.keys.Adjacency(t.Storage, id))
	if err != nil {
		return nil, fmt.Errorf("read adjacency object %s of %s: %w", ref.Name, t.Name, err)
	}
	return b, nil
}

// checkSum verifies an adjacency object's size and CRC-32C against ref.
func checkSum(ref adjRef, b []byte) error {
	if uint64(len(b)) != ref.Bytes || crc32.Checksum(b, castagnoli) != ref.CRC32C {
		return corruptFragment(ref.Name, "adjacency object size or crc32c does not match its reference")
	}
	return nil
}

// chunk returns the decoded chunk ref of t in direction d (cached).
func (r *reader) chunk(ctx context.Context, t *Table, d adjDir, ref adjRef) (*adjChunk, error) {
	key := "chunk:" + cacheKey(t.Storage, ref.Name)
	if v, ok := r.g.cache.getAny(key); ok {
		return v.(*adjChunk), nil
	}
	b, err := r.getChecked(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	c, err := decodeChunk(t, d, ref, b)
	if err != nil {
		return nil, err
	}
	r.g.cache.put(key, c, int64(ref.Bytes))
	return c, nil
}

// decodeChunk checks and decodes the bytes of chunk ref: size and CRC,
// envelope, payload, page refs (sane, ordered, rows adding up) and range.
// Any failure matches ErrCorruptFragment; it never panics.
func decodeChunk(t *Table, d adjDir, ref adjRef, b []byte) (*adjChunk, error) {
	if err := checkSum(ref, b); err != nil {
		return nil, err
	}
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, corruptFragment(ref.Name, "%v", err)
	}
	c, err := decodeChunkPayload(payload)
	if err != nil || c.Table != t.Storage || c.Dir != d.String() || c.Level != ref.Level {
		return nil, corruptFragment(ref.Name, "adjacency chunk payload (level %d, its ref's %d): %v", c.Level, ref.Level, err)
	}
	limit := d.chunkPages(t)
	if c.Level > 0 {
		limit = IndexRefChunkRefs
	}
	if err := checkRefs(c.Pages, limit, int64(ref.Rows)); err != nil {
		return nil, corruptFragment(ref.Name, "%v", err)
	}
	if len(c.Pages) > 0 && c.Pages[0].Level != max(c.Level-1, 0) {
		return nil, corruptFragment(ref.Name, "chunk of level %d lists refs of level %d", c.Level, c.Pages[0].Level)
	}
	if d == dirID {
		if err := checkIDRefs(c.Pages); err != nil {
			return nil, corruptFragment(ref.Name, "%v", err)
		}
	}
	if len(c.Pages) == 0 || c.Pages[0].LoKey != ref.LoKey || c.Pages[0].LoID != ref.LoID || c.Pages[len(c.Pages)-1].HiKey != ref.HiKey {
		return nil, corruptFragment(ref.Name, "adjacency chunk range does not match its reference")
	}
	return &c, nil
}

// page returns the decoded page ref of t in direction d (cached).
func (r *reader) page(ctx context.Context, t *Table, d adjDir, ref adjRef) (arrow.Record, error) {
	key := cacheKey(t.cacheID, ref.Name)
	if rec, ok := r.g.cache.get(key); ok {
		return rec, nil
	}
	b, err := r.getChecked(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	rec, err := decodePage(t, d, ref, b)
	if err != nil {
		return nil, err
	}
	r.g.cache.put(key, rec, cachedBytes(rec, ref.Bytes))
	return rec, nil
}

// decodePage checks and decodes the bytes of page ref: size and CRC, the
// column file or Arrow IPC file of t (decodePageRecord), rows sorted by (key, id) and the referenced range.
// Any failure matches ErrCorruptFragment; it never panics.
func decodePage(t *Table, d adjDir, ref adjRef, b []byte) (arrow.Record, error) {
	if err := checkSum(ref, b); err != nil {
		return nil, err
	}
	rec, err := decodePageRecord(t, ref, b)
	if err != nil {
		return nil, err
	}
	if err := checkPage(t, d, rec, ref); err != nil {
		rec.Release()
		return nil, corruptFragment(ref.Name, "%v", err)
	}
	return rec, nil
}

// checkPage verifies a page's rows: valid columns, sorted by (key, id)
// strictly, first and last keys as referenced.
func checkPage(t *Table, d adjDir, rec arrow.Record, ref adjRef) error {
	if err := checkColumns(t, rec); err != nil {
		return err
	}
	keys, ids := rec.Column(d.col()).(*array.String), rec.Column(colID).(*array.String)
	for i := 1; i < keys.Len(); i++ {
		if k0, k1 := keys.Value(i-1), keys.Value(i); k0 > k1 || (k0 == k1 && ids.Value(i-1) >= ids.Value(i)) {
			return fmt.Errorf("adjacency page rows out of order at %d", i)
		}
	}
	if keys.Len() == 0 || keys.Value(0) != ref.LoKey || ids.Value(0) != ref.LoID || keys.Value(keys.Len()-1) != ref.HiKey {
		return fmt.Errorf("adjacency page range does not match its reference")
	}
	return nil
}

// adjacentIndexed returns the edges of v with key node in direction d,
// sorted by id, reading only the chunks and pages whose key range holds
// node. v must have an index.
func (r *reader) adjacentIndexed(ctx context.Context, v *tableView, node string, d adjDir) ([]Row, error) {
	var out []Row
	leaves, err := r.leafChunksHolding(ctx, v.t, d, v.adj[d], node)
	if err != nil {
		return nil, err
	}
	for _, cref := range leaves {
		c, err := r.chunk(ctx, v.t, d, cref)
		if err != nil {
			return nil, err
		}
		for _, pref := range c.Pages {
			if pref.LoKey > node || node > pref.HiKey {
				continue
			}
			rec, err := r.page(ctx, v.t, d, pref)
			if err != nil {
				return nil, err
			}
			keys := rec.Column(d.col()).(*array.String)
			for j := sort.Search(keys.Len(), func(k int) bool { return keys.Value(k) >= node }); j < keys.Len() && keys.Value(j) == node; j++ {
				out = append(out, rowAt(v.t, rec, j))
			}
		}
	}
	if !plant.Enabled(plant.AdjDeltaSkip) { // planted bug: the delta's edges are missed
		out = deltaAdjacent(v.t, v.adjDelta, node, d, out)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// adjacent returns the committed edges of v from (out) or to (in) node,
// sorted by id: through the index when v has one, else from the whole
// table (loaded once).
func (r *reader) adjacent(ctx context.Context, v *tableView, node string, out bool) ([]Row, error) {
	if v.hasAdj {
		d := dirOut
		if !out {
			d = dirIn
		}
		rows, err := r.adjacentIndexed(ctx, v, node, d)
		if plant.Enabled(plant.AdjShortIn) && d == dirIn && len(rows) > 1 { // planted bug (dead code without -tags simplant)
			rows = rows[:len(rows)-1]
		}
		return rows, err
	}
	if err := r.loadAll(ctx, v); err != nil {
		return nil, err
	}
	return adjacentRows(v, node, out), nil
}

// --- building -----------------------------------------------------------------

// adjChange is one change to a direction of the index: the removal of
// edge id at key (src nil) or the addition of the row src at key.
type adjChange struct {
	key, id string
	src     *rowSrc
}

// adjacencyChanges lists a plan's removed edge ids (replaced or deleted,
// sorted) and added rows (inserted or replacing, in id order).
func adjacencyChanges(p *tablePlan) (removed []string, added []rowSrc) {
	removed = append(keys(p.replace), keys(p.deletes)...)
	sort.Strings(removed)
	added = make([]rowSrc, 0, len(p.inserts)+len(p.replace))
	for _, ref := range p.inserts {
		added = append(added, rowSrc{p.st.writes[ref.w].rec, ref.row})
	}
	for _, id := range keys(p.replace) {
		ref := p.replace[id]
		added = append(added, rowSrc{p.st.writes[ref.w].rec, ref.row})
	}
	return removed, added
}

// adjWriter writes adjacency objects for one build: the graph names and
// stores them, the reader loads what the build's head holds.
type adjWriter struct {
	g *Graph
	r *reader
}

// buildAdjacency writes the adjacency index of the new version of edge
// table p.t (rows rows) and returns its table-version metadata. On a head
// version with an index it rewrites only the pages and chunks a change
// falls in; otherwise (the first version, or one written before the index
// existed) it builds the index from the whole head table.
func (c adjWriter) buildAdjacency(ctx context.Context, p *tablePlan, rows uint64) (map[string]string, error) {
	removed, added := adjacencyChanges(p)
	if md, ok, err := c.adjDeltaOnly(p, rows, removed, added); err != nil || ok {
		return md, err
	}
	if p.head.adjDelta != nil { // fold: the delta's rows join the pages
		removed, added = foldAdjDelta(p.head.adjDelta, removed, added)
	}
	if !p.head.hasAdj && p.head.rows > 0 {
		if err := c.r.loadAll(ctx, p.head); err != nil {
			return nil, err
		}
	}
	md := map[string]string{}
	for _, d := range []adjDir{dirOut, dirIn} {
		var refs []adjRef
		var err error
		if p.head.hasAdj {
			refs, err = c.adjIncremental(ctx, p, d, removed, added)
		} else {
			refs, err = c.adjScratch(ctx, p, d, removed, added)
		}
		if err == nil {
			refs, err = c.rootRefs(ctx, p.t, d, refs)
		}
		if err != nil {
			return nil, err
		}
		if err := checkRefs(refs, maxChunkRefs, int64(rows)); err != nil {
			panic(fmt.Sprintf("data: built adjacency %s of %s breaks its rules: %v", d, p.t.Name, err))
		}
		b, err := json.Marshal(refs)
		if err != nil {
			panic(fmt.Sprintf("data: marshal adjacency refs: %v", err))
		}
		if refs == nil {
			b = []byte("[]")
		}
		md[metaAdjPrefix+d.String()] = string(b)
	}
	return md, nil
}

// adjDeltaOnly returns the index metadata of a commit that only inserts
// edges (added, nothing removed) into a head with non-empty pages in both
// directions when the head's delta and the inserts fit one delta
// (adjdelta.go): the head's refs kept as they are and the new delta.
// ok=false: the commit rewrites the pages (and folds any delta).
func (c adjWriter) adjDeltaOnly(p *tablePlan, rows uint64, removed []string, added []rowSrc) (map[string]string, bool, error) {
	if !adjDeltaWrites || !p.head.hasAdj || len(removed) > 0 || len(added) == 0 || len(p.head.adj[dirOut]) == 0 || len(p.head.adj[dirIn]) == 0 {
		return nil, false, nil
	}
	all := append(adjDeltaSrcs(p.head.adjDelta), added...)
	delta, fits, err := encodeAdjDelta(c.g.codec, p.t, all)
	if err != nil || !fits {
		return nil, false, err
	}
	md := map[string]string{metaAdjDeltaKey: delta}
	for _, d := range []adjDir{dirOut, dirIn} {
		refs := p.head.adj[d]
		if err := checkRefs(refs, maxChunkRefs, int64(rows)-int64(len(all))); err != nil {
			panic(fmt.Sprintf("data: adjacency %s of %s with a delta of %d rows breaks its rules: %v", d, p.t.Name, len(all), err))
		}
		b, err := json.Marshal(refs)
		if err != nil {
			panic(fmt.Sprintf("data: marshal adjacency refs: %v", err))
		}
		md[metaAdjPrefix+d.String()] = string(b)
	}
	return md, true, nil
}

// adjScratch builds direction d from every head row (fully loaded) minus
// the removed ids, plus the added rows.
func (c adjWriter) adjScratch(ctx context.Context, p *tablePlan, d adjDir, removed []string, added []rowSrc) ([]adjRef, error) {
	gone := setOf(removed)
	n := len(added)
	for _, rec := range p.head.recs {
		n += int(rec.NumRows())
	}
	rows := make([]rowSrc, 0, n)
	for _, rec := range p.head.recs {
		ids := rec.Column(colID).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			if !gone[ids.Value(i)] {
				rows = append(rows, rowSrc{rec, i})
			}
		}
	}
	pages, err := c.writePages(ctx, p.t, d, append(rows, added...))
	if err != nil {
		return nil, err
	}
	return c.writeChunks(ctx, p.t, d, pages)
}

// adjIncremental rewrites the pages of direction d that a removal (at the
// edge's old key) or an addition (at its new key) falls in, and the chunks
// listing them; every other chunk is kept by reference.
func (c adjWriter) adjIncremental(ctx context.Context, p *tablePlan, d adjDir, removed []string, added []rowSrc) ([]adjRef, error) {
	changes := make([]adjChange, 0, len(removed)+len(added))
	for _, id := range removed {
		from, to, ok := p.head.ends(id)
		if !ok {
			panic(fmt.Sprintf("data: removed edge %q of %s is not in its HEAD view", id, p.t.Name))
		}
		changes = append(changes, adjChange{key: [2]string{from, to}[d], id: id})
	}
	for i := range added {
		changes = append(changes, adjChange{key: srcStr(added[i], d.col()), id: srcID(added[i]), src: &added[i]})
	}
	refs := p.head.adj[d]
	if len(refs) == 0 {
		return c.adjScratch(ctx, p, d, nil, added)
	}
	sortChanges(changes) // each page's changes then merge with its sorted rows in one pass
	gone := setOf(removed)
	return c.rewriteChunks(ctx, p.t, d, refs, true, changes, func(ctx context.Context, pages []adjRef, changes []adjChange) ([]adjRef, error) {
		return c.rewritePages(ctx, p.t, d, pages, changes, gone)
	})
}

// rewriteChunks rewrites, for the index of direction d (refs), the chunks
// that changes fall in: rewrite gives a chunk's new pages from its old ones
// and its changes, and the pages are re-cut into chunks; every other chunk
// is kept by reference. The adjacency and id indexes share it.
//
// A re-cut chunk that overflows is split like a B-tree node: into chunks
// of even size (splitEven) in the middle of its level, so a split never
// leaves a one-ref chunk over a narrow key range (few later keys fall in
// it, and a tree of such chunks grows a level every few hundred random
// commits); greedily (full chunks, the rest last) on the rightmost path
// (rightmost: refs end their level), where ascending keys append, so
// appends keep their chunks full. A rewritten chunk left under half full
// (deletes thinned it) absorbs the unchanged chunk after it, as a
// rewritten page absorbs a short page, so the chunks follow the rows, not
// the history.
func (c adjWriter) rewriteChunks(ctx context.Context, t *Table, d adjDir, refs []adjRef, rightmost bool, changes []adjChange,
	rewrite func(ctx context.Context, pages []adjRef, changes []adjChange) ([]adjRef, error)) ([]adjRef, error) {
	byChunk := groupChanges(refs, changes)
	var out []adjRef
	for ci := 0; ci < len(refs); ci++ {
		ref := refs[ci]
		if len(byChunk[ci]) == 0 {
			out = append(out, ref)
			continue
		}
		chunk, err := c.r.chunk(ctx, t, d, ref)
		if err != nil {
			return nil, err
		}
		last := rightmost && ci == len(refs)-1
		var items []adjRef // the rewritten chunk's refs: its children's (a ref chunk) or its pages
		per := c.g.leafChunkPages(t, d)
		if ref.Level > 0 { // a ref chunk: rewrite its children, then re-cut them at its level
			if items, err = c.rewriteChunks(ctx, t, d, chunk.Pages, last, byChunk[ci], rewrite); err != nil {
				return nil, err
			}
			per = c.g.refChunkRefs()
		} else if items, err = rewrite(ctx, chunk.Pages, byChunk[ci]); err != nil {
			return nil, err
		}
		if len(items) > 0 && 2*len(items) < per && ci+1 < len(refs) && len(byChunk[ci+1]) == 0 {
			// Under half full (deletes thinned it): absorb the unchanged
			// chunk after it, as a rewritten page absorbs a short page
			// after it, so chunks track the rows, not the history.
			next, err := c.r.chunk(ctx, t, d, refs[ci+1])
			if err != nil {
				return nil, err
			}
			items = append(items, next.Pages...)
			ci++
			last = rightmost && ci == len(refs)-1
		}
		chunks, err := c.writeChunksAt(ctx, t, d, items, ref.Level, per, !last)
		if err != nil {
			return nil, err
		}
		out = append(out, chunks...)
	}
	return out, nil
}

// rewritePages rewrites the pages of one chunk that changes fall in, a
// short unchanged page right after a rewritten one absorbed (absorbNext).
func (c adjWriter) rewritePages(ctx context.Context, t *Table, d adjDir, pages []adjRef, changes []adjChange, gone map[string]bool) ([]adjRef, error) {
	byPage := groupChanges(pages, changes)
	var out []adjRef
	for pi := 0; pi < len(pages); pi++ {
		ref := pages[pi]
		if len(byPage[pi]) == 0 {
			out = append(out, ref)
			continue
		}
		rec, err := c.r.pageOnce(ctx, t, d, ref)
		if err != nil {
			return nil, err
		}
		rows := mergePage(rec, d, byPage[pi], gone)
		for pi+1 < len(pages) && len(byPage[pi+1]) == 0 && absorbNext(len(rows), pages[pi+1], AdjPageRows) {
			next, err := c.r.pageOnce(ctx, t, d, pages[pi+1])
			if err != nil {
				return nil, err
			}
			for i := 0; i < int(next.NumRows()); i++ {
				rows = append(rows, rowSrc{next, i})
			}
			pi++
		}
		written, err := c.writeSortedPages(ctx, t, d, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, written...)
	}
	return out, nil
}

// absorbNext reports whether a rewrite of n rows re-cut at size rows per
// page takes in the unchanged page next right after it: next is short
// (fewer than size/4 rows, so reading it costs little) and the merge needs
// no more pages than the n rows alone, so it writes one page fewer. It
// keeps one-row commits that land before a full page's last rows from
// leaving a one-row page behind it at every commit.
func absorbNext(n int, next adjRef, size int) bool {
	m := int(next.Rows)
	return n > 0 && m < size/4 && ceilDiv(n+m, size) == ceilDiv(n, size)
}

// groupChanges assigns each change to the ref it falls in: the last ref
// whose first row is not after the change's (key, id), else the first.
// Group i (of max(len(refs), 1)) keeps its changes' order; the groups
// share one exactly sized array (a bulk commit groups about a million
// changes per direction), counted in slices rather than maps; when the
// changes are in ref order already, the groups are runs of changes itself.
func groupChanges(refs []adjRef, changes []adjChange) [][]adjChange {
	at := make([]int32, len(changes))
	count := make([]int, max(len(refs), 1))
	for j, ch := range changes {
		i := max(sort.Search(len(refs), func(k int) bool { return refs[k].after(ch.key, ch.id) })-1, 0)
		at[j] = int32(i)
		count[i]++
	}
	out := make([][]adjChange, len(count))
	if slices.IsSorted(at) { // sorted changes (adjIncremental): each group is a run of them, no copy
		for i, n := range count {
			out[i], changes = changes[:n:n], changes[n:]
		}
		return out
	}
	backing := make([]adjChange, len(changes))
	for i, n := range count {
		out[i], backing = backing[:0:n], backing[n:]
	}
	for j, i := range at {
		out[i] = append(out[i], changes[j])
	}
	return out
}

// writePages sorts rows by (key, id), cuts them into pages of at most
// AdjPageRows rows, writes each under a fresh name and returns their refs.
func (c adjWriter) writePages(ctx context.Context, t *Table, d adjDir, rows []rowSrc) ([]adjRef, error) {
	sortRows(rows, d.col())
	return c.writeSortedPages(ctx, t, d, rows)
}

// writeSortedPages is writePages of rows already sorted strictly by (key,
// id) (a row out of order is an internal bug: it panics).
func (c adjWriter) writeSortedPages(ctx context.Context, t *Table, d adjDir, rows []rowSrc) ([]adjRef, error) {
	col := d.col()
	checkSortedRows(rows, col)
	var out []adjRef
	for len(rows) > 0 {
		n := min(len(rows), c.g.writePageRows(t, d))
		buf, err := encodeRowsPage(c.g.codec, t, rows[:n])
		ref := adjRef{LoKey: srcStr(rows[0], col), LoID: srcID(rows[0]), HiKey: srcStr(rows[n-1], col), Rows: uint64(n)}
		if err != nil {
			return nil, fmt.Errorf("encode adjacency page of %s: %w", t.Name, err)
		}
		if ref, err = c.putAdj(ctx, t, ref, buf); err != nil {
			return nil, err
		}
		c.g.cacheWrittenPage(ctx, t, d, ref, buf)
		out = append(out, ref)
		rows = rows[n:]
	}
	return out, nil
}

// writeChunks groups page refs into chunks of at most d.chunkPages(t),
// writes each and returns their refs.
func (c adjWriter) writeChunks(ctx context.Context, t *Table, d adjDir, pages []adjRef) ([]adjRef, error) {
	return c.writeChunksAt(ctx, t, d, pages, 0, c.g.leafChunkPages(t, d), false)
}

// writeChunksAt groups refs (pages for level 0, level-1 chunks else) into
// chunks of level level of at most per refs, writes each and returns their
// refs: full chunks and the rest last, or, even, as few chunks as that of
// sizes differing by at most one (splitEven).
func (c adjWriter) writeChunksAt(ctx context.Context, t *Table, d adjDir, pages []adjRef, level, per int, even bool) ([]adjRef, error) {
	var out []adjRef
	sizes := splitEven(len(pages), per, even)
	for len(pages) > 0 {
		n := sizes[len(out)]
		payload := encodeChunkPayload(adjChunk{Table: t.Storage, Dir: d.String(), Level: level, Pages: pages[:n]}, c.g.jsonChunks)
		ref := adjRef{LoKey: pages[0].LoKey, LoID: pages[0].LoID, HiKey: pages[n-1].HiKey, Level: level}
		for _, p := range pages[:n] {
			ref.Rows += p.Rows
		}
		b := format.EncodeAdjacencyChunk(payload)
		ref, err := c.putAdj(ctx, t, ref, b)
		if err != nil {
			return nil, err
		}
		c.g.cacheWrittenChunk(ctx, t, d, ref, b)
		out = append(out, ref)
		pages = pages[n:]
	}
	return out, nil
}

// putAdj writes an adjacency object create-only under a fresh name and
// completes its ref (name, size, CRC-32C).
func (c adjWriter) putAdj(ctx context.Context, t *Table, ref adjRef, b []byte) (adjRef, error) {
	id, err := c.g.mintName()
	if err != nil {
		return adjRef{}, err
	}
	if err := c.g.putFragment(ctx, c.g.keys.Adjacency(t.Storage, id), b); err != nil {
		return adjRef{}, err
	}
	ref.Name, ref.Bytes, ref.CRC32C = id.String(), uint64(len(b)), crc32.Checksum(b, castagnoli)
	return ref, nil
}

// splitEven returns the sizes of the chunks n refs are cut into, at most
// per each (per >= 1): ceil(n/per) chunks, all full but the last, or, with
// even, of sizes differing by at most one, the larger first (n = per+1
// gives two chunks of about per/2: a B-tree node's split).
func splitEven(n, per int, even bool) []int {
	k := (n + per - 1) / per
	sizes := make([]int, k)
	for i := range sizes {
		switch {
		case even:
			sizes[i] = n / k
			if i < n%k {
				sizes[i]++
			}
		case i < k-1:
			sizes[i] = per
		default:
			sizes[i] = n - per*(k-1)
		}
	}
	return sizes
}

func srcStr(s rowSrc, col int) string { return s.rec.Column(col).(*array.String).Value(s.row) }

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
