package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	fsstore "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/klauspost/compress/zstd"
)

var (
	storeBytesRows  = flag.Int("storebytes.rows", 120000, "BenchmarkStoreBytes: rows of the generated graph (nodes:edges = 1:5; #28's dataset is 1200000)")
	storeBytesBatch = flag.Int("storebytes.batch", 100000, "BenchmarkStoreBytes: rows per load transaction")
)

// storeBytesSchema: 3 node types, 2 edge types (one with @card), string,
// int64 and timestamp columns.
const storeBytesSchema = `
node Person  { name: string  email: string  age: int64  city: string  joined: timestamp }
node Company { name: string  industry: string  founded: int64 }
node City    { name: string  country: string  population: int64 }
edge WorksAt: Person -> Company @card(0..1) { since: timestamp  title: string }
edge Knows:   Person -> Person { weight: int64  since: timestamp }
`

// genGraph is the generated graph: per type, its rows in load order.
type genGraph struct {
	types []string
	rows  map[string][]data.Row
}

// generateGraph makes a graph of about n rows (n/6 nodes: 80% Person, 10%
// Company, 10% City; the rest edges: one WorksAt per person, the others
// Knows between random persons), deterministically.
func generateGraph(n int) genGraph {
	rng := rand.New(rand.NewPCG(28, 3))
	nodes := max(n/6, 30)
	persons, companies, cities := nodes*8/10, nodes/10, nodes/10
	first := []string{"Ann", "Bob", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Mateo", "Nia", "Omar", "Priya"}
	last := []string{"Smith", "Garcia", "Müller", "Kowalski", "Nguyen", "Okafor", "Rossi", "Sato", "Silva", "Jensen", "Dubois", "Novak"}
	words := []string{"North", "Blue", "Iron", "Green", "Swift", "Bright", "Stone", "Red", "Silver", "Oak", "River", "Summit"}
	industries := []string{"software", "retail", "logistics", "finance", "health", "energy", "media", "education"}
	countries := []string{"DE", "FR", "US", "JP", "BR", "NG", "IN", "PL", "SE", "ES"}
	titles := []string{"engineer", "manager", "analyst", "designer", "sales", "support", "director", "intern"}
	epoch := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	g := genGraph{types: []string{"City", "Company", "Person", "WorksAt", "Knows"}, rows: map[string][]data.Row{}}
	cityName := func(i int) string {
		return fmt.Sprintf("%s%s %d", words[i%len(words)], strings.ToLower(words[(i/len(words))%len(words)]), i)
	}
	for i := range cities {
		g.rows["City"] = append(g.rows["City"], data.Row{ID: fmt.Sprintf("city-%06d", i), Props: map[string]any{
			"name": cityName(i), "country": countries[rng.IntN(len(countries))], "population": int64(1000 + rng.IntN(5_000_000))}})
	}
	for i := range companies {
		g.rows["Company"] = append(g.rows["Company"], data.Row{ID: fmt.Sprintf("company-%06d", i), Props: map[string]any{
			"name":     fmt.Sprintf("%s %s %s", words[rng.IntN(len(words))], words[rng.IntN(len(words))], []string{"GmbH", "Inc", "Ltd", "SA"}[rng.IntN(4)]),
			"industry": industries[rng.IntN(len(industries))], "founded": int64(1900 + rng.IntN(124))}})
	}
	for i := range persons {
		f, l := first[rng.IntN(len(first))], last[rng.IntN(len(last))]
		g.rows["Person"] = append(g.rows["Person"], data.Row{ID: fmt.Sprintf("person-%07d", i), Props: map[string]any{
			"name": f + " " + l, "email": fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(f), strings.ToLower(l), rng.IntN(10000)),
			"age": int64(18 + rng.IntN(70)), "city": cityName(rng.IntN(cities)),
			"joined": epoch.Add(time.Duration(rng.Int64N(int64(10 * 365 * 24 * time.Hour)))).Truncate(time.Second)}})
	}
	for i := range persons {
		g.rows["WorksAt"] = append(g.rows["WorksAt"], data.Row{ID: fmt.Sprintf("works-%07d", i),
			From: fmt.Sprintf("person-%07d", i), To: fmt.Sprintf("company-%06d", rng.IntN(companies)), Props: map[string]any{
				"since": epoch.Add(time.Duration(rng.Int64N(int64(10 * 365 * 24 * time.Hour)))).Truncate(24 * time.Hour),
				"title": titles[rng.IntN(len(titles))]}})
	}
	for i := range max(n-nodes-persons, 1) {
		g.rows["Knows"] = append(g.rows["Knows"], data.Row{ID: fmt.Sprintf("knows-%08d", i),
			From: fmt.Sprintf("person-%07d", rng.IntN(persons)), To: fmt.Sprintf("person-%07d", rng.IntN(persons)), Props: map[string]any{
				"weight": int64(rng.IntN(100)), "since": epoch.Add(time.Duration(rng.Int64N(int64(10 * 365 * 24 * time.Hour)))).Truncate(time.Second)}})
	}
	return g
}

// storeResult is one loaded, maintained graph and what it cost.
type storeResult struct {
	dir     string
	root    string
	g       *data.Graph
	snap    *data.Snapshot
	storeB  int64
	beforeB int64 // store bytes after the load, before maintain
	// beforeFiles counts object files by kind after the load, before maintain.
	beforeFiles map[string]int
	files       map[string]int // object files by key kind (data, adj, tables, ...)
	bytesKind   map[string]int64
	rows        int
}

// loadAndMaintain loads gen into a new fs graph written with codec in
// transactions of batch rows (node types first), then runs maintain
// (compaction, then collection keeping the last manifest).
func loadAndMaintain(b *testing.B, gen genGraph, codec data.Codec, batch int) storeResult {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st, err := fsstore.OpenWith(dir, fsstore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.Parse([]byte(storeBytesSchema))
	if err != nil {
		b.Fatal(err)
	}
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	const root = "g"
	g, err := data.Init(ctx, st, root, s, data.Options{Codec: codec, Kernel: kernel.Options{
		Env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{1})}, Grace: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	rows := 0
	for _, typ := range gen.types {
		all := gen.rows[typ]
		for len(all) > 0 {
			n := min(len(all), batch)
			tx, err := g.Begin(ctx, main)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range all[:n] {
				if err := tx.Insert(typ, r); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"}); err != nil {
				b.Fatal(err)
			}
			clock.Advance(time.Second)
			rows += n
			all = all[n:]
		}
	}
	beforeFiles := map[string]int{}
	before := walkObjects(b, filepath.Join(dir, root+".d"), beforeFiles, map[string]int64{})
	clock.Advance(10 * time.Minute)
	m, err := maintain.New(st, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{2})})
	if err != nil {
		b.Fatal(err)
	}
	rep, err := maintain.Maintain(ctx, g, m, maintain.RunPolicy{Collect: maintain.Policy{
		Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}})
	if err != nil || !rep.Collect.Complete {
		b.Fatalf("maintain: %+v %v", rep, err)
	}
	// Scans and the export read through a fresh handle with no fragment
	// cache: every fragment is fetched and decoded, as on a cold reader.
	cold, err := data.Open(ctx, st, root, data.Options{CacheBytes: -1, Kernel: kernel.Options{ReadOnly: true,
		Env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{3})}, Grace: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	snap, err := cold.SnapshotAt(ctx, main)
	if err != nil {
		b.Fatal(err)
	}
	res := storeResult{dir: dir, root: root, g: g, snap: snap, rows: rows, files: map[string]int{}, bytesKind: map[string]int64{},
		beforeB: before, beforeFiles: beforeFiles}
	res.storeB = walkObjects(b, filepath.Join(dir, root+".d"), res.files, res.bytesKind)
	return res
}

// walkObjects sums the regular files under dir (the fs store's objects:
// "<segment>.d" directories, a final "<tail>.o") and counts them by the
// key's first segment under the root; byKind also gets the bytes of every
// adjacency object kind and of the data fragments per table
// ("adj-edge-pages-Knows", "data-Person", ...).
func walkObjects(b *testing.B, dir string, files map[string]int, byKind map[string]int64) int64 {
	b.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		kind := strings.TrimSuffix(strings.SplitN(rel, string(filepath.Separator), 2)[0], ".d")
		total += info.Size()
		byKind[kind] += info.Size()
		parts := strings.Split(rel, string(filepath.Separator))
		if kind == "adj" {
			k := adjObjectKind(b, path)
			byKind[k] += info.Size()
			if len(parts) > 1 {
				byKind[k+"-"+strings.TrimSuffix(parts[1], ".d")] += info.Size()
			}
		}
		if kind == "data" && len(parts) > 1 {
			byKind["data-"+strings.TrimSuffix(parts[1], ".d")] += info.Size()
		}
		if strings.HasSuffix(path, ".o") {
			files[kind]++
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}

// adjObjectKind tells the objects under R/adj/ apart by their first bytes
// (after the fs store's 36-byte object header, inside a zstd frame): an
// adjacency page (Arrow IPC), an id page (front-coded, "gkid") or a chunk
// (an envelope, "GKOB").
func adjObjectKind(b *testing.B, path string) string {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	const fsObjectHeader = 36
	body := raw[min(len(raw), fsObjectHeader):]
	if bytes.HasPrefix(body, []byte{0x28, 0xb5, 0x2f, 0xfd}) { // zstd (format 7 id pages too): look inside
		if body, err = kindDecoder.DecodeAll(body, nil); err != nil {
			b.Fatal(err)
		}
	}
	switch {
	case bytes.HasPrefix(body, []byte("gkid")):
		return "adj-id-pages"
	case bytes.HasPrefix(body, []byte("GKOB")):
		return "adj-chunks"
	default:
		return "adj-edge-pages"
	}
}

// kindDecoder unwraps zstd objects for adjObjectKind.
var kindDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))

// exportParquet writes every type of s with the command's Parquet writer
// (newRecordWriter: zstd) and returns the total bytes (per type in
// perType).
func exportParquet(b *testing.B, s *data.Snapshot, types []string, perType map[string]int64) int64 {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	var total int64
	for _, typ := range types {
		tbl, err := s.Table(typ)
		if err != nil {
			b.Fatal(err)
		}
		rr, err := s.Scan(ctx, typ)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, typ+".parquet")
		fh, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		rw, err := newRecordWriter("parquet", tbl.Schema(), fh)
		if err != nil {
			b.Fatal(err)
		}
		for rr.Next() {
			if err := rw.write(rr.Record()); err != nil {
				b.Fatal(err)
			}
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
		if err := rw.close(); err != nil {
			b.Fatal(err)
		}
		fh.Close()
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		total += fi.Size()
		perType[typ] = fi.Size()
	}
	return total
}

// scanAll scans every type of s through the library and returns the rows.
func scanAll(b *testing.B, s *data.Snapshot, types []string) int {
	b.Helper()
	n := 0
	for _, typ := range types {
		rr, err := s.Scan(context.Background(), typ)
		if err != nil {
			b.Fatal(err)
		}
		for rr.Next() {
			n += int(rr.Record().NumRows())
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
	}
	return n
}

// fragmentKeys lists the store keys of every fragment s's types pin
// (through the fragment chunks of a paged version).
func fragmentKeys(b *testing.B, res storeResult, types []string) []string {
	b.Helper()
	var keys []string
	st, err := fsstore.OpenWith(res.dir, fsstore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, typ := range types {
		pin, ok := res.snap.Kernel().Table(typ)
		if !ok {
			b.Fatalf("%s not pinned", typ)
		}
		tv, err := res.g.Kernel().ReadPinned(context.Background(), pin)
		if err != nil {
			b.Fatal(err)
		}
		names := tv.Fragments
		// A version of more than data.InlineFragments fragments lists
		// them in fragment chunks (R/adj/<table>/<chunk>, D22).
		infos, paged, err := data.PagedFragmentInfos(tv, func(name string) ([]byte, error) {
			obj, err := st.Get(context.Background(), res.root+"/adj/"+typ+"/"+name)
			return obj.Data, err
		})
		if err != nil {
			b.Fatal(err)
		}
		if paged {
			names = nil
			for _, f := range infos {
				names = append(names, f.Name)
			}
		}
		for _, f := range names {
			keys = append(keys, res.root+"/data/"+typ+"/"+f)
		}
	}
	return keys
}

// directRead reads the same fragment objects straight from the store,
// unwraps zstd with the zstd library and decodes them with arrow's IPC
// reader: no checks, no graphkernel code.
func directRead(b *testing.B, st *fsstore.Store, dec *zstd.Decoder, keys []string) int {
	b.Helper()
	n := 0
	for _, k := range keys {
		obj, err := st.Get(context.Background(), k)
		if err != nil {
			b.Fatal(err)
		}
		raw := obj.Data
		if bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			if raw, err = dec.DecodeAll(raw, nil); err != nil {
				b.Fatal(err)
			}
		}
		fr, err := ipc.NewFileReader(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		rec, err := fr.Record(0)
		if err != nil {
			b.Fatal(err)
		}
		n += int(rec.NumRows())
		fr.Close()
	}
	return n
}

// BenchmarkStoreBytes (#28.3): a generated graph (3 node types, 2 edge
// types, string/int/timestamp columns; -storebytes.rows, default 120,000)
// loaded on fs in -storebytes.batch transactions, then maintain; per codec
// side by side: bytes on the store over the bytes of the command's zstd
// Parquet export of the same snapshot (goal <= 1.5), object files by kind,
// and a full scan through the library over reading the same fragment files
// directly (zstd + arrow; goal <= 1.2; best of 9 alternating runs each).
// Run with -benchtime 1x. Under -short (CI's smoke run) the graph has at
// most 6,000 rows.
func BenchmarkStoreBytes(b *testing.B) {
	rows := *storeBytesRows
	if benchsize.Short() {
		rows = min(rows, 6000)
	}
	gen := generateGraph(rows)
	for _, codec := range []data.Codec{data.CodecPlain, data.CodecZstd} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			for b.Loop() {
				start := time.Now()
				res := loadAndMaintain(b, gen, codec, *storeBytesBatch)
				loadSecs := time.Since(start).Seconds()
				pqTypes := map[string]int64{}
				pq := exportParquet(b, res.snap, gen.types, pqTypes)
				st, err := fsstore.OpenWith(res.dir, fsstore.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
				if err != nil {
					b.Fatal(err)
				}
				keys := fragmentKeys(b, res, gen.types)
				scanBest, directBest := time.Duration(1<<62), time.Duration(1<<62)
				timed := func(f func() int) time.Duration {
					runtime.GC()
					t0 := time.Now()
					if got := f(); got != res.rows {
						b.Fatalf("read %d rows, want %d", got, res.rows)
					}
					return time.Since(t0)
				}
				scan := func() int { return scanAll(b, res.snap, gen.types) }
				direct := func() int { return directRead(b, st, dec, keys) }
				for i := range 9 { // alternating, each first in turn
					if i%2 == 0 {
						scanBest = min(scanBest, timed(scan))
						directBest = min(directBest, timed(direct))
					} else {
						directBest = min(directBest, timed(direct))
						scanBest = min(scanBest, timed(scan))
					}
				}
				dec.Close()
				b.ReportMetric(float64(res.storeB)/float64(pq), "store/parquet")
				b.ReportMetric(float64(res.storeB), "store-bytes")
				b.ReportMetric(float64(res.beforeB), "store-bytes-before-maintain")
				b.ReportMetric(float64(pq), "parquet-bytes")
				b.ReportMetric(float64(scanBest)/float64(directBest), "scan/direct")
				b.ReportMetric(float64(scanBest.Milliseconds()), "scan-ms")
				b.ReportMetric(float64(directBest.Milliseconds()), "direct-ms")
				b.ReportMetric(float64(res.rows)/loadSecs, "load+maintain-rows/s")
				total := 0
				for k, n := range res.files { //detlint:ordered summed; each metric is named by its key
					total += n
					b.ReportMetric(float64(n), "files-"+k)
				}
				b.ReportMetric(float64(total), "files")
				for k, n := range res.beforeFiles { //detlint:ordered each metric is named by its key
					b.ReportMetric(float64(n), "files-before-maintain-"+k)
				}
				for k, n := range res.bytesKind { //detlint:ordered each metric is named by its key
					b.ReportMetric(float64(n), "bytes-"+k)
				}
				for k, n := range pqTypes { //detlint:ordered each metric is named by its key
					b.ReportMetric(float64(n), "parquet-bytes-"+k)
				}
			}
		})
	}
}
