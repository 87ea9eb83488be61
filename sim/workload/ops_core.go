package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

func init() {
	RegisterOp("commit", func(p *Proc, idx int, op Op) error {
		_, err := p.Commit(p.Tag(idx), op.Arg("branch"), op.List("tables"), op.Flag("strict"))
		return err
	})
	RegisterOp("read", opRead)
	RegisterOp("snap", opSnap)
	RegisterOp("recheck", opRecheck)
	RegisterOp("create", opCreate)
	RegisterOp("delete", opDelete)
	RegisterOp("merge", opMerge)
	RegisterOp("reopen", opReopen)
}

// commitResult is what a commit operation learned.
type commitResult struct {
	acked bool
	err   error
}

// Commit writes one new version of each table (content tagged with tag) on
// branch and publishes them in one commit whose message carries tag, through
// kernel.Write, recording the call and its outcome in the history. Strict
// tables must still be at the version the process read just before. The
// returned error is non-nil only if the process must end.
func (p *Proc) Commit(tag, branch string, tables []string, strict bool) (commitResult, error) {
	ctx := p.Ctx()
	ref, err := p.g.Branch(ctx, branch)
	if err != nil {
		return p.notStarted("commit: branch", err)
	}
	writes := make([]check.TableWrite, 0, len(tables))
	kw := make([]kernel.TableWrite, 0, len(tables))
	var snap kernel.Snapshot
	if strict {
		if snap, err = p.g.SnapshotAt(ctx, ref); err != nil {
			return p.notStarted("commit: snapshot", err)
		}
	}
	for _, t := range tables {
		tw := check.TableWrite{Table: t, Strict: strict}
		w := kernel.TableWrite{Table: t, Strict: strict, Build: build(tag)}
		if strict {
			if tw.Expect, w.BaseVersion, err = p.valueAt(snap, t); err != nil {
				return p.notStarted("commit: base", err)
			}
		}
		writes, kw = append(writes, tw), append(kw, w)
	}
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(branch, ref.Incarnation()), tag, writes)
	p.run.note("%s commit %s on %s tables=%v strict=%t", p.name, tag, ref, tables, strict)
	_, err = p.g.Write(ctx, ref, kw, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)})
	if p.Over(err) {
		return commitResult{}, p.end(err) // pending: ambiguous forever
	}
	out := Outcome(err)
	pc.End(out)
	p.run.note("%s commit %s -> %v (%v)", p.name, tag, out, errText(err))
	p.Unexpected("commit", err)
	return commitResult{acked: out == model.OK, err: err}, nil
}

// notStarted handles an error before a commit's first durable effect: no
// operation is recorded.
func (p *Proc) notStarted(what string, err error) (commitResult, error) {
	if p.Over(err) {
		return commitResult{}, p.end(err)
	}
	p.Unexpected(what, err)
	return commitResult{err: err}, nil
}

// build returns a Build function whose content carries tag.
func build(tag string) func(kernel.TableVersion) (kernel.TableContent, error) {
	return func(pinned kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Rows: pinned.Rows + 1, Metadata: map[string]string{check.MetaTag: tag}}, nil
	}
}

// valueAt returns the value (writer tag) and version of table in snap.
func (p *Proc) valueAt(snap kernel.Snapshot, table string) (string, uint64, error) {
	pin, ok := snap.Table(table)
	if !ok {
		return model.Absent, 0, nil
	}
	tv, err := p.g.ReadPinned(p.Ctx(), pin)
	if err != nil {
		return "", 0, err
	}
	return check.TagOfTable(tv), pin.Version, nil
}

// opRead reads one branch atomically: a snapshot at its head, the chain of
// commit tags of its incarnation up to that manifest, and the value of every
// listed table in that snapshot.
func opRead(p *Proc, _ int, op Op) error {
	ctx := p.Ctx()
	ref, err := p.g.Branch(ctx, op.Arg("branch"))
	if err != nil {
		return p.readFailed("read: branch", err)
	}
	pr := p.run.H.BeginRead(p.client())
	snap, err := p.g.SnapshotAt(ctx, ref)
	if err != nil {
		return p.readFailed("read: snapshot", err)
	}
	chain, err := p.chainOf(ref, snap.ManifestVersion())
	if err != nil {
		return p.readFailed("read: log", err)
	}
	var values []check.TableValue
	for _, t := range op.List("tables") {
		v, _, err := p.valueAt(snap, t)
		if err != nil {
			return p.readFailed("read: table", err)
		}
		values = append(values, check.TableValue{Table: t, Value: v})
	}
	if p.Over(nil) {
		return p.end(nil)
	}
	pr.End(check.IncarnationKey(ref.Name(), ref.Incarnation()), chain, values)
	return nil
}

// readFailed ends the process if it must, else drops the read.
func (p *Proc) readFailed(what string, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	p.Unexpected(what, err)
	return nil
}

// chainOf returns the tags of the commits of ref's incarnation up to
// manifest version, oldest first.
func (p *Proc) chainOf(ref kernel.BranchRef, version uint64) ([]string, error) {
	return ChainTags(p.Ctx(), p.g, ref, version, maxLogPages)
}

// ChainTags returns the tags (check.TagsOf) of the commits of ref's
// incarnation up to manifest version, oldest first, reading at most
// maxPages pages of the log (a longer log is an error).
func ChainTags(ctx context.Context, g *kernel.Graph, ref kernel.BranchRef, version uint64, maxPages int) ([]string, error) {
	var tags []string
	cursor := kernel.LogCursor("")
	for page := 0; page < maxPages; page++ {
		lp, err := g.Log(ctx, ref, cursor, logPageSize)
		if err != nil {
			return nil, err
		}
		for _, c := range lp.Commits {
			if c.Branch != ref.Name() || c.Incarnation != ref.Incarnation() {
				slices.Reverse(tags)
				return tags, nil
			}
			if c.ManifestVersion > version {
				continue
			}
			if ts, ok := check.TagsOf(c.Message); ok { // a group commit's members, in position order
				slices.Reverse(ts) // the whole list is reversed at the end
				tags = append(tags, ts...)
			}
		}
		if lp.Next == "" {
			slices.Reverse(tags)
			return tags, nil
		}
		cursor = lp.Next
	}
	return nil, fmt.Errorf("log of %s longer than %d pages", ref, maxPages)
}

// heldSnap is a snapshot a process keeps to check it never changes.
type heldSnap struct {
	snap kernel.Snapshot
	pins []kernel.TablePin
}

// snapRecord is a snapshot taken during the run, checked against the
// durable manifest at the end.
type snapRecord struct {
	branch  string
	inc     uint64
	version uint64
	pins    []kernel.TablePin
}

// opSnap takes a snapshot at a branch head (at=head) or at an old commit of
// its log (at=old), and holds it.
func opSnap(p *Proc, _ int, op Op) error {
	ctx := p.Ctx()
	ref, err := p.g.Branch(ctx, op.Arg("branch"))
	if err != nil {
		return p.readFailed("snap: branch", err)
	}
	var snap kernel.Snapshot
	if op.Arg("at") == "old" {
		c, ok, err := p.oldCommit(ref)
		if err != nil || !ok {
			return p.readFailed("snap: log", err)
		}
		snap, err = p.g.SnapshotAtCommit(ctx, c.ID)
		if err != nil {
			return p.readFailed("snap: at commit", err)
		}
	} else if snap, err = p.g.SnapshotAt(ctx, ref); err != nil {
		return p.readFailed("snap: head", err)
	}
	if p.Over(nil) {
		return p.end(nil)
	}
	p.hold(snap)
	return nil
}

// oldCommit picks a random commit from the first page of ref's log.
func (p *Proc) oldCommit(ref kernel.BranchRef) (kernel.Commit, bool, error) {
	lp, err := p.g.Log(p.Ctx(), ref, "", 64)
	if err != nil || len(lp.Commits) == 0 {
		return kernel.Commit{}, false, err
	}
	return lp.Commits[p.Rand().IntN(len(lp.Commits))], true, nil
}

func (p *Proc) hold(snap kernel.Snapshot) {
	h := heldSnap{snap: snap, pins: snap.Tables()}
	p.held = append(p.held, h)
	if len(p.held) > maxHeldSnapshots {
		p.held = p.held[1:]
	}
	p.run.mu.Lock()
	defer p.run.mu.Unlock()
	if len(p.run.snaps) < maxRecordedSnaps {
		p.run.snaps = append(p.run.snaps, snapRecord{branch: snap.Branch(), inc: snap.Incarnation(), version: snap.ManifestVersion(), pins: h.pins})
	}
}

// opRecheck re-reads every held snapshot: the snapshot value and a fresh
// snapshot at the same commit must still show the same pins.
func opRecheck(p *Proc, _ int, _ Op) error {
	for _, h := range p.held {
		if !slices.Equal(h.snap.Tables(), h.pins) {
			p.run.Violate(check.Violation{Check: "snapshot-immutable", Detail: fmt.Sprintf(
				"%s: snapshot of %s#%d v%d changed in memory", p.name, h.snap.Branch(), h.snap.Incarnation(), h.snap.ManifestVersion())})
		}
		again, err := p.g.SnapshotAtCommit(p.Ctx(), h.snap.Head())
		if err != nil {
			if p.Over(err) {
				return p.end(err)
			}
			p.Unexpected("recheck", err)
			continue
		}
		if !slices.Equal(again.Tables(), h.pins) {
			p.run.Violate(check.Violation{Check: "snapshot-immutable", Detail: fmt.Sprintf(
				"%s: snapshot at commit %s of %s#%d v%d now pins %v, was %v", p.name, h.snap.Head(),
				h.snap.Branch(), h.snap.Incarnation(), h.snap.ManifestVersion(), again.Tables(), h.pins)})
		}
	}
	return nil
}

// opCreate creates branch name from the head of from, or (at=old) from a
// random commit of from's log.
func opCreate(p *Proc, _ int, op Op) error {
	ctx := p.Ctx()
	src, err := p.g.Branch(ctx, op.Arg("from"))
	if err != nil {
		return p.readFailed("create: source", err)
	}
	if op.Arg("at") == "old" {
		c, ok, err := p.oldCommit(src)
		if err != nil || !ok {
			return p.readFailed("create: log", err)
		}
		_, err = p.g.CreateBranchAt(ctx, op.Arg("name"), c.ID)
		return p.branchOpDone("create", op, err)
	}
	_, err = p.g.CreateBranch(ctx, op.Arg("name"), src)
	return p.branchOpDone("create", op, err)
}

// opDelete deletes branch name (refused while it has dependents). An
// acknowledged delete is checked against the durable state before and
// after it: no fork of the deleted incarnation may have been live
// throughout (check.CheckDeleteDependents).
func opDelete(p *Proc, _ int, op Op) error {
	name := op.Arg("name")
	heads := check.Heads(p.run.Insp, p.run.Root)
	target, live := liveHead(heads, name)
	err := p.g.DeleteBranch(p.Ctx(), name)
	if err == nil && live {
		src := target.Branch.IncarnationID
		after := check.Heads(p.run.Insp, p.run.Root)
		if now, ok := headNamed(after, name); ok && now.Tombstone && now.Branch.IncarnationID == src {
			for _, v := range check.CheckDeleteDependents(target.Branch, check.LiveForks(heads, src), check.LiveForks(after, src)) {
				p.run.Violate(v)
			}
		}
	}
	return p.branchOpDone("delete", op, err)
}

// headNamed returns the head manifest of name among heads.
func headNamed(heads []format.Manifest, name string) (format.Manifest, bool) {
	for _, m := range heads {
		if m.Branch.Name == name {
			return m, true
		}
	}
	return format.Manifest{}, false
}

// liveHead returns name's head among heads if it is live.
func liveHead(heads []format.Manifest, name string) (format.Manifest, bool) {
	m, ok := headNamed(heads, name)
	return m, ok && !m.Tombstone
}

func (p *Proc) branchOpDone(what string, op Op, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	p.run.note("%s %s %s -> %v", p.name, what, op.Arg("name"), errText(err))
	p.Unexpected(what, err)
	return nil
}

// opMerge publishes a merge commit on into whose merged parent is the head
// of from (no table changes), recorded as a commit of into's chain.
func opMerge(p *Proc, idx int, op Op) error {
	ctx := p.Ctx()
	src, err := p.g.Branch(ctx, op.Arg("from"))
	if err != nil {
		return p.readFailed("merge: source", err)
	}
	head, err := p.g.Head(ctx, src)
	if err != nil {
		return p.readFailed("merge: source head", err)
	}
	into, err := p.g.Branch(ctx, op.Arg("into"))
	if err != nil {
		return p.readFailed("merge: target", err)
	}
	tag := p.Tag(idx)
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(into.Name(), into.Incarnation()), tag, nil)
	id := head.ID
	_, err = p.g.Publish(ctx, into, nil, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag), MergedParent: &id}, nil)
	if p.Over(err) {
		return p.end(err)
	}
	pc.End(Outcome(err))
	p.run.note("%s merge %s %s into %s -> %v", p.name, tag, src, into, errText(err))
	p.Unexpected("merge", err)
	return nil
}

// opReopen drops the process's handle and opens the graph again.
func opReopen(p *Proc, _ int, _ Op) error {
	g, err := kernel.Open(p.Ctx(), p.run.Store, p.run.Root, p.kopts())
	if err != nil {
		return p.readFailed("reopen", err)
	}
	p.g = g
	return nil
}

// checkSnapshots compares every recorded snapshot with the durable manifest
// it came from.
func (r *Run) checkSnapshots(g check.Graph) []check.Violation {
	byKey := map[string]check.Incarnation{}
	for _, inc := range g.Incarnations {
		byKey[inc.Key] = inc
	}
	var vs []check.Violation
	for _, s := range r.snaps {
		inc, ok := byKey[check.IncarnationKey(s.branch, s.inc)]
		if !ok || s.version >= uint64(len(inc.Manifests)) {
			vs = append(vs, check.Violation{Check: "snapshot-immutable", Detail: fmt.Sprintf(
				"snapshot %s#%d v%d: manifest gone", s.branch, s.inc, s.version)})
			continue
		}
		if !slices.Equal(inc.Manifests[s.version].Tables, s.pins) {
			vs = append(vs, check.Violation{Check: "snapshot-immutable", Detail: fmt.Sprintf(
				"snapshot %s#%d v%d: manifest now pins %v, snapshot saw %v", s.branch, s.inc, s.version,
				inc.Manifests[s.version].Tables, s.pins)})
		}
	}
	return vs
}

// note adds a line to the world's trace (and hash).
func (r *Run) note(format string, args ...any) {
	if r.W != nil {
		r.W.Note(format, args...)
	}
}

// errText renders an error class for trace lines without addresses.
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	var ce *kernel.ContentionError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("contention(ambiguous=%t)", ce.Ambiguous)
	case errors.Is(err, kernel.ErrVersionMismatch):
		return "version-mismatch"
	case errors.Is(err, kernel.ErrBranchNotFound):
		return "branch-not-found"
	case errors.Is(err, kernel.ErrBranchExists):
		return "branch-exists"
	case errors.Is(err, kernel.ErrHasDependents):
		return "has-dependents"
	case errors.Is(err, kernel.ErrInvalidArgument), errors.Is(err, kernel.ErrInvalidName):
		return "invalid"
	case errors.Is(err, kernel.ErrNotFound):
		return "not-found"
	case errors.Is(err, data.ErrValidation):
		return "validation"
	case errors.Is(err, kernel.ErrContention):
		return "contention"
	case errors.Is(err, kernel.ErrClockSkew):
		return "clock-skew"
	case errors.Is(err, failpoint.ErrInjected):
		return "injected"
	case errors.Is(err, objstore.ErrTransient):
		return "transient"
	}
	return "error"
}
