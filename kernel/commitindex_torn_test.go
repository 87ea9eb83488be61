package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	fsstore "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/fs/fstest"
)

// TestTornHeadIndexIsReplaced: a head commit's index torn by an OS crash
// (fs: a file failing its checksum) reads as absent, and a repair
// replaces it. A commit index is never written over a usable one
// (writeCommitIndex: create-only, or If-Match on the ETag read), but a
// torn one has nothing to match (fs compares by reading the current
// object, which fails its check), so a repair with a complete index
// deletes it and creates its own. Red if the repair writes If-Match over
// it: the write fails and the head keeps no usable index.
func TestTornHeadIndexIsReplaced(t *testing.T) {
	dir := t.TempDir()
	store, err := fsstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	head := commitTable(t, g, main, "a", "2")
	key := format.NewKeys(root).CommitIndex(head.ID)
	obj, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	fstest.TearFileHolding(t, dir, obj.Data)
	if _, err := store.Get(ctx, key); !errors.Is(err, objstore.ErrCorruptObject) {
		t.Fatalf("get of the torn index: %v, want objstore.ErrCorruptObject", err)
	}
	w, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	repaired, err := w.RepairHeadIndex(ctx, main)
	if err != nil || !repaired {
		t.Fatalf("RepairHeadIndex over a torn index: repaired=%v %v, want repaired", repaired, err)
	}
	requireCompleteIndexes(t, store, head)
	if c, err := coldHandle(t, store).Commit(ctx, head.ID); err != nil || c.ManifestVersion != head.ManifestVersion {
		t.Fatalf("Commit(head) after the repair: %+v %v", c, err)
	}
}
