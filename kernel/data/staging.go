package data

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Op is the kind of one staged write.
type Op uint8

// The operations of a write transaction.
const (
	// OpInsert writes new ids only.
	OpInsert Op = iota + 1
	// OpUpsert inserts, or replaces the whole row with the same id
	// (omitted properties become null; Txn.Patch keeps them).
	OpUpsert
	// OpUpdate replaces existing ids only (the whole row).
	OpUpdate
	// OpDelete removes existing ids.
	OpDelete
)

var opNames = [...]string{OpInsert: "insert", OpUpsert: "upsert", OpUpdate: "update", OpDelete: "delete"}

// String returns the lowercase name of o.
func (o Op) String() string {
	if o >= OpInsert && o <= OpDelete {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Constructive reports whether o adds or replaces rows (Insert, Upsert,
// Update) rather than removing them (Delete).
func (o Op) Constructive() bool { return o != OpDelete }

// Strict reports whether o needs the table HEAD to equal the transaction's
// pinned base at commit (Update, Delete): such ops act on rows the
// transaction read, so a newer HEAD makes the transaction stale. Insert and
// Upsert are non-strict and rebase onto a newer HEAD.
func (o Op) Strict() bool { return o == OpUpdate || o == OpDelete }

// Limits bound one transaction. They are checked as rows are staged, and
// again at Commit, before any I/O. Zero fields take the defaults.
type Limits struct {
	// MaxRows bounds staged rows plus deleted ids (default DefaultMaxRows).
	MaxRows int
	// MaxBytes is the transaction's byte budget: it bounds the estimated
	// staged bytes (key, string and byte lengths plus 4 for their offsets,
	// fixed-width values 8, a null bit per column, which bound the Arrow
	// buffers the staged rows occupy, plus rowOverhead per row for the
	// commit's per-row work), so a transaction's peak heap is a small
	// multiple of it. Past it a call is rejected with ErrTxnBytes (default
	// DefaultMaxBytes).
	MaxBytes int64
}

// Default transaction limits.
const (
	DefaultMaxRows  = 1 << 20  // 1,048,576 rows
	DefaultMaxBytes = 64 << 20 // 64 MiB
)

func (l Limits) withDefaults() Limits {
	if l.MaxRows <= 0 {
		l.MaxRows = DefaultMaxRows
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// staging is the pending content of a transaction: pure data, no I/O.
type staging struct {
	cat    *catalog
	limits Limits
	tables map[string]*stagedTable
	rows   int
	bytes  int64
	kind   int // 0 empty, +1 constructive, -1 destructive
}

// stagedTable is the pending content of one table.
type stagedTable struct {
	t       *Table
	writes  []pendingWrite  // constructive, in call order
	deletes []pendingDelete // destructive, in call order

	sorted []pendingRef // writes sorted by id; nil when stale
	open   *openWrite   // rows still being appended after writes; nil when sealed
}

type pendingWrite struct {
	op  Op
	rec arrow.Record // t's schema; ids in call order
}

type pendingDelete struct {
	id      string
	cascade bool
}

// pendingRef locates one pending row: write index and row index.
type pendingRef struct{ w, row int }

func newStaging(cat *catalog, limits Limits) *staging {
	return &staging{cat: cat, limits: limits.withDefaults(), tables: map[string]*stagedTable{}}
}

// admit checks the mixing rule and the bounds for a call adding rows and
// bytes; it changes nothing.
func (s *staging) admit(op Op, table string, rows int, bytes int64) error {
	want := 1
	if !op.Constructive() {
		want = -1
	}
	if s.kind != 0 && s.kind != want {
		has := "inserts, upserts or updates"
		if s.kind < 0 {
			has = "deletes"
		}
		return reject(ErrMixedTransaction, table, "", "",
			"%s in a transaction that already has %s; split the transaction: commit the inserts, upserts and updates in one transaction and the deletes in another",
			op, has)
	}
	if s.rows+rows > s.limits.MaxRows {
		return reject(ErrTooLarge, table, "", "",
			"%d rows would exceed the limit of %d rows per transaction; split it",
			s.rows+rows, s.limits.MaxRows)
	}
	if s.bytes+bytes > s.limits.MaxBytes {
		return overBudget(table, s.bytes, bytes, s.limits.MaxBytes)
	}
	return nil
}

func (s *staging) table(t *Table) *stagedTable {
	st, ok := s.tables[t.Name]
	if !ok {
		st = &stagedTable{t: t}
		s.tables[t.Name] = st
	}
	return st
}

// stageRows validates rows against their type and stages them as one write.
// A rejected call stages nothing.
func (s *staging) stageRows(op Op, typeName string, rows []Row) error {
	if !op.Constructive() {
		panic("data: stageRows with a destructive op")
	}
	t, err := s.cat.table(typeName)
	if err != nil {
		return err
	}
	var size int64
	for i := range rows {
		n, err := checkRowShape(t, &rows[i])
		if err != nil {
			return err
		}
		size += int64(n)
	}
	if err := s.admit(op, t.Name, len(rows), size); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	s.appendRows(op, t, rows, size)
	return nil
}

// stageRecord validates an Arrow record whose fields equal the type's
// (metadata is ignored) and stages it as one write. The record is retained.
func (s *staging) stageRecord(op Op, typeName string, rec arrow.Record) error {
	if !op.Constructive() {
		panic("data: stageRecord with a destructive op")
	}
	t, err := s.cat.table(typeName)
	if err != nil {
		return err
	}
	if !rec.Schema().Equal(t.arrow) {
		return reject(ErrInvalidRow, t.Name, "", "", "record schema %v does not match the type's schema %v", rec.Schema(), t.arrow)
	}
	own := array.NewRecord(t.arrow, rec.Columns(), rec.NumRows())
	if err := checkColumns(t, own); err != nil {
		own.Release()
		return reject(ErrInvalidRow, t.Name, "", "", "%v", err)
	}
	size := recordBytes(own) + own.NumRows()*rowOverhead
	if err := s.admit(op, t.Name, int(own.NumRows()), size); err != nil {
		own.Release()
		return err
	}
	if own.NumRows() == 0 {
		own.Release()
		return nil
	}
	s.add(op, t, own, size)
	return nil
}

func (s *staging) add(op Op, t *Table, rec arrow.Record, size int64) {
	st := s.table(t)
	st.seal()
	st.writes = append(st.writes, pendingWrite{op: op, rec: rec})
	st.sorted = nil
	s.rows += int(rec.NumRows())
	s.bytes += size
	s.kind = 1
}

// stageDeletes stages the deletion of ids of one type.
func (s *staging) stageDeletes(typeName string, ids []string, cascade bool) error {
	t, err := s.cat.table(typeName)
	if err != nil {
		return err
	}
	var size int64
	for _, id := range ids {
		if p := idProblem(id); p != "" {
			return reject(ErrInvalidRow, t.Name, id, "id", "id %s", p)
		}
		size += int64(len(id)) + rowOverhead
	}
	if err := s.admit(OpDelete, t.Name, len(ids), size); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	st := s.table(t)
	for _, id := range ids {
		st.deletes = append(st.deletes, pendingDelete{id: id, cascade: cascade})
	}
	s.rows += len(ids)
	s.bytes += size
	s.kind = -1
	return nil
}

// recordBytes estimates a record's size as the sum of its buffer lengths.
func recordBytes(rec arrow.Record) int64 {
	var n int64
	for _, col := range rec.Columns() {
		for _, b := range col.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n
}

// names returns the staged table names, sorted.
func (s *staging) names() []string {
	out := make([]string, 0, len(s.tables))
	for name := range s.tables { //detlint:ordered collects names that are sorted next
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// release drops every staged record.
func (s *staging) release() {
	for _, st := range s.tables { //detlint:ordered releases every record; no output
		st.seal()
		for _, w := range st.writes {
			w.rec.Release()
		}
		st.writes = nil
	}
}

// id returns the id of a pending row.
func (st *stagedTable) id(r pendingRef) string {
	return st.writes[r.w].rec.Column(colID).(*array.String).Value(r.row)
}

// str returns a string key column (from or to) of a pending row.
func (st *stagedTable) str(r pendingRef, col int) string {
	return st.writes[r.w].rec.Column(col).(*array.String).Value(r.row)
}

// index returns every pending write row sorted by id (stable: equal ids
// keep call order, so duplicates are adjacent and deterministic).
func (st *stagedTable) index() []pendingRef {
	st.seal()
	if st.sorted != nil {
		return st.sorted
	}
	n := 0
	for _, w := range st.writes {
		n += int(w.rec.NumRows())
	}
	refs := make([]pendingRef, 0, n)
	for w, pw := range st.writes {
		for i := 0; i < int(pw.rec.NumRows()); i++ {
			refs = append(refs, pendingRef{w, i})
		}
	}
	sort.SliceStable(refs, func(a, b int) bool { return st.id(refs[a]) < st.id(refs[b]) })
	st.sorted = refs
	return refs
}

// find returns the pending write of id, if any (the first in call order).
func (st *stagedTable) find(id string) (pendingRef, bool) {
	idx := st.index()
	j := sort.Search(len(idx), func(k int) bool { return st.id(idx[k]) >= id })
	if j < len(idx) && st.id(idx[j]) == id {
		return idx[j], true
	}
	return pendingRef{}, false
}

// deleted reports whether id is staged for deletion.
func (st *stagedTable) deleted(id string) bool {
	for _, d := range st.deletes {
		if d.id == id {
			return true
		}
	}
	return false
}

// endTypes returns, sorted and unique, the node types some pending edge
// starts or ends at.
func (s *staging) endTypes() []string {
	set := map[string]bool{}
	for _, name := range s.names() {
		if st := s.tables[name]; st.t.Edge && (len(st.writes) > 0 || st.open != nil) {
			set[st.t.From], set[st.t.To] = true, true
		}
	}
	return sortedKeys(set)
}

// endpointIDs returns the node ids of type typ that pending edges start or
// end at (unsorted, possibly repeated).
func (s *staging) endpointIDs(typ string) []string {
	n := 0
	for _, name := range s.names() {
		if st := s.tables[name]; st.t.Edge {
			n += len(st.index()) * (boolInt(st.t.From == typ) + boolInt(st.t.To == typ))
		}
	}
	ids := make([]string, 0, n)
	for _, name := range s.names() {
		st := s.tables[name]
		if !st.t.Edge {
			continue
		}
		for _, ref := range st.index() {
			if st.t.From == typ {
				ids = append(ids, st.str(ref, colFrom))
			}
			if st.t.To == typ {
				ids = append(ids, st.str(ref, colTo))
			}
		}
	}
	return ids
}

// boolInt is 1 for true, else 0.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
