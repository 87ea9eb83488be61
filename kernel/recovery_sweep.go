package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/recovery"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// MaxSweepSidecars bounds how many sidecars one sweep resolves; any beyond
// are left for the next sweep (the open still succeeds).
const MaxSweepSidecars = 4096

// maxPublishedProbes bounds the manifest reads of one "was this sidecar
// already published?" search (a binary search: 64 covers any history).
const maxPublishedProbes = 64

// The sweep. For each sidecar: if its audit record exists, the action is
// complete and only the sidecar delete remains; otherwise observe every
// table's live pin and HEAD, classify (package recovery), decide, act
// (roll forward / roll back / finish / discard), then write the audit record
// create-only, then delete the sidecar. Every step is idempotent, so a crash
// anywhere is finished by the next sweep, never repeated with a second
// record.

// sweepOpen is the open-time sweep: every sidecar past the lease, in op-id
// order. A sidecar that cannot be resolved (an invariant violation, a
// corrupt or newer-format sidecar, a store failure) is kept and makes the
// open fail, after the others were processed.
func (g *Graph) sweepOpen(ctx context.Context) error {
	_, err := g.sweep(ctx, sweepScope{})
	return err
}

// sweepScope selects the sidecars one sweep acts on.
type sweepScope struct {
	// ignoreLease: act on young sidecars too (Recover with IgnoreLease).
	ignoreLease bool
	// heal: a writer's heal-first, limited to sidecars of branch naming
	// one of tables. Sidecars are listed in creation order, so the listing
	// stops at the first young one.
	heal   bool
	branch format.ID
	tables []string
	// wholeBranch: with heal, every sidecar of branch, whatever its tables
	// (the sweep before a branch's first write in format 8).
	wholeBranch bool
}

func (sc *sweepScope) covers(s *format.Sidecar) bool {
	tables := make([]string, len(s.Tables))
	for i, t := range s.Tables {
		tables[i] = t.Table
	}
	return sc.coversScope(format.SidecarScope{Branch: s.Branch.IncarnationID, Tables: tables})
}

// coversScope reports whether sc selects a sidecar of scope.
func (sc *sweepScope) coversScope(scope format.SidecarScope) bool {
	if !sc.heal {
		return true
	}
	if scope.Branch != sc.branch {
		return false
	}
	if sc.wholeBranch {
		return true
	}
	for _, t := range sc.tables {
		for _, st := range scope.Tables {
			if t == st {
				return true
			}
		}
	}
	return false
}

// concerns reports whether an unreadable sidecar could concern sc: always
// for the open-time sweep and Recover; for a heal-first, unless the
// sidecar's body still shows a scope sc does not select.
func (sc *sweepScope) concerns(ue *UnreadableSidecarError) bool {
	scope, ok := format.ProbeSidecarScope(ue.raw)
	return !ok || sc.coversScope(scope)
}

// young reports whether op's sidecar is younger than the lease by this
// handle's clock (its op id is a ULID minted from the writer's clock).
func (g *Graph) young(op format.ID) bool {
	return g.clock.Now().Sub(ulid.Time(op.Time())) < RecoveryLease
}

// sweep resolves the sidecars sc selects, in op-id (creation) order.
func (g *Graph) sweep(ctx context.Context, sc sweepScope) (RecoveryReport, error) {
	var rep RecoveryReport
	stopAt := func(key string) bool { return false }
	if sc.heal && !sc.ignoreLease {
		stopAt = func(key string) bool {
			op, err := g.keys.ParseSidecarKey(key)
			return err == nil && g.young(op)
		}
	}
	keys, err := g.listSidecars(ctx, MaxSweepSidecars, stopAt)
	if err != nil {
		return rep, fmt.Errorf("recovery sweep: %w", err)
	}
	var errs []error
	for _, key := range keys {
		outcome, err := g.sweepKey(ctx, key, &sc)
		switch {
		case err != nil:
			errs = append(errs, err)
		case outcome == sweptYoung:
			rep.Young++
		case outcome == sweptDeferred:
			rep.Deferred++
		case outcome == sweptResolved:
			rep.Resolved++
		case outcome == sweptUnreadable:
			rep.Unreadable++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("recovery sweep: %w", err)
	}
	return rep, nil
}

// listSidecars lists up to limit sidecar keys in op-id (= key) order,
// stopping before the first key for which stop holds.
func (g *Graph) listSidecars(ctx context.Context, limit int, stop func(key string) bool) ([]string, error) {
	prefix := g.keys.SidecarPrefix()
	var keys []string
	after := ""
	for len(keys) < limit {
		var page objstore.ListPage
		err := g.withRetry(ctx, "list sidecars", func() (err error) {
			page, err = g.store.List(ctx, prefix, after, min(objstore.MaxListLimit, limit-len(keys)))
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, k := range page.Keys {
			if stop(k) {
				return keys, nil
			}
			keys = append(keys, k)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			break
		}
		after = page.Keys[len(page.Keys)-1]
	}
	return keys, nil
}

// sweepOutcome is what became of one listed sidecar.
type sweepOutcome uint8

const (
	sweptSkipped    sweepOutcome = iota // gone already, or out of scope
	sweptYoung                          // within the lease: left to its writer
	sweptDeferred                       // left for a later pass
	sweptResolved                       // audited and deleted
	sweptUnreadable                     // unreadable, but out of a heal-first's scope: left
)

// sweepKey reads and resolves the sidecar at key if sc selects it.
func (g *Graph) sweepKey(ctx context.Context, key string, sc *sweepScope) (sweepOutcome, error) {
	op, err := g.keys.ParseSidecarKey(key)
	if err != nil {
		return sweptSkipped, fmt.Errorf("sidecar %s: %w", key, err)
	}
	if !sc.ignoreLease && g.young(op) {
		return sweptYoung, nil
	}
	if !sc.heal { // a heal-first spends its write's budget
		ctx = g.freshOpBudget(ctx, "recover sidecar "+op.String())
	}
	s, found, err := g.readSidecar(ctx, key)
	if ue, ok := asUnreadable(err); ok && !sc.concerns(ue) {
		return sweptUnreadable, nil
	}
	if err != nil || !found || !sc.covers(&s) {
		return sweptSkipped, err
	}
	r, err := g.resolveSidecar(ctx, &s, false)
	switch {
	case err != nil:
		return sweptSkipped, fmt.Errorf("sidecar %s: %w", key, err)
	case r.deferred:
		return sweptDeferred, nil
	}
	return sweptResolved, nil
}

// readSidecar GETs and decodes the sidecar at key. A vanished sidecar is
// found=false (someone resolved it). One that does not decode is
// *UnreadableSidecarError (wrapping ErrCorrupt or *UnsupportedFormatError)
// and is kept untouched.
func (g *Graph) readSidecar(ctx context.Context, key string) (format.Sidecar, bool, error) {
	op, err := g.keys.ParseSidecarKey(key)
	if err != nil {
		return format.Sidecar{}, false, fmt.Errorf("sidecar %s: %w", key, err)
	}
	var obj objstore.Object
	err = g.withRetry(ctx, "read sidecar", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return format.Sidecar{}, false, nil
	}
	if err != nil {
		return format.Sidecar{}, false, fmt.Errorf("read sidecar %s: %w", key, err)
	}
	s, _, err := format.DecodeSidecar(obj.Data)
	if err == nil && s.Op != op {
		err = fmt.Errorf("it names op %s: %w", s.Op, ErrCorrupt)
	}
	if err != nil {
		return format.Sidecar{}, false, &UnreadableSidecarError{Key: key, Op: op.String(), Err: err, raw: obj.Data}
	}
	return s, true, nil
}

// resolution is what resolving one sidecar came to.
type resolution struct {
	deferred bool          // left for a later pass
	audit    *format.Audit // the record of the action (ours, or found present)
}

// resolveSidecar resolves one sidecar: presence check, observe, classify,
// decide, act, audit, delete. abandon is set when the writer itself gives
// up on its own write (never roll it forward).
//
// Convergence: an action that loses its race (its publish finds a pin
// moved, or a restore finds its version number taken) re-reads and decides
// again. If the winner already resolved the sidecar, the presence check
// sees its audit record and only the delete is left; if the sidecar's
// intent is fully visible the decision is Finish (audit, then delete, never
// a second record); if it is only partly visible, Defer: the sidecar stays
// for the next pass and the caller still succeeds. Passes are bounded by
// the handle's retry budget; running out also defers.
func (g *Graph) resolveSidecar(ctx context.Context, s *format.Sidecar, abandon bool) (resolution, error) {
	for pass := 0; pass < g.budget; pass++ {
		if pass > 0 {
			if err := g.backoff(ctx, pass); err != nil {
				return resolution{}, err
			}
		}
		r, err := g.resolvePass(ctx, s, abandon)
		if !lostRace(err) {
			return r, err
		}
	}
	return resolution{deferred: true}, nil
}

// lostRace reports an action that lost to a concurrent writer or
// recoverer: decide again on fresh state.
func lostRace(err error) bool {
	return errors.Is(err, ErrVersionMismatch) || errors.Is(err, errRestoreRace) || errors.Is(err, errSlotTaken)
}

// resolvePass is one observe-decide-act pass over a sidecar.
func (g *Graph) resolvePass(ctx context.Context, s *format.Sidecar, abandon bool) (resolution, error) {
	if !plant.Enabled(plant.DoubleAudit) { // planted bug: skip the presence check
		a, present, err := g.readAudit(ctx, s.Op)
		if err != nil {
			return resolution{}, err
		}
		if present { // the action completed; only the delete is left
			return resolution{audit: &a}, g.deleteSidecar(ctx, s.Op)
		}
	}
	v, err := g.observe(ctx, s)
	if err != nil {
		return resolution{}, err
	}
	if v.gone && v.published != nil { // published (by a recoverer, maybe) before its branch went
		return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionRollForward, v.published.m.Commit.ID, true, nil))
	}
	if v.gone {
		// A roll-back that landed before its branch went (its recoverer
		// failed before the audit) is audited as that roll-back, naming the
		// plan's commit: never a discard that names nothing (R5).
		p, err := g.landedPlan(ctx, s)
		if err != nil {
			return resolution{}, err
		}
		if p != nil {
			return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionRollBack, p.Commit, false, planPins(p)))
		}
		return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionDiscard, format.ID{}, false, nil))
	}
	classes := make([]recovery.Class, len(v.obs))
	for i, o := range v.obs {
		classes[i] = recovery.Classify(o)
	}
	// A moved read expectation makes the write's own publish impossible:
	// never roll it forward (roll back, like a writer abandoning it). A
	// merge is never rolled forward either: a recovery commit has one
	// parent and would drop the merged parent from the lineage, so a later
	// merge would take an older base and bring deleted rows back.
	// A write validated under a schema the branch no longer has is never
	// rolled forward either (its rows may break the new schema), nor is a
	// schema change's own write (WriterKindSchema: a recovery commit cannot
	// carry its schema, so its rows would land under the old one).
	switch d := recovery.Decide(classes, abandon || v.readMoved || v.schemaMoved || s.MergedParent != nil || s.WriterKind == WriterKindSchema); d {
	case recovery.Fail:
		return resolution{}, v.violation(s)
	case recovery.Defer:
		return resolution{deferred: true}, nil
	case recovery.Finish:
		return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionRollForward, v.published.m.Commit.ID, true, nil))
	case recovery.RollForward:
		c, err := g.rollForward(ctx, s, v)
		if err != nil {
			return resolution{}, err
		}
		if err := g.fp.Hit(ctx, failpoint.AfterRecoveryPublishBeforeAudit); err != nil {
			return resolution{}, err
		}
		return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionRollForward, c.ID, false, nil))
	case recovery.RollBack:
		c, to, err := g.rollBack(ctx, s, v)
		if err != nil {
			return resolution{}, err
		}
		if err := g.fp.Hit(ctx, failpoint.AfterRecoveryPublishBeforeAudit); err != nil {
			return resolution{}, err
		}
		return g.conclude(ctx, s, g.auditOf(s, v, format.DecisionRollBack, c, false, to))
	default:
		panic(fmt.Sprintf("kernel: recovery: unknown decision %v", d))
	}
}

// conclude records a (the action is done), then deletes the sidecar.
func (g *Graph) conclude(ctx context.Context, s *format.Sidecar, a format.Audit) (resolution, error) {
	rec, err := g.writeAudit(ctx, a)
	if err != nil {
		return resolution{}, err
	}
	if err := g.fp.Hit(ctx, failpoint.AfterAuditBeforeSidecarDelete); err != nil {
		return resolution{}, err
	}
	return resolution{audit: &rec}, g.deleteSidecar(ctx, s.Op)
}

// sidecarView is what the sweep observed of one sidecar's tables.
type sidecarView struct {
	gone      bool // the sidecar's branch incarnation no longer exists (deleted, tombstoned, re-created)
	branch    BranchRef
	head      loaded
	obs       []recovery.Observation
	pins      []TableRef // the live pin of each table (zero: unpinned)
	published *loaded    // the first manifest that pinned the sidecar's versions, if any
	readMoved bool       // some read expectation of the sidecar is no longer pinned at its version
	// schemaMoved: the branch's schema is not the one of the write's base
	// manifest (or that manifest is gone).
	schemaMoved bool
}

func (v *sidecarView) violation(s *format.Sidecar) error {
	for i, o := range v.obs {
		if recovery.Classify(o) == recovery.Violation {
			return &RecoveryInvariantError{Op: s.Op.String(), Branch: v.branch.String(), Table: s.Tables[i].Table, Head: o.Head, Pin: o.Pin}
		}
	}
	panic("kernel: recovery: Fail decided without a violating table")
}

// observe loads the sidecar's branch head and, per table, the pin, the live
// HEAD on the sidecar's fork and whether that HEAD is the sidecar's own
// version; then whether a manifest since the write's base pinned the
// sidecar's versions.
func (g *Graph) observe(ctx context.Context, s *format.Sidecar) (sidecarView, error) {
	v := sidecarView{branch: BranchRef{name: s.Branch.Name, inc: s.Branch.Incarnation, incID: s.Branch.IncarnationID}}
	head, found, err := g.latest(ctx, s.Branch.Name)
	if err != nil {
		return v, err
	}
	if checkLive(v.branch, head, found) != nil {
		v.gone = true
		v.published, err = g.publishedBeforeGone(ctx, s)
		return v, err
	}
	v.head = head
	maybePublished := false
	for _, t := range s.Tables {
		o, pin, err := g.observeTable(ctx, &head.m, t)
		if err != nil {
			return v, err
		}
		v.obs, v.pins = append(v.obs, o), append(v.pins, pin)
		maybePublished = maybePublished || o.Pin >= t.Commit
	}
	if maybePublished {
		if v.published, err = g.findPublished(ctx, s, head); err != nil {
			return v, err
		}
	}
	for i := range v.obs {
		v.obs[i].Published = v.published != nil
	}
	_, readsHold := lineage.CheckExpectations(&head.m, readExpectations(s))
	v.readMoved = !readsHold
	if v.schemaMoved, err = g.schemaMovedSince(ctx, s, &head.m); err != nil {
		return v, err
	}
	return v, nil
}

func (g *Graph) observeTable(ctx context.Context, m *format.Manifest, t format.SidecarTable) (recovery.Observation, TableRef, error) {
	o := recovery.Observation{Expected: t.Expected, Commit: t.Commit}
	var pin TableRef
	if p, ok := m.Pin(t.Table); ok {
		pin = p.Ref()
		o.Pin = p.Version
	}
	forkHead, err := g.forkHead(ctx, t.Table, t.Fork)
	if err != nil {
		return o, pin, err
	}
	o.Head = forkHead
	if (pin.Fork != t.Fork || pin.Named()) && forkHead < pin.Version {
		// The fork has nothing above an inherited pin, or no counter-named
		// version above a pin named per attempt (format 8): the pin is the HEAD.
		o.Head = pin.Version
	}
	if forkHead == t.Commit {
		if o.HeadOurs, err = g.versionIsOurs(ctx, t); err != nil {
			return o, pin, err
		}
	}
	return o, pin, nil
}

// forkHead is the newest version of table on fork (LIST limit 1), 0 if none.
func (g *Graph) forkHead(ctx context.Context, table string, fork format.ID) (uint64, error) {
	var page objstore.ListPage
	err := g.withRetry(ctx, "table head", func() (err error) {
		page, err = g.store.List(ctx, g.keys.TableForkPrefix(table, fork), "", 1)
		return err
	})
	if err != nil || len(page.Keys) == 0 || g.keys.IsTableAttemptKey(table, fork, page.Keys[0]) {
		return 0, err // none, or only versions named per attempt (sorted after every counter key)
	}
	return g.keys.ParseTableVersionKey(table, fork, page.Keys[0])
}

// versionIsOurs reports whether the version t.Commit on t.Fork exists and
// carries the sidecar's writer token.
func (g *Graph) versionIsOurs(ctx context.Context, t format.SidecarTable) (bool, error) {
	want, err := t.TokenOf()
	if err != nil {
		return false, err
	}
	key := g.keys.TableVersion(t.Table, t.Fork, t.Commit)
	var obj objstore.Object
	err = g.withRetry(ctx, "read table version", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	env, err := format.DecodeEnvelope(obj.Data)
	if err != nil {
		return false, fmt.Errorf("read table version %s: %w", key, err)
	}
	return env.Token == want, nil
}

// publishedBeforeGone returns the manifest of the sidecar's own (now
// deleted or replaced) branch incarnation that published the sidecar's
// versions, if any: a write rolled forward, or published by its writer,
// before the branch was deleted. Its audit must name that commit, never
// discard it (R5).
func (g *Graph) publishedBeforeGone(ctx context.Context, s *format.Sidecar) (*loaded, error) {
	var page objstore.ListPage
	err := g.withRetry(ctx, "load incarnation head", func() (err error) {
		page, err = g.store.List(ctx, g.keys.IncarnationPrefix(s.Branch.Name, s.Branch.Incarnation), "", 1)
		return err
	})
	if err != nil || len(page.Keys) == 0 {
		return nil, err
	}
	_, ver, err := g.keys.ParseManifestKey(s.Branch.Name, page.Keys[0])
	if err != nil {
		return nil, err
	}
	head, err := g.manifestAt(ctx, format.ManifestRef{Branch: s.Branch.Name, Incarnation: s.Branch.Incarnation, Version: ver})
	if err != nil || head.m.Branch.IncarnationID != s.Branch.IncarnationID {
		return nil, err
	}
	return g.findPublished(ctx, s, head)
}

// findPublished returns the first manifest after the sidecar's base that
// pinned exactly the sidecar's versions (with its tokens), or nil. Pins
// never go backwards, so the first manifest whose pin of the first table
// reaches the sidecar's version is found by binary search; the sidecar's
// versions were published iff that manifest pins all of them exactly.
func (g *Graph) findPublished(ctx context.Context, s *format.Sidecar, head loaded) (*loaded, error) {
	t0 := s.Tables[0]
	reached := func(l loaded) bool { p, _ := l.m.Pin(t0.Table); return p.Version >= t0.Commit }
	lo, hi := s.BaseManifest+1, head.m.Version
	if hi < lo || !reached(head) {
		return nil, nil
	}
	for probes := 0; lo < hi; probes++ {
		if probes >= maxPublishedProbes {
			return nil, fmt.Errorf("find published manifest of op %s: search exceeded %d probes: %w", s.Op, maxPublishedProbes, ErrCorrupt)
		}
		mid := lo + (hi-lo)/2
		l, err := g.manifestAt(ctx, format.ManifestRef{Branch: s.Branch.Name, Incarnation: s.Branch.Incarnation, Version: mid})
		if err != nil {
			return nil, err
		}
		if reached(l) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	l, err := g.manifestAt(ctx, format.ManifestRef{Branch: s.Branch.Name, Incarnation: s.Branch.Incarnation, Version: lo})
	if err != nil {
		return nil, err
	}
	for _, t := range s.Tables {
		if p, ok := l.m.Pin(t.Table); !ok || p.Fork != t.Fork || p.Version != t.Commit || p.Attempt != (format.ID{}) {
			return nil, nil
		}
		if ours, err := g.versionIsOurs(ctx, t); err != nil || !ours {
			return nil, err
		}
	}
	if l.m.Commit == nil {
		panic(fmt.Sprintf("kernel: recovery: manifest v%d after a base pins a sidecar's versions but has no commit", lo))
	}
	return &l, nil
}

// rollForward publishes the sidecar's versions in one recovery commit that
// carries the writer's message, expecting every pin to still be the one the
// write was planned on: it can never overwrite a newer publish.
func (g *Graph) rollForward(ctx context.Context, s *format.Sidecar, v sidecarView) (Commit, error) {
	var updates []TableUpdate
	var exp []Expectation
	for _, t := range s.Tables {
		tv, err := g.ReadTable(ctx, t.Table, TableRef{Fork: t.Fork, Version: t.Commit})
		if err != nil {
			return Commit{}, err
		}
		updates = append(updates, TableUpdate{Table: t.Table, Fork: t.Fork, Version: t.Commit, Rows: tv.Rows})
		exp = append(exp, Expectation{Table: t.Table, Version: t.Expected})
	}
	exp = append(exp, readExpectations(s)...)
	if err := g.fp.Hit(ctx, failpoint.BeforeRollForwardPublish); err != nil {
		return Commit{}, err
	}
	req, err := g.recoveryReq(ctx, v.branch, updates, exp, s.Message)
	if err != nil {
		return Commit{}, err
	}
	req.expectSchema = v.head.m.Schema // observe found it equal to the write's base schema
	// The writer may have died before its publish made its versions
	// durable (putCreateOnlyDeferred): this publish does it first.
	for _, t := range s.Tables {
		req.deferred = append(req.deferred, g.keys.TableVersion(t.Table, t.Fork, t.Commit))
	}
	return g.publish(ctx, req)
}

// readExpectations are the sidecar's read expectations, as the writer's
// publish would have expected them.
func readExpectations(s *format.Sidecar) []Expectation {
	exp := make([]Expectation, len(s.Reads))
	for i, r := range s.Reads {
		exp[i] = Expectation{Table: r.Table, Version: r.Version}
	}
	return exp
}

// errRestoreRace: a restore lost its create-only write (someone wrote that
// version first); the sidecar must be observed again.
var errRestoreRace = errors.New("kernel: recovery: restore version taken concurrently")

// errSlotTaken: a roll-back plan's publish found its manifest slot taken;
// the plan is landed (a peer published it) or dead, and the sidecar must be
// observed again.
var errSlotTaken = errors.New("kernel: recovery: roll-back plan's manifest slot taken")

// writeRestore writes version at of t's table on t's fork: a copy of the
// pinned content (pin zero: an empty fence), carrying tok (a roll-back
// plan's token: a peer following the same plan writes the same bytes).
//
// m, if set, is the manifest the pin was taken from: a pin named per
// attempt is read through it, as the version may ride it (format 11).
func (g *Graph) writeRestore(ctx context.Context, t format.SidecarTable, at uint64, m *format.Manifest, pin TableRef, tok format.Token) (TableUpdate, error) {
	tv := format.TableVersion{Table: t.Table, Fork: t.Fork, Version: at}
	if pin != (TableRef{}) {
		read := func() (TableVersion, error) { return g.ReadTable(ctx, t.Table, pin) }
		if p, ok := pinIn(m, t.Table, pin); ok {
			pin = p.Ref() // Rides set if it rides
			read = func() (TableVersion, error) { return g.ReadPinned(ctx, p) }
		}
		src, err := read()
		if err != nil {
			return TableUpdate{}, err
		}
		base := pin
		tv.Fragments, tv.Rows, tv.Metadata, tv.BasedOn = src.Fragments, src.Rows, src.Metadata, &base
	}
	data, err := format.EncodeTableVersion(&tv, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: recovery: invalid restore version: %v", err))
	}
	key := g.keys.TableVersion(t.Table, t.Fork, at)
	ours, err := g.putCreateOnly(ctx, "write restore version", key, data)
	if err != nil {
		return TableUpdate{}, err
	}
	if !ours {
		return TableUpdate{}, fmt.Errorf("%w: %s", errRestoreRace, key)
	}
	g.tables.put(key, tv)
	return TableUpdate{Table: t.Table, Fork: t.Fork, Version: at, Rows: tv.Rows}, nil
}

// pinIn returns m's pin of table when it names ref's version (fork,
// number and attempt; whether it rides is the pin's to say): m may be nil.
func pinIn(m *format.Manifest, table string, ref TableRef) (TablePin, bool) {
	if m == nil {
		return TablePin{}, false
	}
	p, ok := m.Pin(table)
	return p, ok && p.Fork == ref.Fork && p.Version == ref.Version && p.Attempt == ref.Attempt
}

// recoveryReq is the publish request of a recovery commit: actor
// RecoveryActor, kind recovery.
func (g *Graph) recoveryReq(ctx context.Context, b BranchRef, updates []TableUpdate, exp []Expectation, msg string) (publishReq, error) {
	req, err := g.newPublishReq(ctx, b, updates, LineageIntent{Actor: RecoveryActor, Message: msg}, exp)
	req.commit.Kind = format.KindRecovery
	return req, err
}

// auditOf builds the audit record of an action on s. to (nil: the pins the
// view saw, or the sidecar's versions for a roll-forward) is the pin of each
// table after the action.
func (g *Graph) auditOf(s *format.Sidecar, v sidecarView, d format.AuditDecision, commit format.ID, converged bool, to []uint64) format.Audit {
	a := format.Audit{Op: s.Op, Branch: s.Branch, WriterKind: s.WriterKind, Actor: s.Actor, Decision: d,
		Converged: converged, RecoveryCommit: commit, TimeUnixNano: g.clock.Now().UnixNano()}
	for i, t := range s.Tables {
		at := format.AuditTable{Table: t.Table, Fork: t.Fork}
		if !v.gone {
			at.FromPinned, at.FromHead = v.obs[i].Pin, v.obs[i].Head
		}
		switch {
		case d == format.DecisionRollForward:
			at.To = t.Commit
		case to != nil:
			at.To = to[i]
		default:
			at.To = at.FromPinned
		}
		a.Tables = append(a.Tables, at)
	}
	return a
}

// readAudit returns the audit record of op, if present.
func (g *Graph) readAudit(ctx context.Context, op format.ID) (format.Audit, bool, error) {
	key := g.keys.Audit(op)
	var obj objstore.Object
	err := g.withRetry(ctx, "read audit", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return format.Audit{}, false, nil
	}
	if err != nil {
		return format.Audit{}, false, fmt.Errorf("read audit %s: %w", key, err)
	}
	a, _, err := format.DecodeAudit(obj.Data)
	if err != nil {
		return format.Audit{}, false, fmt.Errorf("read audit %s: %w", key, err)
	}
	if a.Op != op {
		return format.Audit{}, false, fmt.Errorf("audit %s names op %s: %w", key, a.Op, ErrCorrupt)
	}
	return a, true, nil
}

// writeAudit writes a create-only at the one audit key of its op. If a
// record is already there (a concurrent or crashed recoverer of the same
// sidecar finished first), it is read back and kept: the first record wins
// and no second one can exist. It returns the record now stored.
func (g *Graph) writeAudit(ctx context.Context, a format.Audit) (format.Audit, error) {
	tok, err := g.token()
	if err != nil {
		return format.Audit{}, err
	}
	data, err := format.EncodeAudit(&a, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: recovery: built an invalid audit record: %v", err))
	}
	key := g.keys.Audit(a.Op)
	if plant.Enabled(plant.DoubleAudit) { // planted bug: a fresh key per record
		id, err := g.mintID()
		if err != nil {
			return format.Audit{}, err
		}
		key = g.keys.AuditOpPrefix(a.Op) + id.String()
	}
	ours, err := g.putCreateOnly(ctx, "write audit", key, data)
	if err != nil {
		return format.Audit{}, err
	}
	if ours {
		return a, nil
	}
	prev, present, err := g.readAudit(ctx, a.Op)
	if err != nil {
		return format.Audit{}, err
	}
	if !present || prev.Branch != a.Branch {
		return format.Audit{}, fmt.Errorf("audit %s: the record already there is not this sidecar's: %w", key, ErrCorrupt)
	}
	return prev, nil
}

// deleteSidecar removes the sidecar of op (absent is fine).
func (g *Graph) deleteSidecar(ctx context.Context, op format.ID) error {
	key := g.keys.Sidecar(op)
	if err := g.withRetry(ctx, "delete sidecar", func() error { return g.store.Delete(ctx, key) }); err != nil {
		return fmt.Errorf("delete sidecar %s: %w", key, err)
	}
	return nil
}
