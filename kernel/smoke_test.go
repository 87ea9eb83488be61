package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

func TestSmoke(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		c1 := commitTable(t, g, main, "a", "f1")
		c2 := commitTable(t, g, main, "a", "f2")
		log := fullLog(t, g, main)
		if len(log) != 3 || log[0].ID != c2.ID || log[1].ID != c1.ID || log[2].Kind != "genesis" {
			t.Fatalf("log %+v", log)
		}
		snap, err := g.SnapshotAt(ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		pin, ok := snap.Table("a")
		if !ok || pin.Version != 2 {
			t.Fatalf("pin %+v", pin)
		}
		tv, err := g.ReadPinned(ctx, pin)
		if err != nil || len(tv.Fragments) != 2 {
			t.Fatalf("%+v %v", tv, err)
		}
	})
}
