package data

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/objstore"
)

// MergeOutcome is what a merge did (or, in a dry run, would do).
type MergeOutcome = merge.Outcome

// The merge outcomes.
const (
	// MergeAlreadyUpToDate: the heads are equal or the base is the source
	// head. Nothing is written.
	MergeAlreadyUpToDate = merge.AlreadyUpToDate
	// MergeFastForward: the base is the target head. One two-parent
	// commit is published (never a bare pointer move; see Merge).
	MergeFastForward = merge.FastForward
	// MergeMerged: both sides moved; one two-parent commit carries the
	// three-way result.
	MergeMerged = merge.Merged
)

// MergeConflict is one conflict of a merge (kernel/merge.Conflict): its
// kind, type, id, property (where one applies) and a message.
type MergeConflict = merge.Conflict

// ErrMergeConflict matches *MergeConflictError.
var ErrMergeConflict = errors.New("data: merge conflict")

// ErrMergeTooLarge: the branches differ from their base in more ids than
// the handle's Limits.MaxRows; a merge holds every changed id's images
// until its publish, so it refuses rather than hold more. Nothing is
// written.
var ErrMergeTooLarge = errors.New("data: merge too large")

// MergeConflictError is a merge refused for conflicts: every conflict of
// every table, in a deterministic order (type, id, kind, property).
// Nothing was published.
type MergeConflictError struct {
	Source, Target string
	Conflicts      []MergeConflict
}

// Error implements error: the first three conflicts and how many more.
func (e *MergeConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data: merge of %s into %s: %d conflict(s)", e.Source, e.Target, len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Conflicts)-3)
			break
		}
		b.WriteString("; " + c.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrMergeConflict) hold, and
// errors.Is(err, ErrSchemaConflict) when a conflict is a schema conflict.
func (e *MergeConflictError) Is(target error) bool {
	return target == ErrMergeConflict || (target == ErrSchemaConflict && hasSchemaConflict(e.Conflicts))
}

// MergeHeadReclaimedError says a merge round read a branch head, the
// branch moved on, and a collection reclaimed what the round still had to
// read of the head it read (a round slower than the grace period: nothing
// a stale head alone reaches outlives it, docs/gc.md rule 2). Nothing was
// published. Merge computes the merge again from the fresh heads, within
// MergeOptions.Rounds; past them it is the last cause of the
// *kernel.ContentionError. It matches kernel.ErrHeadMoved and not
// kernel.ErrReclaimed: nothing a fresh merge needs is gone (Reclaimed is
// reported, not unwrapped). Retryable.
type MergeHeadReclaimedError struct {
	Branch     string          // the branch that moved
	Read, Head kernel.CommitID // the head the round read, and the head after
	Reclaimed  error           // the round's read that answered kernel.ErrReclaimed
}

// Error implements error.
func (e *MergeHeadReclaimedError) Error() string {
	return fmt.Sprintf("data: merge read %s's head %s, which moved to %s and was reclaimed under the merge (merge again): %v", e.Branch, e.Read, e.Head, e.Reclaimed)
}

// Is makes errors.Is(err, kernel.ErrHeadMoved) hold.
func (e *MergeHeadReclaimedError) Is(target error) bool { return target == kernel.ErrHeadMoved }

// Retryable reports true: a merge from the fresh heads reads what they reach.
func (e *MergeHeadReclaimedError) Retryable() bool { return true }

// MergeOptions tune Merge.
type MergeOptions struct {
	// DryRun computes the outcome and every conflict and writes nothing.
	DryRun bool
	// Rounds bounds how often the merge is computed afresh when the target
	// moves before its publish (default DefaultMergeRounds).
	Rounds int
	// Prefer resolves conflicts of the kinds it names with the source's
	// or the target's image (kernel/merge Policy); the zero value refuses
	// every conflict. OrphanEdge and CardinalityViolation are never
	// resolved: they fail the merge whatever the policy.
	Prefer MergePolicy
}

// MergePolicy is the conflict resolution policy of MergeOptions.Prefer
// (kernel/merge.Policy: per resolvable kind, refuse or prefer a side).
type MergePolicy = merge.Policy

// DefaultMergeRounds is the default MergeOptions.Rounds.
const DefaultMergeRounds = 8

// WriterKindMerge is the writer kind of a merge's table versions, recorded
// in its recovery sidecar.
const WriterKindMerge = "merge"

// MergeResult reports a merge.
type MergeResult struct {
	Outcome MergeOutcome
	// Base, Source and Target are the commits the merge was computed from:
	// the merge base, the source head it captured (the source may have
	// moved since) and the target head it published on.
	Base, Source, Target kernel.CommitID
	// Commit is the published merge commit (zero when already up to date,
	// on conflict, and in a dry run).
	Commit kernel.Commit
	// Changes counts the ids the merge changes on the target, per type.
	Changes map[string]int
	// Conflicts lists every conflict (also in the *MergeConflictError).
	// Outcome stays what the heads make it (Merged or FastForward) on
	// conflict: a caller reports a conflict by the error.
	Conflicts []MergeConflict
	// Resolved lists the conflicts MergeOptions.Prefer resolved, as they
	// would have been reported without it (sorted like Conflicts).
	Resolved []MergeConflict
	// Rounds is how many times the merge was computed (1 unless the
	// target moved before a publish, or a round was slower than the grace
	// period; see Merge).
	Rounds int
	// PeakRows bounds the rows the merge held in memory at once: the
	// largest diff window, plus the images and target fragments it keeps.
	PeakRows uint64
	// Schema is the merged schema's id (sha256 hex of its contract) when
	// the merge changes the target's schema (the merge commit is then the
	// schema change), else "".
	Schema string
}

// Merge merges branch source into branch target, three-way against their
// merge base (kernel MergeBaseOf, merge commits included; in a criss-cross
// history the newest best common ancestor). Per table and id it applies
// kernel/merge's row rule to the rows that differ between the base and
// either head (TableChanges: only fragments that differ are read), then
// checks the merged result like a transaction (orphan edges, @card).
//
// Any conflict fails the merge with *MergeConflictError listing all of
// them; nothing is written. opts.Prefer resolves conflicts of the kinds it
// names instead (kernel/merge ResolveWith), listing them in
// MergeResult.Resolved; the result is still checked. Otherwise the merge is one write through the
// one door: the changed tables' new versions under a recovery sidecar
// (writer kind "merge"), then one publish on target whose parents are the
// target head it read and the source head it captured (kind merge). A
// fast-forward is such a two-parent commit too, never a pointer move: a
// branch's manifests are its own chain (one door per branch), so moving
// target onto source's manifests is not a publish; the commit records the
// merged parent so the next merge base is the source head.
//
// The publish expects the target head the merge read (ExpectHead): if the
// target moved, the merge is computed again on the new heads, at most
// opts.Rounds times, then fails with a retryable *kernel.ContentionError
// (its last cause the last round's). A round publishes within the grace
// period of its first read (LineageIntent.ReadSince), else it refuses with
// *kernel.GraceExpiredError: what it read, the merged parent included, may
// have been collected since (docs/gc.md §3); the merge is computed again
// too, unless the caller's ReadSince started the grace clock before the
// merge (then the GraceExpiredError is returned). A round slower than the
// grace period may also find what it read of a head collected before its
// publish (the head moved on and a collection reclaimed what only the old
// head reached): a read answering kernel.ErrReclaimed makes the merge read
// both heads again, and if one moved the round counts as
// *MergeHeadReclaimedError (ErrHeadMoved) and the merge is computed again
// from the fresh heads; if neither moved the ErrReclaimed is returned
// (history lost under the current heads, which no retry brings back).
// A crash leaves the target unmerged or merged; recovery rolls an
// unpublished merge back (never forward: a recovery commit has one parent).
func (g *Graph) Merge(ctx context.Context, source, target kernel.BranchRef, intent kernel.LineageIntent, opts MergeOptions) (MergeResult, error) {
	if !opts.DryRun && g.k.ReadOnly() {
		return MergeResult{}, fmt.Errorf("merge into %s: %w", target, kernel.ErrReadOnly)
	}
	if source.Name() == target.Name() {
		return MergeResult{}, fmt.Errorf("merge %s into itself: %w", target, kernel.ErrInvalidArgument)
	}
	rounds := opts.Rounds
	if rounds <= 0 {
		rounds = DefaultMergeRounds
	}
	// A caller's ReadSince in the past bounds every round (the grace
	// clock then starts before the merge): a round refused for it is not
	// computed again.
	ownGrace := intent.ReadSince.IsZero() || g.clock.Now().Before(intent.ReadSince)
	var last error
	for round := 1; round <= rounds; round++ {
		res, err := g.mergeRound(ctx, source, target, intent, opts)
		res.Rounds = round
		if readHeadReclaimed(err, res) {
			err = g.reclaimedUnder(ctx, source, target, res, err)
		}
		if !mergeAgain(err, ownGrace) {
			if err != nil {
				err = fmt.Errorf("merge %s into %s: %w", source, target, err)
			}
			return res, err
		}
		last = err
	}
	return MergeResult{Rounds: rounds}, &kernel.ContentionError{Op: fmt.Sprintf("merge %s into %s", source, target), Attempts: rounds, Last: last}
}

// mergeAgain decides whether a round that ended with err is computed
// again from fresh heads. Only a definite refusal is (an ambiguous round
// may have published, and must be resolved by the caller): the target
// moved before the publish (ErrHeadMoved, ErrVersionMismatch); a head the
// round read moved on and a collection reclaimed what the round still had
// to read of it (*MergeHeadReclaimedError, which matches ErrHeadMoved);
// or the round read for longer than the grace period (ErrGraceExpired),
// unless the caller's LineageIntent.ReadSince started the grace clock
// before the merge (ownGrace false: every round would be refused alike).
func mergeAgain(err error, ownGrace bool) bool {
	if err == nil || objstore.IsAmbiguous(err) {
		return false
	}
	return errors.Is(err, kernel.ErrHeadMoved) || errors.Is(err, kernel.ErrVersionMismatch) ||
		(ownGrace && errors.Is(err, kernel.ErrGraceExpired))
}

// readHeadReclaimed reports whether a round's err is a definite
// ErrReclaimed after it read at least one head (res.Source or
// res.Target): whether the heads must be read again to tell a reclaimed
// stale head (merge again) from lost history (ErrReclaimed stands).
func readHeadReclaimed(err error, res MergeResult) bool {
	return err != nil && errors.Is(err, kernel.ErrReclaimed) && !objstore.IsAmbiguous(err) &&
		(res.Source != (kernel.CommitID{}) || res.Target != (kernel.CommitID{}))
}

// reclaimedUnder reads the heads of source and target again after a round
// that read res.Source and res.Target failed with the ErrReclaimed err,
// and answers reclaimedVerdict's error (a head-read failure is answered
// instead, with err's text).
func (g *Graph) reclaimedUnder(ctx context.Context, source, target kernel.BranchRef, res MergeResult, err error) error {
	src, herr := g.k.Head(ctx, source)
	if herr != nil {
		return fmt.Errorf("%v; read %s's head again: %w", err, source, herr)
	}
	tgt, herr := g.k.Head(ctx, target)
	if herr != nil {
		return fmt.Errorf("%v; read %s's head again: %w", err, target, herr)
	}
	return reclaimedVerdict(err, [2]string{source.Name(), target.Name()}, [2]kernel.CommitID{res.Source, res.Target}, [2]kernel.CommitID{src.ID, tgt.ID})
}

// reclaimedVerdict decides what a round's ErrReclaimed err means, given
// the heads of source and target (names) the round read (read; zero: not
// read) and the heads now. A collection deletes nothing a current head
// reaches (docs/gc.md rules 2, 3), so when a head the round read is no
// longer the head, what was reclaimed may be what only that stale head
// reached: the answer is *MergeHeadReclaimedError (retryable; Merge
// computes the merge again from the fresh heads). When both heads are
// still the ones read, a fresh round would read the same: err stands
// (lost history is ErrReclaimed, never retried).
func reclaimedVerdict(err error, names [2]string, read, now [2]kernel.CommitID) error {
	for i := range read {
		if read[i] != (kernel.CommitID{}) && read[i] != now[i] {
			return &MergeHeadReclaimedError{Branch: names[i], Read: read[i], Head: now[i], Reclaimed: err}
		}
	}
	return err
}

// mergeRound computes the merge on the current heads and, unless it is
// up to date, conflicting or a dry run, publishes it expecting the target
// head it read.
func (g *Graph) mergeRound(ctx context.Context, source, target kernel.BranchRef, intent kernel.LineageIntent, opts MergeOptions) (MergeResult, error) {
	if now := g.clock.Now(); intent.ReadSince.IsZero() || now.Before(intent.ReadSince) {
		intent.ReadSince = now // before the round reads: the grace rule counts from here
	}
	in, err := g.loadMergeInput(ctx, source, target)
	if err != nil {
		return in.heads(), err // the heads it read: a reclaimed read is judged by them (Merge)
	}
	res := MergeResult{Outcome: merge.Classify(in.base.ks.Head(), in.src.ks.Head(), in.tgt.ks.Head()),
		Base: in.base.ks.Head(), Source: in.src.ks.Head(), Target: in.tgt.ks.Head()}
	if res.Outcome == MergeAlreadyUpToDate {
		return res, nil
	}
	if len(in.schemaConflicts) > 0 {
		return g.refuseSchemaConflicts(ctx, in, res, source, target, opts.Prefer) // merge_schema_rows.go
	}
	if in.contract != nil {
		res.Schema = in.cat.contractID
	}
	p, err := g.planMerge(ctx, in, opts.Prefer)
	if err != nil {
		return res, err
	}
	res.Changes, res.PeakRows, res.Resolved = p.changeCounts(), p.window+p.held, p.resolved
	if len(p.conflicts) > 0 {
		res.Conflicts = p.conflicts
		return res, &MergeConflictError{Source: source.Name(), Target: target.Name(), Conflicts: p.conflicts}
	}
	if opts.DryRun {
		return res, nil
	}
	src, tgt := res.Source, res.Target
	intent.MergedParent, intent.ExpectHead = &src, &tgt
	if err := g.publishSchema(ctx, in, &intent); err != nil {
		return res, err
	}
	var built uint64
	res.Commit, built, err = g.publishMerge(ctx, target, in, p, intent)
	res.PeakRows = max(p.window, built) + p.held
	return res, err
}

// mergeInput is what a merge round reads first: the three snapshots, and
// the schema they merge to (merge_schema.go).
type mergeInput struct {
	base, src, tgt *Snapshot
	cat            *catalog  // the merged schema's: writes and checks
	read           *catalog  // reads the fragments of every side
	on             *Snapshot // the target head under cat
	contract       []byte    // the merged contract, when it is not the target's
	// schemaConflicts are the schema merge's conflicts; the rows are not
	// merged then, only compared in the types of comparable (the merged
	// types no schema conflict names, every property nullable).
	schemaConflicts []MergeConflict
	comparable      *catalog
}

// heads is a result naming the source and target heads in read (zero
// for one not read).
func (in *mergeInput) heads() MergeResult {
	var res MergeResult
	if in.src != nil {
		res.Source = in.src.ks.Head()
	}
	if in.tgt != nil {
		res.Target = in.tgt.ks.Head()
	}
	return res
}

// loadMergeInput reads the heads, the merge base and the merged schema.
// On error the input holds the heads it read.
func (g *Graph) loadMergeInput(ctx context.Context, source, target kernel.BranchRef) (mergeInput, error) {
	var in mergeInput
	var err error
	if in.tgt, err = g.SnapshotAt(ctx, target); err != nil {
		return in, err
	}
	if in.src, err = g.SnapshotAt(ctx, source); err != nil {
		return in, err
	}
	bc, err := g.k.MergeBaseOf(ctx, in.src.ks.Head(), in.tgt.ks.Head())
	if err != nil {
		return in, err
	}
	if in.base, err = g.SnapshotAtCommit(ctx, bc.ID); err != nil {
		return in, err
	}
	return in, g.mergeSchemas(&in)
}
