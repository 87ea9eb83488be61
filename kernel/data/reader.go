package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// Table-version metadata written by the data plane.
const (
	metaKeyFormat   = "data.format"    // "1"
	metaFragPrefix  = "data.fragment." // + fragment name -> FragmentInfo JSON
	dataFormatValue = "1"
)

// tableContent is the kernel content of a table version with these
// fragments, in order.
// memo is nil or the handle's (memo.go).
func tableContent(infos []FragmentInfo, rows uint64, memo *codecMemo) kernel.TableContent {
	md := map[string]string{metaKeyFormat: dataFormatValue}
	names := make([]string, len(infos))
	var buf []byte
	for i := range infos {
		names[i] = infos[i].Name
		buf = appendFragmentInfo(buf[:0], &infos[i]) // json.Marshal(infos[i]) (jsonenc.go)
		md[metaFragPrefix+infos[i].Name] = string(buf)
	}
	addEmbeds(md, infos, memo)
	return kernel.TableContent{Fragments: names, Rows: rows, Metadata: md}
}

// fragmentInfos reads the fragment list of a table version and checks it
// describes the version exactly: one info per fragment, none extra, sane
// ranges, and row counts that add up. memo is nil or the handle's
// (memo.go): an info it parsed before is not parsed again.
//
// md is tv's metadata as a map (nil: built here from tv).
func fragmentInfos(t *Table, tv kernel.TableVersion, md map[string]string, memo *codecMemo) ([]FragmentInfo, []fragStats, error) {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("table %s version %d: %s: %w", tv.Table, tv.Version, fmt.Sprintf(f, a...), format.ErrCorrupt)
	}
	if md == nil {
		md = map[string]string{}
		for _, kv := range tv.Metadata {
			md[kv.Key] = kv.Value
		}
	}
	if len(tv.Fragments) > 0 && md[metaKeyFormat] != dataFormatValue {
		return nil, nil, bad("data format %q, want %q", md[metaKeyFormat], dataFormatValue)
	}
	infos := make([]FragmentInfo, len(tv.Fragments))
	stats := make([]fragStats, len(tv.Fragments))
	var rows uint64
	for i, name := range tv.Fragments {
		raw, ok := md[metaFragPrefix+name]
		if !ok {
			return nil, nil, bad("fragment %s has no info", name)
		}
		if m, ok := memo.info(t, raw); ok { // raw parsed, sane and its stats checked before
			infos[i], stats[i] = m.info, m.stats
			infos[i].Name = name
			if _, err := ulid.ParseStrict(name); err != nil {
				return nil, nil, bad("fragment %s info %+v is not sane", name, infos[i])
			}
			rows += m.info.Rows
			continue
		}
		if pf, ok := parsePlainInfo(raw); ok { // what json.Unmarshal decodes (jsonenc.go)
			infos[i] = pf
		} else if err := json.Unmarshal([]byte(raw), &infos[i]); err != nil {
			return nil, nil, bad("fragment %s info: %v", name, err)
		}
		infos[i].Name = name
		f := infos[i]
		if _, err := ulid.ParseStrict(name); err != nil || f.Rows == 0 || f.Bytes == 0 || f.MinID > f.MaxID {
			return nil, nil, bad("fragment %s info %+v is not sane", name, f)
		}
		st, err := decodeStats(t, f)
		if err != nil {
			return nil, nil, bad("fragment %s: %v", name, err)
		}
		stats[i] = st
		memo.putInfo(t, raw, memoInfo{f, st})
		rows += f.Rows
	}
	frags := 0
	for k := range md { //detlint:ordered only counts keys
		if strings.HasPrefix(k, metaFragPrefix) {
			frags++
		}
	}
	if frags != len(tv.Fragments) || rows != tv.Rows {
		return nil, nil, bad("%d fragment infos for %d fragments, %d rows for %d", frags, len(tv.Fragments), rows, tv.Rows)
	}
	return infos, stats, nil
}

// hasInlineInfo reports whether md holds an inline fragment info.
func hasInlineInfo(md map[string]string) bool {
	for k := range md { //detlint:ordered only tests for a prefix
		if strings.HasPrefix(k, metaFragPrefix) {
			return true
		}
	}
	return false
}

// reader loads table views and fragments for one snapshot or transaction
// through the handle's fragment cache (fragments are immutable).
type reader struct {
	g   *Graph
	cat *catalog

	budget *byteBudget // nil: unbounded; else adjacency fetches are charged
}

// byteBudget bounds the bytes a traversal's adjacency fetches may read.
type byteBudget struct {
	spent, max int64
}

func newReader(g *Graph, cat *catalog) *reader {
	return &reader{g: g, cat: cat}
}

// view returns the (unloaded) view of table at pin; ok=false pins nothing
// (an empty table).
func (r *reader) view(ctx context.Context, t *Table, pin kernel.TablePin) (*tableView, error) {
	if pin == (kernel.TablePin{}) {
		return newTableView(t, nil, 0), nil
	}
	tv, err := r.g.k.ReadPinned(ctx, pin)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", t.Name, err)
	}
	return r.viewOf(t, tv)
}

// viewAt returns the view of table version tv as the kernel handed it to
// a Build or a Revalidate (the zero version of an unpinned table: empty).
// It reads nothing: tv may ride its manifest (format 11).
func (r *reader) viewAt(t *Table, tv kernel.TableVersion) (*tableView, error) {
	if tv.Ref() == (kernel.TableRef{}) {
		return newTableView(t, nil, 0), nil
	}
	return r.viewOf(t, tv)
}

// viewOf returns the view of table version tv: its inline fragment infos,
// or its fragment chunk refs (paged: no info loaded yet), and its indexes.
func (r *reader) viewOf(t *Table, tv kernel.TableVersion) (*tableView, error) {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	refs, paged, err := parseFragRefs(md, tv.Rows)
	if err != nil || (paged && (len(tv.Fragments) > 0 || md[metaKeyFormat] != dataFormatValue || hasInlineInfo(md))) {
		return nil, fmt.Errorf("table %s version %d: %v (paged and inline, or another data format): %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	embeds, err := parseEmbeds(md, r.g.memo)
	if err != nil {
		return nil, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	var v *tableView
	if paged {
		v = pagedView(t, refs, tv.Rows)
		v.embeds = embeds
	} else {
		infos, stats, err := fragmentInfos(t, tv, md, r.g.memo)
		if err != nil {
			return nil, err
		}
		if attachEmbeds(infos, embeds) != len(embeds) {
			return nil, fmt.Errorf("table %s version %d: embeds a fragment it does not list: %w", tv.Table, tv.Version, format.ErrCorrupt)
		}
		v = newTableView(t, infos, tv.Rows)
		v.stats = stats
	}
	var deltaRows uint64
	if t.Edge { // a delta is an edge page: decoded once, before the refs that count without it
		if v.adjDelta, err = decodeAdjDelta(t, md); err != nil {
			return nil, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
		}
		if v.adjDelta != nil {
			deltaRows = uint64(v.adjDelta.NumRows())
		}
	}
	if v.adj, v.hasAdj, err = parseAdjacency(md, tv.Rows, deltaRows); err != nil || (v.hasAdj && !t.Edge) {
		return nil, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	if v.idDelta, err = parseIDDelta(md); err != nil || uint64(len(v.idDelta)) > tv.Rows {
		return nil, fmt.Errorf("table %s version %d: %v (%d delta ids): %w", tv.Table, tv.Version, err, len(v.idDelta), format.ErrCorrupt)
	}
	if v.ids, v.hasIDs, err = parseIDIndex(md, tv.Rows-uint64(len(v.idDelta))); err != nil {
		return nil, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	if len(v.idDelta) > 0 && len(v.ids) == 0 {
		return nil, fmt.Errorf("table %s version %d: an id delta without a non-empty id index: %w", tv.Table, tv.Version, format.ErrCorrupt)
	}
	return v, nil
}

// load makes fragment i of v available.
func (r *reader) load(ctx context.Context, v *tableView, i int) error {
	if v.recs[i] != nil {
		return nil
	}
	if !v.fragKnown(i) {
		panic(fmt.Sprintf("data: load of fragment %d of %s whose chunk was not loaded", i, v.t.Name))
	}
	info := v.frags[i]
	key := cacheKey(v.t.cacheID, info.Name)
	if rec, ok := r.g.cache.get(key); ok {
		v.recs[i] = rec
		return nil
	}
	rec, err := r.fetch(ctx, v.t, info)
	if err != nil {
		return err
	}
	r.g.cache.put(key, rec, cachedBytes(rec, info.Bytes))
	v.recs[i] = rec
	v.bySource, v.byNode = nil, nil
	return nil
}

// fetch GETs and decodes one fragment (an embedded one from its bytes in
// the table version: no request).
func (r *reader) fetch(ctx context.Context, t *Table, info FragmentInfo) (arrow.Record, error) {
	if info.embed != nil {
		return DecodeFragment(t, info, info.embed)
	}
	id, err := ulid.ParseStrict(info.Name)
	if err != nil {
		return nil, corruptFragment(info.Name, "name is not a ULID")
	}
	b, err := r.g.get(ctx, r.g.keys.Data(t.Storage, id))
	if errors.Is(err, objstore.ErrNotFound) {
		// Named by a table version, so it existed: garbage collection
		// removed it (the snapshot is outside retention and unpinned).
		return nil, fmt.Errorf("read fragment %s of %s: %w (%w)", info.Name, t.Name, kernel.ErrReclaimed, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read fragment %s of %s: %w", info.Name, t.Name, err)
	}
	return DecodeFragment(t, info, b)
}

// scanFetch returns fragment info of t for a scan, with a reference the
// caller releases: the cached record when there is one, else a fresh fetch
// that is not cached (a scan must not flush the point reads' working set).
func (r *reader) scanFetch(ctx context.Context, t *Table, info FragmentInfo) (arrow.Record, error) {
	if rec, ok := r.g.cache.get(cacheKey(t.cacheID, info.Name)); ok {
		rec.Retain()
		return rec, nil
	}
	return r.fetch(ctx, t, info)
}

// loadAll loads every fragment of v.
func (r *reader) loadAll(ctx context.Context, v *tableView) error {
	if err := r.ensureFrags(ctx, v); err != nil {
		return err
	}
	for i := range v.frags {
		if err := r.load(ctx, v, i); err != nil {
			return err
		}
	}
	return nil
}

// loadIDs loads every fragment whose id range covers one of ids (sorted
// or not), so lookups of those ids are answerable.
func (r *reader) loadIDs(ctx context.Context, v *tableView, ids []string) error {
	if len(ids) == 0 || len(v.frags) == 0 {
		return nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	for _, id := range sorted {
		if err := r.loadChunksFor(ctx, v, id); err != nil {
			return err
		}
	}
	for i, f := range v.frags {
		if !v.fragKnown(i) {
			continue
		}
		j := sort.SearchStrings(sorted, f.MinID)
		if j < len(sorted) && sorted[j] <= f.MaxID {
			if err := r.load(ctx, v, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadTail loads the last n fragments of v (their infos first, when
// paged: only the chunks on their paths).
func (r *reader) loadTail(ctx context.Context, v *tableView, n int) error {
	for i := len(v.frags) - n; i < len(v.frags); i++ {
		if err := r.loadFragOf(ctx, v, i); err != nil {
			return err
		}
		if err := r.load(ctx, v, i); err != nil {
			return err
		}
	}
	return nil
}

// pinOf returns the table ref a snapshot pins for t's storage table
// (zero if none). The storage table is a type's identity across schemas:
// a renamed type keeps it.
func pinOf(s kernel.Snapshot, t *Table) kernel.TablePin { return pinRef(s, t.Storage) }

// pin returns the pin s has for type typ's storage table.
func (c *catalog) pin(s kernel.Snapshot, typ string) kernel.TablePin { return pinRef(s, c.store(typ)) }

// pinRef returns the pin s has for the kernel table (zero if none): a
// type's storage table, not its name (pinOf, catalog.pin). A pin, not a
// reference: its version may ride the manifest (format 11), and a reader
// reads it from the pin (kernel.Graph.ReadPinned). Two pins of one
// snapshot-independent version compare equal.
func pinRef(s kernel.Snapshot, table string) kernel.TablePin {
	if p, ok := s.Table(table); ok {
		return p
	}
	return kernel.TablePin{}
}
