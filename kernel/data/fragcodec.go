package data

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/klauspost/compress/zstd"
)

// Codec says how a handle encodes the fragments and adjacency pages it
// writes. Reads accept every codec whatever the option: the stored bytes
// say which one they are (a zstd frame or an Arrow IPC file).
type Codec uint8

const (
	// CodecDefault is CodecZstd in a build whose format.CurrentFormat is
	// at least FormatCompressedFragments, else CodecPlain (see DefaultCodec).
	CodecDefault Codec = iota
	// CodecPlain writes bare Arrow IPC files, readable by every build.
	CodecPlain
	// CodecZstd writes each Arrow IPC file as one zstd frame (see
	// docs/format.md "Fragment compression"). Builds older than the
	// decoder report such a fragment as corrupt (ErrCorruptFragment), so
	// choosing it explicitly below FormatCompressedFragments is the
	// operator's promise that no older build reads the graph.
	CodecZstd
)

// FormatCompressedFragments is the first format stamp whose builds write
// zstd fragments by default. A build that writes that stamp refuses no
// fragment this package writes, and every build that cannot read a zstd
// fragment refuses the stamp (format.CheckStamp: TooNew) before it reads
// any fragment of a branch carrying it, so compression needs no stamp of
// its own: it rides the next bump.
const FormatCompressedFragments = 5

// DefaultCodec is what CodecDefault means in this build.
func DefaultCodec() Codec {
	if format.CurrentFormat >= FormatCompressedFragments {
		return CodecZstd
	}
	return CodecPlain
}

// resolve maps CodecDefault to DefaultCodec.
func (c Codec) resolve() Codec {
	if c == CodecDefault {
		return DefaultCodec()
	}
	return c
}

// String names the codec.
func (c Codec) String() string {
	switch c {
	case CodecDefault:
		return "default"
	case CodecPlain:
		return "plain"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

const (
	// MaxRawFragmentBytes bounds the Arrow IPC file inside a zstd
	// fragment: a writer stores a larger one plain, and a reader refuses a
	// frame declaring more before allocating anything.
	MaxRawFragmentBytes = 64 << 20
	// MaxZstdRatio bounds the declared Arrow IPC size of a zstd fragment
	// relative to its stored size (a writer stores a file that compresses
	// better than this plain): a forged frame header can make a reader
	// allocate at most MaxZstdRatio times the bytes it already holds.
	MaxZstdRatio = 256
)

// zstdMagic opens every zstd frame (RFC 8878, little-endian 0xFD2FB528).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// The encoder and decoder are shared and stateless between calls
// (EncodeAll and DecodeAll are safe for concurrent use). With concurrency
// 1 neither starts a goroutine, and EncodeAll of the same input with the
// same options yields the same bytes (TestZstdFragmentsStartNoGoroutines,
// TestZstdFragmentDeterministic).
var (
	zstdEnc = mustZstdEncoder()
	zstdDec = mustZstdDecoder()
)

func mustZstdEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("data: zstd encoder options: %v", err))
	}
	return e
}

func mustZstdDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxRawFragmentBytes),
		zstd.WithDecoderMaxWindow(MaxRawFragmentBytes), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(fmt.Sprintf("data: zstd decoder options: %v", err))
	}
	return d
}

// compressIPC returns the stored bytes of Arrow IPC file raw under codec
// c: raw itself (plain), or one zstd frame of it when that is smaller,
// raw is at most MaxRawFragmentBytes and the ratio at most MaxZstdRatio
// (else raw, so a reader's bounds always admit what a writer stores).
func compressIPC(c Codec, raw []byte) []byte {
	if c.resolve() != CodecZstd || len(raw) > MaxRawFragmentBytes {
		return raw
	}
	z := zstdEnc.EncodeAll(raw, make([]byte, 0, len(raw)/2))
	if len(z) >= len(raw) || len(raw) > MaxZstdRatio*len(z) {
		return raw
	}
	return z
}

// storedIPC returns the Arrow IPC file inside stored fragment bytes b
// (already checked against their size and CRC): b itself unless it is a
// zstd frame, else the frame's content. A frame must declare its content
// size within MaxRawFragmentBytes and MaxZstdRatio times len(b) — checked
// on the header, before any allocation — and decode to exactly that many
// bytes, in one frame; anything else is an error.
func storedIPC(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, zstdMagic) {
		return b, nil
	}
	var h zstd.Header
	if err := h.Decode(b); err != nil {
		return nil, fmt.Errorf("zstd frame header: %v", err)
	}
	if !h.HasFCS || h.FrameContentSize == 0 {
		return nil, fmt.Errorf("zstd frame without a content size")
	}
	limit := min(uint64(MaxRawFragmentBytes), uint64(MaxZstdRatio)*uint64(len(b)))
	if h.FrameContentSize > limit {
		return nil, fmt.Errorf("zstd frame declares %d bytes, over the bound %d", h.FrameContentSize, limit)
	}
	raw, err := zstdDec.DecodeAll(b, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		return nil, fmt.Errorf("zstd: %v", err)
	}
	if uint64(len(raw)) != h.FrameContentSize {
		return nil, fmt.Errorf("zstd frame decoded to %d bytes, declared %d", len(raw), h.FrameContentSize)
	}
	return raw, nil
}

// cachedBytes is what a decoded record is charged in the fragment cache:
// its buffers' bytes, or the stored size when larger (a compressed
// fragment decodes to several times its stored bytes, and the cache
// bounds memory, not store bytes).
func cachedBytes(rec arrow.Record, stored uint64) int64 {
	n := int64(stored)
	var sum int64
	for _, col := range rec.Columns() {
		for _, buf := range col.Data().Buffers() {
			if buf != nil {
				sum += int64(buf.Len())
			}
		}
	}
	return max(n, sum)
}

// check refuses a codec this build does not know.
func (c Codec) check() error {
	if c > CodecZstd {
		return fmt.Errorf("%w: fragment codec %v", kernel.ErrInvalidArgument, c)
	}
	return nil
}
