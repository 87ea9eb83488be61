package data

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow/array"
)

// The id index of a table version (docs/format.md, "Id index"): the
// version's ids, sorted, cut into pages of at most IDPageRows ids
// (front-coded: see encodeIDPage), listed in order by chunks of at
// most IDChunkPages pages (kind-14 adjacency chunks with dir "id"), which
// the table version lists in order under data.adj.id. Pages partition the
// id order (strictly: no id in two pages). It answers "does id exist"
// while reading one chunk and one page, not the whole fragment covering
// it. Written, named and collected exactly like the adjacency index
// (same key space R/adj/<table>/, same chunk kind, same metadata prefix);
// a version without it (written before it existed) is indexed from the
// whole table by its next commit.
//
// Edge tables use larger pages and chunks (EdgeIDPageRows,
// EdgeIDChunkPages) so that the refs an edge table version lists stay
// few: every cold Out/In reads that version.
const (
	IDPageRows       = 512
	IDChunkPages     = 32
	EdgeIDPageRows   = 2048
	EdgeIDChunkPages = 64
	metaIDKey        = metaAdjPrefix + "id"
)

// idPageRows bounds the ids of one id page of table t.
func idPageRows(t *Table) int {
	if t.Edge {
		return EdgeIDPageRows
	}
	return IDPageRows
}

// idPageMagic starts every id page: "gkid" and the page format, 1.
const idPageMagic = "gkid\x01"

// encodeIDPage front-codes ids (valid keys, strictly ascending): the
// magic, then per id the uvarint length of the prefix it shares with the
// previous id (maximal), the uvarint length of the rest, and the rest.
// Deterministic: the same ids always give the same bytes.
func encodeIDPage(ids []string) []byte {
	b := []byte(idPageMagic)
	prev := ""
	for _, id := range ids {
		n := 0
		for n < len(prev) && n < len(id) && prev[n] == id[n] {
			n++
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendUvarint(b, uint64(len(id)-n))
		b = append(b, id[n:]...)
		prev = id
	}
	return b
}

// parseIDPage decodes exactly rows ids from a front-coded page: each a
// valid key, strictly ascending, no byte left over, and the page in its
// canonical form (re-encoding gives the same bytes). Every length is
// checked against the bytes left and MaxIDBytes before use, so it never
// panics and allocates at most rows*MaxIDBytes bounded by len(b).
func parseIDPage(b []byte, rows uint64) ([]string, error) {
	if len(b) < len(idPageMagic) || string(b[:len(idPageMagic)]) != idPageMagic {
		return nil, fmt.Errorf("not an id page (magic)")
	}
	if rows == 0 || rows > uint64(len(b)) {
		return nil, fmt.Errorf("%d ids in %d bytes", rows, len(b))
	}
	rest := b[len(idPageMagic):]
	ids := make([]string, 0, rows)
	prev := ""
	for range rows {
		shared, n := binary.Uvarint(rest)
		if n <= 0 || shared > uint64(len(prev)) {
			return nil, fmt.Errorf("id %d: bad shared prefix length", len(ids))
		}
		rest = rest[n:]
		tail, n := binary.Uvarint(rest)
		if n <= 0 || tail > uint64(len(rest)-n) || shared+tail > MaxIDBytes {
			return nil, fmt.Errorf("id %d: bad suffix length", len(ids))
		}
		rest = rest[n:]
		id := prev[:shared] + string(rest[:tail])
		rest = rest[tail:]
		if p := idProblem(id); p != "" {
			return nil, fmt.Errorf("id %d %s", len(ids), p)
		}
		if len(ids) > 0 && id <= prev {
			return nil, fmt.Errorf("ids not strictly ascending at %d", len(ids))
		}
		ids = append(ids, id)
		prev = id
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the last id", len(rest))
	}
	if !bytes.Equal(encodeIDPage(ids), b) {
		return nil, fmt.Errorf("id page is not in canonical form")
	}
	return ids, nil
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

// idPage returns the decoded ids of id page ref of table t (cached).
func (r *reader) idPage(ctx context.Context, t *Table, ref adjRef) ([]string, error) {
	key := "ids:" + cacheKey(t.Storage, ref.Name)
	if v, ok := r.g.cache.getAny(key); ok {
		return v.([]string), nil
	}
	b, err := r.getChecked(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	ids, err := decodeIDPage(ref, b)
	if err != nil {
		return nil, err
	}
	r.g.cache.put(key, ids, int64(ref.Bytes))
	return ids, nil
}

// decodeIDPage checks and decodes the bytes of id page ref: size and CRC,
// the zstd frame when it is one (storedIDPage), then parseIDPage (ref.Rows
// ids), then the range as referenced. Any
// failure matches ErrCorruptFragment; it never panics.
func decodeIDPage(ref adjRef, b []byte) ([]string, error) {
	if err := checkSum(ref, b); err != nil {
		return nil, err
	}
	raw, err := storedIDPage(b)
	if err != nil {
		return nil, corruptFragment(ref.Name, "id page: %v", err)
	}
	ids, err := parseIDPage(raw, ref.Rows)
	if err != nil {
		return nil, corruptFragment(ref.Name, "id page: %v", err)
	}
	if ids[0] != ref.LoKey || ids[len(ids)-1] != ref.HiKey {
		return nil, corruptFragment(ref.Name, "id page range does not match its reference")
	}
	return ids, nil
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
	if inDelta(v.idDelta, id) {
		return true, nil
	}
	cref, ok, err := r.coveringLeaf(ctx, v.t, dirID, v.ids, id)
	if err != nil || !ok {
		return false, err
	}
	c, err := r.chunk(ctx, v.t, dirID, cref)
	if err != nil {
		return false, err
	}
	pref, ok := covering(c.Pages, id)
	if !ok {
		return false, nil
	}
	ids, err := r.idPage(ctx, v.t, pref)
	if err != nil {
		return false, err
	}
	j := sort.SearchStrings(ids, id)
	return j < len(ids) && ids[j] == id, nil
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

// buildIDIndex writes the id index of the new version of table p.t
// (rows rows) and returns its table-version metadata. On a head version
// with an index it rewrites only the pages (and chunks) an inserted or
// deleted id falls in; otherwise it builds the index from the whole head
// table.
func (c adjWriter) buildIDIndex(ctx context.Context, p *tablePlan, rows uint64) (map[string]string, error) {
	removed := keys(p.deletes)
	added := make([]string, 0, len(p.inserts))
	for _, ref := range p.inserts {
		added = append(added, srcID(rowSrc{p.st.writes[ref.w].rec, ref.row}))
	}
	var refs []adjRef
	var delta []string
	var err error
	switch d, fits := deltaFor(p.head.idDelta, added); {
	case p.head.hasIDs && len(p.head.ids) > 0 && fits && len(removed) == 0 && idDeltaWrites:
		refs, delta = p.head.ids, d // the pages stay: the added ids ride the table version
	case p.head.hasIDs && len(p.head.ids) > 0:
		pageRemoved, pageAdded := foldDelta(p.head.idDelta, removed, added)
		refs, err = c.idIncremental(ctx, p, pageRemoved, pageAdded)
	default:
		refs, err = c.idScratch(ctx, p, removed, added)
	}
	if err == nil && len(delta) == 0 {
		refs, err = c.rootRefs(ctx, p.t, dirID, refs)
	}
	if err != nil {
		return nil, err
	}
	if err := checkRefs(refs, maxChunkRefs, int64(rows)-int64(len(delta))); err != nil {
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
	md := map[string]string{metaIDKey: string(b)}
	if len(delta) > 0 {
		md[metaIDDeltaKey] = string(appendStrings(nil, delta)) // json.Marshal(delta) (jsonenc.go)
	}
	return md, nil
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
	changes := make([]adjChange, 0, len(removed)+len(added))
	for _, id := range removed {
		changes = append(changes, adjChange{key: id, id: id})
	}
	addition := &rowSrc{} // only marks an addition: id pages hold ids, no rows (one for all, not one per id)
	for _, id := range added {
		changes = append(changes, adjChange{key: id, id: id, src: addition})
	}
	gone := setOf(removed)
	return c.rewriteChunks(ctx, p.t, dirID, p.head.ids, true, changes, func(ctx context.Context, pages []adjRef, changes []adjChange) ([]adjRef, error) {
		return c.rewriteIDPages(ctx, p.t, pages, changes, gone)
	})
}

// rewriteIDPages rewrites the id pages of one chunk that changes fall in:
// the ids in gone dropped, the added ids (changes with a src) merged in,
// and a short unchanged page right after a rewritten one absorbed
// (absorbNext).
func (c adjWriter) rewriteIDPages(ctx context.Context, t *Table, pages []adjRef, changes []adjChange, gone map[string]bool) ([]adjRef, error) {
	byPage := groupChanges(pages, changes)
	var out []adjRef
	for pi := 0; pi < len(pages); pi++ {
		pref := pages[pi]
		if len(byPage[pi]) == 0 {
			out = append(out, pref)
			continue
		}
		old, err := c.r.idPage(ctx, t, pref)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, id := range old {
			if !gone[id] {
				ids = append(ids, id)
			}
		}
		for _, ch := range byPage[pi] {
			if ch.src != nil {
				ids = append(ids, ch.id)
			}
		}
		for pi+1 < len(pages) && len(byPage[pi+1]) == 0 && absorbNext(len(ids), pages[pi+1], idPageRows(t)) {
			more, err := c.r.idPage(ctx, t, pages[pi+1])
			if err != nil {
				return nil, err
			}
			ids, pi = append(ids, more...), pi+1
		}
		sort.Strings(ids)
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] { // added ids are new: only a damaged delta repeats a page's id
				return nil, corruptFragment(pref.Name, "id %q is in the id page and added again (a damaged id delta)", ids[i])
			}
		}
		written, err := c.writeIDPages(ctx, t, ids)
		if err != nil {
			return nil, err
		}
		out = append(out, written...)
	}
	return out, nil
}

// writeIDPages sorts ids, cuts them into front-coded pages of at most
// idPageRows(t) (each one zstd frame under the zstd codec: compressIDPage),
// writes each under a fresh name and returns their refs.
func (c adjWriter) writeIDPages(ctx context.Context, t *Table, ids []string) ([]adjRef, error) {
	sort.Strings(ids)
	var out []adjRef
	for len(ids) > 0 {
		n := min(len(ids), c.g.writePageRows(t, dirID))
		ref := adjRef{LoKey: ids[0], LoID: ids[0], HiKey: ids[n-1], Rows: uint64(n)}
		b := compressIDPage(c.g.codec, encodeIDPage(ids[:n]))
		var err error
		if ref, err = c.putAdj(ctx, t, ref, b); err != nil {
			return nil, err
		}
		c.g.cacheWrittenIDPage(ctx, t, ref, b)
		out = append(out, ref)
		ids = ids[n:]
	}
	return out, nil
}

// writeIDIndex is false only in tests that write node table versions as
// they were before the id index existed.
var writeIDIndex = true

// idIndexOf returns the id index metadata of a built table version,
// or nil when writeIDIndex is off.
func (c adjWriter) idIndexOf(ctx context.Context, p *tablePlan, rows uint64) (map[string]string, error) {
	if !writeIDIndex {
		return nil, nil
	}
	return c.buildIDIndex(ctx, p, rows)
}
