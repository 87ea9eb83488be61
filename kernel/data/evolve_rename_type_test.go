package data

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Type renames (docs/invariants.md S18): a renamed type keeps its storage
// table, so its rows; everything that reads or writes speaks the new name.

// renamedSchemaText is evoSchemaText with Person renamed to Human and
// WorksAt to Employs.
const renamedSchemaText = `
node Human   { name: string  age: int64? }
node Company { name: string }
edge Employs: Human -> Company { since: int64? }
`

var personToHuman = []schema.TypeRename{{From: "Person", To: "Human"}, {From: "WorksAt", To: "Employs"}}

// outIDs lists, sorted, the ids of the out-edges of node along edgeType.
func outIDs(t testing.TB, s *Snapshot, edgeType, node string) string {
	t.Helper()
	rows, err := s.Out(ctx, edgeType, node)
	must(t, err)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID+">"+r.To)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// TestApplySchemaTypeRename: a rename publishes one commit whose schema
// names the old tables (@table), moves no table, keeps every row readable
// by the new name (Get, Scan, Count, Out through the adjacency pages, In)
// and none by the old; writes after it land in the same kernel tables and
// read back; the snapshot before it still reads by the old name.
func TestApplySchemaTypeRename(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	before := snap(t, g)
	ch, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
	must(t, err)
	if got := stepsOf(ch.Plan.Steps); got != "rename-type Person -> Human; rename-type WorksAt -> Employs" {
		t.Fatalf("steps %q", got)
	}
	if c, _ := ch.Plan.New.Contract(); !strings.Contains(string(c), "node Human @table(Person) {") || !strings.Contains(string(c), "edge Employs: Human -> Company @table(WorksAt) {") {
		t.Fatalf("contract\n%s", c)
	}
	s := snap(t, g)
	for _, p := range before.Kernel().Tables() { // no table moved: a schema-only commit
		if q, ok := s.Kernel().Table(p.Name); !ok || q != p {
			t.Fatalf("table %s moved: %+v -> %+v", p.Name, p, q)
		}
	}
	if _, ok := s.Kernel().Table("Human"); ok {
		t.Fatal("a kernel table named after the new type name")
	}
	if v := propOf(t, g, "Human", "p1", "age"); v != int64(31) {
		t.Fatalf("Human p1 age = %v", v)
	}
	if got := scanProp(t, g, "Human", "name"); got != "p1=ann,p2=bob,p3=cy" {
		t.Fatalf("Human names %s", got)
	}
	if n, err := s.Count(ctx, "Employs"); err != nil || n != 3 {
		t.Fatalf("Count(Employs) = %d, %v", n, err)
	}
	if got := outIDs(t, s, "Employs", "p1"); got != "w1>c1,w2>c2" {
		t.Fatalf("Out(Employs, p1) = %s", got)
	}
	if in, err := s.In(ctx, "Employs", "c1"); err != nil || len(in) != 2 {
		t.Fatalf("In(Employs, c1) = %v, %v", in, err)
	}
	if _, _, err := s.Get(ctx, "Person", "p1"); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("Get by the old name = %v, want ErrUnknownType", err)
	}
	if _, ok, err := before.Get(ctx, "Person", "p1"); err != nil || !ok {
		t.Fatalf("the older snapshot by the old name: %v, %v", ok, err)
	}
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(tx.Insert("Human", person("p9", "zed")),
			tx.Insert("Employs", edge("w9", "p9", "c2")),
			tx.Update("Human", Row{ID: "p3", Props: map[string]any{"name": "cy", "age": int64(7)}}))
	})
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Employs", "w2") })
	s = snap(t, g)
	if got := outIDs(t, s, "Employs", "p9") + ";" + outIDs(t, s, "Employs", "p1"); got != "w9>c2;w1>c1" {
		t.Fatalf("Out after writes = %s", got)
	}
	if v := propOf(t, g, "Human", "p3", "age"); v != int64(7) {
		t.Fatalf("Human p3 age = %v", v)
	}
	if _, ok := s.Kernel().Table("Human"); ok {
		t.Fatal("a write under the new name made a kernel table of it")
	}
	if p, _ := s.Kernel().Table("Person"); p.Rows != 4 {
		t.Fatalf("kernel table Person has %d rows, want 4", p.Rows)
	}
	if err := tryTx(t, g, func(tx *Txn) error { return tx.Delete("Human", "p9") }); !errors.Is(err, ErrHasEdges) {
		t.Fatalf("deleting a node with edges of a renamed edge type = %v, want ErrHasEdges", err)
	}
}

// TestTypeRenameThenAddTheOldName: a type added under a renamed type's old
// name takes a fresh table (Person_2), starts empty and is independent.
func TestTypeRenameThenAddTheOldName(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	_, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
	must(t, err)
	ch, err := apply(t, g, renamedSchemaText+"node Person { nick: string? }\n", SchemaOptions{})
	must(t, err)
	if c, _ := ch.Plan.New.Contract(); !strings.Contains(string(c), "node Person @table(Person_2) {") {
		t.Fatalf("contract\n%s", c)
	}
	if n, err := snap(t, g).Count(ctx, "Person"); err != nil || n != 0 {
		t.Fatalf("Count(Person) = %d, %v, want an empty new type", n, err)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", Row{ID: "p1", Props: map[string]any{"nick": "x"}}) })
	if v := propOf(t, g, "Human", "p1", "name"); v != "ann" {
		t.Fatalf("Human p1 = %v after a Person p1 insert", v)
	}
	if v := propOf(t, g, "Person", "p1", "nick"); v != "x" {
		t.Fatalf("Person p1 nick = %v", v)
	}
}

// TestTxnBegunBeforeTypeRename: a transaction begun under the old schema
// (writing the old name) fails at commit with ErrSchemaChanged, writing
// nothing; retried under the new name it lands.
func TestTxnBegunBeforeTypeRename(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	tx := begin(t, g)
	must(t, tx.Insert("Person", person("p9", "zed")))
	ch, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
	must(t, err)
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	var sc *kernel.SchemaChangedError
	if !errors.As(err, &sc) || sc.Expected != ch.From || sc.Actual != ch.To || !sc.Retryable() {
		t.Fatalf("stale commit = %v, want SchemaChangedError %s -> %s", err, ch.From, ch.To)
	}
	if v := propOf(t, g, "Human", "p9", "name"); v != "<absent>" {
		t.Fatalf("the refused write is visible: %v", v)
	}
	if keys := kerneltest.Sidecars(g.store.(*sim.Store), testRoot); len(keys) != 0 {
		t.Fatalf("sidecars left: %v", keys)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Human", person("p9", "zed")) })
	if v := propOf(t, g, "Human", "p9", "name"); v != "zed" {
		t.Fatalf("the retry under the new name: %v", v)
	}
}

// TestTypeRenameCrashes: (a) a rename that crashes before its manifest
// write leaves the old schema in force and the rows readable by the old
// name, and applies again; (b) a write under the new name that crashes
// after its table commits is rolled forward by recovery (its sidecar names
// the storage table) and reads by the new name; (c) a write under the old
// name that crashes before a rename lands is rolled back (S7).
func TestTypeRenameCrashes(t *testing.T) {
	t.Run("rename crashes before its publish", func(t *testing.T) {
		store := sim.New(sim.Config{Seed: 1})
		evoGraph(t, store)
		w := crashingHandle(t, store, failpoint.PublishBeforeWrite)
		if _, err := apply(t, w, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman}); !errors.Is(err, failpoint.ErrCrashed) {
			t.Fatalf("apply = %v, want the crash", err)
		}
		r := reopenLater(t, store)
		if v := propOf(t, r, "Person", "p2", "age"); v != int64(42) {
			t.Fatalf("after the crash Person p2 age = %v", v)
		}
		_, err := apply(t, r, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
		must(t, err)
		if v := propOf(t, r, "Human", "p2", "age"); v != int64(42) {
			t.Fatalf("after the retry Human p2 age = %v", v)
		}
	})
	t.Run("write under the new name rolled forward", func(t *testing.T) {
		store := sim.New(sim.Config{Seed: 1})
		g := evoGraph(t, store)
		_, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
		must(t, err)
		w := crashingCounterHandle(t, store, failpoint.BeforePublish)
		tx, err := w.Begin(ctx, mainRef(t, w))
		must(t, err)
		must(t, errors.Join(tx.Insert("Human", person("p9", "zed")), tx.Insert("Employs", edge("w9", "p9", "c1"))))
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crashing"}); !errors.Is(err, failpoint.ErrCrashed) {
			t.Fatalf("commit = %v, want the crash", err)
		}
		r := recoverOnce(t, store, format.DecisionRollForward)
		if got := outIDs(t, snap(t, r), "Employs", "p9"); got != "w9>c1" || propOf(t, r, "Human", "p9", "name") != "zed" {
			t.Fatalf("rolled-forward write: Out(Employs, p9) = %s", got)
		}
	})
	t.Run("write under the old name rolled back", func(t *testing.T) {
		store := sim.New(sim.Config{Seed: 1})
		g := evoGraph(t, store)
		w := crashingCounterHandle(t, store, failpoint.BeforePublish)
		tx, err := w.Begin(ctx, mainRef(t, w))
		must(t, err)
		must(t, tx.Insert("Person", person("p9", "zed")))
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crashing"}); !errors.Is(err, failpoint.ErrCrashed) {
			t.Fatalf("commit = %v, want the crash", err)
		}
		_, err = apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
		must(t, err)
		r := recoverOnce(t, store, format.DecisionRollBack)
		if v := propOf(t, r, "Human", "p9", "name"); v != "<absent>" {
			t.Fatalf("the crashed write came back: %v", v)
		}
		if v := propOf(t, r, "Human", "p1", "name"); v != "ann" {
			t.Fatalf("Human p1 = %v", v)
		}
	})
}

// TestDiffAcrossTypeRename: TableChanges across a rename is by storage
// table: a rename alone is no row change, rows written since show under
// the new name, and backwards the old name diffs the same table.
func TestDiffAcrossTypeRename(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	before := snap(t, g)
	_, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
	must(t, err)
	renamed := snap(t, g)
	commitTx(t, g, func(tx *Txn) error {
		return tx.Update("Human", Row{ID: "p3", Props: map[string]any{"name": "cy", "age": int64(7)}})
	})
	after := snap(t, g)
	changes := func(from, to *Snapshot, typ string) string {
		var out []string
		must(t, TableChanges(ctx, from, to, typ, "", func(c RowChange) error {
			out = append(out, c.Op.String()+" "+c.ID)
			return nil
		}))
		return strings.Join(out, ",")
	}
	if got := changes(before, renamed, "Human"); got != "" {
		t.Fatalf("a rename alone changed rows: %s", got)
	}
	if got := changes(before, after, "Human"); got != "update p3" {
		t.Fatalf("changes before -> after = %q, want update p3", got)
	}
	if got := changes(after, before, "Person"); got != "update p3" {
		t.Fatalf("changes after -> before = %q, want update p3", got)
	}
	if got := changes(before, after, "Employs"); got != "" {
		t.Fatalf("edges changed: %s", got)
	}
}

func stepsOf(steps []schema.Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.String())
	}
	return strings.Join(out, "; ")
}

// tryTx runs one transaction and returns its staging or commit error.
func tryTx(t testing.TB, g *Graph, f func(tx *Txn) error) error {
	tx := begin(t, g)
	if err := f(tx); err != nil {
		return err
	}
	_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	return err
}
