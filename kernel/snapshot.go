package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Snapshot is an immutable view of the tables visible together at one
// manifest. Later commits never change it: it holds its own copy of the
// pins, and the manifest it came from is itself immutable.
type Snapshot struct {
	branch  string
	inc     uint64
	version uint64
	head    CommitID
	schema  string
	tables  []format.TablePin
}

func snapshotOf(l loaded) Snapshot {
	return Snapshot{branch: l.m.Branch.Name, inc: l.m.Branch.Incarnation, version: l.m.Version, head: l.m.Head,
		schema: l.m.Schema, tables: append([]format.TablePin(nil), l.m.Tables...)}
}

// Branch returns the branch name of the manifest the snapshot was taken at.
func (s Snapshot) Branch() string { return s.branch }

// Incarnation returns that branch's incarnation.
func (s Snapshot) Incarnation() uint64 { return s.inc }

// ManifestVersion returns the manifest version.
func (s Snapshot) ManifestVersion() uint64 { return s.version }

// Head returns the branch head commit at that manifest.
func (s Snapshot) Head() CommitID { return s.head }

// SchemaHash returns the sha256 hex of the schema contract in force.
func (s Snapshot) SchemaHash() string { return s.schema }

// Tables returns a copy of the pins, sorted by table name.
func (s Snapshot) Tables() []TablePin { return append([]TablePin(nil), s.tables...) }

// Table returns the pin of name, if pinned.
func (s Snapshot) Table(name string) (TablePin, bool) {
	m := format.Manifest{Tables: s.tables}
	return m.Pin(name)
}

// SnapshotAt returns the snapshot at b's head.
func (g *Graph) SnapshotAt(ctx context.Context, b BranchRef) (Snapshot, error) {
	l, err := g.liveHead(ctx, b)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	return snapshotOf(l), nil
}

// SnapshotAtVersion returns the snapshot at manifest version of b's
// incarnation (ErrNotFound beyond its head).
func (g *Graph) SnapshotAtVersion(ctx context.Context, b BranchRef, version uint64) (Snapshot, error) {
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if version > head.m.Version {
		return Snapshot{}, fmt.Errorf("snapshot of %s at version %d (head %d): %w", b, version, head.m.Version, ErrNotFound)
	}
	l, err := g.manifestAt(ctx, format.ManifestRef{Branch: b.name, Incarnation: b.inc, Version: version})
	if errors.Is(err, ErrNotFound) { // below the head, so it existed: collected
		return Snapshot{}, fmt.Errorf("snapshot of %s at version %d (head %d): %w", b, version, head.m.Version, ErrReclaimed)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of %s at version %d: %w", b, version, err)
	}
	return snapshotOf(l), nil
}

// SnapshotAtCommit returns the snapshot at the manifest that introduced
// commit id, or ErrNotFound.
func (g *Graph) SnapshotAtCommit(ctx context.Context, id CommitID) (Snapshot, error) {
	at, err := g.locate(ctx, id)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot at %s: %w", id, err)
	}
	l, err := g.manifestAt(ctx, at)
	if errors.Is(err, ErrNotFound) { // located, then collected
		return Snapshot{}, fmt.Errorf("snapshot at %s: %w", id, ErrReclaimed)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot at %s: %w", id, err)
	}
	return snapshotOf(l), nil
}
