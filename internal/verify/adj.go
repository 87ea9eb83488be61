package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// RuleAdjacency: an adjacency or id chunk or page (R/adj/, docs/format.md
// "Adjacency index", "Id index") whose size or CRC-32C differs from its ref, a chunk
// whose envelope or payload does not decode, a page that does not decode
// or is out of order or range, refs that do not parse, or an index that
// lists other entries than its version's fragments hold.
const RuleAdjacency = "adjacency"

// maxAdjRefs bounds the refs of one direction or chunk verify reads.
const maxAdjRefs = 1 << 16

// adjRefJSON is the part of an adjacency ref verify checks: the object's
// name, exact size and CRC-32C.
type adjRefJSON struct {
	Name   string `json:"name"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
	Level  int    `json:"level"` // of the chunk it names (format 10); 0 for pages
}

// checkAdjacency checks the indexes a table version lists — an edge
// table's adjacency index (data.adj.out and data.adj.in), any table's
// id index (data.adj.id) — each object once: every chunk's size, CRC-32C,
// envelope and page list, and every page's size, CRC-32C, decode, order and
// range. It records each direction's multiset hash of entries, which
// indexMatchesRows compares with the version's fragments. A version
// without an index (older versions) has nothing to check.
func (v *verifier) checkAdjacency(ctx context.Context, tvKey, table string, md map[string]string) {
	delta := v.adjDelta(ctx, tvKey, table, md)
	for _, dir := range []string{"out", "in", "id"} {
		raw, ok := md["data.adj."+dir]
		if !ok {
			continue
		}
		var chunks []adjRefJSON
		if err := json.Unmarshal([]byte(raw), &chunks); err != nil || len(chunks) > maxAdjRefs {
			v.problem(tvKey, RuleAdjacency, "data.adj.%s: %d refs, %v", dir, len(chunks), err)
			continue
		}
		sum := indexSum{known: true}
		for _, c := range chunks {
			sum.add(v.checkChunk(ctx, tvKey, table, dir, c, 0))
		}
		if dir != "id" { // format 13: the edges riding the version beyond the out and in pages
			sum = delta.add(dir, sum)
		}
		if dir == "id" { // format 6: the ids riding the version beyond its pages
			delta, err := data.IDIndexDelta(md)
			if err != nil {
				v.problem(tvKey, RuleAdjacency, "%v", err)
				sum = indexSum{}
			}
			for _, id := range delta {
				sum.sum += entryHash(id, id)
				sum.rows++
			}
		}
		v.sums.index[tvKey+"\x00"+dir] = sum
	}
}

// adjDeltaEntries are the edges a version's adjacency delta holds beyond
// its pages; unknown when the delta is damaged or the schema lacks the
// table.
type adjDeltaEntries struct {
	from, to, ids []string
	unknown       bool
}

// adjDelta decodes a version's adjacency delta once (data.AdjacencyDelta:
// checked as a reader does); a damaged one is a problem, reported once.
func (v *verifier) adjDelta(ctx context.Context, tvKey, table string, md map[string]string) adjDeltaEntries {
	if _, ok := md["data.adjdelta"]; !ok {
		return adjDeltaEntries{}
	}
	t := v.tableIn(ctx, v.curSchema, table)
	if t == nil {
		return adjDeltaEntries{unknown: true}
	}
	from, to, ids, err := data.AdjacencyDelta(t, md)
	if err != nil {
		v.problem(tvKey, RuleAdjacency, "%v", err)
		return adjDeltaEntries{unknown: true}
	}
	return adjDeltaEntries{from: from, to: to, ids: ids}
}

// add adds to sum, the entries of direction dir ("out" or "in"), the
// delta's edges keyed by that direction (an unknown delta leaves the sum
// unknown).
func (d adjDeltaEntries) add(dir string, sum indexSum) indexSum {
	if d.unknown {
		return indexSum{}
	}
	keys := d.from
	if dir == "in" {
		keys = d.to
	}
	for i := range d.ids {
		sum.sum += entryHash(keys[i], d.ids[i])
		sum.rows++
	}
	return sum
}

// checkChunk checks one chunk of direction dir and its pages (once each),
// or, for a ref chunk (format 10, "level" >= 1), the chunks it lists, and
// returns the multiset hash of the entries below it (unknown if it or
// anything below is damaged). depth counts the ref chunks above it.
func (v *verifier) checkChunk(ctx context.Context, tvKey, table, dir string, c adjRefJSON, depth int) indexSum {
	key := v.adjKey(table, c.Name)
	if sum, seen := v.sums.objects[key]; seen {
		return sum
	}
	b, ok := v.adjObject(ctx, tvKey, table, c)
	if !ok {
		return indexSum{}
	}
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		v.problem(key, RuleEnvelope, "%v", err)
		return indexSum{}
	}
	var chunk struct {
		Level int
		Pages []json.RawMessage
	}
	chunk.Level, chunk.Pages, err = data.IndexChunkRefs(payload)
	if err != nil || len(chunk.Pages) > maxAdjRefs || chunk.Level != c.Level || depth > data.MaxIndexLevels {
		v.problem(key, RuleAdjacency, "chunk payload: %d pages, level %d (its ref's %d, depth %d), %v", len(chunk.Pages), chunk.Level, c.Level, depth, err)
		return indexSum{}
	}
	sum := indexSum{known: true}
	for _, raw := range chunk.Pages {
		if chunk.Level == 0 {
			sum.add(v.checkPage(ctx, key, table, dir, raw))
			continue
		}
		var ref adjRefJSON
		if err := json.Unmarshal(raw, &ref); err != nil || ref.Level != chunk.Level-1 {
			v.problem(key, RuleAdjacency, "ref chunk of level %d lists %s (level %d): %v", chunk.Level, ref.Name, ref.Level, err)
			sum.add(indexSum{})
			continue
		}
		sum.add(v.checkChunk(ctx, key, table, dir, ref, depth+1))
	}
	v.sums.objects[key] = sum
	return sum
}

// checkPage checks one index page once: size and CRC-32C against its ref,
// then, when the schema knows the table, its decode, order and range
// (data.DecodeIndexPage); it returns the hash of its entries.
func (v *verifier) checkPage(ctx context.Context, chunkKey, table, dir string, raw json.RawMessage) indexSum {
	var ref adjRefJSON
	if err := json.Unmarshal(raw, &ref); err != nil {
		v.problem(chunkKey, RuleAdjacency, "page ref: %v", err)
		return indexSum{}
	}
	key := v.adjKey(table, ref.Name)
	if sum, seen := v.sums.objects[key]; seen {
		return sum
	}
	b, ok := v.adjObject(ctx, chunkKey, table, ref)
	t := v.tableIn(ctx, v.curSchema, table)
	if !ok || t == nil {
		return indexSum{}
	}
	keys, ids, err := data.DecodeIndexPage(t, dir, raw, b)
	if err != nil {
		v.problem(key, RuleAdjacency, "%v", err)
		return indexSum{}
	}
	sum := indexSum{known: true}
	for i := range ids {
		sum.sum += entryHash(keys[i], ids[i])
		sum.rows++
	}
	v.sums.objects[key] = sum
	return sum
}

// adjKey is the key of adjacency object name of table ("" if no ULID).
func (v *verifier) adjKey(table, name string) string {
	id, err := ulid.ParseStrict(name)
	if err != nil {
		return ""
	}
	return v.keys.Adjacency(table, id)
}

// adjObject reads one adjacency object once and checks its size and
// CRC-32C against ref; ok=false when it was seen before or is damaged.
func (v *verifier) adjObject(ctx context.Context, from, table string, ref adjRefJSON) ([]byte, bool) {
	key := v.adjKey(table, ref.Name)
	if key == "" {
		v.problem(from, RuleAdjacency, "adjacency ref name %q is not a ULID", ref.Name)
		return nil, false
	}
	if v.seenFrag[key] {
		return nil, false
	}
	v.seenFrag[key] = true
	v.rep.AdjacencyObjects++
	b, ok := v.getBounded(ctx, key, maxFragmentBytes)
	if !ok {
		return nil, false
	}
	if sum := crc32.Checksum(b, castagnoli); uint64(len(b)) != ref.Bytes || sum != ref.CRC32C {
		v.problem(key, RuleAdjacency, "%s", fmt.Sprintf("size %d crc32c %08x, the ref records %d and %08x", len(b), sum, ref.Bytes, ref.CRC32C))
		return nil, false
	}
	return b, true
}
