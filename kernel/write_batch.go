package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// NewObject is an object a TableContent names that its Build left for the
// kernel to write (TableContent.New): a fragment or index page under a
// fresh name that is never reused for other bytes.
type NewObject struct {
	Key  string
	Data []byte
}

// The writes of a round before its publish are independent: a round's new
// objects (TableContent.New) and, in format 8, its table versions named
// per attempt are all garbage until the manifest pins them, and nothing
// reads one before the publish. So they go out as one batch
// (objstore.PutMany: concurrent requests on a store that can, e.g. S3; the
// simulator's store issues them one after another, in order, so runs stay
// deterministic), and the kernel still starts no goroutine. Each request's
// outcome is settled on its own, as its single write would be: an
// ambiguous or lost write is resolved by reading back, a retryable failure
// is retried alone.

// newObjectRequests returns the batch requests of every plan's new
// objects, create-only, their durability deferred (objstore.DeferAll).
func newObjectRequests(plans []plannedWrite) []objstore.PutRequest {
	var reqs []objstore.PutRequest
	for _, p := range plans {
		for _, o := range p.content.New {
			reqs = append(reqs, objstore.PutRequest{Key: o.Key, Data: o.Data, Cond: objstore.CreateOnly, Durability: objstore.DeferAll})
		}
	}
	return reqs
}

// settleObject settles the batch outcome res of the new object req: done
// if it succeeded; else (retrying a retryable failure alone) an object
// already at the key with req's bytes is ours (written by an earlier
// attempt or round: the name is fresh and never reused), other bytes are
// ErrCorrupt. deferred reports that its durability may still be deferred
// (its key must ride the publish's sync).
func (g *Graph) settleObject(ctx context.Context, req objstore.PutRequest, res objstore.PutResult) (deferred bool, err error) {
	first := true
	err = g.withRetry(ctx, "write object", func() error {
		if !first {
			res = objstore.PutOne(ctx, g.store, req)
		}
		first = false
		deferred = deferred || res.Deferred
		if res.Err == nil || !(errors.Is(res.Err, objstore.ErrPreconditionFailed) || objstore.IsAmbiguous(res.Err)) {
			return res.Err
		}
		obj, rerr := g.store.Get(ctx, req.Key)
		switch {
		case rerr == nil && string(obj.Data) == string(req.Data):
			deferred = true // an earlier attempt's: it may have been deferred
			return nil
		case rerr == nil:
			return fmt.Errorf("object %s exists with other bytes: %w", req.Key, ErrCorrupt)
		case errors.Is(rerr, objstore.ErrNotFound):
			return objstore.NewError(objstore.OpPut, req.Key, objstore.ErrTransient, fmt.Errorf("write did not land (%v); retrying", res.Err))
		}
		return rerr
	})
	if err != nil {
		return false, fmt.Errorf("write object %s: %w", req.Key, err)
	}
	return deferred, nil
}

// writeNewObjects writes every plan's new objects as one batch and returns
// the keys whose durability is deferred.
func (g *Graph) writeNewObjects(ctx context.Context, plans []plannedWrite) ([]string, error) {
	reqs := newObjectRequests(plans)
	if len(reqs) == 0 {
		return nil, nil
	}
	var keys []string
	for i, res := range objstore.PutMany(ctx, g.store, reqs) {
		deferred, err := g.settleObject(ctx, reqs[i], res)
		if err != nil {
			return nil, err
		}
		if deferred {
			keys = append(keys, reqs[i].Key)
		}
	}
	return keys, nil
}

// writeNewObjectsDurable is writeNewObjects for a write that references
// its objects before its publish (a format-7 round's sidecar and table
// versions, CommitTableVersion): the objects are durable when it returns
// nil (one objstore.SyncDeferred for the batch).
func (g *Graph) writeNewObjectsDurable(ctx context.Context, plans []plannedWrite) error {
	keys, err := g.writeNewObjects(ctx, plans)
	if err != nil {
		return err
	}
	if err := objstore.SyncDeferred(ctx, g.store, keys); err != nil {
		return fmt.Errorf("make %d new objects durable: %w", len(keys), err)
	}
	return nil
}

// namedVersion is one plan's table version named per attempt, encoded.
type namedVersion struct {
	tv   format.TableVersion
	key  string
	data []byte
}

// encodeNamed encodes tv, p's version (plannedVersion), at its attempt
// key on b's fork.
func (g *Graph) encodeNamed(b BranchRef, p plannedWrite, tv format.TableVersion) (namedVersion, error) {
	data, err := format.EncodeTableVersion(&tv, p.token)
	if err != nil {
		return namedVersion{}, fmt.Errorf("commit table version of %q: %w: %v", p.table, ErrInvalidArgument, err)
	}
	return namedVersion{tv: tv, key: g.keys.TableAttempt(p.table, b.incID, p.attempt), data: data}, nil
}

// commitNamedBatch writes a format-8 round's new objects and its table
// versions named per attempt in one batch (objstore.PutMany), settles each
// outcome, and returns the table updates in plan order. Every key whose
// durability was deferred joins req.deferred: the publish makes them
// durable before the manifest that names them (objstore.PutAfterDeferred);
// the versions' data is deferred too (settleNamed).
// A version's key is fresh (a ULID minted for this round), so its write
// cannot lose a race; an object of someone else there means the entropy
// source repeats (ErrCorrupt).
//
// A version that rides (format 11, ridingPlans: it fits the riding budget
// of the head m the round planned on) is not written at all: its payload
// goes in its update, and the manifest that pins it carries it.
func (g *Graph) commitNamedBatch(ctx context.Context, req *publishReq, m *format.Manifest, plans []plannedWrite, noRide bool) ([]TableUpdate, error) {
	b := req.branch
	reqs := newObjectRequests(plans)
	objects := len(reqs)
	versions := make([]namedVersion, len(plans))
	tvs := make([]format.TableVersion, len(plans))
	for i, p := range plans {
		tvs[i] = plannedVersion(b, p)
	}
	rides, err := ridingPlans(m, tvs, g.riding, noRide)
	if err != nil {
		return nil, err
	}
	at := make([]int, len(plans)) // the index of each written version's request
	for i, p := range plans {
		if rides[i] != "" {
			tv := tvs[i]
			tv.Rides = true
			versions[i] = namedVersion{tv: tv, key: g.keys.TableAttempt(p.table, b.incID, p.attempt)}
			continue
		}
		v, err := g.encodeNamed(b, p, tvs[i])
		if err != nil {
			return nil, err
		}
		versions[i] = v
		at[i] = len(reqs)
		reqs = append(reqs, objstore.PutRequest{Key: v.key, Data: v.data, Cond: objstore.CreateOnly, Durability: objstore.DeferAll})
	}
	var results []objstore.PutResult
	if len(reqs) > 0 {
		results = objstore.PutMany(ctx, g.store, reqs)
	}
	for i := range objects {
		deferred, err := g.settleObject(ctx, reqs[i], results[i])
		if err != nil {
			return nil, err
		}
		if deferred {
			req.deferred = append(req.deferred, reqs[i].Key)
		}
	}
	updates := make([]TableUpdate, len(plans))
	for i, v := range versions {
		if rides[i] == "" {
			if err := g.settleNamed(ctx, req, v, results[at[i]]); err != nil {
				return nil, err
			}
		}
		g.tables.put(v.key, v.tv)
		p := plans[i]
		updates[i] = TableUpdate{Table: p.table, Fork: b.incID, Version: p.version, Rows: v.tv.Rows, Attempt: p.attempt, Riding: rides[i]}
	}
	return updates, nil
}

// ridingPlans decides which of a round's versions tvs ride the manifest
// (format 11; docs/format.md "v10->v11") and returns their payloads (""
// for a version written as an object): a pure function of the head m the
// round planned on. In plan order (by table), a version rides if it is
// not content-preserving (a compaction keeps an object: the based_on
// chains PinSatisfied walks never pass a riding version) and its payload
// fits the budget (the handle's, Options.RidingBudget, resolved) beside
// the riding payloads m's pins keep (format.RidingFitsWithin; the
// versions it replaces free theirs). The publish checks the budget again
// on the head it builds on (buildNext).
func ridingPlans(m *format.Manifest, tvs []format.TableVersion, budget RidingBudget, noRide bool) ([]string, error) {
	rides := make([]string, len(tvs))
	if noRide {
		return rides, nil
	}
	carried := format.RidingBytes(m.Tables)
	for _, tv := range tvs {
		if pin, ok := m.Pin(tv.Table); ok {
			carried -= len(pin.Riding)
		}
	}
	for i := range tvs {
		if tvs[i].ContentPreserving {
			continue
		}
		payload, err := format.RidingPayload(&tvs[i])
		if err != nil {
			return nil, fmt.Errorf("commit table version of %q: %w: %v", tvs[i].Table, ErrInvalidArgument, err)
		}
		if format.RidingFitsWithin(budget.VersionBytes, budget.ManifestBytes, carried, len(payload)) {
			rides[i] = payload
			carried += len(payload)
		}
	}
	return rides, nil
}

// settleNamed settles the batch outcome res of named version v as
// putCreateOnlyDeferred would its write (read back by writer token; a
// retryable failure is retried alone) and adds its key to req.deferred if
// any attempt deferred it. Unlike a counter-named version, which recovery
// reads and so is written intact (objstore.PutDeferredIntact), a named
// version is written objstore.PutDeferred, data and name deferred alike
// (on fs no fsync before the publish's): nothing reads it before the
// manifest that pins it, whose write makes it durable first, so only an
// attempt that never published can be torn by a crash, which the
// collector judges as garbage (gc.UnreadableNamedIsGarbage).
func (g *Graph) settleNamed(ctx context.Context, req *publishReq, v namedVersion, res objstore.PutResult) error {
	first, deferred := true, false
	ours, err := g.createOnly(ctx, "commit table version", v.key, v.data, func() error {
		if !first {
			_, d, err := objstore.PutDeferred(ctx, g.store, v.key, v.data)
			deferred = deferred || d
			return err
		}
		first = false
		deferred = deferred || res.Deferred
		return res.Err
	})
	if deferred {
		req.deferred = append(req.deferred, v.key)
	}
	if err == nil && !ours {
		err = fmt.Errorf("commit table version %s: the attempt id is already taken (entropy source repeats?): %w", v.key, ErrCorrupt)
	}
	return err
}
