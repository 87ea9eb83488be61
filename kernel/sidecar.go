package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// The writer's side of recovery: every Write round plans its table versions,
// makes a sidecar naming them durable (create-only) before any table HEAD
// moves, commits the versions, publishes, and deletes the sidecar.

// plannedWrite is one table of a write round, decided before the sidecar.
type plannedWrite struct {
	table   string
	pin     TableRef // the pinned version the content was built on (zero: unpinned)
	version uint64   // the version the round commits: the table HEAD + 1
	content TableContent
	token   format.Token // the writer token that version will carry
	attempt format.ID    // format 8: the round's attempt id naming the version (zero: counter-named)
}

// writeRun is the recovery state of one Write call across its rounds.
type writeRun struct {
	kind  string
	own   *format.Sidecar      // the latest durable sidecar of this write, nil if none
	wrote bool                 // a table version of own's round may have been written
	lost  bool                 // own's round lost on a version mismatch: own can never roll forward
	reads []format.SidecarRead // the round's read expectations, recorded in its sidecar
	// follow is WriteOptions.FollowCompactions: strict tables and reads
	// moved only by content-preserving versions do not end the write.
	follow bool
	// noRide makes every table version of the write an object (format
	// 11): set after a publish found the riding budget spent on the head
	// it built on (errRidingOverBudget).
	noRide bool
}

// planRound builds every table's new content on its pinned version and
// fixes the version each will be committed at (HEAD+1), minting the writer
// tokens now so the sidecar can name them. Build runs here, before the
// sidecar, so a failing Build leaves nothing behind.
func (g *Graph) planRound(ctx context.Context, m *format.Manifest, writes []TableWrite, heads []TableRef) ([]plannedWrite, error) {
	plans := make([]plannedWrite, len(writes))
	for i, w := range writes {
		pinned := TableVersion{Table: w.Table}
		var base TableRef
		if pin, ok := m.Pin(w.Table); ok {
			base = pin.Ref()
			var err error
			if pinned, err = g.ReadPinned(ctx, pin); err != nil {
				return nil, err
			}
		}
		content, err := w.Build(pinned)
		if err != nil {
			return nil, fmt.Errorf("build %q: %w", w.Table, err)
		}
		if content.ContentPreserving && base == (TableRef{}) {
			return nil, fmt.Errorf("build %q: %w: a content-preserving version of an unpinned table", w.Table, ErrInvalidArgument)
		}
		tok, err := g.token()
		if err != nil {
			return nil, err
		}
		plans[i] = plannedWrite{table: w.Table, pin: base, version: heads[i].Version + 1, content: content, token: tok}
	}
	return plans, nil
}

// beginSidecar makes the round's sidecar durable (create-only) and only then
// retires the previous round's sidecar of the same write: that round lost
// (its pins moved or a version number was taken), so it can never roll
// forward, and every table it may have left dangling is named again by the
// new sidecar, whose roll-back would restore it. A failed sidecar write
// returns an error before any table HEAD of this round moved.
func (g *Graph) beginSidecar(ctx context.Context, run *writeRun, req *publishReq, head loaded, plans []plannedWrite) error {
	b := req.branch
	op, err := g.mintID()
	if err != nil {
		return err
	}
	s := format.Sidecar{
		Op: op, Branch: head.m.Branch, Actor: req.commit.Actor, Message: req.commit.Message, WriterKind: run.kind,
		CreatedUnixNano: g.clock.Now().UnixNano(), CommitID: req.commit.ID, BaseManifest: head.m.Version,
		Reads: append([]format.SidecarRead(nil), run.reads...), MergedParent: req.merged,
	}
	for _, p := range plans {
		s.Tables = append(s.Tables, format.SidecarTable{Table: p.table, Fork: b.incID, Expected: p.pin.Version,
			Commit: p.version, Token: format.TokenHex(p.token)})
	}
	tok, err := g.token()
	if err != nil {
		return err
	}
	data, err := format.EncodeSidecar(&s, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: built an invalid sidecar: %v", err))
	}
	key := g.keys.Sidecar(op)
	ours, err := g.putCreateOnly(ctx, "write sidecar", key, data)
	if err == nil && !ours {
		err = fmt.Errorf("write sidecar %s: the op id is already taken (entropy source repeats?): %w", key, ErrCorrupt)
	}
	if err != nil {
		return fmt.Errorf("write on %s: %w", b, err)
	}
	prev := run.own
	run.own, run.wrote, run.lost = &s, false, false
	if prev != nil {
		g.retireSidecar(ctx, prev)
	}
	return nil
}

// retireSidecar deletes one of this handle's own sidecars whose fate is
// settled (published, or superseded by a newer round). A delete that fails
// leaves the sidecar for the next sweep, which finishes or rolls it back
// with an audit record; that is the designed fallback, so the error is not
// the write's.
func (g *Graph) retireSidecar(ctx context.Context, s *format.Sidecar) {
	key := g.keys.Sidecar(s.Op)
	_ = g.withRetry(ctx, "delete sidecar", func() error { return g.store.Delete(ctx, key) }) // see above: the sweep is the fallback
}

// plannedVersion is the table version p writes on b's fork: its content,
// based on its pin (if any), named by its attempt in format 8 (zero for a
// counter-named write).
func plannedVersion(b BranchRef, p plannedWrite) format.TableVersion {
	tv := format.TableVersion{Table: p.table, Fork: b.incID, Version: p.version, Rows: p.content.Rows,
		Fragments: append([]string(nil), p.content.Fragments...), Metadata: sortedMetadata(p.content.Metadata),
		Attempt: p.attempt}
	if len(tv.Fragments) == 0 {
		tv.Fragments = nil
	}
	if p.pin != (TableRef{}) {
		base := p.pin
		tv.BasedOn = &base
		tv.ContentPreserving = p.content.ContentPreserving
	}
	return tv
}

// commitPlanned writes p's version create-only with the token the sidecar
// names. Losing the create-only write (someone else's version, or a
// recoverer's fence, took the number) is a *VersionMismatchError: refresh
// and retry. The write's durability is deferred where the store can
// (putCreateOnlyDeferred): its key joins req.deferred, which the publish
// makes durable before its manifest (objstore.PutAfterDeferred).
func (g *Graph) commitPlanned(ctx context.Context, req *publishReq, p plannedWrite) (TableUpdate, error) {
	b := req.branch
	tv := plannedVersion(b, p)
	data, err := format.EncodeTableVersion(&tv, p.token)
	if err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version of %q: %w: %v", p.table, ErrInvalidArgument, err)
	}
	key := g.keys.TableVersion(p.table, b.incID, p.version)
	ours, deferred, err := g.putCreateOnlyDeferred(ctx, "commit table version", key, data)
	if err != nil {
		return TableUpdate{}, err
	}
	if deferred {
		req.deferred = append(req.deferred, key)
	}
	if !ours {
		return TableUpdate{}, &VersionMismatchError{Table: p.table, Expected: p.version - 1, Actual: p.version}
	}
	g.tables.put(key, tv)
	return TableUpdate{Table: p.table, Fork: b.incID, Version: p.version, Rows: tv.Rows}, nil
}

// healFirst resolves, before a write round advances any table, every
// abandoned sidecar (older than RecoveryLease) of b's incarnation that
// names one of the tables, so the round builds on a converged state. Young
// sidecars are left to their (presumably live) writers: the round then
// simply builds on the published pin and writes above their versions.
func (g *Graph) healFirst(ctx context.Context, b BranchRef, writes []TableWrite) error {
	tables := make([]string, len(writes))
	for i, w := range writes {
		tables[i] = w.Table
	}
	if _, err := g.sweep(ctx, sweepScope{heal: true, branch: b.incID, tables: tables}); err != nil {
		return fmt.Errorf("heal first on %s: %w", b, err)
	}
	return nil
}

// ownPublished answers, after the round's publish lost with mismatch, "was
// my write published anyway?" — a recoverer whose clock judged it abandoned
// may have rolled it forward (or it was, and someone wrote on top since).
// Only a mismatch at or past this write's own version can be that.
func (g *Graph) ownPublished(ctx context.Context, run *writeRun, mm *VersionMismatchError) (Commit, bool, error) {
	s := run.own
	if s == nil {
		return Commit{}, false, nil
	}
	if t, ok := s.Table(mm.Table); !ok || mm.Actual < t.Commit {
		return Commit{}, false, nil
	}
	head, found, err := g.latest(ctx, s.Branch.Name)
	if err != nil || !found || head.m.Branch.IncarnationID != s.Branch.IncarnationID {
		return Commit{}, false, err
	}
	pub, err := g.findPublished(ctx, s, head)
	if err != nil || pub == nil {
		return Commit{}, false, err
	}
	return commitOf(*pub), true, nil
}

// settlePublished ends the sidecar of a write that ownPublished found
// published by c. If c is a recoverer's roll-forward, that recoverer may
// have stopped before its audit record: the sidecar is resolved like any
// other (presence check, then a converged audit naming c, then the delete),
// so the recovery commit is never left without its audit (R5). A
// resolution that fails or defers leaves the sidecar to the next sweep;
// the write still reports c.
func (g *Graph) settlePublished(ctx context.Context, run *writeRun, c Commit) {
	if c.Kind != format.KindRecovery {
		g.retireSidecar(ctx, run.own)
		run.own = nil
		return
	}
	g.resolveOwn(ctx, run)
}

// resolveOwn resolves the writer's own sidecar like a sweep would (audit,
// then delete) once its write is known published. A resolution that fails
// or defers leaves the sidecar to the next sweep (docs/invariants.md,
// errors dropped on purpose).
func (g *Graph) resolveOwn(ctx context.Context, run *writeRun) {
	if r, err := g.resolveSidecar(ctx, run.own, false); err == nil && !r.deferred {
		run.own = nil
	}
}

// abandonWrite ends a Write that failed with cause after (possibly) leaving
// a sidecar. The writer reports exactly what it knows:
//   - a crash returns cause at once: the process is gone and recovery owns
//     the sidecar; an ended context does too, marked ambiguous once a table
//     version was written (recovery may roll the sidecar forward);
//   - a round that wrote no table version deletes its own sidecar (a sweep
//     would only ever roll it back);
//   - a definite cause (a version mismatch: some pin moved past the
//     planned one, or a version number was taken; or the branch is gone),
//     or any cause after own's round already lost on a mismatch (a later
//     round failed before writing its own sidecar, e.g. in a Build), means
//     the write can never roll forward: the writer writes a restore
//     version (the pinned content again, unpinned) over every HEAD it left
//     dangling, so no stray content is left above a pin, then deletes its
//     sidecar and returns cause. This is the writer's own cleanup, not a
//     recovery action: no commit, no audit record;
//   - any other cause (the retry budget, a store or injected error) leaves
//     the sidecar for recovery, which may still roll the write forward: the
//     error is returned marked ambiguous (*OutcomeUnknownError, or the
//     *ContentionError with Ambiguous set).
func (g *Graph) abandonWrite(ctx context.Context, run *writeRun, cause error) (Commit, error) {
	s := run.own
	if s == nil || errors.Is(cause, failpoint.ErrCrashed) {
		return Commit{}, cause
	}
	if !run.wrote {
		if ctx.Err() == nil {
			if err := g.deleteSidecar(ctx, s.Op); err == nil {
				run.own = nil
			}
		}
		return Commit{}, cause
	}
	if ctx.Err() != nil || errors.Is(cause, objstore.ErrAmbiguous) {
		// Recovery may still roll the sidecar forward, or the publish may
		// have landed (a mismatch inside an ambiguous cause was seen on a
		// head that did not yet show it): never undo.
		return Commit{}, markAmbiguous(cause, s.CommitID, nil)
	}
	// A moved head (ExpectHead) is definite: buildNext checks it after the
	// table expectations, so this write's own versions are still unpublished
	// (a recoverer's roll-forward would have moved their pins first). So is
	// a refusal by the grace rule or the clock-skew check (both run after
	// buildNext: nothing of the round was published).
	if !run.lost && !errors.Is(cause, ErrVersionMismatch) && !errors.Is(cause, ErrBranchNotFound) && !errors.Is(cause, ErrHeadMoved) &&
		!errors.Is(cause, ErrGraceExpired) && !errors.Is(cause, ErrClockSkew) {
		return Commit{}, markAmbiguous(cause, s.CommitID, nil)
	}
	if errors.Is(cause, ErrBranchNotFound) {
		// A recoverer may have rolled the write forward before the branch
		// went: then it is committed, and its sidecar is resolved with the
		// audit naming that commit (R5), never deleted bare.
		pub, err := g.publishedBeforeGone(ctx, s)
		if err != nil {
			return Commit{}, markAmbiguous(cause, s.CommitID, nil)
		}
		if pub != nil {
			g.resolveOwn(ctx, run)
			return commitOf(*pub), nil
		}
		// Or a recoverer's roll-back plan landed before the branch went:
		// that recovery commit is audited (resolveOwn), not left unnamed.
		p, err := g.landedPlan(ctx, s)
		if err != nil {
			return Commit{}, cause // the sidecar stays for a sweep
		}
		if p != nil {
			g.resolveOwn(ctx, run)
			return Commit{}, cause
		}
	}
	if err := g.undoDangling(ctx, s); err != nil {
		return Commit{}, cause // the sidecar stays; a sweep rolls it back, never forward
	}
	if err := g.deleteSidecar(ctx, s.Op); err == nil {
		run.own = nil
	}
	return Commit{}, cause
}

// undoDangling writes, for every table of the writer's own dead sidecar s
// whose HEAD is still this write's unpublished version, a restore version
// holding the pinned content (an empty fence if unpinned). A restore that
// loses its create-only write means someone wrote on top meanwhile; that
// HEAD is no longer ours to undo.
func (g *Graph) undoDangling(ctx context.Context, s *format.Sidecar) error {
	v, err := g.observe(ctx, s)
	if err != nil || v.gone {
		return err
	}
	for i, t := range s.Tables {
		if o := v.obs[i]; o.Head <= o.Pin || o.Head != t.Commit || !o.HeadOurs {
			continue // nothing dangles, or what dangles is not this write's
		}
		tok, err := g.token()
		if err != nil {
			return err
		}
		if _, err := g.writeRestore(ctx, t, v.obs[i].Head+1, &v.head.m, v.pins[i], tok); err != nil && !errors.Is(err, errRestoreRace) {
			return err
		}
	}
	return nil
}

// OutcomeUnknownError says a write failed in a way that leaves its outcome
// open: its sidecar could not be resolved, so recovery may still roll it
// forward. It matches objstore.ErrAmbiguous; Commit(CommitID) or a later
// look at the data tells. (A cause that is a *ContentionError is returned
// as that error with Ambiguous set instead.)
type OutcomeUnknownError struct {
	CommitID CommitID
	Cause    error // why the write failed
	Resolve  error // why its sidecar could not be resolved (nil: deferred)
}

// Error implements error.
func (e *OutcomeUnknownError) Error() string {
	msg := fmt.Sprintf("kernel: write %s: outcome unknown (its sidecar is left for recovery): %v", e.CommitID, e.Cause)
	if e.Resolve != nil {
		msg += "; resolving it: " + e.Resolve.Error()
	}
	return msg
}

// Is makes errors.Is(err, objstore.ErrAmbiguous) hold.
func (e *OutcomeUnknownError) Is(target error) bool { return target == objstore.ErrAmbiguous }

// Unwrap exposes the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

func markAmbiguous(cause error, commit CommitID, resolveErr error) error {
	var ce *ContentionError
	if errors.As(cause, &ce) {
		c := *ce
		c.Ambiguous = true
		if c.CommitID == (CommitID{}) {
			c.CommitID = commit
		}
		return &c
	}
	return &OutcomeUnknownError{CommitID: commit, Cause: cause, Resolve: resolveErr}
}

// headRepeatsPin reports whether base is table's published pin in m and the
// HEAD above it carries exactly the pinned content (or, unpinned, no
// content): the restore copies and fences recovery writes, which are no
// newer state, so a strict writer that read the pin is not stale. (The
// publish still expects the pin, so this can never let a lost update
// through.)
func (g *Graph) headRepeatsPin(ctx context.Context, m *format.Manifest, table string, base uint64, head TableRef) (bool, error) {
	var pin TableRef
	if p, ok := m.Pin(table); ok {
		pin = p.Ref()
	}
	if pin.Version != base || head.Version <= base {
		return false, nil
	}
	top, err := g.ReadTable(ctx, table, head)
	if err != nil {
		return false, err
	}
	pinned, err := g.readAt(ctx, m, table, pin)
	if err != nil {
		return false, err
	}
	return sameContent(top, pinned), nil
}

func sameContent(a, b TableVersion) bool {
	if a.Rows != b.Rows || len(a.Fragments) != len(b.Fragments) || len(a.Metadata) != len(b.Metadata) {
		return false
	}
	for i := range a.Fragments {
		if a.Fragments[i] != b.Fragments[i] {
			return false
		}
	}
	for i := range a.Metadata {
		if a.Metadata[i] != b.Metadata[i] {
			return false
		}
	}
	return true
}
