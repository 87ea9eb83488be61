package data

import (
	"context"
	"errors"
	"fmt"
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
// *kernel.GraceExpiredError (retryable) and the merge computes again from
// fresh heads; when every round reads past the grace period, the merge
// fails after MergeOptions.Rounds with a *kernel.ContentionError whose
// last cause is the *GraceExpiredError, and the target is unchanged; both
// the merge with table changes (a Write) and the one without (a bare
// Publish). When only the first round does, the second publishes. A
// caller's LineageIntent.ReadSince already past the grace period is
// refused once, not computed again. Without LineageIntent.ReadSince the
// grace clock of the Write starts after the reads, and the bare Publish
// has none: both publish.
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
			var late func()
			late = func() { clock.Advance(2 * time.Minute); hs.hook = late } // every round's head lookup of the source
			hs.match, hs.hook = "/branches/feat/", late
			res, err := f.merge(feat, f.main, MergeOptions{Rounds: 2})
			var ge *kernel.GraceExpiredError
			if !errors.As(err, &ge) || !errors.Is(err, kernel.ErrGraceExpired) || !errors.Is(err, kernel.ErrContention) || res.Rounds != 2 {
				t.Fatalf("merge read past the grace period in every round: %v (rounds %d), want *ContentionError of *GraceExpiredError after 2 rounds", err, res.Rounds)
			}
			hs.hook = nil
			after, err := g.Kernel().Head(ctx, f.main)
			if err != nil || after.ID != head.ID {
				t.Fatalf("target moved: %s %v, want %s", after.ID, err, head.ID)
			}
			if d := sameState(f.state(f.main), before); d != "" {
				t.Fatalf("target changed:\n%s", d)
			}
			since := clock.Now().Add(-2 * time.Minute) // the caller read 2 minutes ago
			if res, err := f.g.Merge(ctx, feat, f.main, kernel.LineageIntent{Actor: "test", ReadSince: since}, MergeOptions{}); !errors.As(err, &ge) || errors.Is(err, kernel.ErrContention) || res.Rounds != 1 {
				t.Fatalf("merge whose caller read past the grace period: %v (rounds %d), want *GraceExpiredError after 1 round", err, res.Rounds)
			}
			hs.hook = func() { clock.Advance(2 * time.Minute) } // the first round only
			if res, err := f.merge(feat, f.main, MergeOptions{}); err != nil || res.Commit.ID == (kernel.CommitID{}) || res.Rounds != 2 {
				t.Fatalf("merge whose first round read past the grace period: %+v %v, want a publish in round 2", res, err)
			}
		})
	}
}

// TestMergeAgainDecides pins Merge's two decisions on a failed round:
// which errors are computed again (mergeAgain), and what an ErrReclaimed
// round means given the heads it read and the heads after
// (reclaimedVerdict).
func TestMergeAgainDecides(t *testing.T) {
	reclaimed := fmt.Errorf("read table version: %w", kernel.ErrReclaimed)
	grace := &kernel.GraceExpiredError{Grace: time.Minute}
	ambiguous := fmt.Errorf("%w: %w", &kernel.HeadMovedError{Branch: "main"}, objstore.ErrAmbiguous)
	for _, tc := range []struct {
		name     string
		err      error
		ownGrace bool
		want     bool
	}{
		{"nil", nil, true, false},
		{"head moved", &kernel.HeadMovedError{Branch: "main"}, false, true},
		{"version mismatch", &kernel.VersionMismatchError{Table: "Person"}, false, true},
		{"head reclaimed", &MergeHeadReclaimedError{Branch: "main", Reclaimed: reclaimed}, false, true},
		{"grace, own clock", grace, true, true},
		{"grace, caller's clock", grace, false, false},
		{"reclaimed", reclaimed, true, false},
		{"ambiguous", ambiguous, true, false},
		{"conflict", &MergeConflictError{}, true, false},
	} {
		if got := mergeAgain(tc.err, tc.ownGrace); got != tc.want {
			t.Errorf("mergeAgain(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	a, b, c := kernel.CommitID{1}, kernel.CommitID{2}, kernel.CommitID{3}
	names := [2]string{"main", "feat"}
	for _, tc := range []struct {
		name      string
		read, now [2]kernel.CommitID
		moved     string // the branch the verdict names, "" for err standing
	}{
		{"both still heads", [2]kernel.CommitID{a, b}, [2]kernel.CommitID{a, b}, ""},
		{"source moved", [2]kernel.CommitID{a, b}, [2]kernel.CommitID{c, b}, "main"},
		{"target moved", [2]kernel.CommitID{a, b}, [2]kernel.CommitID{a, c}, "feat"},
		{"source not read, target still", [2]kernel.CommitID{{}, b}, [2]kernel.CommitID{a, b}, ""},
	} {
		got := reclaimedVerdict(reclaimed, names, tc.read, tc.now)
		var hr *MergeHeadReclaimedError
		switch {
		case tc.moved == "" && got != reclaimed:
			t.Errorf("%s: %v, want the reclaimed read", tc.name, got)
		case tc.moved != "" && (!errors.As(got, &hr) || hr.Branch != tc.moved || !errors.Is(got, kernel.ErrHeadMoved) || errors.Is(got, kernel.ErrReclaimed)):
			t.Errorf("%s: %v, want *MergeHeadReclaimedError of %s (ErrHeadMoved, not ErrReclaimed)", tc.name, got, tc.moved)
		}
	}
}
