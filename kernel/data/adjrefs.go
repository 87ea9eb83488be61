package data

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// AdjacencyChunks returns the names of the chunks a table version's
// indexes list (R/adj/<table>/<name>), sorted: an edge table's adjacency
// index (data.adj.out, data.adj.in) and any table's id index
// (data.adj.id); none for a version without an index. Garbage collection
// keeps them and what they list (AdjacencyChunkEntries: pages, or the
// chunks below a ref chunk) while it keeps the version.
func AdjacencyChunks(tv kernel.TableVersion) ([]string, error) {
	var names []string
	for _, kv := range tv.Metadata {
		if !strings.HasPrefix(kv.Key, metaAdjPrefix) {
			continue
		}
		var refs []adjRef
		if err := json.Unmarshal([]byte(kv.Value), &refs); err != nil {
			return nil, fmt.Errorf("table %s version %d: %s: %v: %w", tv.Table, tv.Version, kv.Key, err, format.ErrCorrupt)
		}
		for _, r := range refs {
			names = append(names, r.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// DecodeIndexPage checks and decodes one page of a table version's
// adjacency index (dir "out" or "in", t an edge table) or id index (dir
// "id") exactly as a reader does: ref is the page's entry in its chunk's
// page list (JSON), b the page's bytes; size and CRC-32C, decode, order,
// and range as ref records. It returns the page's entries in order: for
// "out" and "in" each edge's key (from or to) and id, for "id" each id as
// both. Any failure matches ErrCorruptFragment; it never panics. verify
// uses it to check indexes against the fragments.
func DecodeIndexPage(t *Table, dir string, ref, b []byte) (keys, ids []string, err error) {
	var r adjRef
	if err := json.Unmarshal(ref, &r); err != nil {
		return nil, nil, corruptFragment("?", "index page ref: %v", err)
	}
	switch {
	case dir == dirID.String():
		ids, err := decodeIDPage(r, b)
		return ids, ids, err
	case !t.Edge || (dir != dirOut.String() && dir != dirIn.String()):
		return nil, nil, corruptFragment(r.Name, "no index direction %q on %s", dir, t.Name)
	}
	d := dirOut
	if dir == dirIn.String() {
		d = dirIn
	}
	rec, err := decodePage(t, d, r, b)
	if err != nil {
		return nil, nil, err
	}
	defer rec.Release()
	kc, ic := rec.Column(d.col()).(*array.String), rec.Column(colID).(*array.String) // checked by decodePage
	for i := 0; i < ic.Len(); i++ {
		keys, ids = append(keys, kc.Value(i)), append(ids, ic.Value(i))
	}
	return keys, ids, nil
}
