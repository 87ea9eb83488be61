package data

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The adjacency delta (format 13, issue #28; docs/format.md "Adjacency
// delta"): a commit that only inserts a few edges into a table whose
// version has a non-empty adjacency index keeps both directions' chunks by
// reference and carries the new rows in the table version, under
// data.adjdelta, as one out-direction page (rows sorted by (from, id), the
// page encoding of the index, base64 inside a JSON object with the page's
// ref), instead of rewriting the out and in pages they fall in and every
// chunk above them (two paths of up to four chunks and a page at 10^7
// edges). The delta holds at most MaxAdjDeltaRows rows in at most
// MaxAdjDeltaBytes stored bytes; the commit that would exceed either
// bound, and every commit that replaces or deletes an edge, folds the
// delta into the pages (the same incremental rewrite, with the delta's
// rows added). So the edges of a version are exactly its pages' plus its
// delta's, disjoint, and each direction's refs count rows minus the
// delta's. A lookup adds the delta's rows whose key matches (no request:
// the delta is in the table version).
const (
	MaxAdjDeltaRows  = 32
	MaxAdjDeltaBytes = 4096
	metaAdjDeltaKey  = "data.adjdelta" // outside the data.adj. prefix: GC marking parses those as refs
	// adjDeltaName names the delta's page in errors and in the cache.
	adjDeltaName = "adjdelta"
)

// adjDeltaJSON is the stored form of a delta: the page's ref (first and
// last key, first id, rows, exact size and CRC-32C of the page bytes) and
// the page bytes in standard padded base64.
type adjDeltaJSON struct {
	LoKey  string `json:"lo"`
	LoID   string `json:"lo_id"`
	HiKey  string `json:"hi"`
	Rows   uint64 `json:"rows"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
	Page   string `json:"page"`
}

// adjDeltaWrites is false only in tests that write the adjacency index as
// format 12 did (every commit rewrites the pages).
var adjDeltaWrites = true

// parseAdjDelta reads the header of the adjacency delta of a table
// version's metadata (ok=false when absent) and its page bytes, checked
// against the header's size and CRC-32C; decoding the rows needs the
// table (decodeAdjDelta).
func parseAdjDelta(md map[string]string) (ref adjRef, page []byte, ok bool, err error) {
	raw, ok := md[metaAdjDeltaKey]
	if !ok {
		return adjRef{}, nil, false, nil
	}
	if len(raw) > 2*MaxAdjDeltaBytes+4096 {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: %d bytes", len(raw))
	}
	var d adjDeltaJSON
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: %v", err)
	}
	if d.Rows == 0 || d.Rows > MaxAdjDeltaRows || d.Bytes == 0 || d.Bytes > MaxAdjDeltaBytes || d.LoKey > d.HiKey {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: %d rows of %d bytes (want 1..%d of at most %d), keys %q..%q", d.Rows, d.Bytes, MaxAdjDeltaRows, MaxAdjDeltaBytes, d.LoKey, d.HiKey)
	}
	if base64.StdEncoding.DecodedLen(len(d.Page)) > MaxAdjDeltaBytes+2 {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: page of %d base64 bytes", len(d.Page))
	}
	page, err = base64.StdEncoding.Strict().DecodeString(d.Page)
	if err != nil {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: page: %v", err)
	}
	ref = adjRef{Name: adjDeltaName, LoKey: d.LoKey, LoID: d.LoID, HiKey: d.HiKey, Rows: d.Rows, Bytes: d.Bytes, CRC32C: d.CRC32C}
	if err := checkSum(ref, page); err != nil {
		return adjRef{}, nil, false, fmt.Errorf("adjacency delta: %v", err)
	}
	return ref, page, true, nil
}

// adjDeltaRows is the number of rows the delta of md holds (0 without
// one), for the refs' row count; a damaged header is an error.
func adjDeltaRows(md map[string]string) (uint64, error) {
	ref, _, ok, err := parseAdjDelta(md)
	if err != nil || !ok {
		return 0, err
	}
	return ref.Rows, nil
}

// decodeAdjDelta decodes the delta of md as a page of table t (nil
// without one): every check a page read makes (decodePage: size, CRC,
// columns, (from, id) order, range) and exactly the header's rows.
func decodeAdjDelta(t *Table, md map[string]string) (arrow.Record, error) {
	ref, page, ok, err := parseAdjDelta(md)
	if err != nil || !ok {
		return nil, err
	}
	rec, err := decodePage(t, dirOut, ref, page)
	if err != nil {
		return nil, err
	}
	if uint64(rec.NumRows()) != ref.Rows {
		rec.Release()
		return nil, fmt.Errorf("adjacency delta: %d rows, its header says %d", rec.NumRows(), ref.Rows)
	}
	return rec, nil
}

// adjDeltaSrcs returns the rows of delta (nil-safe) as row sources.
func adjDeltaSrcs(delta arrow.Record) []rowSrc {
	if delta == nil {
		return nil
	}
	out := make([]rowSrc, delta.NumRows())
	for i := range out {
		out[i] = rowSrc{delta, i}
	}
	return out
}

// adjDeltaIDs returns the edge ids of delta, sorted (nil-safe).
func adjDeltaIDs(delta arrow.Record) []string {
	var ids []string
	for _, s := range adjDeltaSrcs(delta) {
		ids = append(ids, srcID(s))
	}
	sort.Strings(ids)
	return ids
}

// encodeAdjDelta encodes rows (the head's delta and a commit's inserts,
// disjoint) as the metadata value of a delta, or ok=false when they do
// not fit its bounds.
func encodeAdjDelta(c Codec, t *Table, rows []rowSrc) (string, bool, error) {
	if len(rows) == 0 || len(rows) > MaxAdjDeltaRows {
		return "", false, nil
	}
	sorted := append([]rowSrc(nil), rows...)
	sort.Slice(sorted, func(i, j int) bool {
		ki, kj := srcStr(sorted[i], colFrom), srcStr(sorted[j], colFrom)
		return ki < kj || ki == kj && srcID(sorted[i]) < srcID(sorted[j])
	})
	for i := 1; i < len(sorted); i++ {
		if srcID(sorted[i]) == srcID(sorted[i-1]) {
			panic(fmt.Sprintf("data: edge %q added twice to an adjacency delta", srcID(sorted[i])))
		}
	}
	page, err := encodeRowsPage(c, t, sorted)
	if err != nil {
		return "", false, err
	}
	if len(page) > MaxAdjDeltaBytes {
		return "", false, nil
	}
	last := sorted[len(sorted)-1]
	b, err := json.Marshal(adjDeltaJSON{LoKey: srcStr(sorted[0], colFrom), LoID: srcID(sorted[0]), HiKey: srcStr(last, colFrom),
		Rows: uint64(len(sorted)), Bytes: uint64(len(page)), CRC32C: crc32.Checksum(page, castagnoli), Page: base64.StdEncoding.EncodeToString(page)})
	if err != nil {
		panic(fmt.Sprintf("data: marshal adjacency delta: %v", err))
	}
	return string(b), true, nil
}

// deltaAdjacent appends to out the rows of delta whose key in direction d
// is node.
func deltaAdjacent(t *Table, delta arrow.Record, node string, d adjDir, out []Row) []Row {
	if delta == nil {
		return out
	}
	keys := delta.Column(d.col()).(*array.String)
	for j := 0; j < keys.Len(); j++ {
		if keys.Value(j) == node {
			out = append(out, rowAt(t, delta, j))
		}
	}
	return out
}

// foldAdjDelta returns the changes a commit folding delta applies to the
// pages: the rows it adds (the delta's rows it does not remove, then
// added) and the ids it removes from them (the removed ids not in the
// delta).
func foldAdjDelta(delta arrow.Record, removed []string, added []rowSrc) (pageRemoved []string, pageAdded []rowSrc) {
	gone := setOf(removed)
	for _, s := range adjDeltaSrcs(delta) {
		if !gone[srcID(s)] {
			pageAdded = append(pageAdded, s)
		}
	}
	pageAdded = append(pageAdded, added...)
	ids := adjDeltaIDs(delta)
	for _, id := range removed {
		if !inDelta(ids, id) {
			pageRemoved = append(pageRemoved, id)
		}
	}
	return pageRemoved, pageAdded
}

// AdjacencyDelta returns the edges the adjacency delta of a table
// version's metadata holds beyond its pages (none without one), checked
// as a reader checks it: verify adds them to each direction's entries
// before comparing with the fragments.
func AdjacencyDelta(t *Table, md map[string]string) (from, to, ids []string, err error) {
	rec, err := decodeAdjDelta(t, md)
	if err != nil {
		return nil, nil, nil, corruptFragment(metaAdjDeltaKey, "%v", err)
	}
	for _, s := range adjDeltaSrcs(rec) {
		from, to, ids = append(from, srcStr(s, colFrom)), append(to, srcStr(s, colTo)), append(ids, srcID(s))
	}
	if rec != nil {
		rec.Release()
	}
	return from, to, ids, nil
}
