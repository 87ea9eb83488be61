package maintain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// MaxLeaseTTL bounds a lease's time to live.
const MaxLeaseTTL = 7 * 24 * time.Hour

// Pin writes a lease (R/leases/<id>, kind 12) that keeps snap — its
// manifest, every table version it pins and every fragment they name —
// from collection until ttl has passed (by this maintainer's clock) or
// Release. Once Pin returns success the snapshot stays readable until the
// lease ends, whatever collection runs concurrently (docs/gc.md rule 6):
// after writing the lease it reads every collection record, and if a
// running collection may already have decided to delete the snapshot
// (gc.PinReclaimed), or the manifest is gone, it removes the lease and
// returns an error matching kernel.ErrReclaimed. Pin a snapshot soon after
// reading it (well within the grace period, docs/gc.md).
func (m *Maintainer) Pin(ctx context.Context, snap kernel.Snapshot, ttl time.Duration, actor string) (format.ID, error) {
	ref := format.ManifestRef{Branch: snap.Branch(), Incarnation: snap.Incarnation(), Version: snap.ManifestVersion()}
	return m.pinRef(ctx, ref, false, ttl, actor)
}

// pinRef writes a lease on ref (a history lease when through), then
// checks that no running collection may delete what it holds.
func (m *Maintainer) pinRef(ctx context.Context, ref format.ManifestRef, through bool, ttl time.Duration, actor string) (format.ID, error) {
	if ttl <= 0 || ttl > MaxLeaseTTL {
		return format.ID{}, fmt.Errorf("pin: %w: ttl %s not in (0, %s]", kernel.ErrInvalidArgument, ttl, MaxLeaseTTL)
	}
	id, err := m.mintID()
	if err != nil {
		return format.ID{}, fmt.Errorf("pin: %w", err)
	}
	tok, err := m.token()
	if err != nil {
		return format.ID{}, fmt.Errorf("pin: %w", err)
	}
	l := format.Lease{ID: id, Snapshot: ref, Actor: actor, ExpiresUnixNano: m.now().Add(ttl).UnixNano(), Through: through}
	b, err := format.EncodeLease(&l, tok)
	if err != nil {
		return format.ID{}, fmt.Errorf("pin: %w: %v", kernel.ErrInvalidArgument, err)
	}
	if err := m.putLease(ctx, m.keys.Lease(id), b, tok); err != nil {
		return format.ID{}, fmt.Errorf("pin: %w", err)
	}
	reclaimed, err := m.pinReclaimed(ctx, l)
	if err != nil {
		return id, fmt.Errorf("pin: verify snapshot: %w", err) // the lease stays until it expires
	}
	if reclaimed {
		if err := m.del(ctx, m.keys.Lease(id)); err != nil {
			return id, fmt.Errorf("pin: snapshot already reclaimed; remove lease: %w", err)
		}
		return format.ID{}, fmt.Errorf("pin %s v%d: %w", l.Snapshot.Branch, l.Snapshot.Version, kernel.ErrReclaimed)
	}
	return id, nil
}

// pinReclaimed reads, after the lease is written, every collection record
// (gc.PinReclaimed decides), then whether the snapshot's manifest still
// exists: a collection that ended before the records were read deleted
// manifests before anything they pin, so a present manifest still has
// all it reaches.
func (m *Maintainer) pinReclaimed(ctx context.Context, l format.Lease) (bool, error) {
	var recs []format.Collection
	err := m.records(ctx, func(_ string, r format.Collection, bad error) error {
		if bad != nil {
			return bad
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return false, err
	}
	if gc.PinReclaimed(recs, l, m.now()) {
		return true, nil
	}
	s := l.Snapshot
	_, found, err := m.get(ctx, m.keys.Manifest(s.Branch, s.Incarnation, s.Version))
	return !found, err
}

// putLease writes the lease create-only; an ambiguous outcome is resolved
// by reading back the token.
func (m *Maintainer) putLease(ctx context.Context, key string, b []byte, tok format.Token) error {
	var last error
	for i := 0; i < maxAttempts; i++ {
		_, err := m.store.Put(ctx, key, b, objstore.CreateOnly)
		if err == nil {
			return nil
		}
		if errors.Is(err, objstore.ErrAmbiguous) || errors.Is(err, objstore.ErrPreconditionFailed) {
			got, found, gerr := m.get(ctx, key)
			if gerr != nil {
				return gerr
			}
			if found {
				if _, t, derr := format.DecodeLease(got); derr == nil && t == tok {
					return nil
				}
				return fmt.Errorf("lease %s holds another writer's lease: %w", key, format.ErrCorrupt)
			}
		} else if !retryable(err) {
			return err
		}
		last = err
	}
	return fmt.Errorf("write lease %s: %d attempts: %w", key, maxAttempts, last)
}

// Release deletes the lease id: its snapshot is collectable again once
// outside retention. Releasing a missing lease is not an error.
func (m *Maintainer) Release(ctx context.Context, id format.ID) error {
	if err := m.del(ctx, m.keys.Lease(id)); err != nil {
		return fmt.Errorf("release lease %s: %w", id, err)
	}
	return nil
}

// PinFeed writes a history lease for a change-feed consumer of branch
// whose saved cursor (a changefeed Page.Cursor) is cursor: the manifest of
// the cursor's commit and every later manifest of its incarnation — so
// every commit after the cursor and the diff against its first parent —
// stay readable until ttl has passed or Release, whatever collection runs
// concurrently (the protection of Pin, docs/gc.md §5a). Renew it as the
// cursor advances: PinFeed the new cursor, then Release the old lease.
// A page token, a cursor of another branch, or one whose position lies in
// an ancestor's history (before the branch's fork point) is
// ErrInvalidArgument; a cursor whose history was already collected is
// ErrReclaimed.
func (m *Maintainer) PinFeed(ctx context.Context, branch, cursor string, ttl time.Duration, actor string) (format.ID, error) {
	tok, err := feed.Decode(cursor)
	if err != nil {
		return format.ID{}, fmt.Errorf("pin feed: %w: %w", kernel.ErrInvalidArgument, err)
	}
	if tok.Kind != feed.KindCursor || tok.Branch != branch {
		return format.ID{}, fmt.Errorf("pin feed: %w: not a cursor of %q", kernel.ErrInvalidArgument, branch)
	}
	ref := format.ManifestRef{Branch: tok.Last.Branch, Incarnation: tok.Last.Incarnation, Version: tok.Last.Version}
	if tok.Last.IsZero() && branch == format.MainBranch {
		ref = format.ManifestRef{Branch: format.MainBranch, Incarnation: 1} // the beginning: main's genesis on
	}
	if ref.Branch != branch {
		return format.ID{}, fmt.Errorf("pin feed: %w: the cursor lies before %q's fork point", kernel.ErrInvalidArgument, branch)
	}
	return m.pinRef(ctx, ref, true, ttl, actor)
}
