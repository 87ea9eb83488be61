package maintain_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
)

// TestCollectMarksRidingVersions: with every table version riding its
// manifest (format 11: no version object to list), a collection keeping
// the last 3 commits keeps what their versions name — the retained
// commits read fully from fragments that are objects — and reclaims the
// fragments only older versions named. Red without markRiding (or with
// the planted bug gc-skips-riding): the retained commits' fragments are
// deleted and their reads fail.
func TestCollectMarksRidingVersions(t *testing.T) {
	withRiding(t)
	f := newObjectsFixture(t) // fragment objects to keep or reclaim
	main := f.branch("main")
	cs := f.seed(main, 12)
	head, err := f.g.Kernel().SnapshotAt(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	if pin, _ := head.Table("Person"); pin.Riding == "" {
		t.Fatal("the head's Person version does not ride its manifest: the test sees nothing")
	}
	f.clock.Advance(10 * time.Minute)
	rep := f.collect(policy)
	if rep.RidingVersions == 0 || rep.Fragments.Deleted == 0 || rep.TableVersions.Deleted != 0 {
		t.Fatalf("report %+v: want riding versions marked, old fragments reclaimed, no version object", rep)
	}
	for i, c := range cs[len(cs)-3:] {
		name, err := f.reopenRead(c.ID)
		if want := fmt.Sprint("v", 9+i); err != nil || name != want {
			t.Fatalf("retained commit %d: %q %v, want %q", i, name, err, want)
		}
	}
	for _, c := range cs[:len(cs)-3] {
		if _, err := f.reopenRead(c.ID); !errors.Is(err, kernel.ErrReclaimed) {
			t.Fatalf("collected commit %s: %v, want ErrReclaimed", c.ID, err)
		}
	}
}
