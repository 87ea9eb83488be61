package kernel_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// The kernel's on-store layout must run on S3 servers backed by a POSIX
// filesystem (versitygw): no key may be a proper path-prefix of another key,
// and no segment may exceed 255 bytes. This exercises every kind of object
// the core writes (schema, name markers, fork markers and the fork-index flag, manifests of several incarnations,
// table versions on several forks, tombstones) and checks the whole key set.
func TestKeyLayoutIsFlat(t *testing.T) {
	store := sim.New(sim.Config{Seed: 7})
	g := mustInit(t, store, 7)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "f1")
	feature, err := g.CreateBranch(ctx, "feature", main)
	if err != nil {
		t.Fatalf("CreateBranch: %v", err)
	}
	commitTable(t, g, feature, "a", "f2")
	commitTable(t, g, feature, "b", "f3")
	if err := g.DeleteBranch(ctx, "feature"); err != nil {
		t.Fatalf("DeleteBranch: %v", err)
	}
	again, err := g.CreateBranch(ctx, "feature", main)
	if err != nil {
		t.Fatalf("re-create: %v", err)
	}
	commitTable(t, g, again, "a", "f4")
	keys := store.Keys("")
	if len(keys) < 10 {
		t.Fatalf("only %d keys written; the scenario did not run", len(keys))
	}
	if !slices.Contains(keys, root+"/forks-complete") || !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, root+"/forks/") }) {
		t.Fatalf("no fork-index keys (flag, markers) written: %q", keys)
	}
	if err := storetest.CheckFlatKeys(keys); err != nil {
		t.Fatalf("kernel layout is not flat: %v\nkeys: %q", err, keys)
	}
}
