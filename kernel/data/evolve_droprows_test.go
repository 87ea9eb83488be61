package data

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// dropPersonText is evoSchemaText without Person and WorksAt (an edge
// type touching a dropped node type must go too, or it does not validate).
const dropPersonText = "node Company { name: string }\n"

// TestApplySchemaDropRows: a type with rows is dropped only under
// SchemaOptions.DropRows, then in one commit that deletes its rows and
// those of the dropped edge types touching it (Checked says how many);
// the older snapshot still reads them; re-adding the types gives empty
// tables (no row comes back, the old ids insert again); the other types
// keep their rows.
func TestApplySchemaDropRows(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	if _, err := apply(t, g, dropPersonText, SchemaOptions{}); !errors.Is(err, ErrTypeNotEmpty) {
		t.Fatalf("drop without DropRows: %v, want ErrTypeNotEmpty", err)
	}
	before := snap(t, g)
	ch, err := apply(t, g, dropPersonText, SchemaOptions{DropRows: true})
	must(t, err)
	if got := strings.Join(ch.Checked, "; "); got != "Person: 3 rows dropped with it; WorksAt: 3 rows dropped with it" {
		t.Fatalf("checked %q", got)
	}
	head := snap(t, g)
	if head.Kernel().SchemaHash() != ch.To || ch.Commit.ID == (kernel.Commit{}).ID {
		t.Fatalf("head schema %s, commit %v; want %s", head.Kernel().SchemaHash(), ch.Commit, ch.To)
	}
	if head.Kernel().ManifestVersion() != before.Kernel().ManifestVersion()+1 {
		t.Fatalf("the drop took %d manifests, want one commit", head.Kernel().ManifestVersion()-before.Kernel().ManifestVersion())
	}
	if _, _, err := head.Get(ctx, "Person", "p1"); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("Person after the drop: %v, want ErrUnknownType", err)
	}
	if got := scanProp(t, g, "Company", "name"); got != "c1=co c1,c2=co c2" {
		t.Fatalf("Company rows %s", got)
	}
	if r, ok, err := before.Get(ctx, "Person", "p1"); err != nil || !ok || r.Props["age"] != int64(31) {
		t.Fatalf("older snapshot: %v %v %v", r, ok, err)
	}
	_, err = apply(t, g, evoSchemaText, SchemaOptions{})
	must(t, err)
	for _, typ := range []string{"Person", "WorksAt"} {
		if n, err := snap(t, g).Count(ctx, typ); err != nil || n != 0 {
			t.Fatalf("re-added %s holds %d rows (%v)", typ, n, err)
		}
	}
	if out, err := snap(t, g).Out(ctx, "WorksAt", "p1"); err != nil || len(out) != 0 {
		t.Fatalf("Out(p1) after re-add: %v %v", out, err)
	}
	commitTx(t, g, func(tx *Txn) error {
		return errors.Join(tx.Insert("Person", person("p1", "new")), tx.Insert("WorksAt", edge("w1", "p1", "c1")))
	})
	if got := scanProp(t, g, "Person", "name"); got != "p1=new" {
		t.Fatalf("Person after re-insert: %s", got)
	}
}

// TestDropRowsCrashIsRolledBack: a drop with rows crashes after its table
// versions are committed, before its publish; recovery (by another
// process) rolls it back, never forward — rolled forward, the rows would
// vanish under the old schema, which still has the type.
func TestDropRowsCrashIsRolledBack(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	evoGraph(t, store)
	w := crashingCounterHandle(t, store, failpoint.BeforePublish)
	if _, err := apply(t, w, dropPersonText, SchemaOptions{DropRows: true}); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("apply = %v, want the crash", err)
	}
	r := recoverOnce(t, store, format.DecisionRollBack)
	if got := scanProp(t, r, "Person", "name"); got != "p1=ann,p2=bob,p3=cy" {
		t.Fatalf("Person after recovery: %s", got)
	}
}

// TestDropRowsRowWrittenMeanwhile: a row written to the dropped type by
// another handle after the change read the table (here: once its write
// round's first table version is written) never survives the drop — the change's
// table writes are strict (deletes), so its round fails and it re-plans
// on the new head, dropping that row too (4 rows, not 3).
func TestDropRowsRowWrittenMeanwhile(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	evoGraph(t, store)
	b := openGraph(t, store, 2)
	fps := failpoint.NewSet()
	ga, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(3, fps)}})
	must(t, err)
	fired := false
	fps.SetDecider(func(n failpoint.Name) (failpoint.Action, bool) {
		if n == failpoint.AfterTableCommit && !fired {
			fired = true
			commitTx(t, b, func(tx *Txn) error { return tx.Insert("Person", person("p7", "eve")) })
		}
		return failpoint.Action{}, false
	})
	ch, err := apply(t, ga, dropPersonText, SchemaOptions{DropRows: true})
	must(t, err)
	if !fired || strings.Join(ch.Checked, "; ") != "Person: 4 rows dropped with it; WorksAt: 3 rows dropped with it" {
		t.Fatalf("fired %v, checked %q", fired, ch.Checked)
	}
	_, err = apply(t, b, evoSchemaText, SchemaOptions{})
	must(t, err)
	if got := scanProp(t, b, "Person", "name"); got != "" {
		t.Fatalf("Person rows after drop and re-add: %s", got)
	}
}
