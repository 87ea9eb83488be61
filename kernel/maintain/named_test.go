package maintain_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCollectNamedVersionGraceRule: a format-8 write that died before its
// publish leaves a table version named per attempt (R/tables/<t>/<fork>/a/<ulid>)
// that no manifest pins, and no sidecar. It is not a recovery state: a
// collection within the settle time of its attempt keeps it (the writer
// could still publish it), one past it deletes it with the fragment it
// alone names, while every pinned named version stays and reads whole.
func TestCollectNamedVersionGraceRule(t *testing.T) {
	f := newObjectsFixture(t) // the unpublished version's fragment is an object to delete
	main := f.branch("main")
	f.seed(main, 2)
	f.crashBeforePublish(main, false)
	attempts := func() []string {
		var out []string
		for _, k := range f.store.Store.(*sim.Store).Keys(root + "/tables/") {
			if strings.Contains(k, "/a/") {
				out = append(out, k)
			}
		}
		return out
	}
	before := attempts()
	if page, _ := f.store.List(ctx, root+"/sidecars/", "", 10); len(page.Keys) != 0 {
		t.Fatalf("a named write left sidecars %v", page.Keys)
	}
	policy := maintain.Policy{Policy: gc.Policy{KeepLast: 100, Grace: time.Minute, SkewMargin: time.Minute}}
	f.collect(policy) // within the settle time: the unpublished attempt stays
	if got := attempts(); len(got) != len(before) {
		t.Fatalf("a young unpublished named version was collected: %d -> %d", len(before), len(got))
	}
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	after := attempts()
	if len(after) != len(before)-1 || rep.TableVersions.Deleted != 1 || rep.Fragments.Deleted < 1 {
		t.Fatalf("past the settle time: %d named versions -> %d, report %+v; want exactly the unpublished one deleted, with its fragment", len(before), len(after), rep)
	}
	if name, err := f.reopenRead(f.head(main)); err != nil || name != "v1" {
		t.Fatalf("main after the collection: %q %v, want p00 named v1", name, err)
	}
}

// TestCollectTornUnpublishedVersion: a named version is made durable only
// by its manifest's write (objstore.PutAfterDeferred), so an OS crash
// before that may leave it torn: its bytes fail their check. Pinned by
// nothing kept, it is an attempt that never published
// (gc.UnreadableNamedIsGarbage): a collection keeps it while its attempt
// is young, marking nothing, and deletes it after, never failing on it
// (red without: every collection fails with ErrCorrupt). A pinned version
// that is unreadable is damage to kept data: the collection fails loudly.
func TestCollectTornUnpublishedVersion(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 2)
	st := f.store.Store.(*sim.Store)
	attempts := func() map[string]bool {
		out := map[string]bool{}
		for _, k := range st.Keys(root + "/tables/") {
			if strings.Contains(k, "/a/") {
				out[k] = true
			}
		}
		return out
	}
	before := attempts()
	f.crashBeforePublish(main, false)
	var torn []string
	for k := range attempts() {
		if !before[k] {
			torn = append(torn, k)
		}
	}
	s, err := f.g.Kernel().SnapshotAt(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	pin, ok := s.Table("Person")
	if len(torn) != 1 || !ok || pin.Attempt == (format.ID{}) {
		t.Fatalf("unpublished named versions %v, head's Person pin %+v: the test sees nothing", torn, pin)
	}
	kept := format.NewKeys(root).TableAttempt("Person", pin.Fork, pin.Attempt)
	tear := func(key string) {
		obj, err := st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, key, obj.Data[:len(obj.Data)/2], objstore.Unconditional); err != nil {
			t.Fatal(err)
		}
	}
	present := func(key string) bool {
		_, err := st.Get(ctx, key)
		if err != nil && !errors.Is(err, objstore.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	tear(torn[0])
	policy := maintain.Policy{Policy: gc.Policy{KeepLast: 100, Grace: time.Minute, SkewMargin: time.Minute}}
	if rep := f.collect(policy); rep.UnreadableVersions != 1 || !present(torn[0]) {
		t.Fatalf("within the settle time: report %+v, torn version present %v; want it counted unreadable and kept", rep, present(torn[0]))
	}
	f.clock.Advance(10 * time.Minute)
	if rep := f.collect(policy); present(torn[0]) || rep.TableVersions.Deleted != 1 {
		t.Fatalf("past the settle time: report %+v, torn version present %v; want it deleted", rep, present(torn[0]))
	}
	if name, err := f.reopenRead(f.head(main)); err != nil || name != "v1" {
		t.Fatalf("main after the collections: %q %v, want p00 named v1", name, err)
	}
	tear(kept)
	fresh, err := maintain.New(f.store, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{6})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Collect(ctx, policy); !errors.Is(err, format.ErrCorrupt) { // fresh: f.m holds the bytes it read before
		t.Fatalf("collection over a torn pinned version: %v; want ErrCorrupt", err)
	}
}
