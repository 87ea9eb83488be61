package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/recovery"
	"github.com/graphkernel/graphkernel/objstore"
)

// Roll-back plans (R5). A roll-back is carried out from the one stored plan
// of its op (format.RecoveryPlan at Keys.RecoveryPlan(op)): the restore
// versions to write, the commit id, and the one manifest version (slot) the
// recovery commit may land at. Every recoverer of the op follows the stored
// plan, so racing recoverers write the same restores and publish the same
// commit at the same slot: at most one recovery commit can land, and a
// recoverer that finds the plan landed publishes nothing and audits the
// plan's commit. The decisions are recovery.RestoreAt and recovery.JudgePlan.

// maxPlanRounds bounds the load-judge-replace rounds of one pass; a pass
// that ends with a dead plan reports errRestoreRace and the sweep observes
// again (bounded by the handle's budget).
const maxPlanRounds = 3

// storedPlan is a plan as loaded from the store.
type storedPlan struct {
	plan  format.RecoveryPlan
	token format.Token // carried by the plan object and by every restore of the plan
	etag  string
	found bool
}

// rollBack carries out the op's roll-back plan: it returns the plan's
// recovery commit and the pin of each table after it. A plan found landed
// publishes nothing.
func (g *Graph) rollBack(ctx context.Context, s *format.Sidecar, v sidecarView) (format.ID, []uint64, error) {
	sp, status, err := g.livePlan(ctx, s, v)
	if err != nil {
		return format.ID{}, nil, err
	}
	if status == recovery.PlanLive {
		if err := g.carryOut(ctx, s, sp); err != nil {
			return format.ID{}, nil, err
		}
	}
	return sp.plan.Commit, planPins(&sp.plan), nil
}

// livePlan returns the op's plan and its status, live or landed: the stored
// plan, or a new one made from v when none is stored or the stored one is
// dead.
func (g *Graph) livePlan(ctx context.Context, s *format.Sidecar, v sidecarView) (storedPlan, recovery.PlanStatus, error) {
	if plant.Enabled(plant.PrivatePlan) { // planted bug: every recoverer plans on its own
		return g.privatePlan(s, v)
	}
	sp, err := g.loadPlan(ctx, s.Op)
	if err != nil {
		return sp, 0, err
	}
	for round := 0; round < maxPlanRounds; round++ {
		if sp.found {
			status, err := g.judgePlan(ctx, s, &sp)
			if err != nil || status != recovery.PlanDead {
				return sp, status, err
			}
		}
		if sp, err = g.storePlan(ctx, s, v, sp); err != nil { // none stored, or the stored one is dead
			return sp, 0, err
		}
	}
	return sp, 0, fmt.Errorf("%w: roll-back plan of op %s still dead after %d rounds", errRestoreRace, s.Op, maxPlanRounds)
}

// privatePlan is the planted bug private-plan (internal/plant; dead code
// unless built with -tags simplant and switched on): a plan made from v and
// never stored, so a recoverer racing another publishes its own commit.
func (g *Graph) privatePlan(s *format.Sidecar, v sidecarView) (storedPlan, recovery.PlanStatus, error) {
	p, err := g.newPlan(s, v, 1)
	if err != nil {
		return storedPlan{}, 0, err
	}
	tok, err := g.token()
	return storedPlan{plan: p, token: tok, found: true}, recovery.PlanLive, err
}

// newPlan is the plan made from v: restores per recovery.RestoreAt, a fresh
// commit id, the slot one above v's head.
func (g *Graph) newPlan(s *format.Sidecar, v sidecarView, gen uint32) (format.RecoveryPlan, error) {
	id, err := g.mintID()
	if err != nil {
		return format.RecoveryPlan{}, err
	}
	p := format.RecoveryPlan{Op: s.Op, Gen: gen, Branch: s.Branch, Commit: id, Slot: v.head.m.Version + 1}
	at := recovery.RestoreAt(v.obs)
	for i, t := range s.Tables {
		p.Tables = append(p.Tables, format.PlanTable{Table: t.Table, Fork: t.Fork, PinFork: v.pins[i].Fork, Pin: v.pins[i].Version, Restore: at[i], PinAttempt: v.pins[i].Attempt})
	}
	return p, nil
}

// storePlan stores a new plan made from v: create-only when none is stored,
// else a compare-and-swap over the dead plan prev. Losing either race (or an
// ambiguous write that did not apply) loads and returns what is stored now.
func (g *Graph) storePlan(ctx context.Context, s *format.Sidecar, v sidecarView, prev storedPlan) (storedPlan, error) {
	gen := uint32(1)
	if prev.found {
		gen = prev.plan.Gen + 1
	}
	p, err := g.newPlan(s, v, gen)
	if err != nil {
		return prev, err
	}
	tok, err := g.token()
	if err != nil {
		return prev, err
	}
	data, err := format.EncodeRecoveryPlan(&p, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: recovery: built an invalid plan: %v", err))
	}
	key := g.keys.RecoveryPlan(s.Op)
	cond := objstore.CreateOnly
	if prev.found {
		cond = objstore.IfMatch(prev.etag)
	}
	var etag string
	err = g.withRetry(ctx, "write recovery plan", func() (err error) { etag, err = g.store.Put(ctx, key, data, cond); return err })
	switch {
	case err == nil:
		return storedPlan{plan: p, token: tok, etag: etag, found: true}, nil
	case errors.Is(err, objstore.ErrPreconditionFailed), objstore.IsAmbiguous(err):
		return g.loadPlan(ctx, s.Op) // theirs, ours (ambiguous, applied) or still the dead one
	}
	return prev, fmt.Errorf("write recovery plan %s: %w", key, err)
}

// loadPlan reads the op's stored plan (found=false: none yet).
func (g *Graph) loadPlan(ctx context.Context, op format.ID) (storedPlan, error) {
	key := g.keys.RecoveryPlan(op)
	var obj objstore.Object
	err := g.withRetry(ctx, "read recovery plan", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return storedPlan{}, nil
	}
	if err != nil {
		return storedPlan{}, fmt.Errorf("read recovery plan %s: %w", key, err)
	}
	p, tok, err := format.DecodeRecoveryPlan(obj.Data)
	if err != nil {
		return storedPlan{}, fmt.Errorf("recovery plan %s: %w", key, err)
	}
	if p.Op != op {
		return storedPlan{}, fmt.Errorf("recovery plan %s names op %s: %w", key, p.Op, ErrCorrupt)
	}
	return storedPlan{plan: p, token: tok, etag: obj.ETag, found: true}, nil
}

// judgePlan observes the plan's write-once slots and judges it.
func (g *Graph) judgePlan(ctx context.Context, s *format.Sidecar, sp *storedPlan) (recovery.PlanStatus, error) {
	p := &sp.plan
	if p.Branch != s.Branch {
		return 0, fmt.Errorf("recovery plan of op %s is for branch %v, its sidecar for %v: %w", s.Op, p.Branch, s.Branch, ErrCorrupt)
	}
	manifest, err := g.manifestSlot(ctx, p)
	if err != nil {
		return 0, err
	}
	var restores []recovery.SlotState
	for _, t := range p.Tables {
		if t.Restore == 0 {
			continue
		}
		st, err := g.restoreSlot(ctx, t, sp.token)
		if err != nil {
			return 0, err
		}
		restores = append(restores, st)
	}
	return recovery.JudgePlan(manifest, restores), nil
}

// manifestSlot says what stands at the plan's manifest slot.
func (g *Graph) manifestSlot(ctx context.Context, p *format.RecoveryPlan) (recovery.SlotState, error) {
	l, err := g.manifestAt(ctx, format.ManifestRef{Branch: p.Branch.Name, Incarnation: p.Branch.Incarnation, Version: p.Slot})
	switch {
	case errors.Is(err, ErrNotFound):
		return recovery.SlotFree, nil
	case err != nil:
		return 0, err
	case l.m.Branch.IncarnationID != p.Branch.IncarnationID:
		return recovery.SlotTaken, nil // another incarnation under the same number cannot happen; refuse to credit it
	case l.m.Commit != nil && l.m.Commit.ID == p.Commit:
		return recovery.SlotPlan, nil
	}
	return recovery.SlotTaken, nil
}

// restoreSlot says what stands at one restore version of a plan.
func (g *Graph) restoreSlot(ctx context.Context, t format.PlanTable, tok format.Token) (recovery.SlotState, error) {
	key := g.keys.TableVersion(t.Table, t.Fork, t.Restore)
	var present, ours bool
	err := g.withRetry(ctx, "read restore version", func() (err error) { present, ours, err = g.readBackToken(ctx, key, tok); return err })
	switch {
	case err != nil:
		return 0, fmt.Errorf("read restore version %s: %w", key, err)
	case !present:
		return recovery.SlotFree, nil
	case ours:
		return recovery.SlotPlan, nil
	}
	return recovery.SlotTaken, nil
}

// carryOut writes the plan's restores (create-only, with the plan's token:
// a peer's identical write counts as ours) and publishes its commit at its
// slot. Losing a restore or the slot is errRestoreRace: observe again.
func (g *Graph) carryOut(ctx context.Context, s *format.Sidecar, sp storedPlan) error {
	p := &sp.plan
	var updates []TableUpdate
	var exp []Expectation
	var base *format.Manifest // the head the plan was made on: its pins may ride it (format 11)
	for _, t := range p.Tables {
		if t.Restore == 0 {
			continue
		}
		if base == nil && t.PinAttempt != (format.ID{}) {
			l, err := g.manifestAt(ctx, format.ManifestRef{Branch: p.Branch.Name, Incarnation: p.Branch.Incarnation, Version: p.Slot - 1})
			if err != nil {
				return fmt.Errorf("read the head of plan %s (v%d): %w", p.Op, p.Slot-1, err)
			}
			base = &l.m
		}
		pin := t.PinRef()
		u, err := g.writeRestore(ctx, format.SidecarTable{Table: t.Table, Fork: t.Fork}, t.Restore, base, pin, sp.token)
		if err != nil {
			return err
		}
		if t.Pinned() {
			updates = append(updates, u)
			exp = append(exp, Expectation{Table: t.Table, Version: t.Pin, Attempt: t.PinAttempt})
		}
	}
	if err := g.fp.Hit(ctx, failpoint.BeforeRollBackPublish); err != nil {
		return err
	}
	b := BranchRef{name: s.Branch.Name, inc: s.Branch.Incarnation, incID: s.Branch.IncarnationID}
	msg := fmt.Sprintf("%sroll-back of op %s (%s by %s)", RecoveryMessagePrefix, s.Op, s.WriterKind, s.Actor)
	req, err := g.recoveryReq(ctx, b, updates, exp, msg)
	if err != nil {
		return err
	}
	req.commit.ID = p.Commit
	req.slot = p.Slot
	_, err = g.publish(ctx, req)
	return err
}

// planPins is the pin of each table after the plan's commit landed.
func planPins(p *format.RecoveryPlan) []uint64 {
	to := make([]uint64, len(p.Tables))
	for i, t := range p.Tables {
		to[i] = t.Pin
		if t.Pinned() && t.Restore != 0 {
			to[i] = t.Restore
		}
	}
	return to
}

// landedPlan returns the op's stored roll-back plan if its commit landed
// (the manifest at its slot is the plan's commit), else nil. A sidecar
// whose branch is gone is resolved with it: a plan of a gone branch that
// has not landed never can (its slot is taken or below the branch's last
// manifest), so only a landed one is a recovery commit to audit.
func (g *Graph) landedPlan(ctx context.Context, s *format.Sidecar) (*format.RecoveryPlan, error) {
	sp, err := g.loadPlan(ctx, s.Op)
	if err != nil || !sp.found {
		return nil, err
	}
	if sp.plan.Branch != s.Branch {
		return nil, fmt.Errorf("recovery plan of op %s is for branch %v, its sidecar for %v: %w", s.Op, sp.plan.Branch, s.Branch, ErrCorrupt)
	}
	st, err := g.manifestSlot(ctx, &sp.plan)
	if err != nil || st != recovery.SlotPlan {
		return nil, err
	}
	return &sp.plan, nil
}
