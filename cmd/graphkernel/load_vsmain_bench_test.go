package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// loadBenchMain names a graphkernel binary built from another commit
// (main) for BenchmarkLoadVsMain; without it the benchmark skips.
var loadBenchMain = flag.String("loadbench.main", "", "BenchmarkLoadVsMain: a graphkernel `binary` built from main to compare with")

// gcHeapRE matches a GODEBUG=gctrace=1 line's heap sizes: at the start of
// the collection, at its end, and live (MiB).
var gcHeapRE = regexp.MustCompile(`gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// loadRun is one `graphkernel load` process: wall and CPU seconds, the
// largest heap a collection started at (gctrace), the peak RSS.
type loadRun struct {
	wall, cpu        float64
	peakHeap, maxRSS float64 // MiB
}

// BenchmarkLoadVsMain runs `graphkernel load` of the BenchmarkLoadMemory
// dataset (-loadbench.scale) as a process, with this package's code
// (built with go build) and with the binary -loadbench.main names, side
// by side in one run (alternating which goes first), each into a fresh fs
// store, and reports both builds' rows/s, peak heap over the transaction
// byte budget (the largest heap a collection started at, from
// GODEBUG=gctrace=1: both builds measured the same way), CPU seconds and
// peak RSS, and the ratios this build / main. Build main's binary without
// touching a checkout: `mkdir /tmp/gk-main && git archive main | tar -x -C
// /tmp/gk-main && cd /tmp/gk-main && go build -o /tmp/gk-main.bin
// ./cmd/graphkernel`.
func BenchmarkLoadVsMain(b *testing.B) {
	if *loadBenchMain == "" {
		b.Skip("-loadbench.main BINARY (graphkernel built from main) not given")
	}
	dir := b.TempDir()
	files, rows := writeLoadDataset(b, dir, *loadBenchScale)
	schemaFile := filepath.Join(dir, "bench.schema")
	if err := os.WriteFile(schemaFile, []byte(loadBenchSchema), 0o644); err != nil {
		b.Fatal(err)
	}
	self := filepath.Join(dir, "graphkernel-this")
	if out, err := exec.Command("go", "build", "-o", self, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	bins := [2]string{self, *loadBenchMain}
	var sum [2]loadRun
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			j := (i + k) % 2 // alternate which build goes first
			r := runLoadProcess(b, bins[j], filepath.Join(dir, fmt.Sprintf("store-%d-%d", i, j)), files, schemaFile)
			sum[j].wall += r.wall
			sum[j].cpu += r.cpu
			sum[j].peakHeap = max(sum[j].peakHeap, r.peakHeap)
			sum[j].maxRSS = max(sum[j].maxRSS, r.maxRSS)
		}
	}
	n, budget := float64(b.N), float64(data.DefaultMaxBytes)/(1<<20)
	for j, name := range []string{"this", "main"} {
		b.ReportMetric(float64(rows)*n/sum[j].wall, "rows-per-s-"+name)
		b.ReportMetric(sum[j].cpu/n, "cpu-s-"+name)
		b.ReportMetric(sum[j].peakHeap/budget, "peak-heap-x-budget-"+name)
		b.ReportMetric(sum[j].maxRSS, "max-rss-MiB-"+name)
	}
	b.ReportMetric(sum[1].wall/sum[0].wall, "rows-per-s-ratio-this/main")
	b.ReportMetric(sum[0].cpu/sum[1].cpu, "cpu-ratio-this/main")
	b.ReportMetric(sum[0].peakHeap/sum[1].peakHeap, "peak-heap-ratio-this/main")
	b.ReportMetric(float64(rows), "rows")
}

// runLoadProcess runs bin's load into a new fs store and measures it.
func runLoadProcess(b *testing.B, bin, store string, files []string, schemaFile string) loadRun {
	b.Helper()
	args := append([]string{"load", "--json", "fs:" + store, "g", "main"}, files...)
	cmd := exec.Command(bin, append(args, "--schema", schemaFile)...)
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s load: %v\n%s", bin, err, stderr.Bytes()[max(0, stderr.Len()-2000):])
	}
	r := loadRun{wall: time.Since(start).Seconds()}
	var rep loadReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Error != "" {
		b.Fatalf("%s load --json: %v %s", bin, err, rep.Error)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		r.maxRSS = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	for _, m := range gcHeapRE.FindAllSubmatch(stderr.Bytes(), -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		r.peakHeap = max(r.peakHeap, v)
	}
	if err := os.RemoveAll(store); err != nil {
		b.Fatal(err)
	}
	return r
}
