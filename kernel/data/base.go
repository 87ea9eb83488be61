package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
)

// A transaction's base (issue #32). Begin takes the handle's view of the
// branch (kernel.SnapshotViewed: no head discovery on a warm handle): the
// newest head this handle loaded or published. The base floats on it
// until the transaction's first read (Get, Count, Out, In, Patch), which
// pins it at a loaded head, so reads never use the view. A transaction
// that reads nothing commits on its view base: its Commit validates on
// the view and publishes with a create-only write at the view's next
// version, so a stale view cannot publish (kernel K18); the publish then
// loads the head and re-validates, and strict tables (Update, Delete) are
// checked against that real head, expecting the base version as always.
// A strict table another handle moved after this handle's view is a
// *kernel.VersionMismatchError, exactly as a move right after Begin is.

// pin fixes a floating base at the loaded head before the transaction's
// first read (lock held).
func (t *Txn) pin(ctx context.Context) error {
	if !t.floating {
		return nil
	}
	fresh, err := t.g.beginSnapshot(ctx, t.branch) // group_begin.go: shared on a group-commit handle
	if err != nil {
		return err
	}
	if err := t.moveBase(ctx, fresh); err != nil {
		return err
	}
	t.floating = false
	return nil
}

// restageOnHead is called when a row was refused under a floating base's
// schema (lock held): the view may predate a schema change another handle
// published, so the transaction pins its base at the loaded head (one
// head lookup, under Begin's context) and reports whether the schema
// changed, in which case the caller stages the row again under the head's
// schema, as a Begin that looked up the head would have. A transaction
// that already staged rows under the old schema gets
// *kernel.SchemaChangedError from pin instead (moveBase), which is
// retryable; that or a lookup error is returned, for the caller to join
// with the row's refusal.
func (t *Txn) restageOnHead() (bool, error) {
	if !t.floating {
		return false, nil
	}
	before := t.base.SchemaHash()
	if err := t.pin(t.beginCtx); err != nil {
		return false, fmt.Errorf("head lookup after a refused row: %w", err)
	}
	return t.base.SchemaHash() != before, nil
}

// moveBase moves a floating base to s, a loaded head of the branch no
// older than it (lock held). Under another schema, a transaction with nothing staged
// takes s's catalog; one with staged rows (checked against the old
// schema) is refused with *kernel.SchemaChangedError, as a schema change
// after Begin is refused at the publish.
func (t *Txn) moveBase(ctx context.Context, s kernel.Snapshot) error {
	if !t.floating {
		panic("data: moveBase on a pinned base")
	}
	if sameHead(s, t.base) {
		return nil
	}
	if s.SchemaHash() != t.base.SchemaHash() {
		if len(t.s.tables) > 0 {
			return fmt.Errorf("transaction staged under the schema of its view: %w",
				&kernel.SchemaChangedError{Branch: t.branch.Name(), Expected: t.base.SchemaHash(), Actual: s.SchemaHash()})
		}
		cat, err := t.g.catalog(ctx, s.SchemaHash())
		if err != nil {
			return err
		}
		t.s.release()
		t.cat, t.r, t.s = cat, newReader(t.g, cat), newStaging(cat, t.g.limits)
	}
	t.base = s
	clear(t.views)
	return nil
}
