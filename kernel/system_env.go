package kernel

import (
	"context"
	"crypto/rand"
	"time"
)

// SystemEnv returns an Env over the real wall clock and crypto/rand, for
// production callers (cmd/, tests on fs and S3). It is the one place real
// time and entropy enter graphkernel; the kernel itself never calls it.
func SystemEnv() Env {
	return Env{Clock: systemClock{}, Entropy: rand.Reader}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
