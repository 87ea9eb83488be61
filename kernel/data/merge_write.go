package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
)

// publishMerge writes the merged result through the one door. With table
// changes: one strict kernel write per changed table built on the target's
// pinned version, under a sidecar, then one publish (Write). Without (the
// sides' changes net to nothing new for the target): one publish with no
// table update. Either way the publish carries intent (MergedParent and
// ExpectHead set by the caller). It also returns the rows of the target
// fragments it loaded to rewrite them (held at once).
func (g *Graph) publishMerge(ctx context.Context, target kernel.BranchRef, in mergeInput, p *mergePlan, intent kernel.LineageIntent) (kernel.Commit, uint64, error) {
	var writes []kernel.TableWrite
	var loaded uint64
	r := newReader(g, in.cat)
	for _, name := range sortedKeysOf(p.tables) {
		tm := p.tables[name]
		if len(tm.writes)+len(tm.deletes) == 0 {
			continue
		}
		w, err := g.mergeTableWrite(ctx, r, in.on, tm)
		if err != nil {
			return kernel.Commit{}, loaded, err
		}
		defer w.release()
		writes = append(writes, w.write)
		loaded += w.loaded
	}
	if len(writes) == 0 {
		c, err := g.k.Publish(ctx, target, nil, intent, nil)
		return c, loaded, err
	}
	c, err := g.k.WriteWith(ctx, target, writes, intent, kernel.WriteOptions{Kind: WriterKindMerge})
	return c, loaded, err
}

// mergeWrite is one table's part of a merge's write.
type mergeWrite struct {
	write   kernel.TableWrite
	st      *stagedTable
	built   builtTable
	content *kernel.TableContent
	loaded  uint64 // rows of the target fragments loaded for the rewrite
}

func (w *mergeWrite) release() {
	w.built.release()
	for _, pw := range w.st.writes {
		pw.rec.Release()
	}
}

// mergeTableWrite builds the new content of one table on the target's
// pinned version: the merged rows replace or join the target's, the
// deleted ids leave it (copy-on-write: only the fragments holding them are
// rewritten). The write is strict: it lands only on that version.
func (g *Graph) mergeTableWrite(ctx context.Context, r *reader, tgt *Snapshot, tm *tableMerge) (*mergeWrite, error) {
	t := tm.t
	on := pinOf(tgt.ks, t)
	v, err := r.view(ctx, t, on)
	if err != nil {
		return nil, err
	}
	if err := r.loadIDs(ctx, v, append(rowIDs(tm.writes), tm.deletes...)); err != nil {
		return nil, err
	}
	rows := append([]Row(nil), tm.writes...)
	for i := range rows {
		if _, err := checkRowShape(t, &rows[i]); err != nil {
			return nil, fmt.Errorf("merged row of %s %q breaks its type: %w", t.Name, rows[i].ID, err)
		}
	}
	st := &stagedTable{t: t}
	if len(rows) > 0 {
		st.writes = []pendingWrite{{op: OpUpsert, rec: buildRecord(t, rows)}}
	}
	p := &tablePlan{t: t, st: st, head: v, replace: map[string]pendingRef{}, deletes: map[string]bool{}, strict: true}
	for _, ref := range st.index() {
		if id := st.id(ref); v.has(id) {
			p.replace[id] = ref
		} else {
			p.inserts = append(p.inserts, ref)
		}
	}
	for _, id := range tm.deletes {
		if !v.has(id) {
			panic(fmt.Sprintf("data: merge deletes %s %q, which the target does not hold", t.Name, id))
		}
		p.deletes[id] = true
	}
	if err := r.ensureFrags(ctx, v); err != nil { // mergeCount reads the tail's infos
		return nil, err
	}
	if err := r.loadTail(ctx, v, mergeCount(v.frags, uint64(len(p.inserts)))); err != nil {
		return nil, err
	}
	w := &mergeWrite{st: st, built: buildTable(p)}
	for i, rec := range v.recs {
		if rec != nil {
			w.loaded += v.frags[i].Rows
		}
	}
	w.write = kernel.TableWrite{Table: t.Storage, Strict: true, BaseVersion: on.Version,
		Build: func(pinned kernel.TableVersion) (kernel.TableContent, error) {
			if got := pinned.Ref(); got != on.Ref() {
				return kernel.TableContent{}, &kernel.VersionMismatchError{Table: t.Name, Expected: on.Version, Actual: pinned.Version}
			}
			if w.content == nil {
				c, err := g.materialize(ctx, r, p, w.built)
				if err != nil {
					return kernel.TableContent{}, err
				}
				w.content = &c
			}
			return *w.content, nil
		}}
	return w, nil
}

func rowIDs(rows []Row) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}
