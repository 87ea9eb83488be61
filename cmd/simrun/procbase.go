package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/objstore"
)

// procBase is what a process of a -procs workload with its own process
// type (maint, schema) holds besides its graph: what the parent told it,
// its history file, the parent's stop signal, its seeded choices, the
// fault counts of its store and the count of its operations.
type procBase struct {
	wc     writerConfig
	hw     *histWriter
	stop   func() bool
	rng    *rand.Rand
	faults func() [4]int64
	n      int
}

// workloadProc is one process of a -procs workload: it opens the graph
// on the store (the open runs recovery), then runs until stop.
type workloadProc interface {
	open(st objstore.Store) error
	run() error
}

// procMain runs one process of workload name: it creates the history
// file, opens the store (with the writer's faults), stops when the
// parent closes stdin, and runs the process newProc makes. It returns
// the process's exit status: 2 for a setup failure, 1 for a run that
// failed.
func procMain(name string, c *config, stdin io.Reader, stderr io.Writer, newProc func(procBase) workloadProc) int {
	wc := c.writer
	wc.indexFanout = c.indexFanout
	hw, err := createHist(wc.hist)
	if err != nil {
		fmt.Fprintf(stderr, "simrun %s: %v\n", name, err)
		return 2
	}
	defer hw.close()
	inner, err := openStore(c.store)
	if err != nil {
		fmt.Fprintf(stderr, "simrun %s: %v\n", name, err)
		return 2
	}
	st, faults := wrapFaults(inner, wc)
	var stop atomic.Bool
	go func() { _, _ = io.Copy(io.Discard, stdin); stop.Store(true) }()
	p := newProc(procBase{wc: wc, hw: hw, faults: faults, stop: stop.Load,
		rng: rand.New(rand.NewPCG(wc.seed, uint64(wc.id)<<32|uint64(wc.seg)))})
	if err := p.open(st); err != nil {
		fmt.Fprintf(stderr, "simrun %s: %v\n", name, err)
		return 1
	}
	if err := p.run(); err != nil {
		fmt.Fprintf(stderr, "simrun %s: %v\n", name, err)
		return 1
	}
	return 0
}

// procsIndexFanout is -index-fanout's default. At n, the process
// harness's data handles write as the simulator's do (sim/workload
// simIndexFanout, simInlineFragments): pages of n rows, n pages per index
// chunk and n refs per ref chunk, one ref per index direction in a table
// version, and every version holding a fragment paged, in fragment chunks
// of n infos under fragment ref chunks of n refs, one ref in the version.
// So the tables a run of seconds grows carry index trees and fragment ref
// chunks under the kills; at the kernel's shapes (16 refs per chunk, pages
// of hundreds of rows, 8 fragments inline) they never would.
const procsIndexFanout = 4

// procsRidingBudget is the riding budget of one writer in three
// (dataOptions): a manifest carries at most two or three small riding
// versions and a version past 2 KB is an object, so a run's writers with
// and without it meet each other's heads (a manifest over the budget is
// inherited, never extended: lineage.RidingOverBudget).
var procsRidingBudget = kernel.RidingBudget{VersionBytes: 2048, ManifestBytes: 4096}

// dataOptions returns the options of a data handle that writes, with
// kernel options k, shaped by index fanout n (-index-fanout; 0: the
// kernel's shapes). Writer id writes index chunks as JSON (formats 7 to
// 11) when id is 3 mod 4, in binary (format 12) else, so a run's graph
// mixes both forms as a graph migrated from format 11 does; and it rides
// its table versions within procsRidingBudget when id is 1 mod 3, within
// the format's maxima else.
func dataOptions(k kernel.Options, n, id int) data.Options {
	if id%3 == 1 {
		k.RidingBudget = procsRidingBudget
	}
	opts := data.Options{Kernel: k, JSONIndexChunks: id%4 == 3}
	if n > 0 {
		opts.IndexFanout, opts.InlineFragments = n, -1
	}
	return opts
}

// record appends one record, stamped with the time and fault counts.
func (p *procBase) record(r histRecord) error {
	r.Time = monoNow()
	if p.faults != nil {
		f := p.faults()
		r.Faults = &f
	}
	return p.hw.append(r)
}

// unexpected records an error no correct kernel returns under store faults.
func (p *procBase) unexpected(what string, err error) {
	if errors.Is(err, kernel.ErrCorrupt) || errors.Is(err, kernel.ErrUnsupportedFormat) {
		_ = p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("%s: %v", what, err)})
	}
}

// mainHead returns main and a snapshot of its head on g; ok=false after
// recording an error no correct kernel returns (unexpected), else after
// a store fault the caller skips its operation for.
func (p *procBase) mainHead(ctx context.Context, g *data.Graph) (kernel.BranchRef, *data.Snapshot, bool) {
	main, err := g.Branch(ctx, "main")
	if err != nil {
		p.unexpected("branch", err)
		return kernel.BranchRef{}, nil, false
	}
	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		p.unexpected("schema snapshot", err)
		return kernel.BranchRef{}, nil, false
	}
	return main, snap, true
}
