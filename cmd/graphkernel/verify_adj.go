package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// ruleAdjacency: an adjacency or id chunk or page (R/adj/, docs/format.md
// "Adjacency index", "Id index") whose size or CRC-32C differs from its ref, a chunk
// whose envelope or payload does not decode, or refs that do not parse.
const ruleAdjacency = "adjacency"

// maxAdjRefs bounds the refs of one direction or chunk verify reads.
const maxAdjRefs = 1 << 16

// adjRefJSON is the part of an adjacency ref verify checks: the object's
// name, exact size and CRC-32C.
type adjRefJSON struct {
	Name   string `json:"name"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

// checkAdjacency checks the indexes a table version lists — an edge
// table's adjacency index (data.adj.out and data.adj.in), any table's
// id index (data.adj.id) — each object once: every chunk's size, CRC-32C,
// envelope and page list, and every page's size and CRC-32C (pages are not
// Arrow-decoded: the fragments carry the rows verify checks). A version
// without an index (older versions) has nothing to check.
func (v *verifier) checkAdjacency(ctx context.Context, tvKey, table string, md map[string]string) {
	for _, dir := range []string{"out", "in", "id"} {
		raw, ok := md["data.adj."+dir]
		if !ok {
			continue
		}
		var chunks []adjRefJSON
		if err := json.Unmarshal([]byte(raw), &chunks); err != nil || len(chunks) > maxAdjRefs {
			v.problem(tvKey, ruleAdjacency, "data.adj.%s: %d refs, %v", dir, len(chunks), err)
			continue
		}
		for _, c := range chunks {
			b, ok := v.adjObject(ctx, tvKey, table, c)
			if !ok {
				continue
			}
			payload, err := format.OpenAdjacencyChunk(b)
			if err != nil {
				v.problem(v.adjKey(table, c.Name), ruleEnvelope, "%v", err)
				continue
			}
			var chunk struct {
				Pages []adjRefJSON `json:"pages"`
			}
			if err := json.Unmarshal(payload, &chunk); err != nil || len(chunk.Pages) > maxAdjRefs {
				v.problem(v.adjKey(table, c.Name), ruleAdjacency, "chunk payload: %d pages, %v", len(chunk.Pages), err)
				continue
			}
			for _, p := range chunk.Pages {
				v.adjObject(ctx, v.adjKey(table, c.Name), table, p)
			}
		}
	}
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
		v.problem(from, ruleAdjacency, "adjacency ref name %q is not a ULID", ref.Name)
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
		v.problem(key, ruleAdjacency, "%s", fmt.Sprintf("size %d crc32c %08x, the ref records %d and %08x", len(b), sum, ref.Bytes, ref.CRC32C))
		return nil, false
	}
	return b, true
}
