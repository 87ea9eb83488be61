package maintain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// TestMaintainRepairsHeadIndexes: a writer that crashed between its
// publish and its commit-index write leaves its branch head without an
// index. Until some handle rebuilds it, every collection counts that
// head's merge bases as unknown (Report.MergeBasesUnknown) and keeps
// more than it needs. Maintain, the call a service runs on a timer,
// rebuilds the index of every live head before it collects, so the
// collection after it knows every merge base.
func TestMaintainRepairsHeadIndexes(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 4)
	feat := f.fork("feat", main)
	f.commit(feat, func(tx *data.Txn) error { return tx.Update("Person", person("p01", "feat")) })
	f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p02", "main")) })
	var lost []string
	for _, b := range []kernel.BranchRef{main, feat} {
		key := root + "/index/commits/" + f.head(b).String()
		if err := f.store.Delete(ctx, key); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
		lost = append(lost, key)
	}
	f.clock.Advance(10 * time.Minute)
	rep, err := maintain.Maintain(ctx, f.reopen(), f.m, maintain.RunPolicy{Collect: policy})
	if err != nil {
		t.Fatalf("maintain: %v", err)
	}
	if got := strings.Join(rep.IndexesRepaired, ","); got != "feat,main" {
		t.Errorf("IndexesRepaired = %q, want feat,main", got)
	}
	if rep.Collect.MergeBasesUnknown != 0 {
		t.Errorf("collection after Maintain: %d merge bases unknown, want 0 (head indexes not repaired)", rep.Collect.MergeBasesUnknown)
	}
	again, err := maintain.Maintain(ctx, f.reopen(), f.m, maintain.RunPolicy{Collect: policy})
	if err != nil || len(again.IndexesRepaired) != 0 {
		t.Errorf("second Maintain repaired %v (%v), want nothing", again.IndexesRepaired, err)
	}
	for _, key := range lost {
		if _, err := f.store.Get(ctx, key); errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("%s still missing after Maintain", key)
		} else if err != nil {
			t.Fatal(err)
		}
	}
}
