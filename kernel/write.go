package kernel

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// TableWrite is one table's part of a Write.
type TableWrite struct {
	Table string
	// Strict requires the table HEAD to equal BaseVersion (the version the
	// caller read), or BaseVersion to be the published pin and every
	// version above it to repeat the pinned content (recovery's restore
	// versions and fences); otherwise Write fails with
	// *VersionMismatchError. Versions that only preserve the content
	// (compactions, lineage.PinSatisfied) count as BaseVersion: Build then
	// gets the compacted pin, whose rows are BaseVersion's, and a
	// compaction that lands during the round makes the write rebuild on
	// it rather than fail.
	// Non-strict writes rebase: Build is re-run on the currently published
	// version and the new version is the live HEAD+1.
	Strict      bool
	BaseVersion uint64
	// Build returns the new content given the currently published version
	// of the table (the zero TableVersion, with Table set, if unpinned). It
	// may run more than once (once per rebase round) and must not have side
	// effects beyond writing immutable data fragments.
	Build func(pinned TableVersion) (TableContent, error)
}

// ReadExpectation is a table a Write read but does not write: its publish
// additionally requires the table to be pinned at the version the caller's
// checks read, so a write can never land on top of a concurrent change to
// data it validated against (for example an edge insert and the endpoint
// node table, or a node delete and the edge tables it found no edges in).
type ReadExpectation struct {
	Table string
	// Version is the published version the caller read (0: unpinned).
	Version uint64
	// Strict fails the write with *VersionMismatchError (refresh and retry)
	// when the table is pinned at any other version. A non-strict
	// expectation instead calls Revalidate whenever a round finds the table
	// pinned at a version other than the one last validated, and from then
	// on expects that version.
	Strict bool
	// Revalidate re-checks the caller's reads against pinned, the table's
	// currently published version (the zero TableVersion, with Table set,
	// if unpinned). Required for a non-strict expectation; it runs in the
	// round, before any Build, and an error ends the write (nothing of that
	// round is written). It may run once per round.
	Revalidate func(pinned TableVersion) error
}

// WriteOptions tune WriteWith.
type WriteOptions struct {
	// Kind is the writer kind recorded in sidecars and audit records (1..64
	// bytes of [a-z0-9-]); empty means WriterKindWrite.
	Kind string
	// Expect lists tables the write read but does not write, each at most
	// once and none of them a written table.
	Expect []ReadExpectation
	// FollowCompactions makes a strict table (or strict read expectation)
	// that moved past its base only through content-preserving versions
	// (compactions; lineage.PinSatisfied) no mismatch: the round builds on
	// the compacted version, and a round that lost to a compaction is
	// retried. The data plane's transactions always set it. Without it a
	// strict write behaves as before maintenance existed: any newer
	// version other than a recovery restore fails it.
	FollowCompactions bool
}

// Write commits one new version of every touched table and publishes them
// together in one commit, with an expectation per table that its pin is
// still the one Build saw. Non-strict tables that lose a race are rebuilt
// and retried (bounded by the retry budget); a strict table's mismatch is
// returned to the caller. The commit id and writer token are minted once.
//
// Every round runs every table's Build before it writes anything; a Build
// error ends the write with no table HEAD moved past its pin and no sidecar
// left (versions of an earlier, lost round are undone).
//
// Crash safety (kernel/sidecar.go): each round makes a recovery sidecar
// durable before any table HEAD moves and deletes it after the publish. A
// Write that gives up resolves its own sidecar first, so a returned failure
// is never made visible later; if recovery published the write meanwhile,
// Write returns that (recovery) commit as its success. A failure whose
// sidecar could not be resolved is ambiguous (*OutcomeUnknownError, or a
// *ContentionError with Ambiguous set).
func (g *Graph) Write(ctx context.Context, b BranchRef, writes []TableWrite, intent LineageIntent) (Commit, error) {
	return g.WriteWith(ctx, b, writes, intent, WriteOptions{Kind: WriterKindWrite})
}

// WriteAs is Write recording kind (1..64 bytes of [a-z0-9-], e.g. "txn" for
// the data plane's transactions) as the writer kind of its sidecars and of
// any audit record recovery writes for them.
func (g *Graph) WriteAs(ctx context.Context, kind string, b BranchRef, writes []TableWrite, intent LineageIntent) (Commit, error) {
	return g.WriteWith(ctx, b, writes, intent, WriteOptions{Kind: kind})
}

// WriteWith is Write with options: the writer kind, and expectations on
// tables the write read but does not write (ReadExpectation). Each round
// checks them before any Build, its publish expects every such table at
// the version last validated, and its sidecar records them, so recovery
// never rolls the write forward over a moved read.
func (g *Graph) WriteWith(ctx context.Context, b BranchRef, writes []TableWrite, intent LineageIntent, opts WriteOptions) (Commit, error) {
	if err := g.checkWritable("write"); err != nil {
		return Commit{}, err
	}
	ctx = g.withOpBudget(ctx, "write")
	kind := opts.Kind
	if kind == "" {
		kind = WriterKindWrite
	}
	if err := format.ValidateWriterKind(kind); err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w: %v", b, ErrInvalidArgument, err)
	}
	sorted, err := sortWrites(writes)
	if err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w", b, err)
	}
	reads, err := sortReads(opts.Expect, sorted)
	if err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w", b, err)
	}
	req, err := g.newPublishReq(ctx, b, nil, intent, nil)
	if err != nil {
		return Commit{}, fmt.Errorf("write on %s: %w", b, err)
	}
	if now := g.clock.Now(); req.staged.IsZero() || now.Before(req.staged) {
		req.staged = now // before any Build: every object the write stages is younger
	}
	run := &writeRun{kind: kind, follow: opts.FollowCompactions}
	var last error
	for round := 0; round < g.budget; round++ {
		if round > 0 {
			if err := g.backoff(ctx, round); err != nil {
				return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
			}
		}
		round := g.writeRound
		if !g.counterWrites {
			round = g.writeRoundNamed
		}
		c, err := round(ctx, &req, sorted, reads, run)
		if err == nil {
			return c, nil
		}
		mm, ok := isMismatch(err)
		if !ok {
			return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
		}
		if strictTable(sorted, reads, mm.Table) {
			if !opts.FollowCompactions {
				return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
			}
			// A strict table that moved only through content-preserving
			// versions (a compaction) is rebuilt like a lost race: a strict
			// writer never fails because of a compaction alone. Anything
			// else (a data write, a recovery restore) ends it as before.
			retry, rerr := g.strictMayRetry(ctx, b, sorted, reads, mm.Table)
			if rerr != nil {
				return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, rerr))
			}
			if !retry {
				return g.abandonWrite(ctx, run, fmt.Errorf("write on %s: %w", b, err))
			}
		}
		// A non-strict table lost a race: rebuild on the new pin. The
		// round's sidecar is dead (pins never go back, so it can never roll
		// forward): if the write gives up before the next round's sidecar,
		// abandonWrite undoes it rather than leaving it as an unknown outcome.
		run.lost = run.own != nil
		last = err
	}
	return g.abandonWrite(ctx, run, &ContentionError{Op: "write on " + b.String(), Attempts: g.budget, CommitID: req.commit.ID, Last: last})
}

func sortWrites(writes []TableWrite) ([]TableWrite, error) {
	sorted := append([]TableWrite(nil), writes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Table < sorted[j].Table })
	if len(sorted) == 0 || len(sorted) > format.MaxSidecarTables {
		return nil, fmt.Errorf("%w: %d tables written, want 1..%d", ErrInvalidArgument, len(sorted), format.MaxSidecarTables)
	}
	for i, w := range sorted {
		if err := format.ValidateName(w.Table); err != nil {
			return nil, err
		}
		if w.Build == nil {
			return nil, fmt.Errorf("%w: table %q has no Build", ErrInvalidArgument, w.Table)
		}
		if i > 0 && sorted[i-1].Table == w.Table {
			return nil, fmt.Errorf("%w: table %q written twice", ErrInvalidArgument, w.Table)
		}
	}
	return sorted, nil
}

// readState is one ReadExpectation during a Write: cur is the version last
// validated, which the round's publish expects.
type readState struct {
	ReadExpectation
	cur uint64
}

// sortReads validates the read expectations of a write of writes and
// returns them sorted by table.
func sortReads(exp []ReadExpectation, writes []TableWrite) ([]readState, error) {
	reads := make([]readState, len(exp))
	for i, e := range exp {
		reads[i] = readState{ReadExpectation: e, cur: e.Version}
	}
	sort.Slice(reads, func(i, j int) bool { return reads[i].Table < reads[j].Table })
	if len(reads) > format.MaxSidecarTables {
		return nil, fmt.Errorf("%w: %d read expectations, want at most %d", ErrInvalidArgument, len(reads), format.MaxSidecarTables)
	}
	for i, r := range reads {
		if err := format.ValidateName(r.Table); err != nil {
			return nil, err
		}
		if !r.Strict && r.Revalidate == nil {
			return nil, fmt.Errorf("%w: non-strict read expectation on %q has no Revalidate", ErrInvalidArgument, r.Table)
		}
		if i > 0 && reads[i-1].Table == r.Table {
			return nil, fmt.Errorf("%w: table %q expected twice", ErrInvalidArgument, r.Table)
		}
		if j := sort.Search(len(writes), func(k int) bool { return writes[k].Table >= r.Table }); j < len(writes) && writes[j].Table == r.Table {
			return nil, fmt.Errorf("%w: table %q is both written and read-expected (a write already expects its pin)", ErrInvalidArgument, r.Table)
		}
	}
	return reads, nil
}

// strictTable reports whether a mismatch on table ends the write: the table
// is written strictly, or read-expected strictly.
func strictTable(writes []TableWrite, reads []readState, table string) bool {
	for _, w := range writes {
		if w.Table == table {
			return w.Strict
		}
	}
	for _, r := range reads {
		if r.Table == table {
			return r.Strict
		}
	}
	return false
}

// checkReads compares every read expectation with its pin in m: a strict
// one must be pinned at its version; a non-strict one pinned elsewhere is
// revalidated on the pinned version, which it expects from then on.
func (g *Graph) checkReads(ctx context.Context, m *format.Manifest, reads []readState, follow bool) error {
	for i := range reads {
		r := &reads[i]
		var pin TableRef
		if p, ok := m.Pin(r.Table); ok {
			pin = p.Ref()
		}
		if pin.Version == r.cur {
			continue
		}
		if r.Strict {
			if !follow {
				return &VersionMismatchError{Table: r.Table, Expected: r.cur, Actual: pin.Version}
			}
			// The same rows at a compacted version: expect that one.
			if ok, err := g.PinSatisfied(ctx, r.Table, r.cur, pin); err != nil || !ok {
				if err != nil {
					return err
				}
				return &VersionMismatchError{Table: r.Table, Expected: r.cur, Actual: pin.Version}
			}
			r.cur = pin.Version
			continue
		}
		tv, err := g.readAt(ctx, m, r.Table, pin)
		if err != nil {
			return err
		}
		if err := r.Revalidate(tv); err != nil {
			return fmt.Errorf("revalidate read of %q at version %d: %w", r.Table, pin.Version, err)
		}
		r.cur = pin.Version
	}
	return nil
}

// writeRound is one attempt: heal abandoned writes on the tables first,
// load the head, check strict bases and read expectations, build every
// table's content, make the round's sidecar durable, commit one version per
// table, publish with expectations, delete the sidecar.
func (g *Graph) writeRound(ctx context.Context, req *publishReq, writes []TableWrite, reads []readState, run *writeRun) (Commit, error) {
	b := req.branch
	head, fromView, err := g.viewHead(ctx, b)
	if err != nil {
		return Commit{}, err
	}
	prepare := func(m *format.Manifest) ([]plannedWrite, error) {
		plans, err := g.prepareRound(ctx, req, m, writes, reads, run, false)
		if errors.Is(err, errDangling) {
			// Something sits above a pin (an in-flight or abandoned write,
			// a restore): heal abandoned writes on these tables first (the
			// sidecar sweep a clean round does not pay), then look again.
			if err = g.healFirst(ctx, b, writes); err == nil {
				plans, err = g.prepareRound(ctx, req, m, writes, reads, run, true)
			}
		}
		return plans, err
	}
	plans, err := prepare(&head.m)
	if err != nil && fromView && viewRefusal(err) {
		// Computed on the handle's view, which may be stale: a refusal is
		// only returned once a loaded head confirms it (one head discovery).
		g.views.drop(b.incID, head.m.Version)
		if head, err = g.liveHead(ctx, b); err != nil {
			return Commit{}, err
		}
		plans, err = prepare(&head.m)
	}
	if err != nil {
		return Commit{}, err
	}
	run.reads = run.reads[:0]
	for _, r := range reads {
		run.reads = append(run.reads, format.SidecarRead{Table: r.Table, Version: r.cur})
	}
	// The grace rule (docs/gc.md) also before the sidecar and every table
	// version: a sidecar is a collection root only for a write staged
	// within the grace period, so recovery never rolls forward a version
	// naming a fragment a collector already deleted.
	if err := g.checkGrace(req); err != nil {
		return Commit{}, err
	}
	// The round's new objects (TableContent.New) are durable before the
	// sidecar names its versions, as if Build had written them.
	if err := g.writeNewObjectsDurable(ctx, plans); err != nil {
		return Commit{}, err
	}
	// Recovery: the sidecar is durable before any table HEAD moves.
	if err := g.beginSidecar(ctx, run, req, head, plans); err != nil {
		return Commit{}, err
	}
	if err := g.fp.Hit(ctx, failpoint.AfterSidecarWrite); err != nil {
		return Commit{}, err
	}
	req.updates, req.exp, req.deferred = nil, nil, nil
	run.wrote = true
	for _, p := range plans {
		if err := g.checkGrace(req); err != nil {
			return Commit{}, err
		}
		u, err := g.commitPlanned(ctx, req, p)
		if err != nil {
			return Commit{}, err
		}
		req.updates = append(req.updates, u)
		req.exp = append(req.exp, lineage.Expectation{Table: p.table, Version: p.pin.Version})
		if err := g.fp.Hit(ctx, failpoint.AfterTableCommit); err != nil {
			return Commit{}, err
		}
	}
	for _, r := range reads {
		req.exp = append(req.exp, lineage.Expectation{Table: r.Table, Version: r.cur})
	}
	if err := g.fp.Hit(ctx, failpoint.BeforePublish); err != nil {
		return Commit{}, err
	}
	c, err := g.publish(ctx, *req)
	if mm, ok := isMismatch(err); ok {
		// Lost — unless a recoverer published this very write meanwhile.
		if rc, published, perr := g.ownPublished(ctx, run, mm); perr != nil || published {
			if published {
				g.settlePublished(ctx, run, rc)
			}
			return rc, perr
		}
	}
	if err != nil {
		return Commit{}, err
	}
	if err := g.fp.Hit(ctx, failpoint.AfterPublishBeforeSidecarDelete); err != nil {
		return Commit{}, err
	}
	g.retireSidecar(ctx, run.own)
	run.own = nil
	return c, nil
}

// errDangling is prepareRound's answer when a table HEAD is above its pin
// and the round has not healed the tables yet.
var errDangling = errors.New("kernel: a table HEAD is above its pin")

// viewRefusal reports whether err is a refusal that a newer head could
// turn into a success (so one computed on a stale view must be rechecked).
// A table version the view pins that a collection removed since (the view
// is that old) is one too.
func viewRefusal(err error) bool {
	return errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrClockSkew) || errors.Is(err, ErrHeadMoved) ||
		errors.Is(err, ErrReclaimed) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrSchemaChanged)
}

// prepareRound checks a round against the head manifest m (the clock skew,
// strict bases, read expectations) and plans every table's version.
//
// Unless healed, a table whose HEAD is above its pin in m is errDangling
// (before any Build): the caller heals abandoned writes on the tables
// first (kernel/sidecar.go healFirst) and prepares again with healed set.
func (g *Graph) prepareRound(ctx context.Context, req *publishReq, m *format.Manifest, writes []TableWrite, reads []readState, run *writeRun, healed bool) ([]plannedWrite, error) {
	b := req.branch
	// A write validated against another schema stages nothing (its
	// publish would refuse anyway), so every sidecar's base manifest names
	// the schema its write was validated against (recovery relies on it).
	if err := checkSchema(req, m); err != nil {
		return nil, err
	}
	// A clock behind the head by more than the skew margin stages nothing:
	// a collector may take its fragments for abandoned ones (docs/gc.md §4).
	if err := g.checkSkew(req, m); err != nil {
		return nil, err
	}
	heads := make([]TableRef, len(writes))
	for i, w := range writes {
		var err error
		if heads[i], err = g.tableHead(ctx, b, m, w.Table); err != nil {
			return nil, err
		}
		if p, _ := m.Pin(w.Table); !healed && heads[i].Version > p.Version {
			return nil, errDangling
		}
	}
	for i, w := range writes {
		if w.Strict && heads[i].Version != w.BaseVersion {
			// A HEAD above the pin that only repeats the pinned content (a
			// restore or fence left by recovery), or (following compactions)
			// versions that only preserve it, are no newer state.
			holds, err := g.headRepeatsPin(ctx, m, w.Table, w.BaseVersion, heads[i])
			if run.follow && err == nil && !holds {
				holds, err = g.strictBaseHolds(ctx, m, w.Table, w.BaseVersion, heads[i])
			}
			if err != nil || !holds {
				if err != nil {
					return nil, err
				}
				return nil, &VersionMismatchError{Table: w.Table, Expected: w.BaseVersion, Actual: heads[i].Version}
			}
		}
	}
	if err := g.checkReads(ctx, m, reads, run.follow); err != nil {
		return nil, err
	}
	return g.planRound(ctx, m, writes, heads)
}
