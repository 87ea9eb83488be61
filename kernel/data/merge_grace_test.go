package data

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
)

// listHookStore runs hook once, after forwarding the first List whose
// prefix contains match.
type listHookStore struct {
	objstore.Store
	match string
	hook  func()
}

func (s *listHookStore) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	page, err := s.Store.List(ctx, prefix, startAfter, limit)
	if s.hook != nil && strings.Contains(prefix, s.match) {
		h := s.hook
		s.hook = nil
		h()
	}
	return page, err
}

// TestMergePublishesWithinGraceOfItsReads: the clock passes the grace
// period while a merge round reads (between its first read and its
// write), so a collector may have deleted what it read — the merged
// parent's manifest among them. The round refuses to publish with
// *kernel.GraceExpiredError (retryable) and the target is unchanged; both
// the merge with table changes (a Write) and the one without (a bare
// Publish). Without LineageIntent.ReadSince the grace clock of the Write
// starts after the reads, and the bare Publish has none: both publish.
func TestMergePublishesWithinGraceOfItsReads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stage func(f *mergeFixture, feat kernel.BranchRef)
	}{
		{"with-changes", func(f *mergeFixture, feat kernel.BranchRef) {
			f.commit(feat, func(tx *Txn) error { return tx.Insert("Person", pers("erin")) })
		}},
		{"no-changes", func(f *mergeFixture, feat kernel.BranchRef) {
			f.commit(feat, func(tx *Txn) error { return tx.Insert("Person", pers("erin")) })
			f.commit(f.main, func(tx *Txn) error { return tx.Insert("Person", pers("erin")) }) // convergent: nothing new for main
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMergeFixture(t)
			clock := kernel.NewManualClock(epoch)
			hs := &listHookStore{Store: f.store}
			g, err := Open(ctx, hs, testRoot, Options{Kernel: kernel.Options{Env: kernel.Env{Clock: clock, Entropy: testEnv(7).Entropy}, Grace: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			f.g = g
			feat := f.branch("feat", f.main)
			tc.stage(f, feat)
			before := f.state(f.main)
			head, err := g.Kernel().Head(ctx, f.main)
			if err != nil {
				t.Fatal(err)
			}
			hs.match, hs.hook = "/branches/feat/", func() { clock.Advance(2 * time.Minute) } // the round's head lookup of the source
			_, err = f.merge(feat, f.main, MergeOptions{})
			var ge *kernel.GraceExpiredError
			if !errors.As(err, &ge) || !errors.Is(err, kernel.ErrGraceExpired) {
				t.Fatalf("merge read past the grace period: %v, want *GraceExpiredError", err)
			}
			after, err := g.Kernel().Head(ctx, f.main)
			if err != nil || after.ID != head.ID {
				t.Fatalf("target moved: %s %v, want %s", after.ID, err, head.ID)
			}
			if d := sameState(f.state(f.main), before); d != "" {
				t.Fatalf("target changed:\n%s", d)
			}
			if res, err := f.merge(feat, f.main, MergeOptions{}); err != nil || res.Commit.ID == (kernel.CommitID{}) {
				t.Fatalf("merge again within the grace period: %+v %v", res, err)
			}
		})
	}
}
