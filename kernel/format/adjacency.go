package format

// KindAdjacencyChunk is the envelope kind of an adjacency chunk: one node
// of an edge table version's adjacency index (the data plane's JSON list
// of adjacency pages; see docs/format.md, "Adjacency index"). It is
// immutable, written create-only before the publish that names it, and
// named with its size and CRC-32C by the table version.
const KindAdjacencyChunk Kind = 14

// EncodeAdjacencyChunk frames an adjacency chunk payload, stored as one
// zstd frame when that pays (compressChunkPayload; format 7). Its token
// is zero: a chunk's identity is its name and checksum in the table
// version. Deterministic.
func EncodeAdjacencyChunk(payload []byte) []byte {
	return EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindAdjacencyChunk, Payload: compressChunkPayload(payload)})
}

// OpenAdjacencyChunk checks the frame, kind and stamp of an adjacency
// chunk and returns its payload (aliasing b when it is stored as JSON;
// a zstd frame is decoded under openChunkPayload's bounds). A malformed
// frame matches ErrCorrupt.
func OpenAdjacencyChunk(b []byte) ([]byte, error) {
	e, err := openCurrent(b, KindAdjacencyChunk)
	if err != nil {
		return nil, err
	}
	return openChunkPayload(e.Payload)
}

// Adjacency is the key of an adjacency chunk or page of table:
// R/adj/<table>/<ulid>. Names are fresh ULIDs, never reused.
func (k Keys) Adjacency(table string, name ID) string {
	return k.join("adj", table, name.String())
}
