package kernel

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
)

// Clock is the kernel's only source of time. Sleep returns early with the
// context's error if ctx ends first.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Env is everything nondeterministic the kernel uses, injected by the
// caller: time, entropy (ULIDs, writer tokens, backoff jitter) and the
// failpoint set (nil = disabled). The kernel never reads the wall clock, a
// global random source or the process environment itself.
type Env struct {
	Clock      Clock
	Entropy    io.Reader
	Failpoints *failpoint.Set
}

// ManualClock is a deterministic Clock for tests and the simulator: time
// moves only when Sleep or Advance moves it. It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the current manual time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d at once (negative d counts as zero), unless
// ctx has already ended.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// Advance moves the clock forward by d (negative d counts as zero).
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// lockedReader serialises reads of the injected entropy, so one handle may
// be used from several goroutines even over a non-thread-safe source. The
// lock is never held across a store call or a sleep.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return io.ReadFull(l.r, p)
}
