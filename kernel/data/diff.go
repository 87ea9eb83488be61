package data

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
)

// ChangeOp is what happened to one id between two snapshots.
type ChangeOp uint8

// The change kinds. The zero ChangeOp is invalid.
const (
	// ChangeInsert: the id is absent in the older snapshot and present in
	// the newer one (After only).
	ChangeInsert ChangeOp = iota + 1
	// ChangeUpdate: the id is present in both with different rows (Before
	// and After).
	ChangeUpdate
	// ChangeDelete: the id is present in the older snapshot only (Before
	// only).
	ChangeDelete
)

// String returns "insert", "update" or "delete".
func (o ChangeOp) String() string {
	switch o {
	case ChangeInsert:
		return "insert"
	case ChangeUpdate:
		return "update"
	case ChangeDelete:
		return "delete"
	}
	return fmt.Sprintf("ChangeOp(%d)", uint8(o))
}

// RowChange is the change of one id of one type between two snapshots.
// Before is nil for an insert, After is nil for a delete; an update has
// both, and they differ (RowsEqual is false). Edge images carry their
// endpoints.
type RowChange struct {
	Type   string
	ID     string
	Op     ChangeOp
	Before *Row
	After  *Row
}

// MaxDiffWindowRows bounds the rows one diff window may hold (both sides
// together). A window is a maximal run of changed fragments whose id ranges
// overlap; it has to be held whole to pair deletes with inserts. A larger
// window fails with ErrDiffTooLarge rather than allocate without bound.
const MaxDiffWindowRows = 4 << 20

// ErrDiffTooLarge reports that a diff needed more rows in memory at once
// than MaxDiffWindowRows.
var ErrDiffTooLarge = fmt.Errorf("data: diff window too large (more than %d rows)", MaxDiffWindowRows)

// TableChanges reports, in ascending id order, every id of typ whose row
// differs between the snapshots from and to (of one graph; any branches,
// versions or commits), calling fn for each id greater than after ("" for
// all). A non-nil error from fn stops the walk and is returned.
//
// Cost: fragments are immutable and named uniquely, and an id lives in
// exactly one fragment of a table version, so a fragment present in both
// versions holds the same rows on both sides. TableChanges therefore reads
// only the fragments present on one side and not the other, one id window
// at a time (a window is a maximal group of such fragments with
// overlapping id ranges): memory is bounded by the largest window, bytes
// read by the changed fragments. A row rewritten with identical values (a
// copy-on-write copy) is not a change.
func TableChanges(ctx context.Context, from, to *Snapshot, typ, after string, fn func(RowChange) error) error {
	if from.g != to.g {
		return fmt.Errorf("table changes of %s: snapshots of two graph handles", typ)
	}
	if from.cat.contractID != to.cat.contractID {
		return tableChangesAcross(ctx, from, to, typ, after, fn) // diff_schema.go
	}
	t, err := from.cat.table(typ)
	if err != nil {
		return err
	}
	return tableChangesAs(ctx, t, from, to, after, fn)
}

// tableChangesAs is TableChanges reading both snapshots' fragments of
// t.Name through t (a layout that reads both: a merge across schemas reads
// every side through its merged layout).
func tableChangesAs(ctx context.Context, t *Table, from, to *Snapshot, after string, fn func(RowChange) error) error {
	return tableChangesLayouts(ctx, sideLayout{t, pinOf(from.ks, t)}, sideLayout{t, pinOf(to.ks, t)}, from, to, after, false, fn)
}

// sideLayout is one side of a diff: the layout its fragments are read
// through and the table version it pins.
type sideLayout struct {
	t   *Table
	pin kernel.TablePin
}

// tableChangesLayouts is TableChanges reading each side through its own
// layout (both of one type name); whole diffs every fragment, shared ones
// included (the layouts read a shared fragment differently).
func tableChangesLayouts(ctx context.Context, fs, ts sideLayout, from, to *Snapshot, after string, whole bool, fn func(RowChange) error) error {
	r := newReader(from.g, from.cat)
	fv, err := r.view(ctx, fs.t, fs.pin)
	if err != nil {
		return err
	}
	tv, err := r.view(ctx, ts.t, ts.pin)
	if err != nil {
		return err
	}
	if err := r.ensureFrags(ctx, fv); err != nil {
		return err
	}
	if err := r.ensureFrags(ctx, tv); err != nil {
		return err
	}
	for _, w := range changeWindowsOf(fv.frags, tv.frags, whole) {
		if after != "" && w.hi <= after {
			continue
		}
		if err := diffWindow(ctx, r, fs.t, ts.t, w, after, fn); err != nil {
			return err
		}
	}
	return nil
}

// diffWindow loads one window's fragments on both sides, pairs their rows by
// id and reports the changes above after.
// The older side is read through ft, the newer through tt.
func diffWindow(ctx context.Context, r *reader, ft, tt *Table, w changeWindow, after string, fn func(RowChange) error) error {
	if w.rows > MaxDiffWindowRows {
		return fmt.Errorf("table changes of %s in ids [%q, %q]: %d rows: %w", tt.Name, w.lo, w.hi, w.rows, ErrDiffTooLarge)
	}
	before, err := windowRows(ctx, r, ft, w.from)
	if err != nil {
		return err
	}
	afterRows, err := windowRows(ctx, r, tt, w.to)
	if err != nil {
		return err
	}
	for _, c := range pairRows(tt, before, afterRows) {
		if c.ID <= after {
			continue
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// windowRows reads the rows of the given fragments, sorted by id.
func windowRows(ctx context.Context, r *reader, t *Table, frags []FragmentInfo) ([]Row, error) {
	var rows []Row
	for _, f := range frags {
		rec, err := r.fetch(ctx, t, f)
		if err != nil {
			return nil, err
		}
		rows = appendRows(t, rows, rec)
		rec.Release()
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows, nil
}

func appendRows(t *Table, rows []Row, rec arrow.Record) []Row {
	n := rec.Column(colID).(*array.String).Len()
	for i := 0; i < n; i++ {
		rows = append(rows, rowAt(t, rec, i))
	}
	return rows
}

// changeWindow is one window of changed fragments: the fragments only in
// the older version (from) and only in the newer one (to) whose id ranges
// overlap transitively, spanning ids [lo, hi].
type changeWindow struct {
	lo, hi   string
	from, to []FragmentInfo
	rows     uint64
}

// changeWindows is the pure planning step of a diff: the fragments present
// on exactly one side, grouped into windows of overlapping id ranges,
// ordered by id. Fragments present on both sides are unchanged and never
// read. Every id that can differ lies in exactly one window.
func changeWindows(from, to []FragmentInfo) []changeWindow { return changeWindowsOf(from, to, false) }

// changeWindowsOf is changeWindows; with whole, every fragment of both
// sides counts as changed.
func changeWindowsOf(from, to []FragmentInfo, whole bool) []changeWindow {
	type side struct {
		f     FragmentInfo
		newer bool
	}
	inFrom, inTo := fragmentNames(from), fragmentNames(to)
	if whole {
		inFrom, inTo = nil, nil
	}
	var changed []side
	for _, f := range from {
		if !inTo[f.Name] {
			changed = append(changed, side{f, false})
		}
	}
	for _, f := range to {
		if !inFrom[f.Name] {
			changed = append(changed, side{f, true})
		}
	}
	sort.Slice(changed, func(i, j int) bool {
		a, b := changed[i].f, changed[j].f
		if a.MinID != b.MinID {
			return a.MinID < b.MinID
		}
		return a.Name < b.Name
	})
	var out []changeWindow
	for _, c := range changed {
		if n := len(out); n == 0 || c.f.MinID > out[n-1].hi {
			out = append(out, changeWindow{lo: c.f.MinID, hi: c.f.MaxID})
		}
		w := &out[len(out)-1]
		if c.f.MaxID > w.hi {
			w.hi = c.f.MaxID
		}
		w.rows += c.f.Rows
		if c.newer {
			w.to = append(w.to, c.f)
		} else {
			w.from = append(w.from, c.f)
		}
	}
	return out
}

func fragmentNames(fs []FragmentInfo) map[string]bool {
	m := make(map[string]bool, len(fs))
	for _, f := range fs {
		m[f.Name] = true
	}
	return m
}

// pairRows is the pure pairing step: given the rows of one window on the
// older and the newer side (each sorted by id, ids unique), it returns the
// changes in id order. An id on both sides with equal rows is no change.
func pairRows(t *Table, before, after []Row) []RowChange {
	var out []RowChange
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || (i < len(before) && before[i].ID < after[j].ID):
			b := before[i]
			out = append(out, RowChange{Type: t.Name, ID: b.ID, Op: ChangeDelete, Before: &b})
			i++
		case i == len(before) || after[j].ID < before[i].ID:
			a := after[j]
			out = append(out, RowChange{Type: t.Name, ID: a.ID, Op: ChangeInsert, After: &a})
			j++
		default:
			b, a := before[i], after[j]
			if !RowsEqual(b, a) {
				out = append(out, RowChange{Type: t.Name, ID: a.ID, Op: ChangeUpdate, Before: &b, After: &a})
			}
			i++
			j++
		}
	}
	return out
}

// RowsEqual reports whether two rows are exactly equal: id, endpoints, and
// every property, where null (absent or nil), the empty string and empty
// bytes are three different values, and floats compare by their bits.
func RowsEqual(a, b Row) bool {
	if a.ID != b.ID || a.From != b.From || a.To != b.To {
		return false
	}
	if nonNull(a.Props) != nonNull(b.Props) {
		return false
	}
	for k, av := range a.Props { //detlint:ordered every key is checked; the answer is order-free
		if av == nil {
			continue
		}
		bv, ok := b.Props[k]
		if !ok || !ValuesEqual(av, bv) {
			return false
		}
	}
	return true
}

// nonNull counts the non-nil values of props.
func nonNull(props map[string]any) int {
	n := 0
	for _, v := range props { //detlint:ordered counts only
		if v != nil {
			n++
		}
	}
	return n
}

// ValuesEqual reports whether two property values (as Row.Props holds them;
// nil is null) are exactly equal: same Go type and value; []byte by content
// (empty bytes differ from null), time.Time by instant, float64 by bits (so
// NaN equals the same NaN, and 0 differs from -0). int is taken as int64.
func ValuesEqual(a, b any) bool {
	return merge.ValuesEqual(a, b) // one home: the merge's pure core compares values too
}
