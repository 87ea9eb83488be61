package format

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// FormatCompressedChunks is the first format stamp whose builds store an
// adjacency chunk's payload (the JSON list of page or fragment refs) as
// one zstd frame when that is smaller (docs/format.md, "v6->v7"). JSON
// never starts with the zstd magic, so a reader tells the two apart by
// the payload's first bytes; a build of an older stamp refuses the stamp
// before it reads a chunk of a branch carrying it.
const FormatCompressedChunks = 7

// chunkZstdRatio bounds a compressed chunk payload's declared size
// relative to its stored size: a forged frame header makes a reader
// allocate at most this many times the bytes it holds (and never more
// than MaxPayloadBytes). A writer stores a payload that compresses better
// than this as JSON.
const chunkZstdRatio = 256

var chunkZstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// The chunk encoder and decoder start no goroutine (concurrency 1) and
// EncodeAll of the same payload yields the same bytes: deterministic.
var (
	chunkEnc = mustChunkEncoder()
	chunkDec = mustChunkDecoder()
)

func mustChunkEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("format: zstd encoder options: %v", err))
	}
	return e
}

func mustChunkDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxPayloadBytes),
		zstd.WithDecoderMaxWindow(MaxPayloadBytes), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(fmt.Sprintf("format: zstd decoder options: %v", err))
	}
	return d
}

// compressChunkPayload returns the stored payload of a chunk: one zstd
// frame of payload in a build writing at least FormatCompressedChunks
// when that is smaller and within the reader's ratio bound, else payload
// (the JSON as is).
func compressChunkPayload(payload []byte) []byte {
	if CurrentFormat < FormatCompressedChunks || len(payload) == 0 {
		return payload
	}
	z := chunkEnc.EncodeAll(payload, make([]byte, 0, len(payload)/2))
	if len(z) >= len(payload) || len(payload) > chunkZstdRatio*len(z) || len(payload) > MaxPayloadBytes {
		return payload
	}
	return z
}

// openChunkPayload returns the JSON of a stored chunk payload p (already
// checked by the envelope's CRC): p itself unless it is a zstd frame, else
// the frame's content, whose declared size must be within MaxPayloadBytes
// and chunkZstdRatio times len(p) — checked on the header, before any
// allocation — and decode to exactly that many bytes, not another frame.
func openChunkPayload(p []byte) ([]byte, error) {
	if !bytes.HasPrefix(p, chunkZstdMagic) {
		return p, nil
	}
	var h zstd.Header
	if err := h.Decode(p); err != nil {
		return nil, corrupt(KindAdjacencyChunk.String(), "zstd frame header: %v", err)
	}
	limit := min(uint64(MaxPayloadBytes), uint64(chunkZstdRatio)*uint64(len(p)))
	if !h.HasFCS || h.FrameContentSize == 0 || h.FrameContentSize > limit {
		return nil, corrupt(KindAdjacencyChunk.String(), "zstd frame declares %d bytes (content size present: %v), bound %d", h.FrameContentSize, h.HasFCS, limit)
	}
	raw, err := chunkDec.DecodeAll(p, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		return nil, corrupt(KindAdjacencyChunk.String(), "zstd: %v", err)
	}
	if uint64(len(raw)) != h.FrameContentSize {
		return nil, corrupt(KindAdjacencyChunk.String(), "zstd frame decoded to %d bytes, declared %d", len(raw), h.FrameContentSize)
	}
	if bytes.HasPrefix(raw, chunkZstdMagic) {
		return nil, corrupt(KindAdjacencyChunk.String(), "a zstd frame inside a zstd frame")
	}
	return raw, nil
}
