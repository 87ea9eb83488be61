package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/sim/check"
)

// A writer process's history is a file of JSON lines, one record per line,
// appended (O_APPEND) and fsynced one record at a time: a record is durable
// before the process goes on, and SIGKILL can tear only the last line,
// which the reader drops. Every time is CLOCK_MONOTONIC, which all processes
// of one machine share, so records of different processes compare.
//
// A commit is an "invoke" record written before the call and one of "ok",
// "fail" (definite: nothing was or will be applied) or "unknown"
// (ambiguous) written after it returns; an invoke without its return (the
// process was killed in the call, or while writing the record) is pending,
// hence ambiguous. A read is one "read" record written after it returned,
// with its call time: a read that never returned constrains nothing.
type histRecord struct {
	Kind   string   `json:"k"`
	Time   int64    `json:"t"`
	Call   int64    `json:"call,omitempty"`   // read: call time
	Tag    string   `json:"tag,omitempty"`    // commit tag
	Key    string   `json:"key,omitempty"`    // branch incarnation
	Tables []string `json:"tables,omitempty"` // invoke: tables written
	Strict bool     `json:"strict,omitempty"` // invoke: strict writes
	Expect []string `json:"expect,omitempty"` // invoke: strict base values, per table
	Commit string   `json:"commit,omitempty"` // ok: commit id
	Err    string   `json:"err,omitempty"`    // fail, unknown, violation
	Chain  []string `json:"chain,omitempty"`  // read: commit tags, oldest first
	// NoChain marks a read of table values only (the chain was too long).
	NoChain bool     `json:"nochain,omitempty"`
	Values  []string `json:"values,omitempty"` // read: values of Tables
	// Faults is the process's cumulative fault counts (calls, transient,
	// lost acks, outage reads), carried on every return record so that a
	// killed process's counts are lost only since its last return.
	Faults *[4]int64 `json:"faults,omitempty"`
	// Deleted is, for the maintenance workload's collect and feed records,
	// the objects a collection deleted or the changes a poll applied.
	Deleted int `json:"deleted,omitempty"`
	// Group is, on an ok record of the maintenance workload's group
	// writer, the size of the group its commit was published in.
	Group int `json:"group,omitempty"`
	// The schema workload (schemaproc.go) only. Schema is, on an invoke,
	// the schema (sha256 hex) the transaction was staged under or the
	// schema change written for; on an acknowledged schema change, the
	// schema it published; on a refusal with *kernel.SchemaChangedError,
	// the schema the error says the call expected.
	Schema string `json:"schema,omitempty"`
	// Op is a schema change's kind (opRenameProp, ...); empty for a write.
	Op string `json:"op,omitempty"`
	// Class is a failed call's error class (classSchema, ...).
	Class string `json:"class,omitempty"`
	// Edge marks a write that staged an edge beside its node; EdgeIn,
	// an edge from a seeded person to it (else from it to the person).
	Edge   bool `json:"edge,omitempty"`
	EdgeIn bool `json:"in,omitempty"`
	// Trim is, on the invoke of a changer's trim (a write deleting hub
	// edges beyond the first before a tightening), the edges it deletes.
	Trim []string `json:"trim,omitempty"`
}

// Record kinds.
const (
	recOpen      = "open"      // the graph opened (the open ran recovery)
	recInvoke    = "invoke"    // a commit is about to be called
	recOK        = "ok"        // it was acknowledged
	recFail      = "fail"      // it failed definitely
	recUnknown   = "unknown"   // its outcome is ambiguous
	recRead      = "read"      // a read returned
	recViolation = "violation" // the kernel returned an error no correct kernel returns
	recStop      = "stop"      // the process stopped gracefully
)

// monoNow returns CLOCK_MONOTONIC in nanoseconds.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("simrun: clock_gettime: %v", err))
	}
	return ts.Nano()
}

// histWriter appends records to one history file.
// histWriter appends a process's records to its history file. It is
// safe for concurrent use (the maintenance workload's group writer records
// from several goroutines): each record is one write, whole.
type histWriter struct {
	mu sync.Mutex
	f  *os.File
}

func createHist(path string) (*histWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &histWriter{f: f}, nil
}

// append writes rec as one line and fsyncs it.
func (w *histWriter) append(rec histRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return w.f.Sync()
}

func (w *histWriter) close() error { return w.f.Close() }

// segment is one history file: one process incarnation.
type segment struct {
	name    string
	client  int
	recs    []histRecord
	torn    bool // the last line was incomplete (dropped)
	stopped bool // the process stopped gracefully
	faults  [4]int64
}

// readSegment parses one history file. An incomplete or unparsable last
// line is a record torn by SIGKILL and is dropped; a bad line elsewhere is
// an error.
func readSegment(path string, client int) (*segment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seg := &segment{name: filepath.Base(path), client: client}
	lines := bytes.Split(b, []byte{'\n'})
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		var rec histRecord
		last := i == len(lines)-1 // no newline after it: torn
		if err := json.Unmarshal(line, &rec); err != nil || last {
			if last {
				seg.torn = true
				continue
			}
			return nil, fmt.Errorf("%s line %d: %v", path, i+1, err)
		}
		if rec.Faults != nil {
			seg.faults = *rec.Faults
		}
		if rec.Kind == recStop {
			seg.stopped = true
		}
		seg.recs = append(seg.recs, rec)
	}
	return seg, nil
}

// readSegments reads every history file of dir (*.jsonl), in name order.
func readSegments(dir string) ([]*segment, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var segs []*segment
	for i, p := range paths {
		s, err := readSegment(p, i)
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// histEvent is one call or return, placed in time.
type histEvent struct {
	time   int64
	ret    bool // a return (sorted after calls at equal times)
	seg    *segment
	rec    *histRecord
	invoke *histRecord // for a commit return: its invoke
}

// buildHistory merges the segments into one check.History. Events are
// replayed in time order, calls before returns at equal times (the more
// permissive order), each stamped with its rank. It also returns the
// violations the processes recorded and a structural problem (a return
// without its invoke) as violations.
func buildHistory(segs []*segment) (*check.History, []check.Violation) {
	var evs []histEvent
	var vs []check.Violation
	for _, s := range segs {
		invokes := map[string]*histRecord{}
		for i := range s.recs {
			r := &s.recs[i]
			switch r.Kind {
			case recInvoke:
				invokes[r.Tag] = r
				evs = append(evs, histEvent{time: r.Time, seg: s, rec: r})
			case recOK, recFail, recUnknown:
				inv, ok := invokes[r.Tag]
				if !ok {
					vs = append(vs, check.Violation{Check: "history", Detail: fmt.Sprintf("%s: %s of %s without its invoke", s.name, r.Kind, r.Tag)})
					continue
				}
				evs = append(evs, histEvent{time: r.Time, ret: true, seg: s, rec: r, invoke: inv})
			case recRead:
				evs = append(evs, histEvent{time: r.Call, seg: s, rec: r}, histEvent{time: r.Time, ret: true, seg: s, rec: r})
			case recViolation:
				vs = append(vs, check.Violation{Check: "kernel-error", Detail: fmt.Sprintf("%s: %s", s.name, r.Err)})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].time != evs[j].time {
			return evs[i].time < evs[j].time
		}
		return !evs[i].ret && evs[j].ret
	})
	// Commits called after the last chain read returned leave the chain
	// model (see check.History.BeginValueCommit): porcupine then orders only
	// the commits some chain read could have seen.
	lastChainRead := int64(-1 << 62)
	for _, e := range evs {
		if e.ret && e.rec.Kind == recRead && !e.rec.NoChain {
			lastChainRead = max(lastChainRead, e.time)
		}
	}
	var now int64
	h := check.NewHistory(func() int64 { return now })
	pending := map[string]check.PendingCommit{}
	reads := map[*histRecord]check.PendingRead{}
	for i, e := range evs {
		now = int64(i + 1)
		r := e.rec
		switch {
		case r.Kind == recInvoke:
			tws := make([]check.TableWrite, len(r.Tables))
			for j, t := range r.Tables {
				tws[j] = check.TableWrite{Table: t, Strict: r.Strict}
				if r.Strict && j < len(r.Expect) {
					tws[j].Expect = r.Expect[j]
				}
			}
			if r.Time > lastChainRead {
				pending[r.Tag] = h.BeginValueCommit(e.seg.client, r.Key, r.Tag, tws)
			} else {
				pending[r.Tag] = h.BeginCommit(e.seg.client, r.Key, r.Tag, tws)
			}
		case r.Kind == recRead && !e.ret:
			reads[r] = h.BeginRead(e.seg.client)
		case r.Kind == recRead:
			var tvs []check.TableValue
			for j, t := range r.Tables {
				if j < len(r.Values) {
					tvs = append(tvs, check.TableValue{Table: t, Value: r.Values[j]})
				}
			}
			if r.NoChain {
				reads[r].EndTables(r.Key, tvs)
			} else {
				reads[r].End(r.Key, r.Chain, tvs)
			}
		default:
			pending[r.Tag].End(outcomeOf(r.Kind))
		}
	}
	now = int64(len(evs) + 1)
	return h, vs
}

func outcomeOf(kind string) model.Outcome {
	switch kind {
	case recOK:
		return model.OK
	case recFail:
		return model.Failed
	}
	return model.Ambiguous
}
