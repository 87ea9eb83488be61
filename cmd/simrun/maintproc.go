package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// The maintenance workload of the process harness (-procs N -workload
// maint): the shape of issue 27's soak. Processes take roles by id (see
// maintRole): writers commit rows on main and run branch-per-change cycles
// (fork, commit, merge into main, delete), maintainers run maintain.Maintain
// in a loop with a short retention and now and then add a property to
// main's Item type (a schema change racing the writers, the merges, the
// other maintainer's change and the collections), a reader pins main's
// head and reads its pinned snapshots back, a consumer follows main's
// change feed. Every one is SIGKILLed and restarted like the writers of the
// default workload, with store faults. At the end: every acknowledged row
// and schema change is on main, and internal/verify (graphkernel verify)
// with maintKeepLast finds nothing.
const (
	maintWorkload = "maint"
	maintKeepLast = 3
	maintGrace    = 15 * time.Second
	maintSkew     = 2 * time.Second // one host: no clock skew, local request latency
	maintLeaseTTL = 20 * time.Second
	maintPause    = 200 * time.Millisecond // between maintenance rounds and reads
	maintType     = "Item"
	maxPins       = 4
	mergeTries    = 3  // attempts of one feature's merge that failed definitely
	maxItemProps  = 12 // the maintainers add properties to Item up to this many
)

// maintSchema is the maintenance workload's data schema: one node type
// whose row ids are the writers' unique tags.
const maintSchema = "node Item { tag: string }"

// maintPolicy is the maintainers' policy: the writers' grace period, a
// short retention, frequent compaction.
var maintPolicy = maintain.RunPolicy{
	Compact: compact.Policy{TargetRows: 64, MinFragments: 2},
	Collect: maintain.Policy{Policy: gc.Policy{KeepLast: maintKeepLast, Grace: maintGrace, SkewMargin: maintSkew}},
}

// Process roles of the maintenance workload.
const (
	roleWriter = "writer"
	roleMaint  = "maintainer"
	rolePin    = "pinner"
	roleFeed   = "feed"
	roleGroup  = "group-writer"
)

// maintRole is process id's role: writers and maintainers alternate with
// one pinning reader, one feed consumer and one group writer (8 processes:
// 3 writers, 1 group writer, 2 maintainers, 1 pinner, 1 consumer; 4: a
// writer, a group writer, a maintainer, a pinner).
func maintRole(id int) string {
	switch id % 8 {
	case 1, 7:
		return roleMaint
	case 2:
		return roleGroup
	case 3:
		return rolePin
	case 5:
		return roleFeed
	}
	return roleWriter
}

// maintHistKeys are the Key values of the workload's history records.
const (
	keyMain   = "main"   // an insert committed on main
	keyMerge  = "merge"  // an insert committed on a feature branch, then merged into main
	keySchema = "schema" // a property added to main's Item type (its name is the tag)
)

// Record kinds of the maintenance workload only (the default workload's
// checkers never see them).
const (
	recCollect = "collect" // a maintenance round collected: Deleted objects
	recPinRead = "pinread" // a pinned snapshot read back whole, as when pinned
	recGap     = "gap"     // the feed consumer met a gap (typed: a re-baseline)
	recFeed    = "feed"    // the feed consumer applied Deleted changes
)

// maintProc is one process of the maintenance workload.
type maintProc struct {
	procBase
	g *data.Graph
	m *maintain.Maintainer
}

// maintMain is one process of the maintenance workload.
func maintMain(c *config, stdin io.Reader, stderr io.Writer) int {
	return procMain("maint", c, stdin, stderr, func(b procBase) workloadProc { return &maintProc{procBase: b} })
}

// open opens the graph read-write (the open runs recovery), retrying.
func (p *maintProc) open(st objstore.Store) error {
	ctx := context.Background()
	opts := dataOptions(kernel.Options{Env: kernel.SystemEnv(), Grace: maintGrace}, p.wc.indexFanout, p.wc.id)
	if maintRole(p.wc.id) == roleGroup {
		opts.Group = groupOptions
	}
	var err error
	for try := 0; ; try++ {
		if p.stop() {
			return nil
		}
		if p.g, err = data.Open(ctx, st, p.wc.root, opts); err == nil {
			break
		}
		p.unexpected("open", err)
		if try >= maxOpenTries {
			return fmt.Errorf("open: %d attempts, last: %w", try, err)
		}
		time.Sleep(openRetryPause) // real time: a real process retrying a real store
	}
	if p.m, err = maintain.New(st, p.wc.root, kernel.SystemEnv()); err != nil {
		return err
	}
	return p.record(histRecord{Kind: recOpen})
}

// run plays the process's role until its stdin closes.
func (p *maintProc) run() error {
	if p.g == nil {
		return p.record(histRecord{Kind: recStop})
	}
	var err error
	switch maintRole(p.wc.id) {
	case roleMaint:
		err = p.maintainLoop()
	case rolePin:
		err = p.pinLoop()
	case roleFeed:
		err = p.feedLoop()
	case roleGroup:
		err = p.groupLoop()
	default:
		err = p.writeLoop()
	}
	if err != nil {
		return err
	}
	return p.record(histRecord{Kind: recStop})
}

// writeLoop commits rows on main and runs branch-per-change cycles.
func (p *maintProc) writeLoop() error {
	ctx := context.Background()
	for !p.stop() {
		var err error
		if p.rng.IntN(2) == 0 {
			err = p.insertOnMain(ctx)
		} else {
			err = p.featureCycle(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tag is a row id unique across the run.
func (p *maintProc) tag() string {
	p.n++
	return fmt.Sprintf("p%d-s%d-%d", p.wc.id, p.wc.seg, p.n)
}

// insert commits one row with id tag on branch.
func (p *maintProc) insert(ctx context.Context, branch, tag string) error {
	b, err := p.g.Branch(ctx, branch)
	if err != nil {
		return err
	}
	tx, err := p.g.Begin(ctx, b)
	if err != nil {
		return err
	}
	if err := tx.Insert(maintType, data.Row{ID: tag, Props: map[string]any{"tag": tag}}); err != nil {
		return err
	}
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: tag})
	return err
}

// outcome records the return of the call invoked for tag.
func (p *maintProc) outcome(tag string, err error) error {
	return p.outcomeAs(tag, err, workload.Outcome(err))
}

// outcomeAs records the return of the call invoked for tag, classified
// as out.
func (p *maintProc) outcomeAs(tag string, err error, out model.Outcome) error {
	r := histRecord{Tag: tag}
	switch out {
	case model.OK:
		r.Kind = recOK
	case model.Failed:
		r.Kind, r.Err = recFail, err.Error()
	default:
		r.Kind, r.Err = recUnknown, err.Error()
	}
	if err != nil {
		p.unexpected(tag, err)
	}
	return p.record(r)
}

// insertOnMain commits one row on main, recorded before and after.
func (p *maintProc) insertOnMain(ctx context.Context) error {
	tag := p.tag()
	if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: keyMain}); err != nil {
		return err
	}
	return p.outcome(tag, p.insert(ctx, "main", tag))
}

// featureCycle forks a branch from main, commits a row on it, merges it
// into main and deletes it. The merge is the recorded call: acknowledged,
// the row must be on main.
func (p *maintProc) featureCycle(ctx context.Context) error {
	tag := p.tag()
	name := "f-" + tag
	k := p.g.Kernel()
	main, err := k.Branch(ctx, "main")
	if err != nil {
		p.unexpected("branch", err)
		return nil
	}
	if _, err := k.CreateBranch(ctx, name, main); err != nil {
		p.unexpected("fork", err)
		return nil
	}
	if err := p.insert(ctx, name, tag); err == nil {
		if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: keyMerge}); err != nil {
			return err
		}
		err = p.merge(ctx, name)
		for try := 1; try < mergeTries && workload.Outcome(err) == model.Failed; try++ {
			err = p.merge(ctx, name) // lost to writers on main (contention): the same merge again
		}
		if rerr := p.outcome(tag, err); rerr != nil {
			return rerr
		}
	} else {
		p.unexpected("feature commit", err)
	}
	if err := k.DeleteBranch(ctx, name); err != nil {
		p.unexpected("delete branch", err)
	}
	return nil
}

// merge merges branch name into main.
func (p *maintProc) merge(ctx context.Context, name string) error {
	src, err := p.g.Branch(ctx, name)
	if err != nil {
		return err
	}
	tgt, err := p.g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	_, err = p.g.Merge(ctx, src, tgt, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: "merge " + name}, data.MergeOptions{})
	return err
}

// maintainLoop runs Maintain (compaction, then collection) in a loop.
func (p *maintProc) maintainLoop() error {
	ctx := context.Background()
	for round := 0; !p.stop(); round++ {
		if round%3 == 0 { // every third round, from the first (a restarted maintainer too)
			if err := p.addProperty(ctx); err != nil {
				return err
			}
		}
		rep, err := maintain.Maintain(ctx, p.g, p.m, maintPolicy)
		if err != nil {
			p.unexpected("maintain", err)
		} else {
			c := rep.Collect
			n := c.Manifests.Deleted + c.TableVersions.Deleted + c.Fragments.Deleted + c.Adjacency.Deleted + c.CommitIndexes.Deleted + c.Leases.Deleted
			if err := p.record(histRecord{Kind: recCollect, Deleted: n}); err != nil {
				return err
			}
		}
		time.Sleep(maintPause)
	}
	return nil
}

// addProperty adds a nullable string property to main's Item type while
// it has fewer than maxItemProps: a schema change published through the
// one door like any commit, and written for the schema it read. The
// ApplySchema is the recorded call and its tag is the property's name:
// acknowledged, main's final schema must have it; failed definitely, it
// must not.
func (p *maintProc) addProperty(ctx context.Context) error {
	main, snap, ok := p.mainHead(ctx, p.g)
	if !ok {
		return nil
	}
	prop := fmt.Sprintf("x%d_%d_%d", p.wc.id, p.wc.seg, p.n+1)
	target, ok := withItemProperty(snap.Schema(), prop)
	if !ok {
		return nil
	}
	p.n++ // prop's number is taken
	if err := p.record(histRecord{Kind: recInvoke, Tag: prop, Key: keySchema}); err != nil {
		return err
	}
	// Written for the schema read: a target built on a stale read would
	// drop what a concurrent change added, so a moved schema refuses it.
	_, err := p.g.ApplySchema(ctx, main, target, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: "add " + prop},
		data.SchemaOptions{ExpectSchema: snap.Kernel().SchemaHash()})
	return p.outcomeAs(prop, err, workload.SchemaOutcome(err))
}

// withItemProperty returns s with a nullable string property prop added to
// its Item type (s is not modified); ok=false when Item has maxItemProps
// already or s is not the workload's schema (one node type, Item).
func withItemProperty(s schema.Schema, prop string) (schema.Schema, bool) {
	if len(s.Nodes) != 1 || s.Nodes[0].Name != maintType || len(s.Nodes[0].Props) >= maxItemProps {
		return schema.Schema{}, false
	}
	item := s.Nodes[0]
	item.Props = append(slices.Clip(item.Props), schema.Property{Name: prop, Kind: schema.String})
	s.Nodes = []schema.NodeType{item}
	return s, true
}

// heldPin is a snapshot the pinner leased, and what it held.
type heldPin struct {
	id      format.ID
	version uint64
	until   time.Time // the lease's end, less a margin
	rows    uint64
}

// pinLoop leases main's head, reads it whole, and reads every pinned
// snapshot back while its lease lasts: it must read whole and the same
// (docs/gc.md §5), whatever collections ran meanwhile.
func (p *maintProc) pinLoop() error {
	ctx := context.Background()
	var pins []heldPin
	for !p.stop() {
		if len(pins) < maxPins {
			if h, ok := p.pinHead(ctx); ok {
				pins = append(pins, h)
			}
		}
		kept := pins[:0]
		for _, h := range pins {
			if time.Now().After(h.until) {
				if err := p.m.Release(ctx, h.id); err != nil {
					p.unexpected("release", err)
				}
				continue
			}
			kept = append(kept, h)
			if err := p.readPinned(ctx, h); err != nil {
				return err
			}
		}
		pins = kept
		time.Sleep(maintPause)
	}
	return nil
}

// pinHead pins main's head snapshot and counts its rows.
func (p *maintProc) pinHead(ctx context.Context) (heldPin, bool) {
	main, err := p.g.Branch(ctx, "main")
	if err != nil {
		p.unexpected("pin: branch", err)
		return heldPin{}, false
	}
	s, err := p.g.SnapshotAt(ctx, main)
	if err != nil {
		p.unexpected("pin: snapshot", err)
		return heldPin{}, false
	}
	start := time.Now()
	id, err := p.m.Pin(ctx, s.Kernel(), maintLeaseTTL, fmt.Sprintf("p%d", p.wc.id))
	if err != nil {
		p.unexpected("pin", err) // ErrReclaimed: Pin says so, nothing was promised
		return heldPin{}, false
	}
	rows, err := countRows(ctx, s)
	if err != nil {
		p.unexpected("pin: read", err)
		return heldPin{}, false
	}
	return heldPin{id: id, version: s.Kernel().ManifestVersion(), until: start.Add(maintLeaseTTL - maintSkew), rows: rows}, true
}

// readPinned reads a pinned snapshot back: reclaimed or different while
// its lease lasts is a violation; a store fault is not.
func (p *maintProc) readPinned(ctx context.Context, h heldPin) error {
	main, err := p.g.Branch(ctx, "main")
	if err != nil {
		p.unexpected("pinread: branch", err)
		return nil
	}
	s, err := p.g.SnapshotAtVersion(ctx, main, h.version)
	var rows uint64
	if err == nil {
		rows, err = countRows(ctx, s)
	}
	if time.Now().After(h.until) {
		return nil // the lease may have ended while it read
	}
	switch {
	case errors.Is(err, kernel.ErrReclaimed):
		return p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("pinned main v%d (lease %s) reclaimed within its lease: %v", h.version, h.id, err)})
	case err != nil:
		p.unexpected("pinread", err)
		return nil
	case rows != h.rows:
		return p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("pinned main v%d read %d rows within its lease, %d when pinned", h.version, rows, h.rows)})
	}
	return p.record(histRecord{Kind: recPinRead})
}

// countRows reads every row of the workload's type in s and returns a
// fingerprint: the count and a hash of the ids, folded.
func countRows(ctx context.Context, s *data.Snapshot) (uint64, error) {
	rr, err := s.Scan(ctx, maintType)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n, sum uint64
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			h := fnv.New64a()
			h.Write([]byte(rec.Column(0).ValueStr(i)))
			n, sum = n+1, sum+h.Sum64()
		}
	}
	return n<<48 ^ sum, rr.Err()
}

// feedLoop follows main's change feed from now: every inserted row at
// most once; a gap (history collected under the cursor) is typed, counted
// and re-baselined from now.
func (p *maintProc) feedLoop() error {
	ctx := context.Background()
	f := changefeed.New(p.g)
	pos := changefeed.Now()
	seen := map[string]bool{}
	for !p.stop() {
		page, err := f.Poll(ctx, "main", pos, feed.Filter{}, feed.Limits{MaxChanges: 500})
		switch {
		case errors.Is(err, feed.ErrGap):
			if err := p.record(histRecord{Kind: recGap, Err: err.Error()}); err != nil {
				return err
			}
			pos = changefeed.Now()
			continue
		case err != nil:
			p.unexpected("feed", err)
			time.Sleep(maintPause)
			continue
		}
		n := 0
		for _, b := range page.Blocks {
			for _, c := range b.Changes {
				if c.Op != feed.OpInsert {
					continue
				}
				if seen[c.ID] {
					if err := p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("feed: insert of %s delivered twice", c.ID)}); err != nil {
						return err
					}
				}
				seen[c.ID] = true
				n++
			}
		}
		if n > 0 {
			if err := p.record(histRecord{Kind: recFeed, Deleted: n}); err != nil {
				return err
			}
		}
		pos = changefeed.FromToken(page.Cursor + page.PageToken)
		if page.CaughtUp {
			time.Sleep(maintPause)
		}
	}
	return nil
}

// initMaintGraph creates the maintenance workload's graph (data plane),
// with index fanout n.
func initMaintGraph(ctx context.Context, st objstore.Store, root string, n int) error {
	s, err := schema.Parse([]byte(maintSchema))
	if err != nil {
		return err
	}
	_, err = data.Init(ctx, st, root, s, dataOptions(kernel.Options{Env: kernel.SystemEnv(), Grace: maintGrace}, n, 0))
	return err
}
