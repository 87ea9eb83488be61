package maintain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCollectBatchesDeletes: on a store with batched deletes
// (objstore.BatchDeleter: the simulator's, S3's DeleteObjects) a
// collection deletes its garbage manifests (in waves: docs/gc.md §7) and
// the garbage of its unordered categories in far fewer
// requests than keys, and still deletes all of it (docs/gc.md §7). Red
// with one delete a key: a collector that deletes one key a round trip
// falls behind a busy graph's garbage (docs/invariants.md, known gaps).
func TestCollectBatchesDeletes(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g, m, clock, main := simGraph(t, st, data.Options{EmbedFragments: -1})
	for i := 0; i < 80; i++ {
		tx, err := g.Begin(ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("p%03d", i)
		if err := tx.Insert("Person", data.Row{ID: id, Props: map[string]any{"name": id}}); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "t"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	clock.Advance(time.Hour)
	before := st.Counters().Delete.Requests
	rep, err := m.Collect(ctx, maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}})
	if err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	unordered := rep.Manifests.Deleted + rep.TableVersions.Deleted + rep.Fragments.Deleted + rep.Adjacency.Deleted + rep.CommitIndexes.Deleted
	requests := int(st.Counters().Delete.Requests-before) - rep.NameMarkers.Deleted - rep.Leases.Deleted
	t.Logf("deleted %d manifests and %d other objects in %d requests", rep.Manifests.Deleted, unordered-rep.Manifests.Deleted, requests)
	if unordered < 150 {
		t.Fatalf("only %d unordered objects were garbage: the history is too small to show batching", unordered)
	}
	if requests*10 > unordered {
		t.Errorf("%d unordered objects took %d delete requests, want at most a tenth", unordered, requests)
	}
}
