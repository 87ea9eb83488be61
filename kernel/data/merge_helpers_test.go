package data

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// mergeSchemaText is the schema of the merge tests: Knows unbounded,
// Manages @card(0..1).
const mergeSchemaText = `
node Person { name: string  age: int64?  city: string? }
edge Knows:   Person -> Person
edge Manages: Person -> Person @card(0..1)
`

// mergeFixture is a graph whose main holds Person{alice, bob, carol, dan}
// and the edge Knows k1 bob -> carol.
type mergeFixture struct {
	t     testing.TB
	store objstore.Store
	g     *Graph
	main  kernel.BranchRef
}

func newMergeFixture(t testing.TB) *mergeFixture {
	t.Helper()
	s, err := schema.Parse([]byte(mergeSchemaText))
	if err != nil {
		t.Fatal(err)
	}
	store := sim.New(sim.Config{Seed: 1})
	g, err := Init(ctx, store, testRoot, s, Options{Kernel: kernel.Options{Env: testEnv(1)}})
	if err != nil {
		t.Fatal(err)
	}
	f := &mergeFixture{t: t, store: store, g: g, main: mainRef(t, g)}
	f.commit(f.main, func(tx *Txn) error {
		if err := tx.Insert("Person", pers("alice"), pers("bob"), pers("carol"), pers("dan")); err != nil {
			return err
		}
		return tx.Insert("Knows", Row{ID: "k1", From: "bob", To: "carol"})
	})
	return f
}

func pers(id string) Row { return Row{ID: id, Props: map[string]any{"name": id}} }

// commit runs one transaction on b and fails the test on any error.
func (f *mergeFixture) commit(b kernel.BranchRef, stage func(*Txn) error) kernel.Commit {
	f.t.Helper()
	tx, err := f.g.Begin(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := stage(tx); err != nil {
		f.t.Fatal(err)
	}
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	if err != nil {
		f.t.Fatalf("commit on %s: %v", b, err)
	}
	return c
}

func (f *mergeFixture) branch(name string, from kernel.BranchRef) kernel.BranchRef {
	f.t.Helper()
	b, err := f.g.Kernel().CreateBranch(ctx, name, from)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *mergeFixture) merge(src, tgt kernel.BranchRef, opts MergeOptions) (MergeResult, error) {
	return f.g.Merge(ctx, src, tgt, kernel.LineageIntent{Actor: "test", Message: "merge " + src.Name()}, opts)
}

// state reads every row of every type at the head of b.
func (f *mergeFixture) state(b kernel.BranchRef) map[string]map[string]Row {
	f.t.Helper()
	s, err := f.g.SnapshotAt(ctx, b)
	if err != nil {
		f.t.Fatal(err)
	}
	return snapState(f.t, s)
}

func snapState(t testing.TB, s *Snapshot) map[string]map[string]Row {
	t.Helper()
	out := map[string]map[string]Row{}
	for _, name := range s.cat.names {
		out[name] = map[string]Row{}
		tb, _ := s.cat.table(name)
		rr, err := s.Scan(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for rr.Next() {
			rec := rr.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				r := rowAt(tb, rec, i)
				out[name][r.ID] = r
			}
		}
		if err := rr.Err(); err != nil {
			t.Fatal(err)
		}
		rr.Release()
	}
	return out
}

// sameState reports the first difference between two states, or "".
func sameState(got, want map[string]map[string]Row) string {
	for _, typ := range sortedKeysOf(want) {
		for _, id := range sortedKeysOf(want[typ]) {
			g, ok := got[typ][id]
			if !ok || !RowsEqual(g, want[typ][id]) {
				return fmt.Sprintf("%s %q: got %+v (present %v), want %+v", typ, id, g, ok, want[typ][id])
			}
		}
		for _, id := range sortedKeysOf(got[typ]) {
			if _, ok := want[typ][id]; !ok {
				return fmt.Sprintf("%s %q: unexpected %+v", typ, id, got[typ][id])
			}
		}
	}
	return ""
}

func cloneState(s map[string]map[string]Row) map[string]map[string]Row {
	out := map[string]map[string]Row{}
	for typ, rows := range s { //detlint:ordered copies every entry
		out[typ] = map[string]Row{}
		for id, r := range rows { //detlint:ordered copies every entry
			props := map[string]any{}
			for k, v := range r.Props { //detlint:ordered copies every entry
				props[k] = v
			}
			r.Props = props
			out[typ][id] = r
		}
	}
	return out
}

// storeBytes is every key of the store with its bytes.
func storeBytes(t testing.TB, store objstore.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	after := ""
	for range 10000 {
		page, err := store.List(ctx, "", after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page.Keys {
			obj, err := store.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = string(obj.Data)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return out
		}
		after = page.Keys[len(page.Keys)-1]
	}
	t.Fatal("store listing did not end")
	return nil
}

// conflictKey is what a cell asserts of a conflict.
type conflictKey struct {
	Kind           merge.Kind
	Type, ID, Prop string
}

func conflictKeys(t testing.TB, err error) []conflictKey {
	t.Helper()
	if err == nil {
		return nil
	}
	var mc *MergeConflictError
	if !errors.As(err, &mc) || !errors.Is(err, ErrMergeConflict) {
		t.Fatalf("merge failed with %v, want nil or *MergeConflictError", err)
	}
	var out []conflictKey
	for _, c := range mc.Conflicts {
		out = append(out, conflictKey{c.Kind, c.Type, c.ID, c.Property})
	}
	return out
}

// sameConflicts reports whether got and want list the same conflicts in the
// same order (nil and empty are the same: no conflict).
func sameConflicts(got, want []conflictKey) bool {
	return cmp.Equal(got, want, cmpopts.EquateEmpty())
}
