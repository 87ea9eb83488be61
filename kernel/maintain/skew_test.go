package maintain_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
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
// §4).
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
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "behind", Message: "c"})
	if err == nil {
		if name, rerr := f.readAll(c.ID); rerr != nil || name != "behind" {
			t.Fatalf("a write by a clock 2h behind was acknowledged, then lost its staged fragment: %q %v", name, rerr)
		}
	}
	if _, err := f.readAll(f.head(main)); err != nil {
		t.Fatalf("main's head after the skewed write: %v", err)
	}
}
