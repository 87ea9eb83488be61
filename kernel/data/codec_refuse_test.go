package data

import (
	"errors"
	"iter"
	"runtime"
	"testing"
)

// forgedSize is one content size a forged zstd frame declares.
type forgedSize struct {
	name string
	size uint64
}

// forgedContentSizes are the content sizes the forged-frame tests declare
// for a zstd frame of zLen bytes holding rawLen bytes: past each bound
// (2^62, MaxRawFragmentBytes, the ratio) and just off the true size.
func forgedContentSizes(zLen, rawLen int) []forgedSize {
	return []forgedSize{
		{"2^62", 1 << 62},
		{"over MaxRawFragmentBytes", MaxRawFragmentBytes + 1},
		{"over the ratio", uint64(MaxZstdRatio*(zLen+8)) + 1},
		{"one more", uint64(rawLen) + 1},
		{"one less", uint64(rawLen) - 1},
		{"zero", 0},
	}
}

// forgedSizeAllocBound is the allocation bound of decoding a frame that
// declares size for rawLen real bytes: 4*rawLen once the declared size is
// past that, else 0 (no bound: the size is near the real one).
func forgedSizeAllocBound(size uint64, rawLen int) uint64 {
	if size > uint64(4*rawLen) {
		return uint64(4 * rawLen)
	}
	return 0
}

// refusesCorrupt runs decode, one decode of forged or damaged bytes that
// releases whatever it returns, and fails t unless the error is each of
// want and, when maxAlloc is positive, decoding allocated at most maxAlloc
// bytes.
func refusesCorrupt(t *testing.T, what string, maxAlloc uint64, want []error, decode func() error) {
	t.Helper()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	err := decode()
	runtime.ReadMemStats(&ms1)
	if err == nil {
		t.Fatalf("%s: decoded", what)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Fatalf("%s: %v, want %v", what, err, w)
		}
	}
	if alloc := ms1.TotalAlloc - ms0.TotalAlloc; maxAlloc > 0 && alloc > maxAlloc {
		t.Fatalf("%s: allocated %d bytes, want at most %d", what, alloc, maxAlloc)
	}
}

// bitFlips yields, for each bit of b in turn, its index and a copy of b
// with that bit flipped.
func bitFlips(b []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for i := 0; i < len(b)*8; i++ {
			m := append([]byte(nil), b...)
			m[i/8] ^= 1 << (i % 8)
			if !yield(i, m) {
				return
			}
		}
	}
}
