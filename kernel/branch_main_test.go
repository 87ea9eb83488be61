package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// storedHead is the identity of branch name's head manifest as the store
// holds it now, read without the kernel: the answer of a head lookup.
func storedHead(t *testing.T, store objstore.Store, keys format.Keys, name string) (string, uint64, kernel.ForkID) {
	t.Helper()
	page, err := store.List(ctx, keys.BranchPrefix(name), "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("list head of %q: %v, %v", name, page.Keys, err)
	}
	obj, err := store.Get(ctx, page.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := format.DecodeManifestAnyStamp(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	return m.Branch.Name, m.Branch.Incarnation, m.Branch.IncarnationID
}

func wantStoredHead(t *testing.T, what string, store objstore.Store, keys format.Keys, b kernel.BranchRef) {
	t.Helper()
	name, inc, id := storedHead(t, store, keys, b.Name())
	if b.Name() != name || b.Incarnation() != inc || b.IncarnationID() != id {
		t.Fatalf("%s: Branch(%q) = %s (%s), the stored head is %s#%d (%s)", what, b.Name(), b, b.IncarnationID(), name, inc, id)
	}
}

// A handle knows main's incarnation from its open (or Init), and main is
// never deleted or re-created (K8), so Branch("main") answers from the
// handle with no store request, and equals the head lookup's answer: on a
// v4 graph, on a v3 graph read as is, after a v3 -> v4 migration (the fold
// keeps the incarnation), and after main moved under the handle. Every
// other branch still pays its lookup. A done context fails Branch for
// every name alike.
func TestBranchMainNeedsNoRequest(t *testing.T) {
	type setup func(t *testing.T) (objstore.Store, format.Keys)
	v4 := func(t *testing.T) (objstore.Store, format.Keys) {
		store := sim.New(sim.Config{Seed: 1})
		g := mustInit(t, store, 1)
		if _, err := g.CreateBranch(ctx, "feature", mustBranch(t, g, "main")); err != nil {
			t.Fatal(err)
		}
		return store, format.NewKeys(root)
	}
	v3 := func(t *testing.T) (objstore.Store, format.Keys) {
		store := sim.New(sim.Config{Seed: 1})
		writeV3(t, store, 1)
		return store, v3Keys
	}
	for _, tc := range []struct {
		name     string
		setup    setup
		readOnly bool
	}{
		{"v4/read-only", v4, true},
		{"v4/read-write", v4, false},
		{"v3/read-only", v3, true},
		{"v3/read-write (migrates main)", v3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, keys := tc.setup(t)
			cs := counting.New(store)
			g, err := kernel.Open(ctx, cs, keys.Root(), kernel.Options{ReadOnly: tc.readOnly, Env: testEnv(2)})
			if err != nil {
				t.Fatal(err)
			}
			before := cs.Counts()
			main := mustBranch(t, g, "main")
			if got := cs.Counts(); got != before {
				t.Fatalf("Branch(main) after Open made requests: %+v", diff(got, before))
			}
			wantStoredHead(t, "after open", store, keys, main)

			before = cs.Counts()
			feature := mustBranch(t, g, "feature")
			// Its head lookup: a LIST (the GET may be cached; a v3 head
			// also reads its legacy lineage).
			if d := diff(cs.Counts(), before); d.List.Requests == 0 {
				t.Fatalf("Branch(feature) cost %+v, want its head lookup (a LIST)", d)
			}
			wantStoredHead(t, "feature", store, keys, feature)

			// Main moves (and a v3 main migrates) under the handle: its
			// incarnation does not change.
			w, err := kernel.Open(ctx, store, keys.Root(), kernel.Options{Env: testEnv(3)})
			if err != nil {
				t.Fatal(err)
			}
			moved := commitTable(t, w, mustBranch(t, w, "main"), "a", "x")
			before = cs.Counts()
			again := mustBranch(t, g, "main")
			if got := cs.Counts(); got != before || again != main {
				t.Fatalf("Branch(main) after main moved: %s, requests %+v; want %s, none", again, diff(got, before), main)
			}
			wantStoredHead(t, "after main moved", store, keys, again)
			if h, err := g.Head(ctx, main); err != nil || h.ID != moved.ID {
				t.Fatalf("Head(main) through the handle: %+v, %v", h, err)
			}

			done, cancel := context.WithCancel(ctx)
			cancel()
			before = cs.Counts()
			for _, name := range []string{"main", "feature"} {
				if _, err := g.Branch(done, name); !errors.Is(err, context.Canceled) {
					t.Fatalf("Branch(%q) with a done context: %v, want context.Canceled", name, err)
				}
			}
			if d := diff(cs.Counts(), before); d.Writes() != 0 {
				t.Fatalf("Branch with a done context wrote: %+v", d)
			}
		})
	}
}

// An Init handle wrote main's genesis, so it knows main too.
func TestBranchMainAfterInitNeedsNoRequest(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	cs := counting.New(store)
	g := mustInit(t, cs, 1)
	before := cs.Counts()
	main := mustBranch(t, g, "main")
	if got := cs.Counts(); got != before {
		t.Fatalf("Branch(main) after Init made requests: %+v", diff(got, before))
	}
	wantStoredHead(t, "after init", store, format.NewKeys(root), main)
}

// Branch("main") reuses the stamp check of the open that fixed main's
// incarnation (M1); a main head written later in a stamp this build
// refuses is refused by every read through the ref, which loads main's
// current head.
func TestBranchMainLeavesTheStampGuardToItsReads(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		for _, readOnly := range []bool{false, true} {
			store, keys := guardGraph(t, legacy)
			cs := counting.New(store)
			g, err := kernel.Open(ctx, cs, keys.Root(), kernel.Options{ReadOnly: readOnly, Env: testEnv(2)})
			if err != nil {
				t.Fatal(err)
			}
			restampHead(t, store, keys, "main", format.CurrentFormat+1)
			before := cs.Counts()
			main := mustBranch(t, g, "main")
			if got := cs.Counts(); got != before {
				t.Fatalf("v3=%v: Branch(main) made requests: %+v", legacy, diff(got, before))
			}
			_, err = g.Head(ctx, main)
			wantUnsupported(t, fmt.Sprintf("v3=%v read-only=%v: Head(main)", legacy, readOnly), err, true)
			_, err = g.Log(ctx, main, "", 10)
			wantUnsupported(t, fmt.Sprintf("v3=%v read-only=%v: Log(main)", legacy, readOnly), err, true)
			_, err = g.SnapshotAt(ctx, main)
			wantUnsupported(t, fmt.Sprintf("v3=%v read-only=%v: SnapshotAt(main)", legacy, readOnly), err, true)
		}
	}
}
