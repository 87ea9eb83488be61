package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	gkfs "github.com/graphkernel/graphkernel/objstore/fs"
)

// loadBenchScale sizes BenchmarkLoadMemory: 1 is the issue #28 dataset
// (200,000 nodes and 1,000,000 edges, about 55 MB of CSV); the default is
// a fiftieth of it so a plain -bench run stays short.
var loadBenchScale = flag.Float64("loadbench.scale", 0.02, "BenchmarkLoadMemory: fraction of the 1.2 M-row dataset")

// loadBenchHeapProfile, when set, names a file the sampler writes a heap
// profile to whenever the peak grows by a tenth (the last one is nearest
// the peak).
var loadBenchHeapProfile = flag.String("loadbench.heapprofile", "", "BenchmarkLoadMemory: write heap profiles near the peak to `FILE`")

// loadBenchSchema has 3 node types and 2 edge types, one with @card.
const loadBenchSchema = `
node Person  { name: string  age: int64?  score: float64? }
node Company { name: string  founded: int64? }
node City    { name: string }
edge Knows:   Person -> Person { since: int64? }
edge LivesIn: Person -> City @card(0..1)
`

// writeLoadDataset writes the dataset as one CSV file per type into dir
// and returns the files (nodes first) and the row count. At scale 1:
// 150,000 Person, 25,000 Company, 25,000 City, 850,000 Knows and 150,000
// LivesIn (every person lives in one city).
func writeLoadDataset(b *testing.B, dir string, scale float64) ([]string, int) {
	b.Helper()
	n := func(full int) int { return max(1, int(float64(full)*scale)) }
	persons, companies, cities, knows := n(150_000), n(25_000), n(25_000), n(850_000)
	rng := rand.New(rand.NewPCG(1, 2))
	var files []string
	rows := 0
	write := func(name, header string, count int, row func(w *bufio.Writer, i int)) {
		path := filepath.Join(dir, name+".csv")
		fh, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(fh, 1<<20)
		w.WriteString(header + "\n")
		for i := range count {
			row(w, i)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			b.Fatal(err)
		}
		files = append(files, path)
		rows += count
	}
	write("Person", "id,name,age,score", persons, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "p%07d,person %d,%d,%.3f\n", i, i, 18+rng.IntN(70), rng.Float64()*100)
	})
	write("Company", "id,name,founded", companies, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "c%07d,company %d,%d\n", i, i, 1900+rng.IntN(125))
	})
	write("City", "id,name", cities, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "t%07d,city %d\n", i, i)
	})
	write("Knows", "id,from,to,since", knows, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "k%08d,p%07d,p%07d,%d\n", i, rng.IntN(persons), rng.IntN(persons), 1990+rng.IntN(35))
	})
	write("LivesIn", "id,from,to", persons, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "l%07d,p%07d,t%07d\n", i, i, rng.IntN(cities))
	})
	return files, rows
}

// heapSampler records the high-water mark of the heap's object bytes
// (live and not yet swept) from a goroutine of the benchmark (the kernel
// starts none).
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var dumped uint64
	read := func() {
		metrics.Read(sample)
		v := sample[0].Value.Uint64()
		if v > h.peak.Load() {
			h.peak.Store(v)
		}
		if *loadBenchHeapProfile != "" && v > dumped+dumped/10 {
			dumped = v
			if f, err := os.Create(*loadBenchHeapProfile); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}
	read()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return h
}

func (h *heapSampler) done() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak.Load()
}

// BenchmarkLoadMemory loads the issue #28 dataset (3 node types, 2 edge
// types, one with @card; size by -loadbench.scale) with `graphkernel load`
// at its default batching into a fresh graph on fs, and reports the peak
// heap as a multiple of the transaction byte budget (goal <= 4) and the
// rows per second (goal >= 1e6), with the store's puts and bytes written.
// Side by side in one run: "fs" is the command's store; "fs-nosync" is the
// same store skipping every fsync (fs.Options.NoSync, never a real
// store's setting), so the difference is what durability costs;
// "fs-nolimit" is "fs" without the load's soft memory limit (as with
// GOMEMLIMIT set), so the difference is what the limit costs in GC.
//
// Under -short (CI's smoke run) the dataset is at most a quarter of the
// default scale.
func BenchmarkLoadMemory(b *testing.B) {
	dir := b.TempDir()
	scale := *loadBenchScale
	if benchsize.Short() {
		scale = min(scale, 0.005)
	}
	files, rows := writeLoadDataset(b, dir, scale)
	schemaFile := filepath.Join(dir, "bench.schema")
	if err := os.WriteFile(schemaFile, []byte(loadBenchSchema), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name          string
		noSync, limit bool
	}{{"fs", false, true}, {"fs-nosync", true, true}, {"fs-nolimit", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			if !c.limit {
				b.Setenv("GOMEMLIMIT", "off") // the load then keeps the runtime's limit (none)
			}
			benchLoad(b, dir, files, rows, schemaFile, c.noSync)
		})
	}
}

// benchLoad runs the load b.N times into fresh fs stores under dir.
func benchLoad(b *testing.B, dir string, files []string, rows int, schemaFile string, noSync bool) {
	budget := int64(data.DefaultMaxBytes)
	var peak uint64
	var elapsed time.Duration
	var counts objstore.RequestCounts
	txns := 0
	var cpu, gc float64
	b.StopTimer()
	for i := range b.N {
		store := filepath.Join(dir, fmt.Sprintf("store%d", i))
		var cs *counting.Store
		open := func(ctx context.Context, spec string) (objstore.Store, error) {
			if err := os.MkdirAll(store, 0o755); err != nil {
				return nil, err
			}
			st, err := gkfs.OpenWith(store, gkfs.Options{NoSync: noSync})
			if err != nil {
				return nil, err
			}
			cs = counting.New(st)
			return cs, nil
		}
		out := &bytes.Buffer{}
		a := &app{stdout: out, stderr: &bytes.Buffer{}, now: time.Now, open: open, env: kernel.SystemEnv()}
		args := append([]string{"load", "--json", "fs:" + store, "g", "main"}, files...)
		args = append(args, "--schema", schemaFile)
		runtime.GC()
		b.StartTimer()
		h := startHeapSampler()
		start, cpu0, gc0 := time.Now(), processCPU(), gcCPU()
		code := a.run(context.Background(), args)
		elapsed += time.Since(start)
		cpu += processCPU() - cpu0
		gc += gcCPU() - gc0
		peak = max(peak, h.done())
		b.StopTimer()
		if code != exitOK {
			b.Fatalf("load: exit %d\n%s\n%s", code, a.stdout, a.stderr)
		}
		var rep loadReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			b.Fatalf("load --json: %v", err)
		}
		txns += len(rep.Transactions)
		c := cs.Counts()
		counts.Put.Requests += c.Put.Requests
		counts.BytesWritten += c.BytesWritten
		counts.Get.Requests += c.Get.Requests
		if err := os.RemoveAll(store); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(txns)/n, "txns")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak)/float64(budget), "peak-heap-x-budget")
	b.ReportMetric(float64(rows)*n/elapsed.Seconds(), "rows-per-s")
	b.ReportMetric(cpu/n, "cpu-s")
	b.ReportMetric(gc/n, "gc-cpu-s")
	b.ReportMetric(elapsed.Seconds()/n, "wall-s")
	b.ReportMetric(float64(counts.Put.Requests)/n, "puts")
	b.ReportMetric(float64(counts.Get.Requests)/n, "gets")
	b.ReportMetric(float64(counts.BytesWritten)/n/(1<<20), "MiB-written")
}

// processCPU is the process's user plus system CPU seconds so far (the
// sampler's share is negligible): on a shared machine it separates the
// load's work from waiting for the CPU or the disk.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// gcCPU is the CPU seconds the Go runtime estimates it spent collecting.
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}
