package data

import (
	"encoding/json"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// FuzzDecodeAdjacency: any bytes named by a reference whose size and CRC
// match them (so the checks behind the checksum are reached) decode as a
// chunk or a page, or fail with ErrCorruptFragment; never a panic. What
// decodes satisfies the rules a reader relies on.
func FuzzDecodeAdjacency(f *testing.F) {
	cat := testCatalog(f)
	tb := cat.tables["Knows"]
	rows := []Row{edge("k2", "a", "b"), edge("k1", "b", "a"), edge("k3", "b", "c")}
	for i := range rows {
		if _, err := checkRowShape(tb, &rows[i]); err != nil {
			f.Fatal(err)
		}
	}
	rec := buildRecord(tb, rows)
	page, err := encodeIPC(tb, rec)
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(page, false, uint64(3), "a", "k2", "b")
	pref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: "a", LoID: "k2", HiKey: "b", Rows: 3, Bytes: uint64(len(page)), CRC32C: crcOf(page)}
	payload, _ := json.Marshal(adjChunk{Table: "Knows", Dir: "out", Pages: []adjRef{pref}})
	f.Add(format.EncodeAdjacencyChunk(payload), true, uint64(3), "a", "k2", "b")
	f.Fuzz(func(t *testing.T, b []byte, chunk bool, n uint64, lo, loID, hi string) {
		ref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: lo, LoID: loID, HiKey: hi, Rows: n,
			Bytes: uint64(len(b)), CRC32C: crc32.Checksum(b, castagnoli)}
		if chunk {
			c, err := decodeChunk(tb, dirOut, ref, b)
			if err != nil {
				if !errors.Is(err, ErrCorruptFragment) {
					t.Fatalf("untyped: %v", err)
				}
				return
			}
			if checkRefs(c.Pages, AdjChunkPages, int64(n)) != nil {
				t.Fatal("decoded chunk breaks the ref rules")
			}
			return
		}
		rec, err := decodePage(tb, dirOut, ref, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		defer rec.Release()
		if checkPage(tb, dirOut, rec, ref) != nil {
			t.Fatal("decoded page breaks the page rules")
		}
	})
}
