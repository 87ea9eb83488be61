package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
)

// TestPatchKeepsOmittedProperties: a partial row changes only the
// properties it names (a nil value sets null), keeps an edge's endpoints
// when it leaves them empty, and inserts a new id; the same partial row
// through Upsert nulls every omitted property (the whole-row contract).
func TestPatchKeepsOmittedProperties(t *testing.T) {
	f := newMergeFixture(t)
	f.commit(f.main, func(tx *Txn) error {
		return tx.Update("Person", Row{ID: "alice", Props: map[string]any{"name": "Alice", "age": int64(30), "city": "Oslo"}})
	})
	f.commit(f.main, func(tx *Txn) error {
		if err := tx.Patch(ctx, "Person",
			Row{ID: "alice", Props: map[string]any{"age": int64(31)}},
			Row{ID: "bob", Props: map[string]any{"city": "Rome"}},
			Row{ID: "erin", Props: map[string]any{"name": "Erin"}}); err != nil {
			return err
		}
		return tx.Patch(ctx, "Knows", Row{ID: "k1", To: "dan"})
	})
	st := f.state(f.main)
	want := map[string]Row{
		"alice": {ID: "alice", Props: map[string]any{"name": "Alice", "age": int64(31), "city": "Oslo"}},
		"bob":   {ID: "bob", Props: map[string]any{"name": "bob", "city": "Rome"}},
		"erin":  {ID: "erin", Props: map[string]any{"name": "Erin"}},
	}
	for id, w := range want {
		if !RowsEqual(st["Person"][id], w) {
			t.Errorf("Person %s = %+v, want %+v", id, st["Person"][id], w)
		}
	}
	if k := st["Knows"]["k1"]; k.From != "bob" || k.To != "dan" {
		t.Errorf("Knows k1 = %+v, want bob -> dan", k)
	}

	f.commit(f.main, func(tx *Txn) error {
		return tx.Patch(ctx, "Person", Row{ID: "alice", Props: map[string]any{"city": nil}})
	})
	if got, w := f.state(f.main)["Person"]["alice"], (Row{ID: "alice", Props: map[string]any{"name": "Alice", "age": int64(31)}}); !RowsEqual(got, w) {
		t.Errorf("after patching city to null: %+v, want %+v", got, w)
	}

	f.commit(f.main, func(tx *Txn) error {
		return tx.Upsert("Person", Row{ID: "alice", Props: map[string]any{"name": "Alice"}})
	})
	if got, w := f.state(f.main)["Person"]["alice"], (Row{ID: "alice", Props: map[string]any{"name": "Alice"}}); !RowsEqual(got, w) {
		t.Errorf("Upsert of a partial row: %+v, want the omitted age null: %+v", got, w)
	}
}

// TestPatchRefusals: a new id without its required properties is
// rejected at once and stages nothing; a patch whose table moved since
// Begin fails Commit (strict) and the other writer's change survives.
func TestPatchRefusals(t *testing.T) {
	f := newMergeFixture(t)
	tx, err := f.g.Begin(ctx, f.main)
	if err != nil {
		t.Fatal(err)
	}
	err = tx.Patch(ctx, "Person", Row{ID: "alice", Props: map[string]any{"age": int64(1)}}, Row{ID: "zed", Props: map[string]any{"age": int64(2)}})
	if !errors.Is(err, ErrInvalidRow) {
		t.Fatalf("patch of a new id without its name: %v, want ErrInvalidRow", err)
	}
	if n, _ := tx.Count(ctx, "Person"); n != 4 {
		t.Fatalf("a rejected patch staged rows: count %d, want 4", n)
	}
	if err := tx.Patch(ctx, "Person", Row{ID: "alice", Props: map[string]any{"age": int64(1)}}); err != nil {
		t.Fatal(err)
	}
	f.commit(f.main, func(tx *Txn) error {
		return tx.Upsert("Person", Row{ID: "alice", Props: map[string]any{"name": "alice", "city": "Lima"}})
	})
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, kernel.ErrVersionMismatch) {
		t.Fatalf("patch over a moved table: %v, want ErrVersionMismatch", err)
	}
	if got := f.state(f.main)["Person"]["alice"]; got.Props["city"] != "Lima" || got.Props["age"] != nil {
		t.Fatalf("alice = %+v: the concurrent change was lost", got)
	}
}
