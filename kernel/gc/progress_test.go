package gc_test

import (
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/gc"
)

// TestSweepShare: each category gets an equal share of the time and
// deletes left (rounded up), the last one everything; past the end no
// time.
func TestSweepShare(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name         string
		now          time.Time
		budget, left int
		until        time.Time
		deletes      int
	}{
		{"first of ten", t0, 100, 10, t0.Add(6 * time.Second), 10},
		{"rounded up", t0, 5, 10, t0.Add(6 * time.Second), 1},
		{"last gets all", t0, 7, 1, t0.Add(time.Minute), 7},
		{"past the end", t0.Add(2 * time.Minute), 7, 3, t0.Add(time.Minute), 3},
		{"no budget", t0, 0, 4, t0.Add(time.Minute), 0},
	} {
		until, deletes := gc.SweepShare(c.now, t0.Add(time.Minute), c.budget, c.left)
		if !until.Equal(c.until) || deletes != c.deletes {
			t.Errorf("%s: %v %d, want %v %d", c.name, until, deletes, c.until, c.deletes)
		}
	}
}

// TestSweepStart: a start within the candidates, spread by the draw.
func TestSweepStart(t *testing.T) {
	for _, c := range []struct {
		n    int
		draw uint64
		want int
	}{{0, 7, 0}, {1, 7, 0}, {5, 7, 2}, {5, 10, 0}, {3, 1<<64 - 1, 0}} {
		if got := gc.SweepStart(c.n, c.draw); got != c.want {
			t.Errorf("SweepStart(%d, %d) = %d, want %d", c.n, c.draw, got, c.want)
		}
	}
}
