package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs/fstest"
)

// TestVerifyTornCommitIndexIsNoProblem: a commit index is written deferred
// (`DeferAll`) and, for an attempt that lost its slot or a crash between
// the manifest and its index, may be torn by an OS crash (docs/invariants.md
// S11). The kernel reads a store-reported torn index as absent and the next
// writer rebuilds it (K10a), so verify counts it beside the missing ones,
// in a note, instead of reporting a read problem. An intact index that does
// not decode stays a problem (flip-commit-index-byte in the damage table).
func TestVerifyTornCommitIndexIsNoProblem(t *testing.T) {
	f := newFixture(t, "fs")
	g := f.buildGraph()
	k := f.damageKeys(g)
	obj, err := f.store.Get(context.Background(), k.index)
	if err != nil {
		t.Fatal(err)
	}
	fstest.TearFileHolding(t, strings.TrimPrefix(f.spec, "fs:"), obj.Data)
	if _, err := f.store.Get(context.Background(), k.index); !errors.Is(err, objstore.ErrCorruptObject) {
		t.Fatalf("get of the torn index: %v, want objstore.ErrCorruptObject", err)
	}
	code, r := f.verify()
	if code != 0 || len(r.Problems) != 0 {
		t.Fatalf("a torn commit index: exit %d, problems %+v", code, r.Problems)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "1 torn") {
		t.Fatalf("notes do not count the torn index: %v", r.Notes)
	}
}
