package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// maxListKeys bounds every listing verify makes of one prefix.
const maxListKeys = 10_000_000

// listKeys lists every key under prefix, page by page, at most maxListKeys.
func listKeys(ctx context.Context, st objstore.Store, prefix string, fn func(key string) error) error {
	after, n := "", 0
	for {
		page, err := st.List(ctx, prefix, after, objstore.MaxListLimit)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, k := range page.Keys {
			if n++; n > maxListKeys {
				return fmt.Errorf("list %s: more than %d keys", prefix, maxListKeys)
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
