package data

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestBeginFloatsOnTheView (issue #32): on a warm handle Begin makes no
// request (the base floats on the handle's view), yet a transaction's
// reads never see the view: its first read pins the base at a loaded
// head, so a row another handle committed after this handle's view is
// found, and an Update of it commits. A transaction that reads nothing
// publishes on its (stale) view base: a blind insert rebases and lands;
// a blind Update of a table another handle moved since the view is a
// version mismatch, as if that move had come right after Begin. Red if
// the first read used the view (the row is missing) or if Begin loaded
// the head (requests at Begin).
func TestBeginFloatsOnTheView(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	cs := counting.New(st)
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	other := openGraph(t, st, 5)
	br := mainRef(t, g)

	commitTx(t, other, func(tx *Txn) error { return tx.Insert("Person", person("late", "n")) })
	cs.Reset()
	tx, err := g.Begin(ctx, br)
	must(t, err)
	if n := cs.Counts().Requests(); n != 0 {
		t.Fatalf("a warm Begin made %d requests, want 0", n)
	}
	r, ok, err := tx.Get(ctx, "Person", "late")
	must(t, err)
	if !ok || r.ID != "late" {
		t.Fatal("the first read did not see a row committed after the handle's view")
	}
	must(t, tx.Update("Person", person("late", "updated")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	must(t, err)

	commitTx(t, other, func(tx *Txn) error { return tx.Insert("Person", person("later", "n")) })
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("blind", "n")) }) // a stale view: the insert rebases
	// Read first: pinned at the loaded head, which shows g's insert.
	commitTx(t, other, func(tx *Txn) error {
		if _, ok, err := tx.Get(ctx, "Person", "blind"); err != nil || !ok {
			return fmt.Errorf("blind row before the update: found=%v %v", ok, err)
		}
		return tx.Update("Person", person("blind", "moved"))
	})
	tx, err = g.Begin(ctx, br)
	must(t, err)
	must(t, tx.Update("Person", person("blind", "stale")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	var mm *kernel.VersionMismatchError
	if !errors.As(err, &mm) || mm.Table != "Person" {
		t.Fatalf("blind update on a view older than another handle's update: %v, want a version mismatch on Person", err)
	}
	for _, id := range []string{"late", "later", "blind"} {
		tx, err := g.Begin(ctx, br)
		must(t, err)
		if _, ok, err := tx.Get(ctx, "Person", id); err != nil || !ok {
			t.Fatalf("row %s: found=%v %v", id, ok, err)
		}
		tx.Discard()
	}
}

// TestStaleViewStagesUnderTheHeadsSchema: another handle added a property
// after this handle's view; a transaction begun on the stale view that
// stages a row naming the new property looks up the head once and stages
// it under the head's schema (as a Begin that looked up the head would),
// and commits. One that had already staged a row under the view's schema
// gets the retryable *kernel.SchemaChangedError, joined with the row's
// refusal; its retry succeeds. Red without restageOnHead: "no such
// property" (cmd's TestSchemaDiff found it after Begin began floating).
func TestStaleViewStagesUnderTheHeadsSchema(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	other := openGraph(t, st, 5)
	br := mainRef(t, g)
	_, err := apply(t, other, strings.Replace(testSchemaText, "avatar: bytes? }", "avatar: bytes?  email: string? }", 1), SchemaOptions{})
	must(t, err)
	withEmail := Row{ID: "e1", Props: map[string]any{"name": "n", "email": "e@x"}}

	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", withEmail) })
	if v := propOf(t, g, "Person", "e1", "email"); v != "e@x" {
		t.Fatalf("email = %#v after a commit begun on the stale view", v)
	}

	g2 := openGraph(t, st, 6) // a view from before the next change
	_, err = apply(t, other, strings.Replace(testSchemaText, "avatar: bytes? }", "avatar: bytes?  email: string?  phone: string? }", 1), SchemaOptions{})
	must(t, err)
	tx, err := g2.Begin(ctx, br)
	must(t, err)
	must(t, tx.Insert("Person", person("plain", "n")))
	err = tx.Insert("Person", Row{ID: "p9", Props: map[string]any{"name": "n", "phone": "1"}})
	var sc *kernel.SchemaChangedError
	if !errors.As(err, &sc) || !errors.Is(err, ErrInvalidRow) {
		t.Fatalf("a new property after rows staged under the view's schema: %v, want SchemaChangedError joined with ErrInvalidRow", err)
	}
	tx.Discard()
	commitTx(t, g2, func(tx *Txn) error {
		return errors.Join(tx.Insert("Person", person("plain", "n")), tx.Insert("Person", Row{ID: "p9", Props: map[string]any{"name": "n", "phone": "1"}}))
	})
}
