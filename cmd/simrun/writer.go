package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/faulty"
	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// writerFlag is the hidden flag of a writer process of the process harness
// (-procs): simrun re-executes itself with it.
const writerFlag = "internal-writer"

// writerConfig is what the parent tells one writer process.
type writerConfig struct {
	root    string
	id, seg int
	seed    uint64
	hist    string
	faults  bool
	// workload is maintWorkload for a process of the maintenance workload
	// (maintproc.go), else empty: the default writer.
	workload string
	// indexFanout shapes the process's data handles (-index-fanout,
	// dataOptions; the default writers have none: they write table
	// metadata through the kernel only).
	indexFanout int
}

// The writer's workload: commits of one or two of procTables on main, some
// strict, and reads of every table (with the commit chain while it is short).
var procTables = []string{"t0", "t1", "t2", "t3"}

const (
	procBranch     = "main"
	readShare      = 0.2  // of operations
	strictShare    = 0.25 // of commits
	chainReadMax   = 600  // manifest versions up to which reads read the chain (porcupine cost)
	logPage        = 256
	openRetryPause = 20 * time.Millisecond
	maxOpenTries   = 3000
)

// writerMain is one writer process: it opens the graph read-write (the open
// runs recovery), then commits and reads until its stdin closes, recording
// every operation in its history file before the call and after it returns.
func writerMain(c *config, stdin io.Reader, stderr io.Writer) int {
	wc := c.writer
	hw, err := createHist(wc.hist)
	if err != nil {
		fmt.Fprintln(stderr, "simrun writer:", err)
		return 2
	}
	defer hw.close()
	inner, err := openStore(c.store)
	if err != nil {
		fmt.Fprintln(stderr, "simrun writer:", err)
		return 2
	}
	st, faults := wrapFaults(inner, wc)
	var stop atomic.Bool
	go func() { _, _ = io.Copy(io.Discard, stdin); stop.Store(true) }()
	w := &writer{wc: wc, st: st, hw: hw, faults: faults, stop: stop.Load,
		rng: rand.New(rand.NewPCG(wc.seed, uint64(wc.id)<<32|uint64(wc.seg)))}
	if err := w.run(); err != nil {
		fmt.Fprintln(stderr, "simrun writer:", err)
		return 1
	}
	return 0
}

// writer is one writer process's state.
type writer struct {
	wc     writerConfig
	st     objstore.Store
	hw     *histWriter
	faults func() [4]int64
	stop   func() bool
	rng    *rand.Rand
	g      *kernel.Graph
	n      int
}

func (w *writer) run() error {
	ctx := context.Background()
	var err error
	for try := 0; ; try++ {
		if w.stop() {
			return w.hw.append(histRecord{Kind: recStop, Time: monoNow(), Faults: w.faultCounts()})
		}
		w.g, err = kernel.Open(ctx, w.st, w.wc.root, kernel.Options{Env: kernel.SystemEnv()})
		if err == nil {
			break
		}
		w.unexpected("open", err)
		if try >= maxOpenTries {
			return fmt.Errorf("open: %d attempts, last: %w", try, err)
		}
		time.Sleep(openRetryPause) // real time: a real process retrying a real store
	}
	if err := w.hw.append(histRecord{Kind: recOpen, Time: monoNow(), Faults: w.faultCounts()}); err != nil {
		return err
	}
	for !w.stop() {
		var err error
		if w.rng.Float64() < readShare {
			err = w.read(ctx)
		} else {
			err = w.commit(ctx)
		}
		if err != nil {
			return err
		}
	}
	return w.hw.append(histRecord{Kind: recStop, Time: monoNow(), Faults: w.faultCounts()})
}

func (w *writer) faultCounts() *[4]int64 {
	if w.faults == nil {
		return nil
	}
	f := w.faults()
	return &f
}

// unexpected records an error no correct kernel returns under store faults.
func (w *writer) unexpected(what string, err error) {
	if errors.Is(err, kernel.ErrCorrupt) || errors.Is(err, kernel.ErrUnsupportedFormat) {
		_ = w.hw.append(histRecord{Kind: recViolation, Time: monoNow(), Err: fmt.Sprintf("%s: %v", what, err)})
	}
}

// commit writes one or two tables of main in one commit tagged uniquely.
// Errors before the call record nothing; the returned error is a history
// write failure only.
func (w *writer) commit(ctx context.Context) error {
	w.n++
	tag := fmt.Sprintf("p%d.s%d.%d", w.wc.id, w.wc.seg, w.n)
	tables := []string{procTables[w.rng.IntN(len(procTables))]}
	if w.rng.IntN(3) == 0 {
		if t := procTables[w.rng.IntN(len(procTables))]; t != tables[0] {
			tables = append(tables, t)
		}
	}
	strict := w.rng.Float64() < strictShare
	ref, err := w.g.Branch(ctx, procBranch)
	if err != nil {
		w.unexpected("branch", err)
		return nil
	}
	kw := make([]kernel.TableWrite, len(tables))
	var expect []string
	var snap kernel.Snapshot
	if strict {
		if snap, err = w.g.SnapshotAt(ctx, ref); err != nil {
			w.unexpected("snapshot", err)
			return nil
		}
	}
	for i, t := range tables {
		kw[i] = kernel.TableWrite{Table: t, Strict: strict, Build: buildTagged(tag)}
		if strict {
			v, ver, err := w.valueAt(ctx, snap, t)
			if err != nil {
				w.unexpected("base", err)
				return nil
			}
			kw[i].BaseVersion = ver
			expect = append(expect, v)
		}
	}
	key := check.IncarnationKey(procBranch, ref.Incarnation())
	if err := w.hw.append(histRecord{Kind: recInvoke, Time: monoNow(), Tag: tag, Key: key, Tables: tables, Strict: strict, Expect: expect}); err != nil {
		return err
	}
	c, err := w.g.Write(ctx, ref, kw, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", w.wc.id), Message: check.MessageFor(tag)})
	ret := histRecord{Time: monoNow(), Tag: tag, Faults: w.faultCounts()}
	switch workload.Outcome(err) {
	case model.OK:
		ret.Kind, ret.Commit = recOK, c.ID.String()
	case model.Failed:
		ret.Kind, ret.Err = recFail, err.Error()
	default:
		ret.Kind, ret.Err = recUnknown, err.Error()
	}
	if err := w.hw.append(ret); err != nil {
		return err
	}
	if err != nil {
		w.unexpected("commit", err)
	}
	return nil
}

// buildTagged returns a Build whose content carries tag.
func buildTagged(tag string) func(kernel.TableVersion) (kernel.TableContent, error) {
	return func(pinned kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Rows: pinned.Rows + 1, Metadata: map[string]string{check.MetaTag: tag}}, nil
	}
}

// valueAt returns the value (writer tag) and version of table in snap.
func (w *writer) valueAt(ctx context.Context, snap kernel.Snapshot, table string) (string, uint64, error) {
	pin, ok := snap.Table(table)
	if !ok {
		return model.Absent, 0, nil
	}
	tv, err := w.g.ReadPinned(ctx, pin)
	if err != nil {
		return "", 0, err
	}
	return check.TagOfTable(tv), pin.Version, nil
}

// read reads main atomically: a snapshot, every table's value in it and,
// while the chain is short, the chain of commit tags up to it. A read that
// fails records nothing.
func (w *writer) read(ctx context.Context) error {
	call := monoNow()
	ref, err := w.g.Branch(ctx, procBranch)
	if err != nil {
		w.unexpected("read: branch", err)
		return nil
	}
	snap, err := w.g.SnapshotAt(ctx, ref)
	if err != nil {
		w.unexpected("read: snapshot", err)
		return nil
	}
	rec := histRecord{Kind: recRead, Call: call, Key: check.IncarnationKey(procBranch, ref.Incarnation()), Tables: procTables}
	for _, t := range procTables {
		v, _, err := w.valueAt(ctx, snap, t)
		if err != nil {
			w.unexpected("read: table", err)
			return nil
		}
		rec.Values = append(rec.Values, v)
	}
	if snap.ManifestVersion() <= chainReadMax {
		if rec.Chain, err = w.chainOf(ctx, ref, snap.ManifestVersion()); err != nil {
			w.unexpected("read: log", err)
			return nil
		}
	} else {
		rec.NoChain = true
	}
	rec.Time = monoNow()
	rec.Faults = w.faultCounts()
	return w.hw.append(rec)
}

// chainOf returns the tags of the commits of ref's incarnation up to
// manifest version, oldest first.
func (w *writer) chainOf(ctx context.Context, ref kernel.BranchRef, version uint64) ([]string, error) {
	return workload.ChainTags(ctx, w.g, ref, version, chainReadMax/logPage+3)
}

// faultsWired reports whether writers can inject store faults.
const faultsWired = true

// Fault rates of a writer's store (objstore/faulty), each writer seeded
// differently.
var writerFaults = faulty.Config{TransientRate: 0.02, LostAckRate: 0.01, ReadOutageAfterLostAck: 2}

// wrapFaults returns the store a writer uses and its fault counter (nil
// without fault injection).
func wrapFaults(st objstore.Store, wc writerConfig) (objstore.Store, func() [4]int64) {
	if !wc.faults {
		return st, nil
	}
	cfg := writerFaults
	cfg.Seed = wc.seed ^ (uint64(wc.id)<<32 | uint64(wc.seg)) ^ 0x66617574
	fs := faulty.New(st, cfg)
	return fs, func() [4]int64 {
		s := fs.Stats()
		return [4]int64{s.Calls, s.Transient, s.LostAcks, s.OutageReads}
	}
}
