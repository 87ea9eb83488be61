package data

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"pgregory.net/rapid"
)

// sideEdits is one side's conflict-free edits of the fixture: property
// sets, node deletes, node and edge inserts.
type sideEdits struct {
	sets    map[string]map[string]any // id -> prop -> value
	deletes []string
	inserts []Row
	edges   []Row
}

// genEdits draws edits for both sides that cannot conflict: every
// (node, property) slot is owned by one side, none, or both with the same
// value; a node is deleted only by sides that own all its edited slots;
// new ids and edges are side-specific and end at nodes nobody deletes.
func genEdits(t *rapid.T) (src, tgt sideEdits) {
	src, tgt = sideEdits{sets: map[string]map[string]any{}}, sideEdits{sets: map[string]map[string]any{}}
	sides := [2]*sideEdits{&src, &tgt}
	deleted := map[string]bool{}
	for _, id := range []string{"alice", "bob", "carol", "dan"} {
		if id != "bob" && id != "carol" { // k1's endpoints stay
			if who := rapid.IntRange(0, 5).Draw(t, "del-"+id); who < 3 {
				for s := 0; s < 2; s++ {
					if who == s || who == 2 {
						sides[s].deletes = append(sides[s].deletes, id)
					}
				}
				deleted[id] = true
				continue
			}
		}
		for _, prop := range []string{"age", "city"} {
			owner := rapid.IntRange(0, 3).Draw(t, "own-"+id+prop) // 0 none, 1 source, 2 target, 3 both same
			v := valueFor(prop, rapid.IntRange(0, 2).Draw(t, "v-"+id+prop))
			for s := 0; s < 2; s++ {
				if owner == s+1 || owner == 3 {
					if sides[s].sets[id] == nil {
						sides[s].sets[id] = map[string]any{}
					}
					sides[s].sets[id][prop] = v
				}
			}
		}
	}
	var alive []string
	for _, id := range []string{"alice", "bob", "carol", "dan"} {
		if !deleted[id] {
			alive = append(alive, id)
		}
	}
	for s, tag := range []string{"s", "t"} {
		for i := range rapid.IntRange(0, 2).Draw(t, "ins-"+tag) {
			id := fmt.Sprintf("%s-new%d", tag, i)
			sides[s].inserts = append(sides[s].inserts, Row{ID: id, Props: map[string]any{"name": id}})
		}
		for i := range rapid.IntRange(0, 2).Draw(t, "edges-"+tag) {
			from := rapid.SampledFrom(alive).Draw(t, "from")
			to := rapid.SampledFrom(alive).Draw(t, "to")
			sides[s].edges = append(sides[s].edges, Row{ID: fmt.Sprintf("%s-k%d", tag, i), From: from, To: to})
		}
	}
	return src, tgt
}

func valueFor(prop string, n int) any {
	if prop == "age" {
		return []any{nil, int64(7), int64(8)}[n]
	}
	return []any{nil, "", "Oslo"}[n]
}

// apply runs the edits on b (constructive and destructive in two
// transactions, as the data plane requires).
func (e sideEdits) apply(t *rapid.T, f *mergeFixture, b kernel.BranchRef) {
	if len(e.sets)+len(e.inserts)+len(e.edges) > 0 {
		f.commit(b, func(tx *Txn) error {
			for _, id := range sortedKeysOf(e.sets) {
				r, _, err := tx.Get(ctx, "Person", id)
				if err != nil {
					return err
				}
				for p, v := range e.sets[id] { //detlint:ordered sets every property
					r.Props[p] = v
				}
				if err := tx.Update("Person", r); err != nil {
					return err
				}
			}
			if err := tx.Insert("Person", e.inserts...); err != nil {
				return err
			}
			return tx.Insert("Knows", e.edges...)
		})
	}
	if len(e.deletes) > 0 {
		f.commit(b, func(tx *Txn) error { return tx.Delete("Person", e.deletes...) })
	}
}

// model applies the edits to a state.
func (e sideEdits) model(s map[string]map[string]Row) {
	for id, props := range e.sets { //detlint:ordered sets are disjoint or equal
		for p, v := range props { //detlint:ordered sets every property
			if v == nil {
				delete(s["Person"][id].Props, p)
			} else {
				s["Person"][id].Props[p] = v
			}
		}
	}
	for _, id := range e.deletes {
		delete(s["Person"], id)
	}
	for _, r := range e.inserts {
		s["Person"][r.ID] = r
	}
	for _, r := range e.edges {
		s["Knows"][r.ID] = Row{ID: r.ID, From: r.From, To: r.To, Props: map[string]any{}}
	}
}

// For random conflict-free edits on both sides, the merged target equals
// the base with both sides' edits applied, in either order.
func TestMergeEqualsEditsInEitherOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := newMergeFixture(t)
		src, tgt := genEdits(rt)
		base := f.state(f.main)
		feature := f.branch("feature", f.main)
		src.apply(rt, f, feature)
		tgt.apply(rt, f, f.main)
		res, err := f.merge(feature, f.main, MergeOptions{})
		if err != nil {
			rt.Fatalf("conflict-free merge failed: %v", err)
		}
		got := f.state(f.main)
		for order, sides := range [2][2]sideEdits{{src, tgt}, {tgt, src}} {
			want := cloneState(base)
			sides[0].model(want)
			sides[1].model(want)
			if d := sameState(got, want); d != "" {
				rt.Fatalf("order %d, outcome %v: %s", order, res.Outcome, d)
			}
		}
	})
}
