package maintain_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCollectNamedVersionGraceRule: a format-8 write that died before its
// publish leaves a table version named per attempt (R/tables/<t>/<fork>/a/<ulid>)
// that no manifest pins, and no sidecar. It is not a recovery state: a
// collection within the settle time of its attempt keeps it (the writer
// could still publish it), one past it deletes it with the fragment it
// alone names, while every pinned named version stays and reads whole.
func TestCollectNamedVersionGraceRule(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 2)
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Crash, Times: 1})
	crashing, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{
		Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{5}), Failpoints: fps}, Grace: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := crashing.Begin(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Insert("Person", person("crashed", "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crasher"}); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("crashing commit: %v", err)
	}
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
