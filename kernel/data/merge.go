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
	// target moved before a publish).
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
// target moved, the merge is computed again on the new head, at most
// opts.Rounds times, then fails with a retryable *kernel.ContentionError.
// A round publishes within the grace period of its first read
// (LineageIntent.ReadSince), else it fails with *kernel.GraceExpiredError
// (retryable): what it read, the merged parent included, may have been
// collected since (docs/gc.md §3).
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
	var last error
	for round := 1; round <= rounds; round++ {
		res, err := g.mergeRound(ctx, source, target, intent, opts)
		res.Rounds = round
		// Only a definite refusal is computed again: an ambiguous round may
		// have published, and must be resolved by the caller.
		moved := errors.Is(err, kernel.ErrHeadMoved) || errors.Is(err, kernel.ErrVersionMismatch)
		if !moved || objstore.IsAmbiguous(err) {
			if err != nil {
				err = fmt.Errorf("merge %s into %s: %w", source, target, err)
			}
			return res, err
		}
		last = err
	}
	return MergeResult{Rounds: rounds}, &kernel.ContentionError{Op: fmt.Sprintf("merge %s into %s", source, target), Attempts: rounds, Last: last}
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
		return MergeResult{}, err
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

func (g *Graph) loadMergeInput(ctx context.Context, source, target kernel.BranchRef) (mergeInput, error) {
	tgt, err := g.SnapshotAt(ctx, target)
	if err != nil {
		return mergeInput{}, err
	}
	src, err := g.SnapshotAt(ctx, source)
	if err != nil {
		return mergeInput{}, err
	}
	bc, err := g.k.MergeBaseOf(ctx, src.ks.Head(), tgt.ks.Head())
	if err != nil {
		return mergeInput{}, err
	}
	base, err := g.SnapshotAtCommit(ctx, bc.ID)
	if err != nil {
		return mergeInput{}, err
	}
	in := mergeInput{base: base, src: src, tgt: tgt}
	return in, g.mergeSchemas(&in)
}
