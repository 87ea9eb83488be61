// Package plant holds the switches of deliberately planted kernel bugs, which
// prove that the simulator's checkers can fail.
//
// Kernel code guards each planted bug with
//
//	if plant.Enabled(plant.ReparentOnce) { ... buggy path ... }
//
// In a normal build Enabled is a constant false that the compiler inlines, so
// the buggy path is dead code and costs nothing. Only a build with the tag
// simplant (go run -tags simplant ./cmd/simrun -plant NAME) compiles a real
// switch, which simrun sets once before any run starts.
package plant

import "sort"

// The planted bugs. Each names one kernel defect the simulator must catch.
const (
	// ReparentOnce: publish resolves the parent once, before the retry
	// loop, instead of from the manifest each attempt re-loaded.
	ReparentOnce = "reparent-once"
	// IgnoreLostAck: publish treats an ambiguous write as failed instead of
	// reading back whether it landed.
	IgnoreLostAck = "ignore-lost-ack"
	// StampFirst: the v3->v4 migration writes the format stamp before the
	// lineage backfill.
	StampFirst = "stamp-first"
	// DoubleAudit: recovery writes its audit record without checking for an
	// existing one.
	DoubleAudit = "double-audit"
	// PrivatePlan: each recoverer of an abandoned write makes and carries
	// out its own roll-back plan instead of following the stored one, so
	// racing recoverers publish several recovery commits for one write.
	PrivatePlan = "private-plan"
	// StaleCard: cardinality is counted on the pinned base instead of the
	// table's live HEAD.
	StaleCard = "stale-card"
	// TrustCommitIndex: a commit index (a lineage aid) is used without
	// checking that the manifest it names holds its commit, so a stale
	// index from a publish attempt that lost its race misplaces the commit.
	TrustCommitIndex = "trust-commit-index"
	// ReachDropsMerge: a merge commit's reach leaves out its merged
	// parent's ancestry, so a merge base computed from reaches misses
	// the ancestors gained by merging.
	ReachDropsMerge = "reach-drops-merge"
	// ReachDropsBase: a commit index's compaction drops its explicit
	// entries without the fold of the previous manifest that covers them,
	// so a merge base computed from reaches can miss the best common
	// ancestor and answer an older one.
	ReachDropsBase = "reach-drops-base"
	// SkipForkMarker: a branch create writes no fork marker, so a delete
	// of its source, trusting the complete fork index, misses it as a
	// dependent.
	SkipForkMarker = "skip-fork-marker"
	// FeedSkip: the change feed's cursor advances past a commit that a page
	// delivered only partly, so a consumer that resumes from it never sees
	// the rest of that commit.
	FeedSkip = "feed-skip"
	// TwoWayMerge: the data merge compares the source with the target and
	// ignores the merge base, so every difference is taken from the source:
	// rows the target deleted (or changed) since the base come back.
	TwoWayMerge = "two-way-merge"
	// AdjShortIn: In through the adjacency index drops the last edge of a
	// node with two or more in-edges.
	AdjShortIn = "adj-short-in"
	// AdjDeltaSkip: Out and In through the adjacency index ignore the
	// table version's adjacency delta (format 13), so an edge a small
	// commit inserted is missing from every index lookup (and from @card
	// counts) until a later commit folds the delta into the pages.
	AdjDeltaSkip = "adj-delta-skip"
	// CompactDropsWrite: a compaction rebuilds on the version it first
	// saw instead of the pinned one, so when a data write publishes first
	// the compaction publishes the old rows over it.
	CompactDropsWrite = "compact-drops-write"
	// UpsertKeepsRow: an upsert of an existing id keeps the stored row
	// instead of replacing it, in the fragments and (for an edge) the
	// adjacency index alike, so every read agrees with every other and
	// only a comparison with what was written can tell.
	UpsertKeepsRow = "upsert-keeps-row"
	// GCNoGrace: garbage collection ignores the grace period, so it
	// deletes what a writer in another process staged and has not yet
	// published.
	GCNoGrace = "gc-no-grace"
	// GCBranchLocal: garbage collection computes reachability per branch
	// (a manifest keeps only the table versions on its own fork), so a
	// version another branch inherited is deleted.
	GCBranchLocal = "gc-branch-local"
	// GCNoMergeBase: garbage collection skips rule 3b (merge bases of live
	// branches are roots), so a branch merged from main, then left behind
	// while main moves on past retention, loses its merge base and the
	// next merge fails with ErrReclaimed.
	GCNoMergeBase = "gc-no-merge-base"
	// GCNoReachRebuild: a collection that finds a reach's commit index
	// missing, torn or stale (a writer crashed between its publish and
	// its index write, or an OS crash tore an unsynced one) takes the
	// reach as unknown instead of rebuilding it from the manifests, so it
	// deletes that head's merge bases and a later merge fails with
	// ErrReclaimed.
	GCNoReachRebuild = "gc-no-reach-rebuild"
	// SyncRetryPublish: a publish whose sync of its deferred objects
	// failed (objstore.ErrSyncFailed, an fsync's EIO) is retried like any
	// transient failure, so on a store that lets a second sync succeed
	// (Linux's fsync after a failed writeback) the commit is acknowledged
	// with a table version a power loss then takes.
	SyncRetryPublish = "sync-retry-publish"
	// SkewUnchecked: a publish skips the clock-skew check (docs/gc.md §4),
	// so a writer whose clock runs behind the branch head's commit time by
	// more than the skew margin publishes, and its staged fragments may
	// already look abandoned to a collector.
	SkewUnchecked = "skew-unchecked"
	// TombstoneReuse: garbage collection deletes a dead name's tombstone
	// without raising the incarnation floor first, so the name re-created
	// takes incarnation 1 again and is confused with the old incarnation
	// (its keys, reaches naming it, caches).
	TombstoneReuse = "tombstone-reuse"
	// PinLeaseReadOnce: garbage collection reads the leases once, before it
	// decides, and skips the re-list after writing its plan, so a Pin that
	// lands in between reports success and its snapshot is collected.
	PinLeaseReadOnce = "pin-lease-read-once"
	// StaleViewCommit: a publish built on the handle's view of the branch
	// whose create-only manifest write fails (the slot is taken: the view
	// was stale) does not notice it: it writes the same manifest, built on
	// the stale head, at the next free slot instead of loading the head
	// and re-parenting, so it drops the commits in between from the chain.
	StaleViewCommit = "stale-view-commit"
	// RidingDropped: a publish carries a table's pin over from the head
	// without the version's riding payload (format 11), so the manifest
	// names a version that has no object and a reader of the table finds
	// it reclaimed.
	RidingDropped = "riding-dropped"
	// RidingUnchecked: a publish skips the riding budget's re-check on
	// the head it builds on (lineage.RidingOverBudget), so a write that
	// planned its riding on an older head, while a racing write spent the
	// room, lands a manifest whose riding bytes exceed the writer's budget
	// (kernel.Options.RidingBudget) instead of redoing its round with
	// objects.
	RidingUnchecked = "riding-unchecked"
	// GCSkipsRiding: garbage collection marks the table versions a root
	// manifest pins but not what a version riding it (format 11, no
	// object to list) names, so it deletes that version's fragments and
	// index objects while the manifest is kept.
	GCSkipsRiding = "gc-skips-riding"
	// StaleSchemaValidate: neither a transaction's prepare nor its publish
	// requires the branch's schema to be the one the transaction began
	// under, so a write validated against the old schema lands after a
	// schema change.
	StaleSchemaValidate = "stale-schema-validate"
	// RenameAsDrop: a property rename is planned as a drop plus an add, so
	// the renamed property reads as null (its data is lost).
	RenameAsDrop = "rename-as-drop"
	// CardTightenUnchecked: a schema change that tightens an edge type's
	// @card bounds skips the check against the live edges.
	CardTightenUnchecked = "card-tighten-unchecked"
	// GroupSharedFailure: group commit does not isolate a member's own
	// failure: a member whose strict expectation failed (a table moved
	// since its Begin) is told so and committed with the group anyway, and
	// a member whose validation fails makes the whole group fail with its
	// error instead of being set aside alone.
	GroupSharedFailure = "group-shared-failure"
	// PageSkip: a point lookup in a table version with paged fragment
	// infos skips the last fragment chunk whose id range holds the id, so
	// rows listed there read as absent.
	PageSkip = "page-skip"
	// EmbedCarryDrop: a table version that keeps a fragment embedded in
	// the version before it (format 9) lists the fragment but drops its
	// embedded bytes, as if only new fragments were embedded, so the
	// fragment has neither bytes nor an object.
	EmbedCarryDrop = "embed-carry-drop"
	// PublishSkipsDeferred: a publish's manifest write does not wait for
	// the objects its write deferred (fragments, table versions: the
	// manifest's After), so a power loss after the publish (fs; the
	// simulator's oscrash profile) keeps the manifest and loses or tears
	// what it pins.
	PublishSkipsDeferred = "publish-skips-deferred"
	// GCMarkerNoLookup: the name-marker sweep deletes the marker of a name
	// it listed no manifest of without looking the name up first
	// (docs/gc.md rule 10), so a branch created after the collection
	// listed the manifests loses its marker and ListBranches misses it,
	// its create acknowledged, until the re-check puts the marker back.
	GCMarkerNoLookup = "gc-marker-no-lookup"
	// ReadAheadTrustsIndex: the merge-base search's read-ahead
	// (kernel/history.go readAhead) caches a commit index it fetched
	// without checking that the manifest it names holds its commit, so a
	// stale index (a publish attempt that lost its slot) gives the commit
	// another commit's place and reach.
	ReadAheadTrustsIndex = "read-ahead-trusts-index"
	// FragEditDropsSubtree: a commit's edit of a paged head's fragment
	// tree (format 10, kernel/data/fragtree.go rewriteFragRefs) takes a
	// subtree it rewrote into one ref of the same level, fragments, rows
	// and id envelope for the same subtree, as if its reuse check
	// compared summaries instead of names: it drops the rewritten subtree
	// and keeps the head's by ref. An update in place (same ids, same
	// rows) is lost while every count and envelope a reader checks still
	// agrees: a point read answers the old row. Only embedded fragments
	// give it away to a structural check: a whole-list read refuses the
	// version when the lost rewrite was embedded (it embeds a fragment it
	// does not list), and an old fragment that was embedded is left with
	// neither bytes nor object. (A kept subtree dropped outright changes
	// the rows: fragContentTree's count check panics before any reader.)
	FragEditDropsSubtree = "frag-edit-drops-subtree"
)

// PackageOnly lists, sorted, the planted bugs caught by package tests
// (built with -tags simplant) that no simulator workload lists yet, so
// All (which the simulator's plant test walks) leaves them out:
// read-ahead-trusts-index (kernel TestPlantedReadAheadTrustsAStaleIndex;
// no workload leaves a stale index of a commit a merge-base search reads
// ahead); gc-no-reach-rebuild (maintain
// TestPlantedNoReachRebuildLosesMergeBases; no workload loses the index
// of a head a collection then reads: 0 of 100 seeds of maint and of
// maint-oscrash catch it); sync-retry-publish (kernel
// TestPlantedSyncRetryPublishLosesACommit; the simulator's stores
// remember a failed sync and refuse it again, as fs does, so no workload
// lets the retry succeed).
func PackageOnly() []string {
	names := []string{ReadAheadTrustsIndex, GCNoReachRebuild, SyncRetryPublish}
	sort.Strings(names)
	return names
}

// All lists every planted bug, sorted.
func All() []string {
	names := []string{ReparentOnce, IgnoreLostAck, StampFirst, DoubleAudit, PrivatePlan, StaleCard, TrustCommitIndex, ReachDropsMerge, ReachDropsBase, SkipForkMarker, FeedSkip, TwoWayMerge, AdjShortIn, CompactDropsWrite, GCNoGrace, GCBranchLocal, GCNoMergeBase, UpsertKeepsRow, SkewUnchecked, TombstoneReuse, PinLeaseReadOnce, StaleViewCommit, PageSkip, StaleSchemaValidate, RenameAsDrop, CardTightenUnchecked, GroupSharedFailure, EmbedCarryDrop, PublishSkipsDeferred, GCMarkerNoLookup, FragEditDropsSubtree, RidingDropped, GCSkipsRiding, RidingUnchecked, AdjDeltaSkip}
	sort.Strings(names)
	return names
}

// Known reports whether name is a planted bug.
func Known(name string) bool {
	for _, n := range append(All(), PackageOnly()...) {
		if n == name {
			return true
		}
	}
	return false
}
