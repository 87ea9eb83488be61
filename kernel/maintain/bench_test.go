package maintain_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	fsstore "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// benchGraph is a data graph on store with a manual clock.
type benchGraph struct {
	g     *data.Graph
	m     *maintain.Maintainer
	store objstore.Store
	clock *kernel.ManualClock
	main  kernel.BranchRef
}

func newBenchGraph(b *testing.B, store objstore.Store) *benchGraph {
	b.Helper()
	s, err := schema.Parse([]byte("node Person { name: string }\n"))
	if err != nil {
		b.Fatal(err)
	}
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g, err := data.Init(ctx, store, root, s, data.Options{Kernel: kernel.Options{
		Env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{1})}, Grace: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	m, err := maintain.New(store, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{2})})
	if err != nil {
		b.Fatal(err)
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	return &benchGraph{g: g, m: m, store: store, clock: clock, main: main}
}

// reopen returns the graph on another store handle (same data).
func (bg *benchGraph) reopen(b *testing.B, store objstore.Store) *benchGraph {
	b.Helper()
	g, err := data.Open(ctx, store, root, data.Options{Kernel: kernel.Options{
		Env: kernel.Env{Clock: bg.clock, Entropy: rand.NewChaCha8([32]byte{3})}, Grace: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	return &benchGraph{g: g, m: bg.m, store: store, clock: bg.clock, main: bg.main}
}

func (bg *benchGraph) tx(b *testing.B, stage func(tx *data.Txn) error) {
	b.Helper()
	tx, err := bg.g.Begin(ctx, bg.main)
	if err != nil {
		b.Fatal(err)
	}
	if err := stage(tx); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"}); err != nil {
		b.Fatal(err)
	}
	bg.clock.Advance(time.Second)
}

func (bg *benchGraph) insert(b *testing.B, ids ...string) {
	b.Helper()
	bg.tx(b, func(tx *data.Txn) error {
		for _, id := range ids {
			if err := tx.Insert("Person", person(id, "name-"+id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// scan reads every row of main's head and returns how many.
func (bg *benchGraph) scan(b *testing.B) int {
	b.Helper()
	s, err := bg.g.SnapshotAt(ctx, bg.main)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := s.Scan(ctx, "Person")
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

// headFragments returns the fragment count and bytes of main's Person:
// from the version's inline infos (data.fragment.* metadata), or, for a
// paged version (format 10: more than data.DefaultInlineFragments
// fragments), from the fragment chunks it lists. An embedded fragment
// (format 9) counts like any other: its bytes are stored, in the version.
func (bg *benchGraph) headFragments(b *testing.B) (int, uint64) {
	b.Helper()
	s, err := bg.g.Kernel().SnapshotAt(ctx, bg.main)
	if err != nil {
		b.Fatal(err)
	}
	pin, _ := s.Table("Person")
	tv, err := bg.g.Kernel().ReadPinned(ctx, pin)
	if err != nil {
		b.Fatal(err)
	}
	keys := format.NewKeys(root)
	infos, paged, err := data.PagedFragmentInfos(tv, func(name string) ([]byte, error) {
		id, err := ulid.ParseStrict(name)
		if err != nil {
			return nil, err
		}
		o, err := bg.store.Get(ctx, keys.Adjacency(tv.Table, id))
		return o.Data, err
	})
	if err != nil {
		b.Fatal(err)
	}
	var n int
	var bytes uint64
	if paged {
		n = len(infos)
		for _, f := range infos {
			bytes += f.Bytes
		}
	} else {
		for _, kv := range tv.Metadata {
			if strings.HasPrefix(kv.Key, "data.fragment.") {
				var info struct {
					Bytes uint64 `json:"bytes"`
				}
				if err := json.Unmarshal([]byte(kv.Value), &info); err != nil {
					b.Fatal(err)
				}
				n++
				bytes += info.Bytes
			}
		}
	}
	// A format that lists the infos elsewhere again must fail here, not
	// report 0 bytes (an amplification of +Inf) as format 10 did unseen.
	if tv.Rows > 0 && (n == 0 || bytes == 0) {
		b.Fatalf("Person holds %d rows but %d fragment infos of %d bytes were found: the version lists them somewhere headFragments does not read", tv.Rows, n, bytes)
	}
	return n, bytes
}

func id(i int) string { return fmt.Sprintf("p%06d", i) }

// BenchmarkScanAfterCompaction: a scan of 1,000 rows written by 1,000
// single-row commits and then one compaction, against the same rows
// written in one commit (the bound: ratio <= 1.5). Under -short
// (CI's smoke run) 100 rows.
func BenchmarkScanAfterCompaction(b *testing.B) {
	rows := benchsize.Or(1000, 100)
	many := newBenchGraph(b, sim.New(sim.Config{Seed: 1}))
	for i := 0; i < rows; i++ {
		many.insert(b, id(i))
	}
	before, _ := many.headFragments(b)
	if _, err := many.g.Compact(ctx, many.main, compact.Policy{}); err != nil {
		b.Fatal(err)
	}
	after, _ := many.headFragments(b)
	one := newBenchGraph(b, sim.New(sim.Config{Seed: 2}))
	all := make([]string, rows)
	for i := range all {
		all[i] = id(i)
	}
	one.insert(b, all...)
	// Both sides scan on a fresh handle: the handle that wrote the
	// one-commit fragment holds it decoded (the write-through cache,
	// WriteThroughBytes), while a compaction's output is not written
	// through and a scan caches nothing (scanFetch), so on the writing
	// handles the pair compared a cached scan with a fetched one (ratio ~5
	// at 1,000 rows), not the two layouts. Fresh, each side GETs its
	// fragments on every scan.
	many, one = many.reopen(b, many.store), one.reopen(b, one.store)
	var tMany, tOne time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if n := many.scan(b); n != rows {
			b.Fatalf("compacted scan: %d rows", n)
		}
		t1 := time.Now()
		if n := one.scan(b); n != rows {
			b.Fatalf("one-commit scan: %d rows", n)
		}
		tMany, tOne = tMany+t1.Sub(t0), tOne+time.Since(t1)
	}
	b.ReportMetric(float64(tMany)/float64(tOne), "ratio/one-commit")
	b.ReportMetric(float64(before), "fragments-before")
	b.ReportMetric(float64(after), "fragments-after")
}

// medianInsert times n single-row insert transactions on bg and returns
// the median.
func medianInsert(b *testing.B, bg *benchGraph, tag string, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		bg.insert(b, fmt.Sprintf("%s-%03d", tag, i))
		ds[i] = time.Since(t0)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

// BenchmarkInsertDepthWithMaintain: a single-row insert on fs after
// 10,000 single-row commits with Maintain every 100 commits, against the
// same insert at depth 10 (bound: ratio <= 1.5); and, without maintenance,
// the head table version's fragment count and the store's key count after
// the same history. The fixtures are built with fs NoSync; the inserts are
// timed on a synced handle of the same directory. Under -short (CI's smoke
// run) depth 200 (two Maintain calls) and 5 samples.
func BenchmarkInsertDepthWithMaintain(b *testing.B) {
	const every = 100
	depth, samples := benchsize.Or(10000, 200), benchsize.Or(21, 5)
	build := func(dir string, commits int, maintained bool) *benchGraph {
		st, err := fsstore.OpenWith(dir, fsstore.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		bg := newBenchGraph(b, st)
		p := maintain.RunPolicy{Collect: maintain.Policy{Policy: gc.Policy{KeepLast: 10, Grace: time.Minute, SkewMargin: time.Minute}}}
		for i := 0; i < commits; i++ {
			bg.insert(b, id(i))
			if maintained && (i+1)%every == 0 {
				if _, err := maintain.Maintain(ctx, bg.g, bg.m, p); err != nil {
					b.Fatal(err)
				}
			}
		}
		synced, err := fsstore.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		return bg.reopen(b, synced)
	}
	shallow := build(b.TempDir(), 10, false)
	deep := build(b.TempDir(), depth, true)
	bare := build(b.TempDir(), depth, false)
	b.ResetTimer()
	var ratio float64
	for i := 0; i < b.N; i++ {
		s := medianInsert(b, shallow, fmt.Sprint("s", i), samples)
		d := medianInsert(b, deep, fmt.Sprint("d", i), samples)
		ratio = float64(d) / float64(s)
		b.ReportMetric(float64(s.Microseconds()), "us-insert-depth10")
		b.ReportMetric(float64(d.Microseconds()), "us-insert-depth10k-maintained")
	}
	b.StopTimer()
	b.ReportMetric(ratio, "ratio/depth10")
	fm, _ := deep.headFragments(b)
	fb, _ := bare.headFragments(b)
	b.ReportMetric(float64(fm), "fragments-maintained")
	b.ReportMetric(float64(fb), "fragments-unmaintained")
	b.ReportMetric(float64(countKeys(b, deep.store)), "keys-maintained")
	b.ReportMetric(float64(countKeys(b, bare.store)), "keys-unmaintained")
}

func countKeys(b *testing.B, st objstore.Store) int {
	n, after := 0, ""
	for {
		p, err := st.List(ctx, root+"/", after, objstore.MaxListLimit)
		if err != nil {
			b.Fatal(err)
		}
		n += len(p.Keys)
		if !p.Truncated || len(p.Keys) == 0 {
			return n
		}
		after = p.Keys[len(p.Keys)-1]
	}
}

// BenchmarkSpaceAmplification: a 100,000-row table, 1,000 commits each
// updating 1% of it (1,000 rows with consecutive ids at a random offset),
// then a collection keeping the last 10 commits: stored bytes over the
// bytes of the head's fragments (bound: <= 2.5), before and after. Under
// -short (CI's smoke run) 10 commits: the head still has paged fragment
// infos (format 10), as at full size.
func BenchmarkSpaceAmplification(b *testing.B) {
	const rows, perCommit = 100000, 1000
	commits := benchsize.Or(1000, 10)
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		st, err := fsstore.OpenWith(dir, fsstore.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		bg := newBenchGraph(b, st)
		all := make([]string, rows)
		for j := range all {
			all[j] = id(j)
		}
		bg.insert(b, all...)
		rng := rand.New(rand.NewPCG(1, 2))
		for c := 0; c < commits; c++ {
			start := rng.IntN(rows - perCommit)
			bg.tx(b, func(tx *data.Txn) error {
				for j := start; j < start+perCommit; j++ {
					if err := tx.Update("Person", person(id(j), fmt.Sprint("c", c))); err != nil {
						return err
					}
				}
				return nil
			})
		}
		before := dirBytes(b, dir)
		bg.clock.Advance(10 * time.Minute)
		rep, err := bg.m.Collect(ctx, maintain.Policy{Policy: gc.Policy{KeepLast: 10, Grace: time.Minute, SkewMargin: time.Minute}})
		if err != nil || !rep.Complete {
			b.Fatalf("collect: %+v %v", rep, err)
		}
		after := dirBytes(b, dir)
		_, head := bg.headFragments(b)
		b.ReportMetric(float64(after)/float64(head), "amplification")
		b.ReportMetric(float64(before)/float64(head), "amplification-before")
		b.ReportMetric(float64(before), "bytes-before")
		b.ReportMetric(float64(after), "bytes-after")
		b.ReportMetric(float64(head), "bytes-head-fragments")
		b.ReportMetric(float64(rep.Fragments.Deleted), "fragments-deleted")
	}
}

// dirBytes sums the sizes of the regular files under dir (the objects;
// fs bookkeeping directories hold no payload).
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

var mergeBasesMoving = flag.Bool("mergebases.moving", false, "BenchmarkCollectMergeBases: commit on main before each measured collection")

// BenchmarkCollectMergeBases: the cost of a collection (store requests)
// with n live branches, each forked from main, given one commit and
// merged into main, while main moves on (and as many deleted branches
// merged the same way), so every pair of live branches has its own merge
// base and every reach names n incarnations. Rule 3b reads each
// candidate tip's manifest and commit index, so a collection's requests
// grow with the branches; requests-per-branch staying flat from 10 to 100
// (ratio-per-branch/10) says it is linear, not quadratic, in them. CPU
// time grows faster: each commit index's reach names every incarnation
// merged before it, and the collection decodes one per candidate. A
// Maintainer replays the searches of pairs whose heads did not move
// (gc.PairMemo); with -mergebases.moving main commits before each
// measured collection, so main's pairs are searched again. Under -short
// (CI's smoke run) 10 branches only.
func BenchmarkCollectMergeBases(b *testing.B) {
	var base float64
	for _, n := range benchsize.Smallest([]int{10, 100, 300}) {
		b.Run(fmt.Sprintf("branches=%d", n), func(b *testing.B) {
			cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
			bg := newBenchGraph(b, cs)
			bg.insert(b, id(0))
			policy := maintain.Policy{Policy: gc.Policy{KeepLast: 2, Grace: time.Minute, SkewMargin: time.Minute}}
			for i := 0; i < 2*n; i++ {
				name := fmt.Sprintf("f%03d", i)
				f, err := bg.g.Kernel().CreateBranch(ctx, name, bg.main)
				if err != nil {
					b.Fatal(err)
				}
				commitOn(b, bg.g, f, id(1+i))
				if _, err := bg.g.Merge(ctx, f, bg.main, kernel.LineageIntent{Actor: "b", Message: "merge " + name}, data.MergeOptions{}); err != nil {
					b.Fatal(err)
				}
				if i%2 == 1 {
					if err := bg.g.Kernel().DeleteBranch(ctx, name); err != nil {
						b.Fatal(err)
					}
				}
				bg.clock.Advance(time.Second)
			}
			bg.clock.Advance(time.Hour)
			rep, err := bg.m.Collect(ctx, policy)
			if err != nil || !rep.Complete || rep.MergeBasesUnknown != 0 {
				b.Fatalf("first collection: %+v %v", rep, err)
			}
			var reqs uint64
			var moved int
			for b.Loop() {
				if *mergeBasesMoving {
					b.StopTimer()
					moved++
					bg.insert(b, fmt.Sprintf("moved%06d", moved)) // main's head moves: its n pairs are searched again
					b.StartTimer()
				}
				before := cs.Counts().Requests()
				rep, err = bg.m.Collect(ctx, policy)
				if err != nil {
					b.Fatal(err)
				}
				reqs += cs.Counts().Requests() - before
			}
			per := float64(reqs) / float64(b.N)
			b.ReportMetric(per, "requests/collect")
			b.ReportMetric(per/float64(n), "requests/branch")
			b.ReportMetric(float64(rep.MergeBases), "merge-base-roots")
			if n == 10 {
				base = per / float64(n)
			} else if base > 0 {
				b.ReportMetric(per/float64(n)/base, "ratio-per-branch/10")
			}
		})
	}
}

// commitOn inserts one person on branch br.
func commitOn(b *testing.B, g *data.Graph, br kernel.BranchRef, person string) {
	b.Helper()
	tx, err := g.Begin(ctx, br)
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Insert("Person", data.Row{ID: person, Props: map[string]any{"name": person}}); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "b", Message: "c"}); err != nil {
		b.Fatal(err)
	}
}
