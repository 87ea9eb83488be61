package data

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// ErrEmptyTransaction is returned by Commit of a transaction that staged
// nothing. Nothing is written.
var ErrEmptyTransaction = errors.New("data: empty transaction")

// Txn is a write transaction on one branch. Begin pins a base snapshot and
// reads the schema contract (at most once per handle). Writes are staged in
// memory and checked as they arrive (types, required fields, bounds, no
// mixing of constructive and destructive operations); Commit validates the
// whole transaction before any durable effect, gives each touched table
// exactly one new version and publishes once. A Txn is single-use: after
// Commit (whatever its outcome) or Discard every method returns ErrTxnDone.
// It is safe for concurrent use, but its operations are serialised.
type Txn struct {
	g      *Graph
	branch kernel.BranchRef
	base   kernel.Snapshot
	cat    *catalog

	// floating: base is the handle's view of the branch (no head
	// discovery at Begin) and nothing has read it yet, so the transaction
	// may still take a newer head as its base (base.go).
	floating bool
	// beginCtx is Begin's context, kept only for the one head lookup a
	// floating transaction makes when a staged row names what its view's
	// schema lacks (restageOnHead; base.go).
	beginCtx context.Context

	mu    sync.Mutex
	r     *reader
	views map[string]*tableView // base views, by table
	s     *staging
	done  bool
	// grouped is where the commit landed in its group (group.go).
	grouped GroupInfo
}

// Begin starts a transaction on branch b, based on the handle's view of
// the branch: the newest head this handle loaded or published (no head
// discovery: a warm handle's Begin makes no request). The transaction's
// first read (Get, Count, Out, In, Patch) pins the base at the loaded
// head, so its reads see a head no older than that read. A transaction
// that reads nothing is published on its base only if the head's strict
// tables still match (see Commit; base.go).
func (g *Graph) Begin(ctx context.Context, b kernel.BranchRef) (*Txn, error) {
	if g.k.ReadOnly() {
		return nil, fmt.Errorf("begin on %s: %w", b, kernel.ErrReadOnly)
	}
	base, floating, err := g.k.SnapshotViewed(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("begin on %s: %w", b, err)
	}
	cat, err := g.catalog(ctx, base.SchemaHash())
	if err != nil {
		return nil, fmt.Errorf("begin on %s: %w", b, err)
	}
	return &Txn{g: g, branch: b, base: base, floating: floating, beginCtx: ctx, cat: cat, r: newReader(g, cat),
		views: map[string]*tableView{}, s: newStaging(cat, g.limits)}, nil
}

// Base returns the base snapshot: the handle's view at Begin (possibly
// older than the head), or the head the transaction's first read pinned.
func (t *Txn) Base() kernel.Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.base
}

// Schema returns the schema the transaction stages under: its base's (a
// floating base with nothing staged may still move to the head's, then
// this changes with it).
func (t *Txn) Schema() schema.Schema {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cat.schema
}

// Insert stages new rows of typ; Commit rejects an id that already exists.
func (t *Txn) Insert(typ string, rows ...Row) error { return t.stage(OpInsert, typ, rows) }

// Upsert stages rows of typ that are inserted, or replace the whole row
// with the same id: every property a row leaves out (an absent key in
// Props) becomes null, whatever the existing row held. To change only the
// properties a row names, use Patch.
func (t *Txn) Upsert(typ string, rows ...Row) error { return t.stage(OpUpsert, typ, rows) }

// Update stages whole-row replacements of existing rows of typ: every
// property a row leaves out becomes null (Patch keeps them). Commit
// rejects a missing id.
func (t *Txn) Update(typ string, rows ...Row) error { return t.stage(OpUpdate, typ, rows) }

func (t *Txn) stage(op Op, typ string, rows []Row) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrTxnDone
	}
	return t.stageOnHead(func() error { return t.s.stageRows(op, typ, rows) })
}

// stageOnHead runs stage; a refusal under a floating base's schema looks
// up the head once and, when its schema differs, stages again under it
// (restageOnHead; lock held).
func (t *Txn) stageOnHead(stage func() error) error {
	err := stage()
	if err == nil {
		return nil
	}
	changed, perr := t.restageOnHead()
	if perr != nil {
		return errors.Join(err, perr)
	}
	if changed {
		return stage()
	}
	return err
}

// WriteRecord stages the rows of an Arrow record (fields equal to the
// type's Arrow schema, as Snapshot.Scan returns them) with a constructive
// op: the bulk path. The record is retained, not copied.
func (t *Txn) WriteRecord(op Op, typ string, rec arrow.Record) error {
	if !op.Constructive() {
		return fmt.Errorf("write record: %w: op %s is not constructive", ErrValidation, op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrTxnDone
	}
	return t.stageOnHead(func() error { return t.s.stageRecord(op, typ, rec) })
}

// Delete stages the deletion of rows of typ by id. Deleting a node that
// still has edges is refused at Commit (see DeleteCascade).
func (t *Txn) Delete(typ string, ids ...string) error { return t.del(typ, ids, false) }

// DeleteCascade stages the deletion of nodes (or edges) of typ by id,
// together with every edge of every type that starts or ends at them.
func (t *Txn) DeleteCascade(typ string, ids ...string) error { return t.del(typ, ids, true) }

func (t *Txn) del(typ string, ids []string, cascade bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrTxnDone
	}
	return t.s.stageDeletes(typ, ids, cascade)
}

// Discard drops the transaction without writing anything.
func (t *Txn) Discard() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finish()
}

func (t *Txn) finish() {
	if !t.done {
		t.done = true
		t.s.release()
	}
}

// --- reads that see the pending writes ------------------------------------

// readView pins the base (the transaction's first read) and returns the
// base view of a table (lock held).
func (t *Txn) readView(ctx context.Context, typ string) (*tableView, error) {
	if err := t.pin(ctx); err != nil {
		return nil, err
	}
	return t.baseView(ctx, typ)
}

// baseView returns the base view of a table (lock held).
func (t *Txn) baseView(ctx context.Context, typ string) (*tableView, error) {
	if v, ok := t.views[typ]; ok {
		return v, nil
	}
	tb, err := t.cat.table(typ)
	if err != nil {
		return nil, err
	}
	v, err := t.r.view(ctx, tb, pinOf(t.base, tb))
	if err != nil {
		return nil, err
	}
	t.views[typ] = v
	return v, nil
}

// Get returns the row of typ with id as this transaction would leave it:
// its pending write if any, absent if it is staged for deletion, else the
// base snapshot's row.
func (t *Txn) Get(ctx context.Context, typ, id string) (Row, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return Row{}, false, ErrTxnDone
	}
	tb, err := t.cat.table(typ)
	if err != nil {
		return Row{}, false, err
	}
	if st, ok := t.s.tables[tb.Name]; ok {
		if st.deleted(id) {
			return Row{}, false, nil
		}
		if ref, ok := st.find(id); ok {
			return rowAt(tb, st.writes[ref.w].rec, ref.row), true, nil
		}
	}
	v, err := t.readView(ctx, typ)
	if err != nil {
		return Row{}, false, err
	}
	if err := t.r.loadIDs(ctx, v, []string{id}); err != nil {
		return Row{}, false, err
	}
	ref, ok := v.lookup(id)
	if !ok {
		return Row{}, false, nil
	}
	return v.row(ref), true, nil
}

// Count returns the rows of typ as this transaction would leave them
// (cascades not included: they are computed at Commit).
func (t *Txn) Count(ctx context.Context, typ string) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return 0, ErrTxnDone
	}
	v, err := t.readView(ctx, typ)
	if err != nil {
		return 0, err
	}
	st, ok := t.s.tables[typ]
	if !ok {
		return v.rows, nil
	}
	var ids []string
	for _, ref := range st.index() {
		ids = append(ids, st.id(ref))
	}
	for _, d := range st.deletes {
		ids = append(ids, d.id)
	}
	if err := t.r.loadIDs(ctx, v, ids); err != nil {
		return 0, err
	}
	n := v.rows
	for _, ref := range st.index() {
		if !v.has(st.id(ref)) {
			n++
		}
	}
	for _, id := range uniqueIDs(st.deletes) {
		if v.has(id) {
			n--
		}
	}
	return n, nil
}

func uniqueIDs(dels []pendingDelete) []string {
	set := map[string]bool{}
	for _, d := range dels {
		set[d.id] = true
	}
	return sortedKeys(set)
}

// Out returns the edges of edgeType from nodeID as this transaction would
// leave them, sorted by id.
func (t *Txn) Out(ctx context.Context, edgeType, nodeID string) ([]Row, error) {
	return t.adjacent(ctx, edgeType, nodeID, true)
}

// In returns the edges of edgeType to nodeID as this transaction would
// leave them, sorted by id.
func (t *Txn) In(ctx context.Context, edgeType, nodeID string) ([]Row, error) {
	return t.adjacent(ctx, edgeType, nodeID, false)
}

func (t *Txn) adjacent(ctx context.Context, edgeType, nodeID string, out bool) ([]Row, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, ErrTxnDone
	}
	v, err := t.readView(ctx, edgeType)
	if err != nil {
		return nil, err
	}
	if !v.t.Edge {
		return nil, reject(ErrUnknownType, edgeType, "", "", "is a node type, not an edge type")
	}
	committed, err := t.r.adjacent(ctx, v, nodeID, out)
	if err != nil {
		return nil, err
	}
	st := t.s.tables[edgeType]
	var rows []Row
	for _, r := range committed {
		if st != nil && st.deleted(r.ID) {
			continue
		}
		if st != nil {
			if _, ok := st.find(r.ID); ok {
				continue // superseded by a pending write, added below
			}
		}
		rows = append(rows, r)
	}
	if st != nil {
		for _, ref := range st.index() {
			r := rowAt(v.t, st.writes[ref.w].rec, ref.row)
			if (out && r.From == nodeID) || (!out && r.To == nodeID) {
				rows = append(rows, r)
			}
		}
	}
	rows = t.dropCascaded(v.t, rows)
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows, nil
}

// dropCascaded removes edges whose endpoint is staged for cascade deletion.
func (t *Txn) dropCascaded(e *Table, rows []Row) []Row {
	gone := func(typ, id string) bool {
		st, ok := t.s.tables[typ]
		if !ok {
			return false
		}
		for _, d := range st.deletes {
			if d.id == id && d.cascade {
				return true
			}
		}
		return false
	}
	out := rows[:0]
	for _, r := range rows {
		if !gone(e.From, r.From) && !gone(e.To, r.To) {
			out = append(out, r)
		}
	}
	return out
}
