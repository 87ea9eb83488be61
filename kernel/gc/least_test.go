package gc

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestLeastRetentionIsLeast: whatever Protected keeps under
// LeastRetention(k) it keeps under every policy with KeepLast k (any
// KeepFor, Grace, SkewMargin), for live and deleted incarnations — so a
// checker requiring what LeastRetention protects (graphkernel verify)
// never calls what a collection deleted damage.
func TestLeastRetentionIsLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(12)
		times := make([]ManifestTime, n)
		at := now.Add(time.Duration(rng.IntN(60)) * time.Second)
		for j := range times { // newest first, times going back
			times[j] = ManifestTime{Version: uint64(n - 1 - j), CommitUnixNano: at.UnixNano()}
			at = at.Add(-time.Duration(rng.IntN(40)) * time.Second)
		}
		var tomb int64
		if rng.IntN(2) == 0 {
			tomb = now.Add(-time.Duration(rng.IntN(120)) * time.Second).UnixNano()
		}
		k := 1 + rng.IntN(4)
		least, _ := Protected(times, n, tomb, LeastRetention(k), now)
		p := Policy{KeepLast: k, KeepFor: time.Duration(rng.IntN(60)) * time.Second,
			Grace: time.Duration(1+rng.IntN(30)) * time.Second, SkewMargin: time.Duration(1+rng.IntN(10)) * time.Second}
		if got, _ := Protected(times, n, tomb, p, now); got < least {
			t.Fatalf("case %d: %+v protects %d, LeastRetention(%d) %d (times %+v, tombstone %d)", i, p, got, k, least, times, tomb)
		}
	}
}
