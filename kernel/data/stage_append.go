package data

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// ErrTxnBytes is the byte-budget rule: the rows a call stages would take
// the transaction's estimated staged bytes past Limits.MaxBytes. It
// matches ErrTooLarge (and ErrValidation) too.
var ErrTxnBytes = fmt.Errorf("%w: byte budget exceeded", ErrTooLarge)

// overBudget is the ErrTxnBytes rejection of a call adding add bytes to
// staged: it names the budget and how to raise it.
func overBudget(table string, staged, add, max int64) *ValidationError {
	return reject(ErrTxnBytes, table, "", "",
		"%d staged bytes plus %d would exceed the transaction byte budget of %d bytes; commit and start a new transaction, or raise Options.Limits.MaxBytes",
		staged, add, max)
}

// nullBytes is the staged size of a null of kind k: the offset of a
// variable-width value or the slot of a fixed-width one.
func nullBytes(k schema.Kind) int {
	switch k {
	case schema.String, schema.Bytes:
		return 4
	case schema.Bool:
		return 1
	case schema.Int32:
		return 4
	}
	return 8
}

// rowOverhead is what the byte estimate charges each staged row (and
// deleted id) besides its values: the commit's per-row bookkeeping (sort
// refs, row sources, endpoint lists, index entries). BenchmarkLoadMemory
// measured about 380 bytes of peak heap per committed row of about 45
// value bytes; with this charge a transaction of small rows stays within
// 4x its budget.
const rowOverhead = 64

// validityBytes bounds the null-bitmap bytes one row adds: a bit per
// column, rounded up.
func validityBytes(t *Table) int { return (t.arrow.NumFields() + 7) / 8 }

// maxOpenRows bounds the rows one open write collects before it is sealed
// into a record, so a sealed record is at most one fragment's rows.
const maxOpenRows = MaxFragmentRows

// openWrite is the tail of a staged table's writes still being appended
// to: rows of consecutive calls with one op share one Arrow builder, so
// the staged memory is the rows' values (what rowBytes estimates), not
// one record (a few KB of builders and buffers) per call.
type openWrite struct {
	op   Op
	b    *array.RecordBuilder
	rows int
}

// appendRows stages rows (already checked and admitted) as part of the
// table's open write, opening or sealing one as the op changes or the open
// write fills up.
func (s *staging) appendRows(op Op, t *Table, rows []Row, size int64) {
	st := s.table(t)
	if st.open != nil && st.open.op != op {
		st.seal()
	}
	if st.open == nil {
		st.open = &openWrite{op: op, b: array.NewRecordBuilder(goAlloc, t.arrow)}
	}
	appendRowValues(st.open.b, t, rows)
	st.open.rows += len(rows)
	st.sorted = nil
	if st.open.rows >= maxOpenRows {
		st.seal()
	}
	s.rows += len(rows)
	s.bytes += size
	s.kind = 1
}

// seal turns the open write, if any, into a pending write. Every reader of
// writes seals first (index does).
func (st *stagedTable) seal() {
	if st.open == nil {
		return
	}
	rec := st.open.b.NewRecord()
	st.open.b.Release()
	st.writes = append(st.writes, pendingWrite{op: st.open.op, rec: rec})
	st.open, st.sorted = nil, nil
}

// Staged returns the rows (plus deleted ids) and the estimated bytes the
// transaction has staged, as Limits bound them: a bulk loader commits
// when the bytes near its budget.
func (t *Txn) Staged() (rows int, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s.rows, t.s.bytes
}

// Limits returns the graph's transaction limits, defaults applied.
func (g *Graph) Limits() Limits { return g.limits.withDefaults() }
