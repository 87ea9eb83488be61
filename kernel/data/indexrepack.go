package data

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
)

// Repacking the indexes of a table version (docs/format.md, "Repacking
// the indexes"): a commit rewrites only the pages its changes fall in,
// re-cut from the left at the page size, so inserts in the middle of a
// full page leave a short page behind it, and the pages (and the chunks
// listing them) grow with the number of commits, not the rows. A
// compaction repacks every index direction whose pages exceed the minimum
// its rows need by more than a quarter plus one: it re-cuts the pages into
// full ones (every page but the last holds exactly the page size; a full
// page met before any short one is kept by name) and lists them in full
// chunks, so a repacked direction holds ceil(rows/page size) pages and
// ceil(pages/chunk size) chunks. The page and chunk sizes are the ones
// the handle writes (writePageRows, leafChunkPages: Options.IndexFanout
// shapes them), so that a repacked direction does not qualify again. The
// old objects stay with the versions that name them and are collected
// with them.

// indexDir is one index direction of a table version: its metadata key,
// its chunk refs and the page refs those chunks list, in order.
type indexDir struct {
	d      adjDir
	key    string
	rows   uint64 // the rows its pages hold (an id index's: the version's rows minus its delta)
	chunks []adjRef
	pages  []adjRef
}

// indexDirs lists the index directions a version of t carries.
func indexDirs(t *Table) []adjDir {
	if t.Edge {
		return []adjDir{dirOut, dirIn, dirID}
	}
	return []adjDir{dirID}
}

// pageRows bounds the rows of one page of direction d of table t.
func (d adjDir) pageRows(t *Table) int {
	if d == dirID {
		return idPageRows(t)
	}
	return AdjPageRows
}

// ceilDiv is a/b rounded up (b > 0).
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// repackWorth reports whether an index direction of rows rows held in
// pages pages listed by chunks chunks fills its objects poorly enough to
// repack: more pages than the minimum plus a quarter plus one, or more
// chunks than its pages need plus a quarter plus one. A repacked direction
// never qualifies again until commits split it.
func repackWorth(rows, pages, chunks, pageRows, chunkPages int) bool {
	minPages := ceilDiv(rows, pageRows)
	minChunks := ceilDiv(pages, chunkPages)
	return pages > minPages+minPages/4+1 || chunks > minChunks+minChunks/4+1
}

// indexesToRepack returns the index directions of version tv of t worth
// repacking (repackWorth), their pages loaded from their chunks: nil for
// none, or for a version without an index (its next commit indexes it
// whole).
func (r *reader) indexesToRepack(ctx context.Context, t *Table, tv kernel.TableVersion) ([]indexDir, error) {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	var refs [3][]adjRef
	delta, err := parseIDDelta(md)
	if err != nil || uint64(len(delta)) > tv.Rows {
		return nil, corruptFragment("table "+t.Name, "%v (%d delta ids)", err, len(delta))
	}
	idRows := tv.Rows - uint64(len(delta))
	ids, hasIDs, err := parseIDIndex(md, idRows)
	if err != nil {
		return nil, corruptFragment("table "+t.Name, "%v", err)
	}
	refs[dirID] = ids
	has := [3]bool{dirID: hasIDs}
	adjRows := tv.Rows // the out and in pages' rows: the version's less its adjacency delta's
	if t.Edge {
		deltaRows, err := adjDeltaRows(md)
		if err != nil || deltaRows > tv.Rows {
			return nil, corruptFragment("table "+t.Name, "%v (%d adjacency delta rows)", err, deltaRows)
		}
		adjRows -= deltaRows
		adj, ok, err := parseAdjacency(md, tv.Rows, deltaRows)
		if err != nil {
			return nil, corruptFragment("table "+t.Name, "%v", err)
		}
		refs[dirOut], refs[dirIn], has[dirOut], has[dirIn] = adj[dirOut], adj[dirIn], ok, ok
	}
	var out []indexDir
	for _, d := range indexDirs(t) {
		if !has[d] || len(refs[d]) == 0 {
			continue
		}
		leaves, err := r.leafChunks(ctx, t, d, refs[d])
		if err != nil {
			return nil, err
		}
		dir := indexDir{d: d, key: metaAdjPrefix + d.String(), rows: adjRows, chunks: leaves}
		if d == dirID {
			dir.rows = idRows
		}
		for _, cref := range leaves {
			c, err := r.chunk(ctx, t, d, cref)
			if err != nil {
				return nil, err
			}
			dir.pages = append(dir.pages, c.Pages...)
		}
		if repackWorth(int(dir.rows), len(dir.pages), len(dir.chunks), r.g.writePageRows(t, d), r.g.leafChunkPages(t, d)) {
			out = append(out, dir)
		}
	}
	return out, nil
}

// repackIndex writes direction dir of t as full pages and full chunks and
// returns its new chunk refs (holding the same rows in the same order).
func (c adjWriter) repackIndex(ctx context.Context, t *Table, dir indexDir) ([]adjRef, error) {
	var pages []adjRef
	var err error
	if dir.d == dirID {
		pages, err = c.repackIDPages(ctx, t, dir.pages)
	} else {
		pages, err = c.repackAdjPages(ctx, t, dir.d, dir.pages)
	}
	if err != nil {
		return nil, err
	}
	chunks, err := c.writeChunks(ctx, t, dir.d, pages)
	if err != nil {
		return nil, err
	}
	return c.rootRefs(ctx, t, dir.d, chunks)
}

// repackIDPages re-cuts id pages (in order) into pages of exactly the
// handle's page size (writePageRows) ids but the last, keeping by name
// the full pages met before any short one.
func (c adjWriter) repackIDPages(ctx context.Context, t *Table, pages []adjRef) ([]adjRef, error) {
	size := c.g.writePageRows(t, dirID)
	var out []adjRef
	var pend []string
	for _, p := range pages {
		if len(pend) == 0 && int(p.Rows) == size {
			out = append(out, p)
			continue
		}
		ids, err := c.r.idPage(ctx, t, p)
		if err != nil {
			return nil, err
		}
		pend = append(pend, ids...)
		for len(pend) >= size {
			w, err := c.writeIDPages(ctx, t, append([]string(nil), pend[:size]...))
			if err != nil {
				return nil, err
			}
			out, pend = append(out, w...), pend[size:]
		}
	}
	if len(pend) > 0 {
		w, err := c.writeIDPages(ctx, t, pend)
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	return out, nil
}

// repackAdjPages re-cuts the adjacency pages of direction d (in (key, id)
// order) into pages of exactly the handle's page size (writePageRows) rows
// but the last, keeping by name the full pages met before any short one.
func (c adjWriter) repackAdjPages(ctx context.Context, t *Table, d adjDir, pages []adjRef) ([]adjRef, error) {
	size := c.g.writePageRows(t, d)
	var out []adjRef
	var pend []rowSrc
	for _, p := range pages {
		if len(pend) == 0 && int(p.Rows) == size {
			out = append(out, p)
			continue
		}
		rec, err := c.r.page(ctx, t, d, p)
		if err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			pend = append(pend, rowSrc{rec, i})
		}
		for len(pend) >= size {
			w, err := c.writePages(ctx, t, d, append([]rowSrc(nil), pend[:size]...))
			if err != nil {
				return nil, err
			}
			out, pend = append(out, w...), pend[size:]
		}
	}
	if len(pend) > 0 {
		w, err := c.writePages(ctx, t, d, pend)
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	return out, nil
}

// repackIndexes writes the repacked directions dirs of a version of t
// holding rows rows and sets their metadata (key to chunk refs) in md.
func (c adjWriter) repackIndexes(ctx context.Context, t *Table, dirs []indexDir, rows uint64, md map[string]string) error {
	for _, dir := range dirs {
		refs, err := c.repackIndex(ctx, t, dir)
		if err != nil {
			return err
		}
		if dir.rows > rows {
			panic(fmt.Sprintf("data: %s index of %s holds %d rows of %d", dir.d, t.Name, dir.rows, rows))
		}
		if err := checkRefs(refs, maxChunkRefs, int64(dir.rows)); err != nil {
			panic(fmt.Sprintf("data: repacked %s index of %s breaks its rules: %v", dir.d, t.Name, err))
		}
		if dir.d == dirID {
			if err := checkIDRefs(refs); err != nil {
				panic(fmt.Sprintf("data: repacked id index of %s breaks its rules: %v", t.Name, err))
			}
		}
		b, err := json.Marshal(refs)
		if err != nil {
			panic(fmt.Sprintf("data: marshal repacked index refs: %v", err))
		}
		md[dir.key] = string(b)
	}
	return nil
}
