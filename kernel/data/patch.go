package data

import (
	"context"
	"maps"
)

// Patch stages partial rows of typ: each row names only the properties it
// changes. An id present in the base snapshot keeps every property (and,
// for an edge, an endpoint) the row leaves out: a key present in Props,
// even with a nil value (null), replaces that property; an absent key
// keeps it; an empty From or To keeps that endpoint. The merged row is
// staged as an Update, which is strict: Commit fails (no durable effect)
// if the table moved since Begin, so a patch never overwrites a change it
// did not read. An id absent from the base is staged as an Insert of the
// row as given (required properties must be present; Commit rejects the
// id if it appeared since Begin).
//
// Contrast Upsert and Update, which replace the whole row: every property
// the row leaves out becomes null. Patch reads the base rows it patches
// (the fragments covering their ids), once per call; like every write, an
// id written twice in one transaction is rejected at Commit. A rejected call
// stages nothing.
func (t *Txn) Patch(ctx context.Context, typ string, rows ...Row) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrTxnDone
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	base, err := t.baseRows(ctx, typ, ids)
	if err != nil {
		return err
	}
	var inserts, updates []Row
	for i, r := range rows {
		if old, ok := base[i]; ok {
			updates = append(updates, patchRow(old, r))
		} else {
			inserts = append(inserts, r)
		}
	}
	return t.s.stageBoth(typ, inserts, updates)
}

// baseRows returns the base snapshot's rows of ids, by position (lock
// held).
func (t *Txn) baseRows(ctx context.Context, typ string, ids []string) (map[int]Row, error) {
	if _, err := t.cat.table(typ); err != nil {
		return nil, err
	}
	v, err := t.readView(ctx, typ)
	if err != nil {
		return nil, err
	}
	if err := t.r.loadIDs(ctx, v, ids); err != nil {
		return nil, err
	}
	out := map[int]Row{}
	for i, id := range ids {
		if ref, ok := v.lookup(id); ok {
			out[i] = v.row(ref)
		}
	}
	return out, nil
}

// patchRow is old with the fields p names replaced.
func patchRow(old, p Row) Row {
	out := Row{ID: old.ID, From: old.From, To: old.To, Props: maps.Clone(old.Props)}
	if out.Props == nil {
		out.Props = map[string]any{}
	}
	if p.From != "" {
		out.From = p.From
	}
	if p.To != "" {
		out.To = p.To
	}
	for k, v := range p.Props { //detlint:ordered copies every entry into a map
		out.Props[k] = v
	}
	return out
}

// stageBoth stages inserts and updates of one type, or nothing: every row
// is checked, and the bounds for both, before either is staged.
func (s *staging) stageBoth(typeName string, inserts, updates []Row) error {
	t, err := s.cat.table(typeName)
	if err != nil {
		return err
	}
	var size int64
	for _, set := range [][]Row{inserts, updates} {
		for i := range set {
			n, err := checkRowShape(t, &set[i])
			if err != nil {
				return err
			}
			size += int64(n)
		}
	}
	if err := s.admit(OpUpdate, t.Name, len(inserts)+len(updates), size); err != nil {
		return err
	}
	if err := s.stageRows(OpInsert, typeName, inserts); err != nil {
		return err
	}
	return s.stageRows(OpUpdate, typeName, updates)
}
