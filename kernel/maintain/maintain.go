// Package maintain is the I/O driver of maintenance (docs/gc.md): garbage
// collection (Collect), snapshot leases (Pin, Release) and the one-call
// entry point Maintain (compaction, then collection). The decisions are
// pure functions in kernel/gc and kernel/data/compact; this package loads
// state, calls them, and deletes — with plain deletes only (S8). It takes
// no lock and assumes no single process: any number of maintainers and
// writers may run at once.
package maintain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Maintainer collects garbage and manages leases of one graph. Keep one
// per process and reuse it: it remembers the immutable objects its
// collections read (bounded, docs/gc.md §7), so each collection after the
// first reads only what was written since. It is safe for concurrent use.
type Maintainer struct {
	store objstore.Store
	keys  format.Keys
	clock kernel.Clock
	// reach bounds the reaches a collection rebuilds (Options).
	reach lineage.Limits
	// defers: store defers durability (objstore.DeferredPutter), so a
	// collection syncs the commit indexes it relies on before it caches
	// or deletes by them.
	defers bool
	mu     sync.Mutex // guards ent
	ent    io.Reader
	// immut keeps immutable objects its collections read, so the next
	// collection marks only what is new (immutable.go).
	immut immutableCache
}

// New returns a Maintainer of the graph under root. env supplies the clock
// (which must be the writers' clock within the skew assumption of
// docs/gc.md) and the entropy of lease ids and tokens.
func New(store objstore.Store, root string, env kernel.Env) (*Maintainer, error) {
	return NewWith(store, root, env, Options{})
}

// Options are a Maintainer's settings beyond New's.
type Options struct {
	// ReachEntries and ReachFolds must be the writers' reach bounds
	// (kernel.Options.ReachEntries and ReachFolds; 0: the kernel's
	// defaults). A collection rebuilds a reach whose commit index is
	// missing, torn, stale or incomplete exactly as its publish computed
	// it, which takes the bounds the writers used: with others it
	// computes another valid reach, whose merge-base search may load
	// other manifests than the writers' reach. The collection stores the
	// reach it rebuilt (create-only, or If-Match over the unusable index)
	// and uses a writer's instead when one lands first, so the store
	// holds the reach it kept merge bases by; but a handle that rebuilt
	// the index itself and could not store it (a read-only handle, a
	// failed write) searches by its own, and may meet a manifest the
	// collection did not keep (ErrReclaimed).
	ReachEntries, ReachFolds int
}

// NewWith is New with opts.
func NewWith(store objstore.Store, root string, env kernel.Env, opts Options) (*Maintainer, error) {
	if store == nil || env.Clock == nil || env.Entropy == nil {
		return nil, fmt.Errorf("maintain: %w: store, Env.Clock and Env.Entropy are required", kernel.ErrInvalidArgument)
	}
	reach := lineage.Limits{Entries: cmp.Or(opts.ReachEntries, lineage.DefaultReachEntries), Folds: cmp.Or(opts.ReachFolds, lineage.DefaultReachFolds)}
	if !reach.Valid() {
		return nil, fmt.Errorf("maintain: %w: reach bounds %d/%d outside [%d, the format's caps]", kernel.ErrInvalidArgument, reach.Entries, reach.Folds, lineage.MinReachBound)
	}
	_, defers := store.(objstore.DeferredPutter)
	return &Maintainer{store: store, keys: format.NewKeys(root), clock: env.Clock, ent: env.Entropy, reach: reach, defers: defers}, nil
}

// prefix is root/part/ (or part/ for an empty root).
func (m *Maintainer) prefix(part string) string {
	if m.keys.Root() == "" {
		return part + "/"
	}
	return m.keys.Root() + "/" + part + "/"
}

// listAll pages through prefix, calling f on every page of keys, at most
// maxPages pages.
func (m *Maintainer) listAll(ctx context.Context, prefix string, maxPages int, f func(keys []string) error) error {
	return m.listFrom(ctx, prefix, "", maxPages, f)
}

// listFrom is listAll of the keys after after.
func (m *Maintainer) listFrom(ctx context.Context, prefix, after string, maxPages int, f func(keys []string) error) error {
	for page := 0; ; page++ {
		if page >= maxPages {
			return fmt.Errorf("maintain: list %s: more than %d pages: %w", prefix, maxPages, ErrTooLarge)
		}
		p, err := m.retryList(ctx, prefix, after)
		if err != nil {
			return err
		}
		if err := f(p.Keys); err != nil {
			return err
		}
		if !p.Truncated || len(p.Keys) == 0 {
			return nil
		}
		after = p.Keys[len(p.Keys)-1]
	}
}

// maxAttempts bounds the retries of one store call on retryable faults.
const maxAttempts = 8

func retryable(err error) bool {
	return errors.Is(err, objstore.ErrTransient) || errors.Is(err, objstore.ErrConflict)
}

func (m *Maintainer) retryList(ctx context.Context, prefix, after string) (objstore.ListPage, error) {
	var last error
	for i := 0; i < maxAttempts; i++ {
		p, err := m.store.List(ctx, prefix, after, objstore.MaxListLimit)
		if err == nil || !retryable(err) {
			if err != nil {
				return p, fmt.Errorf("maintain: list %s: %w", prefix, err)
			}
			return p, nil
		}
		last = err
	}
	return objstore.ListPage{}, fmt.Errorf("maintain: list %s: %d attempts: %w", prefix, maxAttempts, last)
}

// get reads key; found=false only for not-found.
func (m *Maintainer) get(ctx context.Context, key string) ([]byte, bool, error) {
	obj, found, err := m.getObject(ctx, key)
	return obj.Data, found, err
}

// getObject is get with the object's ETag.
func (m *Maintainer) getObject(ctx context.Context, key string) (objstore.Object, bool, error) {
	var last error
	for i := 0; i < maxAttempts; i++ {
		obj, err := m.store.Get(ctx, key)
		if err == nil {
			return obj, true, nil
		}
		if errors.Is(err, objstore.ErrNotFound) {
			return objstore.Object{}, false, nil
		}
		if !retryable(err) {
			return objstore.Object{}, false, fmt.Errorf("maintain: get %s: %w", key, err)
		}
		last = err
	}
	return objstore.Object{}, false, fmt.Errorf("maintain: get %s: %d attempts: %w", key, maxAttempts, last)
}

// del deletes key (a missing key is fine). An ambiguous delete is retried:
// deleting twice is harmless.
func (m *Maintainer) del(ctx context.Context, key string) error {
	var last error
	for i := 0; i < maxAttempts; i++ {
		err := m.store.Delete(ctx, key)
		if err == nil {
			return nil
		}
		if !retryable(err) && !errors.Is(err, objstore.ErrAmbiguous) {
			return fmt.Errorf("maintain: delete %s: %w", key, err)
		}
		last = err
	}
	return fmt.Errorf("maintain: delete %s: %d attempts: %w", key, maxAttempts, last)
}

// delMany deletes keys, which are independent (no order among them), in
// batched requests where the store has them (objstore.DeleteMany), each
// key tried again like del: a retryable or ambiguous failure is deleted
// again (a delete is idempotent), up to maxAttempts in all.
func (m *Maintainer) delMany(ctx context.Context, keys []string) error {
	var last error
	for i := 0; i < maxAttempts && len(keys) > 0; i++ {
		errs := objstore.DeleteMany(ctx, m.store, keys)
		var again []string
		for j, err := range errs {
			switch {
			case err == nil:
			case !retryable(err) && !errors.Is(err, objstore.ErrAmbiguous):
				return fmt.Errorf("maintain: delete %s: %w", keys[j], err)
			default:
				again, last = append(again, keys[j]), err
			}
		}
		keys = again
	}
	if len(keys) > 0 {
		return fmt.Errorf("maintain: delete %s (and %d more): %d attempts: %w", keys[0], len(keys)-1, maxAttempts, last)
	}
	return nil
}

// ErrTooLarge: a collection met more state than its bounds allow; it
// deleted nothing it could not justify and may be retried with larger
// bounds.
var ErrTooLarge = errors.New("maintain: state too large for one collection")

func (m *Maintainer) mintID() (format.ID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ulid.New(ulid.Timestamp(m.clock.Now()), m.ent)
}

func (m *Maintainer) token() (format.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var t format.Token
	_, err := io.ReadFull(m.ent, t[:])
	return t, err
}

// splitKey returns the segments of key below prefix.
func splitKey(prefix, key string) ([]string, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return nil, false
	}
	return strings.Split(rest, "/"), true
}

// now is the maintainer's clock.
func (m *Maintainer) now() time.Time { return m.clock.Now() }
