package data

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// AdjacencyChunks returns the names of the chunks a table version's
// indexes list (R/adj/<table>/<name>), sorted: an edge table's adjacency
// index (data.adj.out, data.adj.in) and any table's id index
// (data.adj.id); none for a version without an index. Garbage collection
// keeps them and the pages they list (AdjacencyChunkPages) while it keeps
// the version.
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

// AdjacencyChunkPages returns the names of the pages an adjacency or id
// chunk object (its stored bytes) lists.
func AdjacencyChunkPages(b []byte) ([]string, error) {
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, err
	}
	var c adjChunk
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("adjacency chunk: %v: %w", err, format.ErrCorrupt)
	}
	names := make([]string, len(c.Pages))
	for i, p := range c.Pages {
		names[i] = p.Name
	}
	return names, nil
}
