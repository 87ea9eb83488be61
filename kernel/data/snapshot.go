package data

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
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
	v, err := s.r.view(ctx, t, pinOf(s.ks, t))
	if err != nil {
		return nil, err
	}
	s.views[typ] = v
	return v, nil
}

// Count returns the number of rows of a type (from the manifest pin: no
// table read).
func (s *Snapshot) Count(ctx context.Context, typ string) (uint64, error) {
	t, err := s.cat.table(typ)
	if err != nil {
		return 0, err
	}
	p, _ := s.ks.Table(t.Storage)
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

// exists reports whether typ has a row with id: through the node table's
// id index when its version has one (one chunk and one page), else from
// the fragments whose id range covers id.
func (s *Snapshot) exists(ctx context.Context, typ, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.view(ctx, typ)
	if err != nil {
		return false, err
	}
	if err := s.r.notePresence(ctx, v, []string{id}); err != nil {
		return false, err
	}
	return v.has(id), nil
}

// MaxGetMany bounds the ids of one GetMany call.
const MaxGetMany = 1 << 16

// GetMany returns the rows of typ with the given ids that exist, sorted by
// id, each once (repeated and missing ids are allowed). It fetches each
// fragment whose id range covers one of the ids at most once (and none the
// handle's cache holds). More than MaxGetMany ids is an ErrTooLarge
// rejection before any I/O.
func (s *Snapshot) GetMany(ctx context.Context, typ string, ids []string) ([]Row, error) {
	if len(ids) > MaxGetMany {
		return nil, reject(ErrTooLarge, typ, "", "", "GetMany of %d ids, more than %d; split the call", len(ids), MaxGetMany)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.view(ctx, typ)
	if err != nil {
		return nil, err
	}
	if err := s.r.loadIDs(ctx, v, ids); err != nil {
		return nil, err
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	var rows []Row
	for i, id := range sorted {
		if i > 0 && sorted[i-1] == id {
			continue
		}
		if ref, ok := v.lookup(id); ok {
			rows = append(rows, v.row(ref))
		}
	}
	return rows, nil
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
	v, err := s.view(ctx, edgeType)
	if err != nil {
		return nil, err
	}
	if !v.t.Edge {
		return nil, reject(ErrUnknownType, edgeType, "", "", "is a node type, not an edge type")
	}
	return s.r.adjacent(ctx, v, nodeID, out)
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
	return s.ScanWhere(ctx, typ, nil, columns...)
}

// ScanWhere is Scan with a row predicate (nil: every row). The predicate
// is bound to typ's columns first: an unknown column or a literal of the
// wrong kind is an error matching pred.ErrInvalidPredicate before any
// I/O beyond the table version. Fragments whose id range and column
// statistics rule the predicate out are never fetched; the others are
// filtered row by row (pred's two-valued semantics), and fragments left
// with no row yield no record. Records keep fragment order and, within
// one, id order.
func (s *Snapshot) ScanWhere(ctx context.Context, typ string, where *pred.Expr, columns ...string) (array.RecordReader, error) {
	t, err := s.cat.table(typ)
	if err != nil {
		return nil, err
	}
	var bound *pred.Bound
	if where != nil {
		if bound, err = pred.Bind(*where, predColumns(t)); err != nil {
			return nil, fmt.Errorf("scan %s: %w", typ, err)
		}
	}
	sr := &scanReader{refs: 1, ctx: ctx, r: s.r, t: t, schema: t.arrow, where: bound}
	if len(columns) > 0 {
		if err := sr.project(columns); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	v, err := s.view(ctx, typ)
	if err == nil {
		err = s.r.ensureFrags(ctx, v)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	sr.infos, sr.stats = v.frags, v.stats
	return sr, nil
}

// scanReader implements array.RecordReader over a table's fragments.
type scanReader struct {
	refs   int64
	ctx    context.Context
	r      *reader
	t      *Table
	infos  []FragmentInfo
	stats  []fragStats
	where  *pred.Bound // nil: every row
	cols   []int       // projection; nil = all columns
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
	for sr.err == nil && sr.next < len(sr.infos) {
		i := sr.next
		sr.next++
		if sr.where != nil && sr.stats != nil && !mayMatch(sr.where, sr.infos[i], sr.stats[i]) {
			continue
		}
		rec, err := sr.r.scanFetch(sr.ctx, sr.t, sr.infos[i])
		if err != nil {
			sr.err = fmt.Errorf("scan %s: %w", sr.t.Name, err)
			return false
		}
		if rec = filterRecord(sr.t, rec, sr.where); rec != nil {
			sr.cur = sr.projectRecord(rec)
			return true
		}
	}
	return false
}

// projectRecord returns rec with the projection applied, taking over the
// caller's reference.
func (sr *scanReader) projectRecord(rec arrow.Record) arrow.Record {
	if sr.cols == nil {
		return rec
	}
	cols := make([]arrow.Array, len(sr.cols))
	for i, c := range sr.cols {
		cols[i] = rec.Column(c)
	}
	out := array.NewRecord(sr.schema, cols, rec.NumRows())
	rec.Release()
	return out
}

// filterRecord returns the rows of rec that satisfy where (all of rec when
// where is nil or every row matches; nil when none does), taking over the
// caller's reference to rec.
func filterRecord(t *Table, rec arrow.Record, where *pred.Bound) arrow.Record {
	if where == nil {
		return rec
	}
	var rows []rowSrc
	cols := rec.Columns()
	for i := 0; i < int(rec.NumRows()); i++ {
		row := func(c int) (pred.Value, bool) {
			if cols[c].IsNull(i) {
				return pred.Value{}, true
			}
			return cellValue(kindOf(t, c), cols[c], i), false
		}
		if where.Eval(row) {
			rows = append(rows, rowSrc{rec, i})
		}
	}
	switch len(rows) {
	case int(rec.NumRows()):
		return rec
	case 0:
		rec.Release()
		return nil
	}
	out := gather(t, rows)
	rec.Release()
	return out
}

// Record implements array.RecordReader: the current fragment's record,
// valid until the next call to Next.
func (sr *scanReader) Record() arrow.Record { return sr.cur }

// Err implements array.RecordReader.
func (sr *scanReader) Err() error { return sr.err }
