package data

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Benchmarks (run with -bench; none of them runs under plain go test):
//
//	BenchmarkInsertCost  keyed single-row insert on the counting sim store:
//	                     schema-reads/op (<= 1), table-opens/op (<= 1), requests/op
//	BenchmarkInsert      one transaction inserting 1, 10k or 1M rows on fs
//	BenchmarkScan        full scan of 1, 10k or 1M rows on fs, side by side
//	                     with reading the same Arrow IPC files directly
const benchSchemaText = `node Item { name: string  qty: int64  price: float64?  at: timestamp? }`

var benchSizes = []int{1, 100, 10_000, 1_000_000}

// scanBenchSizes are BenchmarkScan's sizes: benchSizes, or under -short
// (CI's smoke run) one fragment embedded in its version (1 row) and 13
// zstd fragments stored as objects, listed in fragment chunks (10^5 rows,
// past DefaultInlineFragments), so every path of fragmentFiles and of the
// direct read runs.
func scanBenchSizes() []int {
	if benchsize.Short() {
		return []int{1, 100_000}
	}
	return benchSizes
}

func benchGraph(b *testing.B, store objstore.Store, root string) *Graph {
	b.Helper()
	s, err := schema.Parse([]byte(benchSchemaText))
	if err != nil {
		b.Fatal(err)
	}
	// The 10^6-row fixtures are one WriteRecord, past the default 64 MiB
	// transaction byte budget.
	g, err := Init(ctx, store, root, s, Options{Kernel: kernel.Options{Env: testEnv(1)}, Limits: Limits{MaxBytes: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// itemRecord builds n Item rows, ids ascending, every column set.
func itemRecord(b *testing.B, g *Graph, n int) arrow.Record {
	b.Helper()
	cat, err := g.catalog(ctx, mustSnap(b, g).SchemaHash())
	if err != nil {
		b.Fatal(err)
	}
	t := cat.tables["Item"]
	rb := array.NewRecordBuilder(goAlloc, t.arrow)
	defer rb.Release()
	rb.Reserve(n)
	for i := 0; i < n; i++ {
		rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("item-%08d", i))
		rb.Field(1).(*array.StringBuilder).Append("a fairly ordinary item name")
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
		rb.Field(3).(*array.Float64Builder).Append(float64(i) / 4)
		rb.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000_000 + int64(i)))
	}
	return rb.NewRecord()
}

func mustSnap(b *testing.B, g *Graph) kernel.Snapshot {
	b.Helper()
	br, err := g.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	s, err := g.Kernel().SnapshotAt(ctx, br)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func insertRecord(b *testing.B, g *Graph, rec arrow.Record) {
	b.Helper()
	br, err := g.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	tx, err := g.Begin(ctx, br)
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.WriteRecord(OpInsert, "Item", rec); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkInsertCost measures a keyed single-table, single-row insert
// transaction (Begin, Insert, Commit) on a warm handle over the counting sim
// store, and reports the cost gates. table-opens/op counts GETs under
// tables/: 0 since format 11, whose table versions ride their manifest (no
// table-version object), so that gate now holds by construction.
func BenchmarkInsertCost(b *testing.B) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(b, cs, Limits{})
	seedGraph(b, g)
	br := mainRef(b, g)
	cs.Reset()
	var schemaReads, tableOpens int
	var requests uint64
	i := 0
	for b.Loop() {
		cs.Reset()
		tx, err := g.Begin(ctx, br)
		must(b, err)
		must(b, tx.Insert("Person", person(fmt.Sprintf("bench-%09d", i), "n")))
		_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
		must(b, err)
		schemaReads += cs.CountWhere(objstore.OpGet, testRoot+"/schema/")
		tableOpens += cs.CountWhere(objstore.OpGet, testRoot+"/tables/")
		requests += cs.Counts().Requests()
		i++
	}
	b.ReportMetric(float64(schemaReads)/float64(b.N), "schema-reads/op")
	b.ReportMetric(float64(tableOpens)/float64(b.N), "table-opens/op")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
}

// BenchmarkInsert inserts a prebuilt record of N rows in one transaction
// into a fresh graph on the fs store; the record is built once. Under
// -short (CI's smoke run) 1 row only.
func BenchmarkInsert(b *testing.B) {
	for _, n := range benchsize.Smallest(benchSizes) {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			store, err := fs.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			g := benchGraph(b, store, "proto")
			rec := itemRecord(b, g, n)
			defer rec.Release()
			b.SetBytes(recordBytes(rec))
			roots := 0
			for b.Loop() {
				b.StopTimer()
				roots++
				g := benchGraph(b, store, fmt.Sprintf("g%d", roots))
				b.StartTimer()
				insertRecord(b, g, rec)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkScan scans N rows on the fs store through Snapshot.Scan, and,
// side by side, reads the very same fragments with the arrow library
// directly (os.ReadFile + ipc.FileReader), so the 2x target can be checked:
// graphkernel ns/op <= 2 * arrow-direct ns/op. A fragment small enough to
// ride its table version (format 9: rows=1 and rows=100 are one such
// fragment) has no file: both sides read it from the version in memory,
// so at those sizes the pair compares decoding alone, no file read.
func BenchmarkScan(b *testing.B) {
	for _, n := range scanBenchSizes() {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			store, err := fs.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			g := benchGraph(b, store, "g")
			rec := itemRecord(b, g, n)
			insertRecord(b, g, rec)
			rec.Release()
			g = freshHandle(b, store, "g")
			snapshot, err := g.SnapshotAt(ctx, mainRef(b, g))
			if err != nil {
				b.Fatal(err)
			}
			files, size := fragmentFiles(b, snapshot, dir)
			b.Run("graphkernel", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					if got := scanRows(b, snapshot); got != n {
						b.Fatalf("scanned %d rows, want %d", got, n)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
			b.Run("arrow-direct", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					if got := directRows(b, files); got != n {
						b.Fatalf("read %d rows, want %d", got, n)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		})
	}
}

// freshHandle opens a new handle on the graph at root of store, for a scan
// benchmark's reads: the handle that wrote a small fragment holds it
// decoded (the write-through cache, WriteThroughBytes and
// WriteThroughRows), so a scan on it reads no fragment at all, while a
// scan on any other handle fetches every fragment each time (a scan caches
// nothing: scanFetch). A fresh handle scans as every reader but the writer
// does, at every size.
func freshHandle(b *testing.B, store objstore.Store, root string) *Graph {
	b.Helper()
	g, err := Open(ctx, store, root, Options{Kernel: kernel.Options{Env: testEnv(2)}})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func scanRows(b *testing.B, s *Snapshot) int {
	rr, err := s.Scan(ctx, "Item")
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		n += int(rr.Record().NumRows())
	}
	if err := rr.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// fsObjectHeader is the size of the fs store's per-object header (see
// objstore/fs/object.go); the Arrow IPC file follows it.
const fsObjectHeader = 36

// directFrag is one fragment of the snapshot's Item table as the direct
// read sees it: the path of its object file on disk, or, for a fragment
// its table version embeds (format 9: it has no object), its stored bytes.
type directFrag struct {
	path  string
	embed []byte
}

// fragmentFiles returns the snapshot's Item fragments as the direct read
// reads them, and their total stored size: every object file under the
// Item data directory (the fs layout maps each key to "<seg>.d"
// directories, chunk directories "<chunk>.c" and a final "<tail>.o"; see
// objstore/fs/keypath.go), checked against the count and sizes of the
// table version's fragments that are objects, then every fragment the
// version embeds, its bytes taken from the version (format 9: a small
// fragment rides its version and has no file; the graphkernel scan reads
// it from the version it already holds, so the direct read takes it from
// memory too). The version's fragment infos are loaded whole first: a
// paged version (format 10) lists them in chunks.
func fragmentFiles(b *testing.B, s *Snapshot, dir string) ([]directFrag, int64) {
	b.Helper()
	v, err := s.r.view(ctx, s.cat.tables["Item"], pinRef(s.ks, "Item"))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.r.ensureFrags(ctx, v); err != nil {
		b.Fatal(err)
	}
	var size, objBytes, onDisk int64
	var objects int
	var embeds []directFrag
	for _, f := range v.frags {
		size += int64(f.Bytes)
		if e := f.Embedded(); e != nil {
			if uint64(len(e)) != f.Bytes {
				b.Fatalf("embedded fragment %s: %d bytes, info says %d", f.Name, len(e), f.Bytes)
			}
			embeds = append(embeds, directFrag{embed: e})
			continue
		}
		objects++
		objBytes += int64(f.Bytes)
	}
	var frags []directFrag
	root := filepath.Join(dir, "g.d", "data.d", "Item.d")
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if p == root && errors.Is(err, os.ErrNotExist) && objects == 0 {
			return filepath.SkipDir // every fragment embedded: no data directory
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".o") {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		frags = append(frags, directFrag{path: p})
		onDisk += st.Size() - fsObjectHeader
		return nil
	})
	if err != nil || len(frags) != objects || onDisk != objBytes {
		b.Fatalf("fragment files: %v (%d files of %d bytes, want %d of %d)", err, len(frags), onDisk, objects, objBytes)
	}
	return append(frags, embeds...), size
}

// directRows reads the fragments (files, or bytes an embedding version
// holds) with the arrow library alone. A zstd fragment (CodecZstd) is
// unwrapped by storedIPC, the kernel's own bounded decompression (the
// frame's declared content size, within MaxRawFragmentBytes and
// MaxZstdRatio times the stored size, sizes the output): the shared
// decoder has WithDecodeAllCapLimit, so a DecodeAll into a nil buffer
// refuses any non-empty frame.
func directRows(b *testing.B, frags []directFrag) int {
	n := 0
	for _, f := range frags {
		stored := f.embed
		if f.path != "" {
			raw, err := os.ReadFile(f.path)
			if err != nil {
				b.Fatal(err)
			}
			stored = raw[fsObjectHeader:]
		}
		file, err := storedIPC(stored)
		if err != nil {
			b.Fatal(err)
		}
		fr, err := ipc.NewFileReader(bytes.NewReader(file), ipc.WithAllocator(goAlloc))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < fr.NumRecords(); i++ {
			rec, err := fr.Record(i)
			if err != nil {
				b.Fatal(err)
			}
			n += int(rec.NumRows())
		}
		fr.Close()
	}
	return n
}
