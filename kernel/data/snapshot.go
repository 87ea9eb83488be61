package data

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Snapshot is an immutable, typed view of the graph at one manifest: a
// branch head, a manifest version or a commit. Later commits never change
// what it returns. It is safe for concurrent use.
type Snapshot struct {
	g   *Graph
	ks  kernel.Snapshot
	cat *catalog

	mu    sync.Mutex
	r     *reader
	views map[string]*tableView
}

// SnapshotAt returns the snapshot at the head of branch b.
func (g *Graph) SnapshotAt(ctx context.Context, b kernel.BranchRef) (*Snapshot, error) {
	ks, err := g.k.SnapshotAt(ctx, b)
	if err != nil {
		return nil, err
	}
	return g.snapshot(ctx, ks)
}

// SnapshotAtVersion returns the snapshot at manifest version v of branch b.
func (g *Graph) SnapshotAtVersion(ctx context.Context, b kernel.BranchRef, v uint64) (*Snapshot, error) {
	ks, err := g.k.SnapshotAtVersion(ctx, b, v)
	if err != nil {
		return nil, err
	}
	return g.snapshot(ctx, ks)
}

// SnapshotAtCommit returns the snapshot at the manifest of commit id.
func (g *Graph) SnapshotAtCommit(ctx context.Context, id kernel.CommitID) (*Snapshot, error) {
	ks, err := g.k.SnapshotAtCommit(ctx, id)
	if err != nil {
		return nil, err
	}
	return g.snapshot(ctx, ks)
}

func (g *Graph) snapshot(ctx context.Context, ks kernel.Snapshot) (*Snapshot, error) {
	cat, err := g.catalog(ctx, ks.SchemaHash())
	if err != nil {
		return nil, err
	}
	return &Snapshot{g: g, ks: ks, cat: cat, r: newReader(g, cat), views: map[string]*tableView{}}, nil
}

// Kernel returns the kernel snapshot (pins, manifest version, head commit).
func (s *Snapshot) Kernel() kernel.Snapshot { return s.ks }

// Schema returns the graph's schema.
func (s *Snapshot) Schema() schema.Schema { return s.cat.schema }

// Table returns the storage view (Arrow schema, columns) of a type, for use
// with Scan results, EncodeFragment and DecodeFragment.
func (s *Snapshot) Table(typ string) (*Table, error) { return s.cat.table(typ) }

// view returns the view of a table at this snapshot (lock held).
func (s *Snapshot) view(ctx context.Context, typ string) (*tableView, error) {
	if v, ok := s.views[typ]; ok {
		return v, nil
	}
	t, err := s.cat.table(typ)
	if err != nil {
		return nil, err
	}
	v, err := s.r.view(ctx, t, pinRef(s.ks, typ))
	if err != nil {
		return nil, err
	}
	s.views[typ] = v
	return v, nil
}

// Count returns the number of rows of a type (from the manifest pin: no
// table read).
func (s *Snapshot) Count(ctx context.Context, typ string) (uint64, error) {
	if _, err := s.cat.table(typ); err != nil {
		return 0, err
	}
	p, _ := s.ks.Table(typ)
	return p.Rows, nil
}

// Get returns the row of typ with id, and whether it exists. It reads only
// the fragments whose id range covers id.
func (s *Snapshot) Get(ctx context.Context, typ, id string) (Row, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.view(ctx, typ)
	if err != nil {
		return Row{}, false, err
	}
	if err := s.r.loadIDs(ctx, v, []string{id}); err != nil {
		return Row{}, false, err
	}
	ref, ok := v.lookup(id)
	if !ok {
		return Row{}, false, nil
	}
	return v.row(ref), true, nil
}

// Out returns the edges of edgeType whose from is nodeID, sorted by id.
func (s *Snapshot) Out(ctx context.Context, edgeType, nodeID string) ([]Row, error) {
	return s.adjacent(ctx, edgeType, nodeID, true)
}

// In returns the edges of edgeType whose to is nodeID, sorted by id.
func (s *Snapshot) In(ctx context.Context, edgeType, nodeID string) ([]Row, error) {
	return s.adjacent(ctx, edgeType, nodeID, false)
}

func (s *Snapshot) adjacent(ctx context.Context, edgeType, nodeID string, out bool) ([]Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.edgeView(ctx, edgeType)
	if err != nil {
		return nil, err
	}
	return adjacentRows(v, nodeID, out), nil
}

// edgeView returns the fully loaded view of an edge type (lock held).
func (s *Snapshot) edgeView(ctx context.Context, edgeType string) (*tableView, error) {
	v, err := s.view(ctx, edgeType)
	if err != nil {
		return nil, err
	}
	if !v.t.Edge {
		return nil, reject(ErrUnknownType, edgeType, "", "", "is a node type, not an edge type")
	}
	if err := s.r.loadAll(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}

// adjacentRows returns the committed edges of v with from (out) or to (in)
// equal to node, sorted by id.
func adjacentRows(v *tableView, node string, out bool) []Row {
	var rows []Row
	for _, id := range v.incident(node) {
		ref, _ := v.lookup(id)
		r := v.row(ref)
		if (out && r.From == node) || (!out && r.To == node) {
			rows = append(rows, r)
		}
	}
	return rows
}

// Scan returns a reader over every row of typ, fragment by fragment, with
// the given columns (all when none are named; id, from and to are columns
// too). Each record is one fragment; the reader fetches a fragment only
// when Next reaches it. The caller must Release the reader.
func (s *Snapshot) Scan(ctx context.Context, typ string, columns ...string) (array.RecordReader, error) {
	s.mu.Lock()
	v, err := s.view(ctx, typ)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	sr := &scanReader{refs: 1, ctx: ctx, r: s.r, t: v.t, infos: v.frags, schema: v.t.arrow}
	if len(columns) > 0 {
		if err := sr.project(columns); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

// scanReader implements array.RecordReader over a table's fragments.
type scanReader struct {
	refs   int64
	ctx    context.Context
	r      *reader
	t      *Table
	infos  []FragmentInfo
	cols   []int // projection; nil = all columns
	schema *arrow.Schema
	next   int
	cur    arrow.Record
	err    error
}

func (sr *scanReader) project(columns []string) error {
	seen := map[string]bool{}
	fields := make([]arrow.Field, 0, len(columns))
	for _, name := range columns {
		c, ok := sr.t.column(name)
		if !ok || seen[name] {
			return reject(ErrInvalidRow, sr.t.Name, "", name, "projection names an unknown or repeated column")
		}
		seen[name] = true
		sr.cols = append(sr.cols, c)
		fields = append(fields, sr.t.arrow.Field(c))
	}
	md := sr.t.arrow.Metadata()
	sr.schema = arrow.NewSchema(fields, &md)
	return nil
}

// Retain implements array.RecordReader.
func (sr *scanReader) Retain() { atomic.AddInt64(&sr.refs, 1) }

// Release implements array.RecordReader.
func (sr *scanReader) Release() {
	if atomic.AddInt64(&sr.refs, -1) == 0 && sr.cur != nil {
		sr.cur.Release()
		sr.cur = nil
	}
}

// Schema implements array.RecordReader.
func (sr *scanReader) Schema() *arrow.Schema { return sr.schema }

// Next implements array.RecordReader: it fetches and decodes the next
// fragment.
func (sr *scanReader) Next() bool {
	if sr.cur != nil {
		sr.cur.Release()
		sr.cur = nil
	}
	if sr.err != nil || sr.next >= len(sr.infos) {
		return false
	}
	rec, err := sr.r.fetch(sr.ctx, sr.t, sr.infos[sr.next])
	if err != nil {
		sr.err = fmt.Errorf("scan %s: %w", sr.t.Name, err)
		return false
	}
	sr.next++
	if sr.cols == nil {
		sr.cur = rec
		return true
	}
	cols := make([]arrow.Array, len(sr.cols))
	for i, c := range sr.cols {
		cols[i] = rec.Column(c)
	}
	sr.cur = array.NewRecord(sr.schema, cols, rec.NumRows())
	rec.Release()
	return true
}

// Record implements array.RecordReader: the current fragment's record,
// valid until the next call to Next.
func (sr *scanReader) Record() arrow.Record { return sr.cur }

// Err implements array.RecordReader.
func (sr *scanReader) Err() error { return sr.err }
