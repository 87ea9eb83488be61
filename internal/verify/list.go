package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// MaxListKeys bounds every listing ListKeys makes of one prefix.
const MaxListKeys = 10_000_000

// ListKeys calls fn on every key under prefix in key order, page by page,
// and fails (wrapped, naming the prefix) on a listing error, on fn's error
// or past MaxListKeys keys.
func ListKeys(ctx context.Context, st objstore.Store, prefix string, fn func(key string) error) error {
	after, n := "", 0
	for {
		page, err := st.List(ctx, prefix, after, objstore.MaxListLimit)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, k := range page.Keys {
			if n++; n > MaxListKeys {
				return fmt.Errorf("list %s: more than %d keys", prefix, MaxListKeys)
			}
			if err := fn(k); err != nil {
				return err
			}
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return nil
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

// ageOf is how old a ULID-named object is at now (zero if from the future).
func ageOf(id format.ID, now time.Time) time.Duration {
	d := now.Sub(time.UnixMilli(int64(id.Time())))
	return max(d, 0)
}
