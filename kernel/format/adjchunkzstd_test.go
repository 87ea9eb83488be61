package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// chunkJSON is a chunk-like JSON payload of n refs.
func chunkJSON(n int) []byte {
	b := []byte(`{"table":"E","dir":"out","pages":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"name":"01JAAAAAAAAAAAAAAAAAAA%04d","lo":"n%08d","lo_id":"e%09d","hi":"n%08d","rows":1024,"bytes":%d,"crc32c":%d}`,
			i, i*100, i*1000, i*100+99, 1500+i*7, 1234567*i)
	}
	return append(b, "]}"...)
}

// TestAdjacencyChunkCompressed: a chunk of many refs is stored as a zstd
// frame several times smaller (red without compressChunkPayload), opens
// to the same JSON (red without openChunkPayload), deterministically; a
// small one stays JSON; a JSON chunk of an older build opens as it is.
func TestAdjacencyChunkCompressed(t *testing.T) {
	big := chunkJSON(64)
	b := EncodeAdjacencyChunk(big)
	if len(b)*3 > len(big) {
		t.Fatalf("a 64-ref chunk is %d bytes for %d of JSON", len(b), len(big))
	}
	if !bytes.Equal(EncodeAdjacencyChunk(big), b) {
		t.Fatal("two encodings of one chunk differ")
	}
	got, err := OpenAdjacencyChunk(b)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("compressed chunk opens to %d bytes: %v", len(got), err)
	}
	small := []byte(`{"table":"E","dir":"out","pages":[]}`)
	if e, err := DecodeEnvelope(EncodeAdjacencyChunk(small)); err != nil || !bytes.Equal(e.Payload, small) {
		t.Fatalf("a small chunk was not stored as JSON: %v", err)
	}
	old := EncodeEnvelope(Envelope{Stamp: FormatV5, Kind: KindAdjacencyChunk, Payload: big})
	if got, err := OpenAdjacencyChunk(old); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("a format-5 JSON chunk: %v", err)
	}
}

// forgeFrameSize rewrites zstd frame z to declare size as its content size.
func forgeFrameSize(t *testing.T, z []byte, size uint64) []byte {
	t.Helper()
	fhd := z[4]
	if fhd&0x20 == 0 || fhd&0x03 != 0 {
		t.Fatalf("frame header descriptor %08b: want single segment, no dictionary", fhd)
	}
	out := append([]byte(nil), z[:4]...)
	out = append(out, 0xc0|0x20|(fhd&0x1c))
	out = binary.LittleEndian.AppendUint64(out, size)
	return append(out, z[5+[...]int{1, 2, 4, 8}[fhd>>6]:]...)
}

// TestAdjacencyChunkForgedSize: a CRC-valid chunk whose zstd frame
// declares another content size is ErrCorrupt, and a size past the
// bounds allocates nothing like it.
func TestAdjacencyChunkForgedSize(t *testing.T) {
	big := chunkJSON(64)
	e, err := DecodeEnvelope(EncodeAdjacencyChunk(big))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []uint64{1 << 62, MaxPayloadBytes + 1, uint64(chunkZstdRatio*(len(e.Payload)+8)) + 1, uint64(len(big)) + 1, uint64(len(big)) - 1, 0} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			b := EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindAdjacencyChunk, Payload: forgeFrameSize(t, e.Payload, size)})
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			_, err := OpenAdjacencyChunk(b)
			runtime.ReadMemStats(&ms1)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("forged size %d: %v, want ErrCorrupt", size, err)
			}
			if alloc := ms1.TotalAlloc - ms0.TotalAlloc; size > uint64(4*len(big)) && alloc > uint64(4*len(big)) {
				t.Fatalf("a forged %d-byte content size allocated %d bytes", size, alloc)
			}
		})
	}
}

// FuzzOpenAdjacencyChunk: whatever payload a (CRC-valid) chunk envelope
// holds — JSON, a forged or damaged zstd frame — opening it never panics
// and either fails with ErrCorrupt or returns what a re-encoding opens to.
func FuzzOpenAdjacencyChunk(f *testing.F) {
	big := chunkJSON(40)
	e, _ := DecodeEnvelope(EncodeAdjacencyChunk(big))
	f.Add(e.Payload)
	f.Add(e.Payload[:len(e.Payload)/2])
	f.Add(big)
	f.Add(append(append([]byte(nil), e.Payload...), e.Payload...))
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := OpenAdjacencyChunk(EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindAdjacencyChunk, Payload: p}))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		if again, err := OpenAdjacencyChunk(EncodeAdjacencyChunk(got)); err != nil || !bytes.Equal(again, got) {
			t.Fatalf("re-encoded chunk opens to other bytes: %v", err)
		}
	})
}
