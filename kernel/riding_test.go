package kernel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// headPin returns main's head pin of table, read by a cold handle.
func headPin(t *testing.T, store objstore.Store, table string) kernel.TablePin {
	t.Helper()
	for _, p := range headManifestPins(t, store) {
		if p.Name == table {
			return p
		}
	}
	t.Fatalf("%s not pinned", table)
	return kernel.TablePin{}
}

// versionKeys lists the table-version objects under the graph root.
func versionKeys(st *sim.Store) []string {
	return st.Keys(root + "/tables/")
}

// TestRidingWriteWritesNoVersionObject: a Write's small version rides its
// manifest (format 11): no table-version object exists, the pin carries
// the payload, a cold handle reads the version through the pin, and the
// next write on another table carries it over unchanged.
func TestRidingWriteWritesNoVersionObject(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, st, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	first := headPin(t, st, "a")
	commitTable(t, g, main, "b", "1")
	if keys := versionKeys(st); len(keys) != 0 {
		t.Fatalf("table-version objects %v, want none: every version rides", keys)
	}
	pin := headPin(t, st, "a")
	if pin.Riding == "" || !pin.Ref().Rides || pin != first {
		t.Fatalf("a's pin after a write on b: %+v, want the first pin carried over whole (%+v)", pin, first)
	}
	tv, err := coldHandle(t, st).ReadPinned(ctx, pin)
	if err != nil || !tv.Rides || tv.Ref() != pin.Ref() || len(tv.Fragments) != 1 || tv.Fragments[0] != "1" {
		t.Fatalf("ReadPinned = %+v, %v", tv, err)
	}
}

// TestReadTableRefusesARidingReference: a riding version has no object,
// so ReadTable of its reference is ErrInvalidArgument — on a cold handle
// and on the handle whose cache holds the version alike (no answer
// depends on the cache).
func TestReadTableRefusesARidingReference(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, st, 1)
	commitTable(t, g, mustBranch(t, g, "main"), "a", "1")
	pin := headPin(t, st, "a")
	if _, err := g.ReadPinned(ctx, pin); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]*kernel.Graph{"warm": g, "cold": coldHandle(t, st)} { //detlint:ordered each case checked alike
		if _, err := h.ReadTable(ctx, "a", pin.Ref()); !errors.Is(err, kernel.ErrInvalidArgument) {
			t.Errorf("%s handle: ReadTable of a riding reference = %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestPublishRefusesARidingVersionWithoutItsPayload: adopting another
// branch's riding version with an update built from the pin's fields but
// not its payload would publish a pin nobody can read; Publish refuses it
// (ErrInvalidArgument) and publishes nothing, and UpdateOf's update lands.
// Red without checkAdopted: the publish lands and the head reads
// ErrReclaimed.
func TestPublishRefusesARidingVersionWithoutItsPayload(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, st, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	dev, err := g.CreateBranch(ctx, "dev", main)
	if err != nil {
		t.Fatal(err)
	}
	commitTable(t, g, dev, "b", "1")
	snap, err := g.SnapshotAt(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := snap.Table("b")
	stripped := kernel.UpdateOf(pin)
	stripped.Riding = ""
	before := headPin(t, st, "a")
	if _, err := g.Publish(ctx, main, []kernel.TableUpdate{stripped}, kernel.LineageIntent{Actor: "t"}, nil); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("Publish of a riding version without its payload = %v, want ErrInvalidArgument", err)
	}
	if after := headPin(t, st, "a"); after != before {
		t.Fatal("the refused publish moved main")
	}
	if _, err := g.Publish(ctx, main, []kernel.TableUpdate{kernel.UpdateOf(pin)}, kernel.LineageIntent{Actor: "t"}, nil); err != nil {
		t.Fatal(err)
	}
	if tv, err := coldHandle(t, st).ReadPinned(ctx, headPin(t, st, "b")); err != nil || tv.Ref() != pin.Ref() {
		t.Fatalf("adopted b = %+v, %v", tv, err)
	}
}

// bigWrite is a write of table whose version carries a metadata value of
// n bytes (so its riding payload is about that large).
func bigWrite(table string, n int) kernel.TableWrite {
	return kernel.TableWrite{Table: table, Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Rows: p.Rows + 1, Metadata: map[string]string{"pad": strings.Repeat("x", n)}}, nil
	}}
}

// TestRidingOverBudgetRedoesTheRoundWithObjects: a write plans its
// version to ride on a head whose riding payloads leave room, but another
// writer spends the room before its publish; the publish on the new head
// refuses (lineage.RidingOverBudget), nothing is written, and the round is
// done again with the version an object. Every version reads back, and no
// manifest exceeds the budget through a write's own versions.
func TestRidingOverBudgetRedoesTheRoundWithObjects(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, st, 1)
	other, err := kernel.Open(ctx, st, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	third := 12 << 10 // three of these exceed format.MaxRidingManifestBytes, two do not
	if _, err := g.Write(ctx, main, []kernel.TableWrite{bigWrite("a", third)}, kernel.LineageIntent{Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	w := bigWrite("c", third)
	build, raced := w.Build, false
	w.Build = func(p kernel.TableVersion) (kernel.TableContent, error) {
		if !raced { // after this write planned on a head with room, before its publish
			raced = true
			if _, err := other.Write(ctx, mustBranch(t, other, "main"), []kernel.TableWrite{bigWrite("b", third)}, kernel.LineageIntent{Actor: "other"}); err != nil {
				t.Fatal(err)
			}
		}
		return build(p)
	}
	if _, err := g.Write(ctx, main, []kernel.TableWrite{w}, kernel.LineageIntent{Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b", "c"} {
		pin := headPin(t, st, table)
		if rides := table != "c"; (pin.Riding != "") != rides {
			t.Fatalf("%s rides %v, want %v", table, pin.Riding != "", rides)
		}
		if _, err := coldHandle(t, st).ReadPinned(ctx, pin); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
	}
	if n := format.RidingBytes(headManifestPins(t, st)); n > format.MaxRidingManifestBytes {
		t.Fatalf("head carries %d riding bytes, more than %d", n, format.MaxRidingManifestBytes)
	}
}

// headManifestPins returns main's head pins, read by a cold handle.
func headManifestPins(t *testing.T, store objstore.Store) []kernel.TablePin {
	t.Helper()
	cold := coldHandle(t, store)
	snap, err := cold.SnapshotAt(ctx, mustBranch(t, cold, "main"))
	if err != nil {
		t.Fatal(err)
	}
	return snap.Tables()
}
