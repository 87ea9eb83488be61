package data

import (
	"errors"
	"fmt"
	"math"

	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// changeWindows groups exactly the fragments on one side only, by
// transitively overlapping id ranges, in id order.
func TestChangeWindows(t *testing.T) {
	f := func(name, lo, hi string, rows uint64) FragmentInfo {
		return FragmentInfo{Name: name, MinID: lo, MaxID: hi, Rows: rows}
	}
	shared := f("S", "a", "z", 100)
	tests := []struct {
		name     string
		from, to []FragmentInfo
		want     []string // "lo-hi from=[..] to=[..] rows"
	}{
		{"identical", []FragmentInfo{shared}, []FragmentInfo{shared}, nil},
		{"insert only", []FragmentInfo{shared}, []FragmentInfo{shared, f("N", "m", "n", 2)}, []string{"m-n from=[] to=[N] 2"}},
		{"rewrite pairs", []FragmentInfo{f("A", "a", "c", 3)}, []FragmentInfo{f("B", "a", "c", 3)}, []string{"a-c from=[A] to=[B] 6"}},
		{"disjoint windows", []FragmentInfo{f("A", "a", "b", 1), f("C", "x", "y", 1)}, []FragmentInfo{f("B", "a", "b", 1), f("D", "x", "y", 1)},
			[]string{"a-b from=[A] to=[B] 2", "x-y from=[C] to=[D] 2"}},
		{"chain overlap", []FragmentInfo{f("A", "a", "d", 1), f("C", "f", "k", 1)}, []FragmentInfo{f("B", "c", "g", 1)},
			[]string{"a-k from=[A C] to=[B] 3"}},
		{"touching bounds merge", []FragmentInfo{f("A", "a", "c", 1)}, []FragmentInfo{f("B", "c", "e", 1)}, []string{"a-e from=[A] to=[B] 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range changeWindows(tc.from, tc.to) {
				got = append(got, fmt.Sprintf("%s-%s from=%v to=%v %d", w.lo, w.hi, names(w.from), names(w.to), w.rows))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("windows (-want +got):\n%s", d)
			}
		})
	}
}

func names(fs []FragmentInfo) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// Exact images: null, the empty string and empty bytes are three values;
// an identical rewrite is no change; floats compare by bits.
func TestRowsEqualDistinguishesNullEmptyAndBytes(t *testing.T) {
	row := func(props map[string]any) Row { return Row{ID: "p", Props: props} }
	tests := []struct {
		name string
		a, b Row
		want bool
	}{
		{"absent vs nil", row(map[string]any{}), row(map[string]any{"name": nil}), true},
		{"null vs empty string", row(map[string]any{}), row(map[string]any{"name": ""}), false},
		{"null vs empty bytes", row(map[string]any{}), row(map[string]any{"avatar": []byte{}}), false},
		{"empty bytes equal", row(map[string]any{"avatar": []byte{}}), row(map[string]any{"avatar": []byte(nil)}), true},
		{"int and int64", row(map[string]any{"age": 3}), row(map[string]any{"age": int64(3)}), true},
		{"string vs bytes", row(map[string]any{"x": "a"}), row(map[string]any{"x": []byte("a")}), false},
		{"nan bits", row(map[string]any{"s": math.NaN()}), row(map[string]any{"s": math.NaN()}), true},
		{"zero vs minus zero", row(map[string]any{"s": 0.0}), row(map[string]any{"s": math.Copysign(0, -1)}), false},
		{"endpoint", Row{ID: "e", From: "a", To: "b"}, Row{ID: "e", From: "a", To: "c"}, false},
	}
	for _, tc := range tests {
		if got := RowsEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: RowsEqual = %v, want %v", tc.name, got, tc.want)
		}
		if got := RowsEqual(tc.b, tc.a); got != tc.want {
			t.Errorf("%s (swapped): RowsEqual = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPairRows(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	before := []Row{person("a", "A"), person("b", "B"), person("c", "C")}
	after := []Row{person("b", "B"), person("c", "C2"), person("d", "D")}
	var got []string
	for _, c := range pairRows(tb, before, after) {
		got = append(got, c.Op.String()+" "+c.ID)
	}
	want := []string{"delete a", "update c", "insert d"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("changes (-want +got):\n%s", d)
	}
}

// allRows reads every row of typ at s (the naive side of the comparisons).
func allRows(t testing.TB, s *Snapshot, typ string) map[string]Row {
	t.Helper()
	rr, err := s.Scan(ctx, typ)
	must(t, err)
	defer rr.Release()
	out := map[string]Row{}
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			r := rowAt(s.cat.tables[typ], rec, i)
			out[r.ID] = r
		}
	}
	must(t, rr.Err())
	return out
}

// naiveChanges compares two full images of a table.
func naiveChanges(typ string, from, to map[string]Row) []RowChange {
	ids := map[string]bool{}
	for id := range from { //detlint:ordered collected, then sorted
		ids[id] = true
	}
	for id := range to { //detlint:ordered collected, then sorted
		ids[id] = true
	}
	var out []RowChange
	for _, id := range sortedKeys(ids) {
		b, inB := from[id]
		a, inA := to[id]
		switch {
		case inB && !inA:
			out = append(out, RowChange{Type: typ, ID: id, Op: ChangeDelete, Before: &b})
		case !inB && inA:
			out = append(out, RowChange{Type: typ, ID: id, Op: ChangeInsert, After: &a})
		case !RowsEqual(b, a):
			out = append(out, RowChange{Type: typ, ID: id, Op: ChangeUpdate, Before: &b, After: &a})
		}
	}
	return out
}

func tableChanges(t testing.TB, from, to *Snapshot, typ, after string) []RowChange {
	t.Helper()
	var out []RowChange
	must(t, TableChanges(ctx, from, to, typ, after, func(c RowChange) error { out = append(out, c); return nil }))
	return out
}

// TableChanges equals the naive comparison of full table images for any
// two snapshots of a random history (either direction, any resume point).
func TestTableChangesMatchNaive(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
		snaps := []*Snapshot{snap(t, g)}
		live := map[string]bool{}
		for step := range rapid.IntRange(1, 8).Draw(rt, "commits") {
			ops := randomPersonTxn(rt, live, step)
			if len(ops) == 0 {
				continue
			}
			commitTx(t, g, func(tx *Txn) error {
				for _, op := range ops {
					if err := op(tx); err != nil {
						return err
					}
				}
				return nil
			})
			snaps = append(snaps, snap(t, g))
		}
		i := rapid.IntRange(0, len(snaps)-1).Draw(rt, "from")
		j := rapid.IntRange(0, len(snaps)-1).Draw(rt, "to")
		after := rapid.SampledFrom([]string{"", "p3", "p6"}).Draw(rt, "after")
		want := naiveChanges("Person", allRows(t, snaps[i], "Person"), allRows(t, snaps[j], "Person"))
		var kept []RowChange
		for _, c := range want {
			if c.ID > after {
				kept = append(kept, c)
			}
		}
		if d := cmp.Diff(kept, tableChanges(t, snaps[i], snaps[j], "Person", after)); d != "" {
			rt.Fatalf("changes %d -> %d after %q (-naive +got):\n%s", i, j, after, d)
		}
	})
}

// randomPersonTxn draws one constructive or destructive transaction over
// ids p0..p9, keeping live (the ids that exist) up to date.
func randomPersonTxn(rt *rapid.T, live map[string]bool, step int) []func(*Txn) error {
	destroy := rapid.Bool().Draw(rt, "destroy")
	var ops []func(*Txn) error
	used := map[string]bool{}
	for k := range rapid.IntRange(1, 4).Draw(rt, "rows") {
		id := fmt.Sprintf("p%d", rapid.IntRange(0, 9).Draw(rt, fmt.Sprint("id", k)))
		if used[id] {
			continue
		}
		used[id] = true
		switch {
		case destroy && live[id]:
			delete(live, id)
			ops = append(ops, func(tx *Txn) error { return tx.Delete("Person", id) })
		case !destroy:
			r := Row{ID: id, Props: map[string]any{"name": rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "name")}}
			switch rapid.IntRange(0, 2).Draw(rt, "avatar") {
			case 1:
				r.Props["avatar"] = []byte{}
			case 2:
				r.Props["age"] = int64(step)
			}
			live[id] = true
			ops = append(ops, func(tx *Txn) error { return tx.Upsert("Person", r) })
		}
	}
	return ops
}

// The changes of a commit that touched one row of a large table read only
// the fragments that commit rewrote or added, not the table.
func TestTableChangesReadOnlyChangedFragments(t *testing.T) {
	defaultFragmentShapes(t, "it sums the table's size from inline fragment infos")
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(t, cs, Limits{})
	for batch := range 5 {
		commitTx(t, g, func(tx *Txn) error {
			var rows []Row
			for i := range MaxFragmentRows {
				rows = append(rows, person(fmt.Sprintf("p%02d-%05d", batch, i), "x"))
			}
			return tx.Insert("Person", rows...)
		})
	}
	before := snap(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Update("Person", person("p03-00100", "changed")) })
	after := snap(t, g)
	read := cs.Counts().BytesRead
	got := tableChanges(t, before, after, "Person", "")
	cost := cs.Counts().BytesRead - read
	if len(got) != 1 || got[0].Op != ChangeUpdate || got[0].After.Props["name"] != "changed" || got[0].Before.Props["name"] != "x" {
		t.Fatalf("changes = %+v", got)
	}
	changed := changedBytes(t, before, after, "Person")
	total := tableBytes(t, after, "Person")
	// The fragments only one side holds, plus the two table versions'
	// metadata (a few KiB): never the unchanged fragments.
	if cost > changed+16<<10 || 2*changed >= total {
		t.Fatalf("diff read %d bytes; changed fragments %d bytes of a %d-byte table", cost, changed, total)
	}
}

// changedBytes is the size of the fragments of typ present in exactly one
// of the two snapshots.
func changedBytes(t testing.TB, a, b *Snapshot, typ string) uint64 {
	t.Helper()
	fa, fb := tableFrags(t, a, typ), tableFrags(t, b, typ)
	var n uint64
	for _, w := range changeWindows(fa, fb) {
		for _, f := range append(append([]FragmentInfo(nil), w.from...), w.to...) {
			n += f.Bytes
		}
	}
	return n
}

func tableFrags(t testing.TB, s *Snapshot, typ string) []FragmentInfo {
	t.Helper()
	tb, _ := s.cat.table(typ)
	v, err := s.r.view(ctx, tb, pinRef(s.ks, typ))
	must(t, err)
	return v.frags
}

func tableBytes(t testing.TB, s *Snapshot, typ string) uint64 {
	t.Helper()
	var n uint64
	for _, f := range tableFrags(t, s, typ) {
		n += f.Bytes
	}
	return n
}

// A window larger than the bound is a typed error, never an allocation.
func TestDiffWindowBound(t *testing.T) {
	w := changeWindow{lo: "a", hi: "b", rows: MaxDiffWindowRows + 1}
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	err := diffWindow(ctx, nil, tb, tb, w, "", nil)
	if !errors.Is(err, ErrDiffTooLarge) {
		t.Fatalf("err = %v, want ErrDiffTooLarge", err)
	}
}
