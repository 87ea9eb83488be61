package data

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The id index of a node table version (docs/format.md, "Id index"): the
// version's ids, sorted, cut into pages of at most IDPageRows ids (Arrow
// IPC files with the single column id), listed in order by chunks of at
// most IDChunkPages pages (kind-14 adjacency chunks with dir "id"), which
// the table version lists in order under data.adj.id. Pages partition the
// id order (strictly: no id in two pages). It answers "does node id
// exist" while reading one chunk and one page, not the node's whole
// fragment. Written, named and collected exactly like the adjacency index
// (same key space R/adj/<table>/, same chunk kind, same metadata prefix);
// a version without it (written before it existed) is indexed from the
// whole table by its next commit.
const (
	IDPageRows   = 512
	IDChunkPages = 32
	metaIDKey    = metaAdjPrefix + "id"
)

// idTable is the table of t's id pages: t's name and its id column only.
func idTable(t *Table) *Table {
	return &Table{Name: t.Name, arrow: arrow.NewSchema([]arrow.Field{t.arrow.Field(colID)}, nil)}
}

// checkIDRefs adds the id index's rule to checkRefs: a ref's first row is
// its own key (LoID == LoKey) and refs are strictly disjoint.
func checkIDRefs(refs []adjRef) error {
	for i, r := range refs {
		if r.LoID != r.LoKey {
			return fmt.Errorf("id index ref %s: lo_id %q is not lo %q", r.Name, r.LoID, r.LoKey)
		}
		if i > 0 && refs[i-1].HiKey >= r.LoKey {
			return fmt.Errorf("id index refs %s and %s overlap", refs[i-1].Name, r.Name)
		}
	}
	return nil
}

// parseIDIndex reads the id index refs of a table version's metadata:
// ok=false when the version has none.
func parseIDIndex(md map[string]string, rows uint64) (refs []adjRef, ok bool, err error) {
	raw, ok := md[metaIDKey]
	if !ok {
		return nil, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &refs); err != nil {
		return nil, false, fmt.Errorf("id index: %v", err)
	}
	if err := checkRefs(refs, maxChunkRefs, int64(rows)); err != nil {
		return nil, false, fmt.Errorf("id index: %v", err)
	}
	if err := checkIDRefs(refs); err != nil {
		return nil, false, err
	}
	return refs, true, nil
}

// --- reading ----------------------------------------------------------------

// idPage returns the decoded id page ref of node table t (cached).
func (r *reader) idPage(ctx context.Context, t *Table, ref adjRef) (arrow.Record, error) {
	key := cacheKey(t.Name, ref.Name)
	if rec, ok := r.g.cache.get(key); ok {
		return rec, nil
	}
	b, err := r.getChecked(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	rec, err := decodeIDPage(t, ref, b)
	if err != nil {
		return nil, err
	}
	r.g.cache.put(key, rec, int64(ref.Bytes))
	return rec, nil
}

// decodeIDPage checks and decodes the bytes of id page ref: size and CRC,
// an Arrow IPC file of t's id column, valid ids strictly ascending, row
// count and range as referenced. Any failure matches ErrCorruptFragment;
// it never panics.
func decodeIDPage(t *Table, ref adjRef, b []byte) (arrow.Record, error) {
	if err := checkSum(ref, b); err != nil {
		return nil, err
	}
	it := idTable(t)
	rec, err := DecodeFragment(it, FragmentInfo{Name: ref.Name, Rows: ref.Rows, Bytes: ref.Bytes, CRC32C: ref.CRC32C}, b)
	if err != nil {
		return nil, err
	}
	if err := checkRecord(it, rec); err != nil {
		rec.Release()
		return nil, corruptFragment(ref.Name, "id page: %v", err)
	}
	ids := rec.Column(colID).(*array.String)
	if ids.Value(0) != ref.LoKey || ids.Value(ids.Len()-1) != ref.HiKey {
		rec.Release()
		return nil, corruptFragment(ref.Name, "id page range does not match its reference")
	}
	return rec, nil
}

// covering returns the ref of refs (strictly disjoint, ascending) whose
// range holds id.
func covering(refs []adjRef, id string) (adjRef, bool) {
	i := sort.Search(len(refs), func(k int) bool { return refs[k].HiKey >= id })
	if i < len(refs) && refs[i].LoKey <= id {
		return refs[i], true
	}
	return adjRef{}, false
}

// idExists reports whether id is a row of v, through v's id index: at most
// one chunk and one page.
func (r *reader) idExists(ctx context.Context, v *tableView, id string) (bool, error) {
	cref, ok := covering(v.ids, id)
	if !ok {
		return false, nil
	}
	c, err := r.chunk(ctx, v.t, dirID, cref)
	if err != nil {
		return false, err
	}
	pref, ok := covering(c.Pages, id)
	if !ok {
		return false, nil
	}
	rec, err := r.idPage(ctx, v.t, pref)
	if err != nil {
		return false, err
	}
	ids := rec.Column(colID).(*array.String)
	j := sort.Search(ids.Len(), func(k int) bool { return ids.Value(k) >= id })
	return j < ids.Len() && ids.Value(j) == id, nil
}

// notePresence makes v.has answerable for ids: through the id index when
// v has one (recording each answer in v.present), else by loading the
// fragments that may hold them.
func (r *reader) notePresence(ctx context.Context, v *tableView, ids []string) error {
	if !v.hasIDs {
		return r.loadIDs(ctx, v, ids)
	}
	for _, id := range ids {
		if _, ok := v.present[id]; ok {
			continue
		}
		ok, err := r.idExists(ctx, v, id)
		if err != nil {
			return err
		}
		if v.present == nil {
			v.present = map[string]bool{}
		}
		v.present[id] = ok
	}
	return nil
}

// --- building -----------------------------------------------------------------

// buildIDIndex writes the id index of the new version of node table p.t
// (rows rows) and returns its table-version metadata. On a head version
// with an index it rewrites only the pages (and chunks) an inserted or
// deleted id falls in; otherwise it builds the index from the whole head
// table.
func (c adjWriter) buildIDIndex(ctx context.Context, p *tablePlan, rows uint64) (map[string]string, error) {
	removed := keys(p.deletes)
	var added []string
	for _, ref := range p.inserts {
		added = append(added, srcID(rowSrc{p.st.writes[ref.w].rec, ref.row}))
	}
	var refs []adjRef
	var err error
	if p.head.hasIDs && len(p.head.ids) > 0 {
		refs, err = c.idIncremental(ctx, p, removed, added)
	} else {
		refs, err = c.idScratch(ctx, p, removed, added)
	}
	if err != nil {
		return nil, err
	}
	if err := checkRefs(refs, maxChunkRefs, int64(rows)); err != nil {
		panic(fmt.Sprintf("data: built id index of %s breaks its rules: %v", p.t.Name, err))
	}
	if err := checkIDRefs(refs); err != nil {
		panic(fmt.Sprintf("data: built id index of %s breaks its rules: %v", p.t.Name, err))
	}
	b, err := json.Marshal(refs)
	if err != nil {
		panic(fmt.Sprintf("data: marshal id index refs: %v", err))
	}
	if refs == nil {
		b = []byte("[]")
	}
	return map[string]string{metaIDKey: string(b)}, nil
}

// idScratch builds the index from every head id (the head loaded whole)
// minus removed, plus added.
func (c adjWriter) idScratch(ctx context.Context, p *tablePlan, removed, added []string) ([]adjRef, error) {
	if p.head.rows > 0 {
		if err := c.r.loadAll(ctx, p.head); err != nil {
			return nil, err
		}
	}
	gone := setOf(removed)
	var ids []string
	for _, rec := range p.head.recs {
		col := rec.Column(colID).(*array.String)
		for i := 0; i < col.Len(); i++ {
			if !gone[col.Value(i)] {
				ids = append(ids, col.Value(i))
			}
		}
	}
	pages, err := c.writeIDPages(ctx, p.t, append(ids, added...))
	if err != nil {
		return nil, err
	}
	return c.writeChunks(ctx, p.t, dirID, pages)
}

// idIncremental rewrites the pages an inserted or removed id falls in and
// the chunks listing them; every other chunk is kept by reference.
func (c adjWriter) idIncremental(ctx context.Context, p *tablePlan, removed, added []string) ([]adjRef, error) {
	var changes []adjChange
	for _, id := range removed {
		changes = append(changes, adjChange{key: id, id: id})
	}
	for _, id := range added {
		changes = append(changes, adjChange{key: id, id: id, src: &rowSrc{}})
	}
	refs := p.head.ids
	byChunk := groupChanges(refs, changes)
	gone := setOf(removed)
	var out []adjRef
	for ci, ref := range refs {
		if len(byChunk[ci]) == 0 {
			out = append(out, ref)
			continue
		}
		chunk, err := c.r.chunk(ctx, p.t, dirID, ref)
		if err != nil {
			return nil, err
		}
		byPage := groupChanges(chunk.Pages, byChunk[ci])
		var pages []adjRef
		for pi, pref := range chunk.Pages {
			if len(byPage[pi]) == 0 {
				pages = append(pages, pref)
				continue
			}
			rec, err := c.r.idPage(ctx, p.t, pref)
			if err != nil {
				return nil, err
			}
			var ids []string
			col := rec.Column(colID).(*array.String)
			for i := 0; i < col.Len(); i++ {
				if !gone[col.Value(i)] {
					ids = append(ids, col.Value(i))
				}
			}
			for _, ch := range byPage[pi] {
				if ch.src != nil {
					ids = append(ids, ch.id)
				}
			}
			written, err := c.writeIDPages(ctx, p.t, ids)
			if err != nil {
				return nil, err
			}
			pages = append(pages, written...)
		}
		chunks, err := c.writeChunks(ctx, p.t, dirID, pages)
		if err != nil {
			return nil, err
		}
		out = append(out, chunks...)
	}
	return out, nil
}

// writeIDPages sorts ids, cuts them into pages of at most IDPageRows,
// writes each under a fresh name and returns their refs.
func (c adjWriter) writeIDPages(ctx context.Context, t *Table, ids []string) ([]adjRef, error) {
	sort.Strings(ids)
	it := idTable(t)
	var out []adjRef
	for len(ids) > 0 {
		n := min(len(ids), IDPageRows)
		b := array.NewRecordBuilder(goAlloc, it.arrow)
		b.Field(colID).(*array.StringBuilder).AppendValues(ids[:n], nil)
		rec := b.NewRecord()
		b.Release()
		buf, err := encodeIPC(it, rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("encode id page of %s: %w", t.Name, err)
		}
		ref := adjRef{LoKey: ids[0], LoID: ids[0], HiKey: ids[n-1], Rows: uint64(n)}
		if ref, err = c.putAdj(ctx, t, ref, buf); err != nil {
			return nil, err
		}
		out = append(out, ref)
		ids = ids[n:]
	}
	return out, nil
}

// writeIDIndex is false only in tests that write node table versions as
// they were before the id index existed.
var writeIDIndex = true

// idIndexOf returns the id index metadata of a built node table version,
// or nil when writeIDIndex is off.
func (c adjWriter) idIndexOf(ctx context.Context, p *tablePlan, rows uint64) (map[string]string, error) {
	if !writeIDIndex {
		return nil, nil
	}
	return c.buildIDIndex(ctx, p, rows)
}
