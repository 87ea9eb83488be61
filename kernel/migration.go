package kernel

// On-store format migrations. A graph's format stamp rides every manifest;
// each branch incarnation migrates on its own: main on a read-write Open,
// every other branch on its first write (inside the publisher's retry
// loop). Reads never migrate: a read-only handle reads legacy history as is
// (kernel/legacy.go).

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
)

// migrationV3ToV4From is the source stamp of the v3->v4 lineage fold
// (migrateV3ToV4). It lives with that migration: delete them together.
const migrationV3ToV4From = format.FormatV3

// LowestRegisteredMigrationSource is the lowest source stamp of the
// migrations this build carries (the minimum over the registry below). It
// must equal format.OldestSupportedFormat; the two constant declarations
// after it fail the build otherwise ("constant ... overflows uint16").
//
// Retirement runbook (raising the floor from N to N+1):
//  1. Ship, and give users time to run, a release that still reads N and
//     migrates every branch forward (main migrates on a read-write open,
//     other branches on their first write; a write on each branch, or a
//     read-write open of every branch, completes it).
//  2. Raise format.OldestSupportedFormat to N+1. The build now fails here.
//  3. Delete the migration whose source is N (its constant, its registry
//     entry, its planning code in kernel/migrate, the N-format reader
//     paths and their tests), and point this constant at the next lowest
//     registered source (or at format.CurrentFormat when none is left).
//     The build passes again.
//
// Conversely, deleting a migration without raising the floor also fails the
// build, so dead migration code and the floor can never drift apart.
const LowestRegisteredMigrationSource = migrationV3ToV4From

// The tripwire: both differences must be representable as uint16, so the
// two constants are equal or the package does not compile.
const (
	_ uint16 = LowestRegisteredMigrationSource - format.OldestSupportedFormat
	_ uint16 = format.OldestSupportedFormat - LowestRegisteredMigrationSource
)

// registeredMigration is one entry of the migration registry.
type registeredMigration struct {
	From, To uint16
	Name     string
}

// migrations is the registry, ascending by source stamp; each step moves a
// branch incarnation from From to To, and the chain ends at CurrentFormat.
var migrations = []registeredMigration{
	{From: migrationV3ToV4From, To: format.FormatV4, Name: "v3->v4 lineage fold (writes the current layout)"},
	{From: migrationV4ToV5From, To: format.FormatV5, Name: "v4->v5 paged fragment infos: nothing rewritten"},
	{From: migrationV5ToV6From, To: format.FormatV6, Name: "v5->v6 id index delta: nothing rewritten"},
	{From: migrationV6ToV7From, To: format.FormatV7, Name: "v6->v7 compact index pages (zstd id pages and chunks, column adjacency pages): nothing rewritten"},
	{From: migrationV7ToV8From, To: format.FormatV8, Name: "v7->v8 table versions named per attempt: nothing rewritten; a branch's first write sweeps its incarnation's sidecars"},
	{From: migrationV8ToV9From, To: format.FormatV9, Name: "v8->v9 small fragments embedded in their table version: nothing rewritten"},
	{From: migrationV9ToV10From, To: format.FormatV10, Name: "v9->v10 paged index refs: nothing rewritten"},
	{From: migrationV10ToV11From, To: format.FormatV11, Name: "v10->v11 table versions ride their manifest: nothing rewritten"},
	{From: migrationV11ToV12From, To: format.FormatV12, Name: "v11->v12 binary index chunks: nothing rewritten"},
	{From: migrationV12ToV13From, To: format.CurrentFormat, Name: "v12->v13 adjacency delta: nothing rewritten"},
}

// migrationV12ToV13From is the source stamp of the v12->v13 step (a small
// edge insert may ride its table version as an adjacency delta;
// docs/format.md "v12->v13"). It rewrites nothing: a format-12 version has
// no delta, which format 13 reads as a delta of no rows, and a branch's
// next publish stamps 13. Like v4->v5 it has no planning code.
const migrationV12ToV13From = format.FormatV12

// migrationV11ToV12From is the source stamp of the v11->v12 step (index
// chunks are written in binary; docs/format.md "v11->v12"). It rewrites
// nothing: format 12 readers read a JSON chunk as before, and a branch's
// next publish stamps 12; the chunks a commit rewrites are binary, every
// other chunk stays JSON until a commit or a repack rewrites it. Like
// v4->v5 it has no planning code.
const migrationV11ToV12From = format.FormatV11

// migrationV10ToV11From is the source stamp of the v10->v11 step (a named
// table version may ride the manifest that pins it: the pin's "riding"
// holds its payload and no object exists; docs/format.md "v10->v11"). It
// rewrites nothing: format 11 readers read a pin without "riding" through
// its object as before, and a branch's next publish stamps 11. Like v4->v5
// it has no planning code.
const migrationV10ToV11From = format.FormatV10

// migrationV9ToV10From is the source stamp of the v9->v10 step (an index
// direction may be listed through ref chunks; docs/format.md "v9->v10").
// It rewrites nothing: format 10 readers read a version listing its index
// refs inline as they are, and a branch's next publish stamps 10. Like
// v4->v5 it has no planning code.
const migrationV9ToV10From = format.FormatV9

// migrationV8ToV9From is the source stamp of the v8->v9 step (a table
// version may embed small fragments: metadata data.embed.<name> holds the
// fragment's stored bytes and no object exists; docs/format.md "v8->v9").
// It rewrites nothing: format 9 readers read format-8 versions, whose
// fragments are all objects, as they are, and a branch's next publish
// stamps 9. Like v4->v5 it has no planning code.
const migrationV8ToV9From = format.FormatV8

// migrationV7ToV8From is the source stamp of the v7->v8 step (table
// versions named per write attempt, pinned by name; docs/format.md
// "v7->v8"). It rewrites nothing: format 8 readers read counter-named
// pins and versions as they are, and a branch's next publish stamps 8.
// Its one action is on the write path: the first Write of a branch whose
// head is stamped below 8 resolves every sidecar of the incarnation first
// (writeRoundNamed, sweepBeforeNamed), so no counter-named write is in
// flight when named ones begin. Like v4->v5 it has no planning code.
const migrationV7ToV8From = format.FormatV7

// migrationV6ToV7From is the source stamp of the v6->v7 step (id pages
// and chunk payloads may be one zstd frame, adjacency pages a column file;
// docs/format.md "v6->v7"). It rewrites nothing: format 7 readers read
// plain front-coded id pages, Arrow IPC adjacency pages and JSON chunks as
// they are, and a branch's next publish stamps 7. Like v4->v5 it has no
// planning code; a v6 head is never passed to migrateStep (isV3 gates the
// fold).
const migrationV6ToV7From = format.FormatV6

// migrationV5ToV6From is the source stamp of the v5->v6 step (the id
// index's delta, docs/format.md "v5->v6"). Like v4->v5 it rewrites
// nothing: later readers read format-5 table versions as they are (no
// delta: the pages hold every id), and a branch's next publish stamps the
// current format. It has no planning code.
const migrationV5ToV6From = format.FormatV5

// migrationV4ToV5From is the source stamp of the v4->v5 step (paged
// fragment infos, docs/format.md "v4->v5"). It rewrites nothing: format 5
// readers read format-4 objects as they are (inline fragment infos), and a
// branch's next publish stamps 5. It has no planning code; a v4 head is
// never passed to migrateStep (isV3 gates the fold).
const migrationV4ToV5From = format.FormatV4

// migrateOnOpen migrates main on a read-write open.
func (g *Graph) migrateOnOpen(ctx context.Context, head loaded) error {
	if g.readOnly || !isV3(head) {
		return nil
	}
	_, err := g.migrateIncarnation(ctx, format.MainBranch, head.m.Branch.IncarnationID)
	return err
}

// migrateForWrite migrates b's incarnation before its first write when head
// (just loaded by the publisher) is a v3 manifest of it, and returns the
// branch's head after the migration. Anything else returns head unchanged.
func (g *Graph) migrateForWrite(ctx context.Context, b BranchRef, head loaded, found bool) (loaded, error) {
	if !found || !isV3(head) || head.m.Branch.IncarnationID != b.incID {
		return head, nil
	}
	return g.migrateIncarnation(ctx, b.name, b.incID)
}

// migrationRetryable reports whether the publisher may retry after a
// migration error: contention (the migration's own budget ran out) or a
// retryable store fault. Legacy-read and corruption errors are final.
func migrationRetryable(err error) bool { return errors.Is(err, ErrContention) || retryable(err) }

// migrateIncarnation brings the incarnation incID of branch name to the
// current format and returns the branch head afterwards. Each attempt:
//  1. load the newest manifest; stamp 4 (or another incarnation) means
//     already migrated: done, nothing written;
//  2. read the legacy commits (loud: only an empty prefix is "no legacy
//     data"; any other failure aborts without writing the stamp);
//  3. plan the fold (every legacy commit in id order, then the head);
//  4. publish it create-only as the next manifest: lineage, head and stamp
//     land in one write, so the stamp is never visible without them.
//
// Losing the write to a concurrent migrator re-reads (and finds stamp 4);
// exhausting the budget returns *ContentionError, as the publisher does.
func (g *Graph) migrateIncarnation(ctx context.Context, name string, incID format.ID) (loaded, error) {
	op := "migrate " + name
	var last error
	for attempt := 0; attempt < g.budget; attempt++ {
		if attempt > 0 {
			if err := g.backoff(ctx, attempt); err != nil {
				return loaded{}, fmt.Errorf("%s: %w", op, err)
			}
		}
		head, found, err := g.latest(ctx, name)
		if err != nil {
			return loaded{}, fmt.Errorf("%s: %w", op, err)
		}
		if !found {
			return loaded{}, fmt.Errorf("%s: %w", op, ErrBranchNotFound)
		}
		if head.m.Branch.IncarnationID != incID || !isV3(head) {
			return head, nil
		}
		l, ours, err := g.migrateStep(ctx, head)
		if err != nil {
			return loaded{}, fmt.Errorf("%s#%d: %w", op, head.m.Branch.Incarnation, err)
		}
		if ours {
			return l, nil
		}
		last = fmt.Errorf("%s: lost the migration write at version %d", op, head.m.Version+1)
	}
	return loaded{}, &ContentionError{Op: op, Attempts: g.budget, Last: last}
}

// migrateStep dispatches on the source stamp to the registered migration.
func (g *Graph) migrateStep(ctx context.Context, head loaded) (loaded, bool, error) {
	switch head.m.FormatStamp {
	case migrationV3ToV4From:
		return g.migrateV3ToV4(ctx, head)
	}
	return loaded{}, false, &UnsupportedFormatError{Stamp: head.m.FormatStamp, Oldest: format.OldestSupportedFormat,
		Current: format.CurrentFormat, Reason: "no registered migration from this stamp (build bug)"}
}

// migrateV3ToV4 is one attempt of the lineage fold on the v3 head manifest.
// ours=false means another writer took the next version: re-read.
func (g *Graph) migrateV3ToV4(ctx context.Context, head loaded) (loaded, bool, error) {
	name, inc := head.m.Branch.Name, head.m.Branch.Incarnation
	if err := g.fp.Hit(ctx, failpoint.MigrationLegacyRead); err != nil {
		return loaded{}, false, fmt.Errorf("read legacy lineage (format stamp not written): %w", err)
	}
	commits, err := g.readLegacyCommits(ctx, name, inc)
	if err != nil {
		return loaded{}, false, fmt.Errorf("read legacy lineage (format stamp not written): %w", err)
	}
	if plant.Enabled(plant.StampFirst) {
		return g.migrateStampFirst(ctx, head, commits)
	}
	plan, err := migrate.PlanFold(&head.m, commits)
	if err != nil {
		return loaded{}, false, err
	}
	if err := g.fp.Hit(ctx, failpoint.MigrationBeforeStamp); err != nil {
		return loaded{}, false, err
	}
	return g.publishFold(ctx, &head.m, &plan)
}

// migrateStampFirst is the planted bug "stamp-first": it makes the stamp
// visible (with only the head commit of the lineage) before the backfill,
// so a stop at MigrationBeforeStamp loses the lineage for good.
func (g *Graph) migrateStampFirst(ctx context.Context, head loaded, commits []format.LegacyCommit) (loaded, bool, error) {
	stamp, err := migrate.PlanStampOnly(&head.m, commits)
	if err != nil {
		return loaded{}, false, err
	}
	l, ours, err := g.publishFold(ctx, &head.m, &stamp)
	if err != nil || !ours {
		return l, ours, err
	}
	if err := g.fp.Hit(ctx, failpoint.MigrationBeforeStamp); err != nil {
		return loaded{}, false, err
	}
	full, err := migrate.PlanBackfillAfterStamp(&l.m, commits)
	if err != nil {
		return loaded{}, false, err
	}
	return g.publishFold(ctx, &l.m, &full)
}

// publishFold asserts the fold's invariants and writes next create-only.
// A lost write (someone else's manifest at that version) returns ours=false.
func (g *Graph) publishFold(ctx context.Context, prev, next *format.Manifest) (loaded, bool, error) {
	if err := migrate.CheckFold(prev, next); err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: migration of %s#%d would write an invalid fold: %v",
			prev.Branch.Name, prev.Branch.Incarnation, err))
	}
	tok, err := g.token()
	if err != nil {
		return loaded{}, false, err
	}
	key := g.keys.Manifest(next.Branch.Name, next.Branch.Incarnation, next.Version)
	ours, err := g.putCreateOnly(ctx, "migrate "+next.Branch.Name, key, mustEncodeManifest(next, tok))
	if errors.Is(err, objstore.ErrPreconditionFailed) {
		return loaded{}, false, nil
	}
	if err != nil || !ours {
		return loaded{}, false, err
	}
	l := loaded{m: *next, token: tok}
	g.manifests.put(key, l)
	return l, true, nil
}
