package maintain_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// offsetClock reads base shifted by off: a host whose clock is wrong.
type offsetClock struct {
	kernel.Clock
	off time.Duration
}

func (c offsetClock) Now() time.Time { return c.Clock.Now().Add(c.off) }

// TestWriterBehindNeverLosesAStagedFragment: a writer whose clock runs two
// hours behind (far beyond the skew margin) stages a fragment; a
// collection by a correct clock runs before the write's sidecar exists and
// sees the fragment, by its key's time, as long abandoned. The write must
// not be acknowledged with a commit that no longer reads whole (docs/gc.md
// §4): it refuses, before it stages anything, with a definite
// *ClockSkewError, since its clock reads hours before main's head commit.
func TestWriterBehindNeverLosesAStagedFragment(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 3)
	behind := offsetClock{Clock: f.clock, off: -2 * time.Hour}
	w, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{
		Env: kernel.Env{Clock: behind, Entropy: rand.NewChaCha8([32]byte{7})}, Grace: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	zero := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
	f.store.match, f.store.hook = "/sidecars/", func() { // the fragment is staged, named by nothing yet
		if _, err := f.m.Collect(ctx, zero); err != nil {
			t.Errorf("collect during the write: %v", err)
		}
	}
	tx, err := w.Begin(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Update("Person", person("p00", "behind")); err != nil {
		t.Fatal(err)
	}
	before := f.head(main)
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "behind", Message: "c"})
	if err == nil {
		if name, rerr := f.readAll(c.ID); rerr != nil || name != "behind" {
			t.Fatalf("a write by a clock 2h behind was acknowledged, then lost its staged fragment: %q %v", name, rerr)
		}
	}
	var se *kernel.ClockSkewError
	if !errors.As(err, &se) || !errors.Is(err, kernel.ErrClockSkew) || se.Retryable() || errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("write by a clock 2h behind: %v, want a definite *ClockSkewError", err)
	}
	if h := f.head(main); h != before {
		t.Fatalf("main moved from %s to %s after a refused write", before, h)
	}
	if _, err := f.readAll(f.head(main)); err != nil {
		t.Fatalf("main's head after the skewed write: %v", err)
	}
}

// TestCollectorBehindTheHeadsDeletesNothing: a collector whose clock reads
// more than the skew margin before a branch head's commit time (its clock
// is behind, or that head's writer's is ahead: it cannot tell which)
// refuses with a non-retryable *ClockSkewError and deletes nothing; within
// the margin the same collection runs and reclaims.
func TestCollectorBehindTheHeadsDeletesNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		off    time.Duration
		refuse bool
	}{
		{"behind past the margin", -3 * time.Minute, true},
		{"behind within the margin", -30 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			main := f.branch("main")
			f.seed(main, 5)
			f.clock.Advance(10 * time.Minute)
			f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p01", "last")) })
			m, err := maintain.New(f.store, root, kernel.Env{Clock: offsetClock{Clock: f.clock, off: c.off - time.Minute}, Entropy: rand.NewChaCha8([32]byte{5})})
			if err != nil {
				t.Fatal(err)
			}
			zero := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: time.Minute, SkewMargin: time.Minute}}
			rep, err := m.Collect(ctx, zero)
			deleted := rep.Manifests.Deleted + rep.TableVersions.Deleted + rep.Fragments.Deleted + rep.CommitIndexes.Deleted
			if !c.refuse {
				if err != nil || deleted == 0 {
					t.Fatalf("collect within the margin: %+v %v", rep, err)
				}
				return
			}
			var se *kernel.ClockSkewError
			if !errors.As(err, &se) || !errors.Is(err, kernel.ErrClockSkew) || se.Retryable() || se.Op != "collect" {
				t.Fatalf("collect with a clock 3m behind main's head: %v, want *ClockSkewError", err)
			}
			if deleted != 0 {
				t.Fatalf("a refused collection deleted %+v", rep)
			}
			if _, err := f.readAll(f.head(main)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
