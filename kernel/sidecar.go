package kernel

import (
	"context"
	"errors"
	"fmt"

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
}

// writeRun is the recovery state of one Write call across its rounds.
type writeRun struct {
	kind string
	own  *format.Sidecar // the durable sidecar of the current round, nil if none
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
			base = TableRef{Fork: pin.Fork, Version: pin.Version}
			var err error
			if pinned, err = g.ReadTable(ctx, w.Table, base); err != nil {
				return nil, err
			}
		}
		content, err := w.Build(pinned)
		if err != nil {
			return nil, fmt.Errorf("build %q: %w", w.Table, err)
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
	run.own = &s
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

// commitPlanned writes p's version create-only with the token the sidecar
// names. Losing the create-only write (someone else's version, or a
// recoverer's fence, took the number) is a *VersionMismatchError: refresh
// and retry.
func (g *Graph) commitPlanned(ctx context.Context, b BranchRef, p plannedWrite) (TableUpdate, error) {
	tv := format.TableVersion{Table: p.table, Fork: b.incID, Version: p.version, Rows: p.content.Rows,
		Fragments: append([]string(nil), p.content.Fragments...), Metadata: sortedMetadata(p.content.Metadata)}
	if len(tv.Fragments) == 0 {
		tv.Fragments = nil
	}
	if p.pin != (TableRef{}) {
		base := p.pin
		tv.BasedOn = &base
	}
	data, err := format.EncodeTableVersion(&tv, p.token)
	if err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version of %q: %w: %v", p.table, ErrInvalidArgument, err)
	}
	key := g.keys.TableVersion(p.table, b.incID, p.version)
	ours, err := g.putCreateOnly(ctx, "commit table version", key, data)
	if err != nil {
		return TableUpdate{}, err
	}
	if !ours {
		return TableUpdate{}, &VersionMismatchError{Table: p.table, Expected: p.version - 1, Actual: p.version}
	}
	g.tables.put(key, tv)
	return TableUpdate{Table: p.table, Fork: b.incID, Version: p.version, Rows: tv.Rows}, nil
}

// isStoreNotFound reports a store not-found.
func isStoreNotFound(err error) bool { return errors.Is(err, objstore.ErrNotFound) }

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
