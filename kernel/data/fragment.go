package data

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// Fragment file identity, stored in the Arrow schema metadata of every
// fragment (key order fixed, so the bytes are deterministic).
const (
	metaFormat       = "graphkernel.fragment"
	metaTable        = "graphkernel.table"
	fragmentFormatV1 = "1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FragmentInfo describes one immutable fragment file. It is kept in the
// table version (metadata), so a reader can verify a fragment and prune by
// id range without fetching it.
type FragmentInfo struct {
	Name   string `json:"-"`      // fragment name (a ULID); the key is R/data/<table>/<name>
	Rows   uint64 `json:"rows"`   // number of rows (>= 1)
	Bytes  uint64 `json:"bytes"`  // file size
	CRC32C uint32 `json:"crc32c"` // Castagnoli CRC of the whole file
	MinID  string `json:"min"`    // smallest id in the fragment
	MaxID  string `json:"max"`    // largest id in the fragment
	// Stats are per-property column statistics for pruning
	// filtered scans; absent in fragments written before they existed.
	Stats []ColumnStats `json:"stats,omitempty"`
	// embed holds the stored bytes of a fragment its table version embeds
	// (format 9, embed.go): it has no object. Never part of the info's
	// JSON: the version's data.embed.<name> metadata carries it.
	embed []byte
}

// mayContain reports whether id is within the fragment's id range.
func (f FragmentInfo) mayContain(id string) bool { return f.MinID <= id && id <= f.MaxID }

// EncodeFragment is EncodeFragmentWith the build's DefaultCodec.
func EncodeFragment(t *Table, rec arrow.Record) ([]byte, FragmentInfo, error) {
	return EncodeFragmentWith(t, rec, CodecDefault)
}

// EncodeFragmentWith writes rec as one Arrow IPC file holding exactly one
// record batch, stored under codec c (plain, or one zstd frame of the file:
// compressIPC), and returns the stored bytes and their FragmentInfo (Name
// left empty; size and CRC are of the stored bytes). rec must have t's
// Arrow schema, at least one row, ids sorted ascending and unique, and no
// null in a required column; anything else is an error and nothing is
// encoded.
//
// The bytes are a pure function of the record's values and c: the IPC
// writer is used without arrow's body compression (arrow's zstd codec
// starts goroutines and its output depends on their number), with the
// default Go allocator, the schema metadata has a fixed key order, and the
// zstd frame comes from one single-threaded EncodeAll.
func EncodeFragmentWith(t *Table, rec arrow.Record, c Codec) ([]byte, FragmentInfo, error) {
	if err := checkRecord(t, rec); err != nil {
		return nil, FragmentInfo{}, fmt.Errorf("encode fragment of %s: %w", t.Name, err)
	}
	raw, err := encodeIPC(t, rec)
	if err != nil {
		return nil, FragmentInfo{}, fmt.Errorf("encode fragment of %s: %w", t.Name, err)
	}
	buf := compressIPC(c, raw)
	ids := rec.Column(colID).(*array.String)
	info := FragmentInfo{
		Rows:   uint64(rec.NumRows()),
		Bytes:  uint64(len(buf)),
		CRC32C: crc32.Checksum(buf, castagnoli),
		MinID:  ids.Value(0),
		MaxID:  ids.Value(ids.Len() - 1),
		Stats:  columnStats(t, rec),
	}
	return buf, info, nil
}

// ipcFileHint is the room an Arrow IPC file of one record batch takes
// beyond its buffers (magic, schema, message headers, footer) for a table
// of a few dozen columns.
const ipcFileHint = 4096

// encodeIPC writes rec as one deterministic Arrow IPC file (see
// EncodeFragment) without judging its rows.
func encodeIPC(t *Table, rec arrow.Record) ([]byte, error) {
	disk := t.toDisk(rec) // storage column names (schema evolution)
	defer disk.Release()
	// Sized for the file up front (its buffers, padding, schema and
	// footer), so the writer's many small writes do not regrow it.
	w := seekBuffer{buf: make([]byte, 0, ipcFileHint+int(cachedBytes(disk, 0))*9/8)}
	fw, err := ipc.NewFileWriter(&w, ipc.WithSchema(t.disk), ipc.WithAllocator(goAlloc))
	if err != nil {
		return nil, err
	}
	if err := fw.Write(disk); err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// DecodeFragment verifies b against info (size and CRC32C) and only then
// unwraps it (a zstd frame is decompressed within the bounds storedIPC
// checks on its header) and decodes it into one record with t's schema and
// info.Rows rows. The caller owns the record and must Release it. Bytes
// that fail the checks or are not a valid (possibly compressed) Arrow IPC
// file of this table return an error matching ErrCorruptFragment;
// DecodeFragment never panics.
func DecodeFragment(t *Table, info FragmentInfo, b []byte) (arrow.Record, error) {
	if uint64(len(b)) != info.Bytes {
		return nil, corruptFragment(info.Name, "size %d, want %d", len(b), info.Bytes)
	}
	if sum := crc32.Checksum(b, castagnoli); sum != info.CRC32C {
		return nil, corruptFragment(info.Name, "crc32c %08x, want %08x", sum, info.CRC32C)
	}
	raw, err := storedIPC(b)
	if err != nil {
		return nil, corruptFragment(info.Name, "%v", err)
	}
	rec, err := decodeIPC(t, raw)
	if err != nil {
		return nil, corruptFragment(info.Name, "%v", err)
	}
	if uint64(rec.NumRows()) != info.Rows {
		rec.Release()
		return nil, corruptFragment(info.Name, "%d rows, want %d", rec.NumRows(), info.Rows)
	}
	return rec, nil
}

// decodeIPC reads the single record batch of an Arrow IPC file with t's
// schema. Arrow panics on some malformed inputs; those panics are turned
// into errors here, buffer allocations are capped at a multiple of len(b),
// and the footer's vector lengths (which size Go allocations outside the
// allocator) are bounded first (checkIPCFooter), so a forged length cannot
// exhaust memory.
func decodeIPC(t *Table, b []byte) (rec arrow.Record, err error) {
	defer func() {
		if r := recover(); r != nil {
			rec, err = nil, fmt.Errorf("malformed Arrow IPC: %v", r)
		}
	}()
	if err := checkIPCFooter(b); err != nil {
		return nil, err
	}
	mem := &cappedAllocator{limit: 2*len(b) + 4096}
	fr, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, err
	}
	defer fr.Close()
	if n := fr.NumRecords(); n != 1 {
		return nil, fmt.Errorf("%d record batches, want 1", n)
	}
	raw, err := fr.RecordAt(0)
	if err != nil {
		return nil, err
	}
	return t.fromDisk(raw) // an older layout reads through the current one

}

// sameSchema compares fields (name, type, nullability) and metadata.
func sameSchema(a, b *arrow.Schema) bool {
	if !a.Equal(b) || a.Metadata().Len() != b.Metadata().Len() {
		return false
	}
	ak, av := a.Metadata().Keys(), a.Metadata().Values()
	bk, bv := b.Metadata().Keys(), b.Metadata().Values()
	for i := range ak {
		if ak[i] != bk[i] || av[i] != bv[i] {
			return false
		}
	}
	return true
}

// errAllocLimit is the panic value of an allocation over the cap.
var errAllocLimit = errors.New("allocation over the fragment size cap")

// cappedAllocator is a Go allocator whose total allocation is capped; going
// over panics (recovered by decodeIPC).
type cappedAllocator struct {
	limit, used int
}

func (a *cappedAllocator) Allocate(size int) []byte {
	if size < 0 || size > a.limit-a.used {
		panic(errAllocLimit)
	}
	a.used += size
	return goAlloc.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size < 0 || size-len(b) > a.limit-a.used {
		panic(errAllocLimit)
	}
	a.used += size - len(b)
	return goAlloc.Reallocate(size, b)
}

func (a *cappedAllocator) Free(b []byte) { goAlloc.Free(b) }

// seekBuffer is an in-memory io.WriteSeeker for the IPC file writer.
type seekBuffer struct {
	buf []byte
	pos int
}

func (w *seekBuffer) Write(p []byte) (int, error) {
	if end := w.pos + len(p); end > len(w.buf) {
		w.buf = append(w.buf, make([]byte, end-len(w.buf))...)
	}
	copy(w.buf[w.pos:], p)
	w.pos += len(p)
	return len(p), nil
}

func (w *seekBuffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(w.pos)
	case io.SeekEnd:
		base = int64(len(w.buf))
	default:
		return 0, fmt.Errorf("seek: bad whence %d", whence)
	}
	if base+offset < 0 {
		return 0, fmt.Errorf("seek: negative position")
	}
	w.pos = int(base + offset)
	return base + offset, nil
}
