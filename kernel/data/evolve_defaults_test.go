package data

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// scanWhereIDs returns the ids, sorted, of typ's rows matching where.
func scanWhereIDs(t testing.TB, s *Snapshot, typ, where string) string {
	t.Helper()
	e, err := pred.Parse(where)
	must(t, err)
	rr, err := s.ScanWhere(ctx, typ, &e, schema.ColID)
	must(t, err)
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, rec.Column(0).ValueStr(i))
		}
	}
	must(t, rr.Err())
	sort.Strings(out)
	return strings.Join(out, ",")
}

// outProp returns "edge=value" of prop for every out-edge of node, sorted
// (read through the adjacency pages).
func outProp(t testing.TB, s *Snapshot, typ, node, prop string) string {
	t.Helper()
	rows, err := s.Out(ctx, typ, node)
	must(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s=%v", r.ID, r.Props[prop]))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// TestApplySchemaDefaults pins property defaults: a property added with a
// default — required included, on a type with rows — reads the default on
// every row written before it, in Get, Scan, ScanWhere (statistics never
// prune it), Out (adjacency pages) and TableChanges; rows written after
// it read what they were given; a copy-on-write rewrite of an old
// fragment keeps the default; the default cannot change later.
func TestApplySchemaDefaults(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	target := withSchema(t, "age: int64? }", `age: int64? level: int64 @default(3) }`)
	target = strings.Replace(target, "since: int64? }", `since: int64? role: string? @default("staff") }`, 1)
	ch, err := apply(t, g, target, SchemaOptions{})
	must(t, err)
	var steps []string
	for _, s := range ch.Plan.Steps {
		steps = append(steps, s.String())
	}
	if got := strings.Join(steps, "; "); got != `add-property Person.level default 3; add-property WorksAt.role default "staff"` {
		t.Fatalf("steps %q", got)
	}
	before := snap(t, g)
	if v := propOf(t, g, "Person", "p1", "level"); v != int64(3) {
		t.Fatalf("p1.level = %v, want the default 3", v)
	}
	if got := scanProp(t, g, "Person", "level"); got != "p1=3,p2=3,p3=3" {
		t.Fatalf("scan level: %s", got)
	}
	if got := scanWhereIDs(t, before, "Person", "level = 3"); got != "p1,p2,p3" {
		t.Fatalf("ScanWhere level = 3: %q", got)
	}
	if got := outProp(t, before, "WorksAt", "p1", "role"); got != "w1=staff,w2=staff" {
		t.Fatalf("Out role: %s", got)
	}
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(tx.Insert("Person", Row{ID: "p4", Props: map[string]any{"name": "dee", "level": int64(7)}}),
			tx.Upsert("Person", Row{ID: "p1", Props: map[string]any{"name": "ann", "age": int64(31), "level": int64(5)}}))
	})
	if got := scanProp(t, g, "Person", "level"); got != "p1=5,p2=3,p3=3,p4=7" {
		t.Fatalf("scan level after writes: %s", got)
	}
	var changes []string
	must(t, TableChanges(ctx, before, snap(t, g), "Person", "", func(c RowChange) error {
		b := "none"
		if c.Before != nil {
			b = fmt.Sprint(c.Before.Props["level"])
		}
		changes = append(changes, fmt.Sprintf("%s:%s->%v", c.ID, b, c.After.Props["level"]))
		return nil
	}))
	if got := strings.Join(changes, ","); got != "p1:3->5,p4:none->7" {
		t.Fatalf("changes %s", got)
	}
	// The default is fixed: changing or removing it is refused, whatever the data.
	for _, bad := range []string{strings.Replace(target, "@default(3)", "@default(4)", 1), strings.Replace(target, " @default(3)", "", 1)} {
		if _, err := apply(t, g, bad, SchemaOptions{}); !errors.Is(err, schema.ErrIncompatibleChange) {
			t.Fatalf("changed default: %v, want ErrIncompatibleChange", err)
		}
	}
	// Without a default, a required property on a type with rows is still refused.
	if _, err := apply(t, g, strings.Replace(target, "level: int64 @default(3)", "level: int64 @default(3) rank: int64", 1), SchemaOptions{}); !errors.Is(err, ErrRequiredOnRows) {
		t.Fatalf("required without default: %v, want ErrRequiredOnRows", err)
	}
}

// TestApplySchemaWidening pins int32 and its widening to int64: int32
// values round-trip (Get gives int32, out-of-range values are refused);
// after the widening old fragments read int64 in Get, Scan, ScanWhere and
// Out, new rows take any int64, an older snapshot still reads int32;
// narrowing back is ErrIncompatibleChange with nothing published.
func TestApplySchemaWidening(t *testing.T) {
	const text = "node M { n: int32? d: int32? @default(-7) }\nedge L: M -> M { w: int32 }\n"
	g, err := Init(ctx, sim.New(sim.Config{Seed: 1}), testRoot, parseSchema(t, text), Options{Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(
			tx.Insert("M", Row{ID: "m1", Props: map[string]any{"n": int32(math.MaxInt32)}},
				Row{ID: "m2", Props: map[string]any{"n": int64(math.MinInt32), "d": 1}}, Row{ID: "m3"}),
			tx.Insert("L", Row{ID: "l1", From: "m1", To: "m2", Props: map[string]any{"w": int32(-2)}}))
	})
	if v := propOf(t, g, "M", "m1", "n"); v != int32(math.MaxInt32) {
		t.Fatalf("int32 Get = %#v", v)
	}
	tx, err := g.Begin(ctx, mainRef(t, g))
	must(t, err)
	if err := tx.Insert("M", Row{ID: "m9", Props: map[string]any{"n": int64(math.MaxInt32) + 1}}); !errors.Is(err, ErrInvalidRow) {
		t.Fatalf("out-of-range int32: %v, want ErrInvalidRow", err)
	}
	old := snap(t, g)
	ch, err := apply(t, g, "node M { n: int64? d: int64? @default(-7) }\nedge L: M -> M { w: int64 }\n", SchemaOptions{})
	must(t, err)
	if got := fmt.Sprint(ch.Plan.Steps); got != "[widen-property M.n int32 -> int64 widen-property M.d int32 -> int64 widen-property L.w int32 -> int64]" {
		t.Fatalf("steps %s", got)
	}
	if v := propOf(t, g, "M", "m1", "n"); v != int64(math.MaxInt32) {
		t.Fatalf("widened Get = %#v", v)
	}
	if v := propOf(t, g, "M", "m2", "d"); v != int64(1) { // its default survives the widening unchanged
		t.Fatalf("widened d Get = %#v", v)
	}
	if got := scanProp(t, g, "M", "n"); got != "m1=2147483647,m2=-2147483648,m3=null" {
		t.Fatalf("scan n: %s", got)
	}
	nt, err := snap(t, g).Table("M")
	must(t, err)
	if typ := nt.Schema().Field(1).Type; !arrow.TypeEqual(typ, arrow.PrimitiveTypes.Int64) {
		t.Fatalf("scan type %s", typ)
	}
	if got := scanWhereIDs(t, snap(t, g), "M", "n > 0"); got != "m1" {
		t.Fatalf("ScanWhere n > 0: %q", got)
	}
	if got := outProp(t, snap(t, g), "L", "m1", "w"); got != "l1=-2" {
		t.Fatalf("Out w: %s", got)
	}
	commitTx(t, g, func(tx *Txn) error {
		return tx.Upsert("M", Row{ID: "m3", Props: map[string]any{"n": int64(1) << 40}})
	})
	if got := scanProp(t, g, "M", "n"); got != "m1=2147483647,m2=-2147483648,m3=1099511627776" {
		t.Fatalf("scan n after a wide write: %s", got)
	}
	if r, _, err := old.Get(ctx, "M", "m1"); err != nil || r.Props["n"] != int32(math.MaxInt32) {
		t.Fatalf("old snapshot: %#v %v", r.Props["n"], err)
	}
	head := snap(t, g).Kernel().ManifestVersion()
	if _, err := apply(t, g, text, SchemaOptions{}); !errors.Is(err, schema.ErrIncompatibleChange) {
		t.Fatalf("narrowing: %v, want ErrIncompatibleChange", err)
	}
	if v := snap(t, g).Kernel().ManifestVersion(); v != head {
		t.Fatalf("a refused narrowing moved the head %d -> %d", head, v)
	}
}

// TestMergeAcrossWideningAndDefault: a branch that widened an int32
// property and added one with a default merges into a main that wrote
// int32 rows meanwhile; the merge takes both changes and every row —
// base, main's and the branch's — reads under the merged schema (widened
// values, the default on rows written before the add).
func TestMergeAcrossWideningAndDefault(t *testing.T) {
	const text = "node M { n: int32? }\n"
	g, err := Init(ctx, sim.New(sim.Config{Seed: 1}), testRoot, parseSchema(t, text), Options{Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("M", Row{ID: "m1", Props: map[string]any{"n": int32(1)}}) })
	feature, err := g.Kernel().CreateBranch(ctx, "feature", mainRef(t, g))
	must(t, err)
	_, err = g.ApplySchema(ctx, feature, parseSchema(t, "node M { n: int64? k: string @default(\"x\") }\n"), kernel.LineageIntent{Actor: "test"}, SchemaOptions{})
	must(t, err)
	tx, err := g.Begin(ctx, feature)
	must(t, err)
	must(t, tx.Insert("M", Row{ID: "m3", Props: map[string]any{"n": int64(1) << 40, "k": "y"}}))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("M", Row{ID: "m2", Props: map[string]any{"n": int32(-2)}}) })
	res, err := g.Merge(ctx, feature, mainRef(t, g), kernel.LineageIntent{Actor: "test"}, MergeOptions{})
	must(t, err)
	if got := fmt.Sprint(snap(t, g).Schema()); !strings.Contains(got, "n: int64?") || !strings.Contains(got, `k: string @default("x")`) {
		t.Fatalf("merged schema (%v):\n%s", res.Outcome, got)
	}
	if got := scanProp(t, g, "M", "n") + " " + scanProp(t, g, "M", "k"); got != "m1=1,m2=-2,m3=1099511627776 m1=x,m2=x,m3=y" {
		t.Fatalf("merged rows: %s", got)
	}
}
