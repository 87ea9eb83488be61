package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// TableUpdate moves one table's pin to a committed version (see
// CommitTableVersion): Table, Fork, Version, Rows.
type TableUpdate = lineage.Update

// Expectation requires Table to be pinned at Version (0: unpinned) in the
// manifest a publish builds on.
type Expectation = lineage.Expectation

// CommitKind says how a commit came to be.
type CommitKind = format.CommitKind

// LineageIntent is the lineage a publish records: who, why, and for a merge
// the merged parent (the first parent is always the branch head the publish
// lands on, resolved per attempt).
type LineageIntent struct {
	Actor        string
	Message      string
	MergedParent *CommitID
	// ExpectHead, if set, pins the first parent: every attempt requires the
	// branch head it loads to be this commit, else the publish (or Write)
	// fails with *HeadMovedError and writes no manifest. A caller whose
	// result is a function of the whole head (a merge) sets it, so the
	// result is never published on a head it was not computed against.
	ExpectHead *CommitID
	// ReadSince, if set, is when the caller read what the commit refers to
	// (a merge: its snapshots and the merged parent). Every attempt later
	// than ReadSince + Options.Grace refuses with *GraceExpiredError before
	// it writes anything, as a Write staged that long ago does: a collector
	// may have deleted what was read since (docs/gc.md §3).
	ReadSince time.Time
	// ExpectSchema, if set, is the schema (sha256 hex of its contract) the
	// caller validated its content against: every attempt requires the
	// branch head to name it, else the publish (or Write) fails with
	// *SchemaChangedError and writes nothing. The data plane's
	// transactions and merges set it.
	ExpectSchema string
	// NewSchema, if set, is the schema the new manifest names (a schema
	// change: stored first with PutSchema). It requires ExpectSchema, the
	// schema the change was planned against.
	NewSchema string
}

// Commit is one commit of the graph, projected from the manifest that
// introduced it.
type Commit struct {
	ID              CommitID
	Parents         []CommitID // first parent = previous head; second = merged parent
	Kind            CommitKind
	Actor           string
	Message         string
	Time            time.Time // from Env.Clock at mint time, UTC
	Branch          string    // where the commit was published
	Incarnation     uint64
	ManifestVersion uint64
}

func commitOf(l loaded) Commit {
	c := l.m.Commit
	if c == nil {
		panic("kernel: commitOf: manifest has no commit")
	}
	return Commit{
		ID: c.ID, Parents: append([]CommitID(nil), c.Parents...), Kind: c.Kind, Actor: c.Actor, Message: c.Message,
		Time: time.Unix(0, c.TimeUnixNano).UTC(), Branch: l.m.Branch.Name, Incarnation: l.m.Branch.Incarnation,
		ManifestVersion: l.m.Version,
	}
}

// publishReq is one publish: everything minted once and kept stable across
// attempts.
type publishReq struct {
	branch    BranchRef
	updates   []lineage.Update
	exp       []lineage.Expectation
	commit    format.Commit // Parents resolved per attempt
	merged    *format.ID
	head      *format.ID // LineageIntent.ExpectHead
	tombstone bool
	token     format.Token
	// slot, if set, is the one manifest version this publish may write
	// (a roll-back plan's): a head at any other version is errSlotTaken,
	// never a re-parent.
	slot uint64
	// staged, if set, is when the write began staging: an attempt later
	// than staged + the grace period refuses to write (docs/gc.md).
	staged time.Time
	// expectSchema and newSchema: LineageIntent.ExpectSchema, NewSchema.
	expectSchema, newSchema string
	// deferred are keys of objects the updates name whose durability was
	// deferred (objstore.PutDeferredIntact): the manifest write makes them
	// durable first (objstore.PutAfterDeferred), so no durable manifest
	// ever names a version a crash can lose.
	deferred []string
	// indexSent, shared by every copy of the request (a Write publishes
	// one request per round), is set once an attempt has sent the new
	// commit's index (publishWrite): from then on the key may hold an
	// earlier attempt's index, so the index is overwritten, never
	// created. nil (a request not built by newPublishReq) counts as set.
	indexSent *bool
	// ridingBudget is the manifest riding bytes the request may leave
	// when an update rides (the handle's Options.RidingBudget; 0, a request
	// not built by newPublishReq, means format.MaxRidingManifestBytes).
	ridingBudget int

	onceParents []format.ID // planted bug reparent-once only: the parents of the first attempt
}

// Publish is the one door through which a branch changes: a single
// create-only write of manifest version head+1 carrying the table-pin
// updates and the new commit, whose parents are resolved from the head the
// attempt loaded. The commit id and writer token are minted once and kept
// across attempts; an ambiguous write is resolved by reading back. The
// expectations are checked against each loaded head (*VersionMismatchError,
// not retried). Losing the race retries with jittered backoff; exhausting
// the budget returns *ContentionError. An uncontended publish costs one
// LIST, two GETs (the head manifest and its commit index, often cached)
// and two PUTs (the manifest and the new commit's index), whatever the
// history depth; none of the reads on a handle whose view is current.
// The commit index goes out in one batch with the manifest when the
// handle's caches hold its inputs (publishWrite), else after it
// (indexAfterPublish): it never adds a sequential request in front of the
// publish. A crash or failed write that skips it leaves a published
// commit without an index, which the next handle that needs it rebuilds
// from the manifests (repairIndex).
// Updates must name versions committed with CommitTableVersion (or pins of
// another branch being adopted: build the update with UpdateOf, which
// carries a riding version's payload); Publish does not re-read them,
// but an update naming a version per attempt without a payload must name
// an object: Publish checks that one exists (one HEAD request each) and
// refuses a version that rides (format 11) with ErrInvalidArgument, as its
// manifest would otherwise pin a version nobody can read. Adopted riding
// versions that do not fit the handle's riding budget on the head
// (Options.RidingBudget, the format's maxima by default) are refused
// with ErrInvalidArgument too: Publish cannot write them as objects.
func (g *Graph) Publish(ctx context.Context, b BranchRef, updates []TableUpdate, intent LineageIntent, exp []Expectation) (Commit, error) {
	if err := g.checkWritable("publish"); err != nil {
		return Commit{}, err
	}
	ctx = g.withOpBudget(ctx, "publish")
	if err := g.checkAdopted(ctx, updates); err != nil {
		return Commit{}, fmt.Errorf("publish on %s: %w", b, err)
	}
	req, err := g.newPublishReq(ctx, b, updates, intent, exp)
	if err != nil {
		return Commit{}, fmt.Errorf("publish on %s: %w", b, err)
	}
	return g.publish(ctx, req)
}

// UpdateOf returns the update that pins table version pin (another
// branch's, being adopted), with its riding payload if it rides.
func UpdateOf(pin TablePin) TableUpdate {
	return TableUpdate{Table: pin.Name, Fork: pin.Fork, Version: pin.Version, Rows: pin.Rows, Attempt: pin.Attempt, Riding: pin.Riding}
}

// checkAdopted refuses an update naming a version per attempt without a
// riding payload when no object holds it: the version rides some other
// manifest and the caller dropped its payload (UpdateOf keeps it).
func (g *Graph) checkAdopted(ctx context.Context, updates []TableUpdate) error {
	for _, u := range updates {
		if u.Attempt == (format.ID{}) || u.Riding != "" {
			continue
		}
		key := g.keys.TableAttempt(u.Table, u.Fork, u.Attempt)
		err := g.withRetry(ctx, "check adopted version", func() error { _, err := g.store.Head(ctx, key); return err })
		if errors.Is(err, objstore.ErrNotFound) {
			return fmt.Errorf("update of %q names %s, which has no object (a version that rides its manifest is adopted with its payload: UpdateOf): %w", u.Table, key, ErrInvalidArgument)
		}
		if err != nil {
			return fmt.Errorf("check adopted version %s: %w", key, err)
		}
	}
	return nil
}

func (g *Graph) newPublishReq(ctx context.Context, b BranchRef, updates []TableUpdate, intent LineageIntent, exp []Expectation) (publishReq, error) {
	if err := format.ValidateText(intent.Actor, intent.Message); err != nil {
		return publishReq{}, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	if err := lineage.ValidateUpdates(updates); err != nil {
		return publishReq{}, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	if err := checkSchemaIntent(intent); err != nil {
		return publishReq{}, err
	}
	kind := format.KindCommit
	if intent.MergedParent != nil {
		kind = format.KindMerge
	}
	c, err := g.newCommit(kind, intent.Actor, intent.Message)
	if err != nil {
		return publishReq{}, err
	}
	if intent.MergedParent != nil {
		at, err := g.locate(ctx, *intent.MergedParent)
		if err != nil {
			return publishReq{}, fmt.Errorf("merged parent: %w", err)
		}
		c.MergedFrom = &at
	}
	tok, err := g.token()
	if err != nil {
		return publishReq{}, err
	}
	return publishReq{branch: b, updates: append([]lineage.Update(nil), updates...), exp: append([]lineage.Expectation(nil), exp...),
		commit: c, merged: intent.MergedParent, head: intent.ExpectHead, token: tok, staged: intent.ReadSince,
		expectSchema: intent.ExpectSchema, newSchema: intent.NewSchema, indexSent: new(bool), ridingBudget: g.riding.ManifestBytes}, nil
}

// publish runs the bounded attempt loop of one request. Every exit with an
// error while a manifest write of this request is still unresolved reports
// ambiguity (exitErr): a definite error there would invite a caller to
// retry a commit that may have landed.
func (g *Graph) publish(ctx context.Context, req publishReq) (Commit, error) {
	var pending []uint64 // versions written with an ambiguous outcome
	var last error
	for attempt := 0; attempt < g.budget; attempt++ {
		if attempt > 0 {
			if err := g.backoff(ctx, attempt); err != nil {
				return Commit{}, exitErr(&req, pending, err)
			}
		}
		done, c, err := g.publishAttempt(ctx, &req, &pending)
		if done {
			if err != nil {
				return Commit{}, exitErr(&req, pending, err)
			}
			return c, nil
		}
		last = err
	}
	if len(pending) > 0 {
		return g.resolveAfterBudget(ctx, &req, pending, last)
	}
	return Commit{}, &ContentionError{Op: "publish on " + req.branch.String(), Attempts: g.budget, CommitID: req.commit.ID, Last: last}
}

// exitErr wraps the error a publish ends with. With writes still pending
// (written, outcome unknown, not settled by a read-back) the error is
// marked ambiguous whatever its cause: a read failure, a cancelled context,
// a failpoint, a migration error or a definite refusal computed on a head
// that does not yet show the pending write.
func exitErr(req *publishReq, pending []uint64, err error) error {
	err = fmt.Errorf("publish on %s: %w", req.branch, err)
	if len(pending) == 0 || errors.Is(err, objstore.ErrAmbiguous) {
		return err
	}
	return markAmbiguous(err, req.commit.ID, nil)
}

// publishAttempt is one attempt. done=false with err means "retry".
//
// An attempt with nothing pending builds on the handle's view of the
// branch when it has one (kernel/view.go): no head discovery. A stale view
// is found out by the create-only manifest write failing (the slot is
// taken), which drops the view, so the next attempt loads the head; a
// refusal computed on the view is never returned as such, it is checked
// again on the loaded head in the same attempt.
func (g *Graph) publishAttempt(ctx context.Context, req *publishReq, pending *[]uint64) (done bool, c Commit, err error) {
	if req.slot == 0 && len(*pending) == 0 {
		if l, ok := g.views.get(req.branch.incID); ok {
			done, c, err = g.publishOn(ctx, req, pending, l, true, true)
			if !errors.Is(err, errStaleView) {
				return done, c, err
			}
		}
	}
	head, found, err := g.latest(ctx, req.branch.name)
	if err != nil {
		return final(err), Commit{}, err
	}
	return g.publishOn(ctx, req, pending, head, found, false)
}

// errStaleView is publishOn's answer when a refusal was computed on the
// handle's view: the attempt goes on with a loaded head.
var errStaleView = errors.New("kernel: refusal computed on the handle's view")

// publishOn is one attempt on head (fromView: the handle's view, not
// loaded by this attempt).
func (g *Graph) publishOn(ctx context.Context, req *publishReq, pending *[]uint64, head loaded, found, fromView bool) (done bool, c Commit, err error) {
	refused := func(err error) (bool, Commit, error) {
		if fromView {
			g.views.drop(req.branch.incID, head.m.Version)
			return false, Commit{}, errStaleView
		}
		return true, Commit{}, err
	}
	// The first write on a branch still in an older format migrates it
	// (kernel/migration.go); its exhausted budget is retried like a lost race.
	if head, err = g.migrateForWrite(ctx, req.branch, head, found); err != nil {
		return !migrationRetryable(err), Commit{}, err
	}
	if len(*pending) > 0 {
		l, landed, err := g.resolvePending(ctx, req, head, found, pending)
		if err != nil {
			return final(err), Commit{}, err
		}
		if landed {
			g.indexAfterPublish(ctx, loaded{}, l, true)
			return true, commitOf(l), nil
		}
	}
	if err := checkLive(req.branch, head, found); err != nil {
		return refused(err)
	}
	if req.slot != 0 && head.m.Version+1 != req.slot {
		return true, Commit{}, fmt.Errorf("%w: head is v%d, the slot v%d", errSlotTaken, head.m.Version, req.slot)
	}
	next, err := buildNext(&head.m, req)
	if err != nil {
		return refused(err)
	}
	if err := g.fp.Hit(ctx, failpoint.PublishBeforeWrite); err != nil {
		return true, Commit{}, err
	}
	if err := g.checkGrace(req); err != nil {
		return true, Commit{}, err
	}
	// After buildNext: the expectations held, so nothing of this write was
	// published (by a recoverer either) and the refusal is definite.
	if err := g.checkSkew(req, &head.m); err != nil {
		return refused(err)
	}
	key := g.keys.Manifest(req.branch.name, req.branch.inc, next.Version)
	index, err := g.publishWrite(ctx, req, key, head, &next)
	switch {
	case err == nil:
		l := loaded{m: next, token: req.token}
		g.manifests.put(key, l)
		g.noteCommit(l)
		g.views.note(l)
		g.indexRodePublish(ctx, head, l, index)
		return true, commitOf(l), nil
	case objstore.IsAmbiguous(err):
		if plant.Enabled(plant.IgnoreLostAck) { // planted bug: the ambiguous write is taken for a failed one, never read back
			return true, Commit{}, &ContentionError{Op: "publish on " + req.branch.String(), Attempts: 1,
				CommitID: req.commit.ID, Last: fmt.Errorf("manifest write failed: %v", err)}
		}
		*pending = append(*pending, next.Version)
		return false, Commit{}, err
	case errors.Is(err, objstore.ErrPreconditionFailed) && fromView && plant.Enabled(plant.StaleViewCommit):
		return g.plantStaleViewCommit(ctx, req, next)
	case errors.Is(err, objstore.ErrPreconditionFailed):
		// The slot is taken: the head moved past the one this attempt
		// built on. The view (if it was one) is stale; the next attempt
		// loads the head and re-parents.
		g.views.drop(req.branch.incID, head.m.Version)
		return false, Commit{}, err
	case errors.Is(err, objstore.ErrSyncFailed) && !plant.Enabled(plant.SyncRetryPublish): // planted bug: retried like any transient failure
		// The sync of the objects this write deferred failed (an fsync's
		// EIO), before the manifest was placed. Their bytes may never
		// reach the disk, and syncing them again cannot show it (Linux
		// reports a writeback error once): publishing them would risk
		// an acknowledged commit a power loss takes. The write ends here,
		// retryable for its caller, whose new attempt writes new objects.
		return true, Commit{}, err
	case retryable(err):
		return false, Commit{}, err
	}
	return true, Commit{}, err
}

// riddenIndex is what publishWrite did with the new commit's index.
type riddenIndex struct {
	x       format.CommitIndex
	built   bool  // built from the handle's caches and sent with the manifest
	written error // its write's outcome (built only)
	earlier bool  // an earlier attempt of the request sent an index (its key may hold it)
}

// publishWrite is the attempt's one conditional write: the manifest next
// at key, create-only, durable only after the objects in req.deferred
// are. When the new commit's index can be built from the handle's caches
// with no request (commitIndexCached) it goes out in the same batch
// (objstore.PutMany), so it adds no sequential request to the commit
// (issue #32: one round on S3 for both). The index follows the publish:
// it is written wholly deferred (objstore.DeferAll: on fs no lock, no
// fsync) and, but for the index of every indexSyncEvery-th commit of the
// branch (indexDurable: the manifest names it in After and syncs it
// first, which bounds the run of commits an OS crash can leave without an
// index, however many writers take turns),
// nothing syncs it — the manifest does not wait for it, so on fs a
// commit fsyncs its manifest alone when its versions ride it (format 11),
// its table version objects and its manifest otherwise (session 22:
// BenchmarkCommitFloor/fs 2.7-2.8x one PUT with a version object,
// against 3.0-3.2x with the index riding the manifest's round). An index is an aid, never authoritative: an OS
// crash may lose or tear the index of any commit since the OS last wrote
// its dirty pages; a reader then walks the manifests and a handle
// rebuilds it (repairIndex: a missing, torn, stale or incomplete index
// alike), Maintain rebuilds every live head's (RepairHeadIndex), and a
// collection rebuilds any it needs and syncs every index it keeps merge
// bases by before it deletes anything (maintain: storeRebuilt,
// syncIndexes), so no merge base is lost with an index; a rebuilt index
// is never written over a usable one (writeCommitIndex, storeRebuilt).
// The request's first index write is create-only; a later attempt's may
// find an earlier attempt's index under the key and overwrites it
// (Unconditional, objstore.DeferName: a handle or a collection rebuilds
// a commit's index only from a manifest showing the commit, and before
// this attempt's lands none does, but for an earlier attempt's ambiguous
// write, which the publish reads back first, resolvePending). An index
// written after the manifest (a failed or ambiguous ride, or none) goes
// through writeCommitIndex, which never overwrites a usable one. A
// failed index write never fails the manifest.
//
// The index is listed first: on a store without the batch capability
// (the simulator's) it is written before the manifest, the order a
// concurrent batch may also take, so a crash between them leaves an
// index naming a slot its commit never took, which verifiedIndex finds
// stale and the collector deletes once its commit settles unreached
// (gc.KeepCommitIndex). An index write never decides the publish: only
// the manifest's result is returned.
func (g *Graph) publishWrite(ctx context.Context, req *publishReq, key string, head loaded, next *format.Manifest) (riddenIndex, error) {
	deferred := req.deferred
	if plant.Enabled(plant.PublishSkipsDeferred) { // planted bug: the manifest is durable before what it pins
		deferred = nil
	}
	manifest := objstore.PutRequest{Key: key, Data: mustEncodeManifest(next, req.token), Cond: objstore.CreateOnly, After: deferred}
	ri := riddenIndex{earlier: req.indexSent == nil || *req.indexSent}
	if next.Commit != nil && next.Commit.ID == next.Head {
		ri.x, ri.built = g.commitIndexCached(head, next)
	}
	if !ri.built {
		return ri, objstore.PutOne(ctx, g.store, manifest).Err
	}
	data, err := g.encodeCommitIndex(&ri.x)
	if err != nil {
		return riddenIndex{}, err
	}
	index := objstore.PutRequest{Key: g.keys.CommitIndex(ri.x.ID), Data: data, Cond: objstore.CreateOnly, Durability: objstore.DeferAll}
	if req.indexSent == nil || *req.indexSent {
		index.Cond, index.Durability = objstore.Unconditional, objstore.DeferName
	} else {
		*req.indexSent = true
	}
	if indexDurable(ri.x.At) { // every indexSyncEvery-th commit's index rides the manifest's sync
		manifest.After = append(slices.Clip(deferred), index.Key)
	}
	res := objstore.PutMany(ctx, g.store, []objstore.PutRequest{index, manifest})
	ri.written = res[0].Err
	return ri, res[1].Err
}

// indexRodePublish finishes the index of l's commit, just published on
// head: cached when its write rode the manifest and succeeded, else
// written now (storeIndex: the write failed or its outcome is unknown;
// indexAfterPublish: it could not be built from the caches).
func (g *Graph) indexRodePublish(ctx context.Context, head, l loaded, ri riddenIndex) {
	switch {
	case ri.built && ri.written == nil:
		g.indexes.put(ri.x.ID.String(), ri.x)
	case ri.built:
		g.storeIndex(ctx, ri.x, true) // its write failed or its outcome is unknown
	default:
		g.indexAfterPublish(ctx, head, l, ri.earlier)
	}
}

// checkGrace enforces the grace rule right before a manifest write: a
// write staged longer ago than the grace period must not publish, since a
// collector may have deleted what it staged first (docs/gc.md).
func (g *Graph) checkGrace(req *publishReq) error {
	if req.staged.IsZero() {
		return nil
	}
	if now := g.clock.Now(); now.Sub(req.staged) >= g.grace {
		return &GraceExpiredError{Staged: req.staged, Now: now, Grace: g.grace}
	}
	return nil
}

// final reports whether a read error ends the publish: anything but a
// retryable store fault (a nested retry loop that already spent its budget
// is final too).
func final(err error) bool { return errors.Is(err, ErrContention) || !retryable(err) }

// buildNext checks the expectations against head, resolves the parents from
// head and builds the successor manifest, asserting every invariant.
func buildNext(head *format.Manifest, req *publishReq) (format.Manifest, error) {
	if mm, ok := lineage.CheckExpectations(head, req.exp); !ok {
		return format.Manifest{}, &VersionMismatchError{Table: mm.Table, Expected: mm.Expected, Actual: mm.Actual}
	}
	if req.head != nil && head.Head != *req.head {
		return format.Manifest{}, &HeadMovedError{Branch: head.Branch.Name, Expected: *req.head, Actual: head.Head}
	}
	if err := checkSchema(req, head); err != nil {
		return format.Manifest{}, err
	}
	parents, err := lineage.ResolveParents(head, req.merged)
	if err != nil {
		return format.Manifest{}, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	c := req.commit
	c.Parents = parents
	next, mm, err := lineage.NextManifest(head, lineage.Proposal{Updates: req.updates, Commit: c, Tombstone: req.tombstone, Schema: req.newSchema})
	if err != nil {
		return format.Manifest{}, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	if mm != nil {
		return format.Manifest{}, &VersionMismatchError{Table: mm.Table, Expected: mm.Expected, Actual: mm.Actual}
	}
	if lineage.RidingOverBudget(&next, req.updates, req.ridingBudget) && !plant.Enabled(plant.RidingUnchecked) {
		return format.Manifest{}, fmt.Errorf("%w: %d riding bytes on %s v%d", errRidingOverBudget, format.RidingBytes(next.Tables), head.Branch.Name, head.Version)
	}
	if plant.Enabled(plant.RidingDropped) {
		plantRidingDropped(req, &next)
	}
	if err := lineage.CheckSuccessor(head, &next); err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: publish would write an invalid successor of %s v%d: %v",
			head.Branch.Name, head.Version, err))
	}
	if plant.Enabled(plant.ReparentOnce) {
		plantReparentOnce(req, &next)
	}
	return next, nil
}

// errRidingOverBudget is buildNext's refusal of a write whose riding
// versions (format 11) no longer fit the budget on the head it builds on
// (lineage.RidingOverBudget): its round is done again with every version
// an object (writeRoundNamed). A Publish of adopted riding versions
// (UpdateOf) cannot do that, so it returns it: it matches
// ErrInvalidArgument (definite, nothing published).
var errRidingOverBudget = fmt.Errorf("%w: the riding versions exceed the manifest's riding budget", ErrInvalidArgument)

// plantRidingDropped is the planted bug riding-dropped (internal/plant;
// dead code unless built with -tags simplant and switched on): a pin the
// write carries over from the head loses its riding payload, so the
// manifest names a version that has no object (a reader finds it
// reclaimed).
func plantRidingDropped(req *publishReq, next *format.Manifest) {
	written := map[string]bool{}
	for _, u := range req.updates {
		written[u.Table] = true
	}
	for i := range next.Tables {
		if !written[next.Tables[i].Name] {
			next.Tables[i].Riding = ""
		}
	}
}

// plantReparentOnce is the planted bug reparent-once (internal/plant; dead
// code unless built with -tags simplant and switched on): the parents the
// first attempt resolved are reused by every later attempt of the same
// publish, as if resolved once before the retry loop, so a retry after a
// lost race forks the chain. It runs after the successor check, which
// would otherwise refuse the manifest.
func plantReparentOnce(req *publishReq, next *format.Manifest) {
	if req.onceParents == nil {
		req.onceParents = append([]format.ID(nil), next.Commit.Parents...)
		return
	}
	c := *next.Commit
	c.Parents = append([]format.ID(nil), req.onceParents...)
	next.Commit = &c
}

// resolvePending answers "did one of my ambiguous writes land?" by reading
// back the manifests at the versions written, comparing writer token and
// commit id. Versions beyond the loaded head stay pending (the write may
// still land); versions that hold someone else's manifest are dropped.
func (g *Graph) resolvePending(ctx context.Context, req *publishReq, head loaded, found bool, pending *[]uint64) (loaded, bool, error) {
	sameInc := found && head.m.Branch.IncarnationID == req.branch.incID
	var keep []uint64
	for _, v := range *pending {
		if sameInc && v > head.m.Version {
			keep = append(keep, v)
			continue
		}
		l := head
		if !sameInc || v != head.m.Version {
			var err error
			l, err = g.manifestAt(ctx, format.ManifestRef{Branch: req.branch.name, Incarnation: req.branch.inc, Version: v})
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return loaded{}, false, err
			}
		}
		if l.token == req.token && l.m.Commit != nil && l.m.Commit.ID == req.commit.ID {
			return l, true, nil
		}
	}
	*pending = keep
	return loaded{}, false, nil
}

// resolveAfterBudget makes the final read-back when the budget ran out with
// ambiguous writes outstanding: success if one landed, otherwise
// *ContentionError, marked Ambiguous if the read-back failed or found a
// written version still empty (the write could land later).
func (g *Graph) resolveAfterBudget(ctx context.Context, req *publishReq, pending []uint64, last error) (Commit, error) {
	op := "publish on " + req.branch.String()
	unknown := false
	for _, v := range pending {
		l, err := g.manifestAt(ctx, format.ManifestRef{Branch: req.branch.name, Incarnation: req.branch.inc, Version: v})
		if errors.Is(err, ErrNotFound) {
			unknown = true // nothing there yet: a delayed write could still land
			continue
		}
		if err != nil {
			return Commit{}, &ContentionError{Op: op, Attempts: g.budget, CommitID: req.commit.ID, Ambiguous: true, Last: err}
		}
		if l.token == req.token && l.m.Commit != nil && l.m.Commit.ID == req.commit.ID {
			g.indexAfterPublish(ctx, loaded{}, l, true)
			return commitOf(l), nil
		}
	}
	return Commit{}, &ContentionError{Op: op, Attempts: g.budget, CommitID: req.commit.ID, Ambiguous: unknown, Last: last}
}

// plantStaleViewCommit is the planted bug stale-view-commit (internal/plant;
// dead code unless built with -tags simplant and switched on): the failed
// create-only write on a stale view is taken for a slot race alone, and
// the manifest built on the stale head is written at the next free slot,
// never re-parented on the head that took the slot.
func (g *Graph) plantStaleViewCommit(ctx context.Context, req *publishReq, next format.Manifest) (bool, Commit, error) {
	for range g.budget {
		next.Version++
		key := g.keys.Manifest(req.branch.name, req.branch.inc, next.Version)
		_, err := objstore.PutAfterDeferred(ctx, g.store, key, mustEncodeManifest(&next, req.token), objstore.CreateOnly, req.deferred)
		switch {
		case err == nil:
			l := loaded{m: next, token: req.token}
			g.manifests.put(key, l)
			g.noteCommit(l)
			g.views.note(l)
			return true, commitOf(l), nil
		case errors.Is(err, objstore.ErrPreconditionFailed):
			continue
		}
		return false, Commit{}, err
	}
	return false, Commit{}, fmt.Errorf("stale-view-commit: no free slot for %s", next.Commit.ID)
}
