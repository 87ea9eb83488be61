package changefeed

import (
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// TestReplayReproducesTheHead is the replay property: on random histories
// (inserts, exact-value updates, cascading deletes, edges, a branch forked
// mid-history), a consumer that applies the feed of a branch from the
// beginning to an empty state — under random page limits, crashing at
// random and resuming from its last saved cursor on a fresh handle —
// ends with exactly the branch head's rows.
func TestReplayReproducesTheHead(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		store := newStore()
		g := initGraph(t, store, "g")
		want := map[string]model{"main": {}}
		steps := rapid.IntRange(1, 8).Draw(rt, "steps")
		for i := range steps {
			b := "main"
			if want["dev"] == nil && rapid.IntRange(0, 3).Draw(rt, "fork") == 0 {
				_, err := g.Kernel().CreateBranch(ctx, "dev", branch(t, g, "main"))
				must(t, err)
				want["dev"] = clone(want["main"])
			}
			if want["dev"] != nil && rapid.Bool().Draw(rt, "on-dev") {
				b = "dev"
			}
			randomCommit(rt, t, g, b, want[b], i)
		}
		b := rapid.SampledFrom(sortedKeys(want)).Draw(rt, "branch")
		got := consume(rt, t, store, b)
		assertSameRows(rt, want[b], got)
	})
}

// consume replays b's feed from the beginning, crashing at random.
func consume(rt *rapid.T, t *testing.T, store storeT, b string) model {
	lim := feed.Limits{MaxChanges: rapid.IntRange(1, 5).Draw(rt, "max-changes"),
		MaxBytes: rapid.IntRange(40, 400).Draw(rt, "max-bytes"), MaxCommits: rapid.IntRange(1, 3).Draw(rt, "max-commits")}
	saved, savedCursor := model{}, ""
	state, pos := model{}, Beginning()
	f := New(openGraph(t, store, "g", 2))
	crashes := 0
	for polls := 0; polls < 1000; polls++ {
		p, err := f.Poll(ctx, b, pos, feed.Filter{}, lim)
		if err != nil {
			rt.Fatalf("poll %d: %v", polls, err)
		}
		for _, bl := range p.Blocks {
			for _, c := range bl.Changes {
				state.apply(c)
			}
		}
		if p.Cursor != "" {
			saved, savedCursor = clone(state), p.Cursor // state and cursor persist together
		}
		if p.CaughtUp {
			return state
		}
		pos = FromToken(p.Cursor + p.PageToken)
		if crashes < 3 && rapid.IntRange(0, 4).Draw(rt, "crash") == 0 { // lose everything not saved
			crashes++
			state, pos = clone(saved), Beginning()
			if savedCursor != "" {
				pos = FromToken(savedCursor)
			}
			f = New(openGraph(t, store, "g", uint64(polls)+3))
		}
	}
	rt.Fatal("feed never caught up")
	return nil
}

// randomCommit commits one random transaction on b and applies it to m.
func randomCommit(rt *rapid.T, t *testing.T, g *data.Graph, b string, m model, step int) {
	live := sortedKeys(m["Person"])
	kind := rapid.IntRange(0, 3).Draw(rt, "kind")
	if len(live) == 0 {
		kind = 0
	}
	switch kind {
	case 0: // insert people (and a company and an edge)
		n := rapid.IntRange(1, 4).Draw(rt, "n")
		var rows []data.Row
		for i := range n {
			rows = append(rows, randomPerson(rt, fmt.Sprintf("p%d-%d", step, i)))
		}
		co := data.Row{ID: fmt.Sprintf("c%d", step), Props: map[string]any{"name": "co"}}
		e := data.Row{ID: fmt.Sprintf("w%d", step), From: rows[0].ID, To: co.ID}
		commitOn(t, g, b, func(tx *data.Txn) error {
			must(t, tx.Insert("Person", rows...))
			must(t, tx.Insert("Company", co))
			return tx.Insert("WorksAt", e)
		})
		for _, r := range rows {
			m.put("Person", r)
		}
		m.put("Company", co)
		m.put("WorksAt", e)
	case 1, 2: // update some, sometimes to identical values
		ids := rapid.SliceOfNDistinct(rapid.SampledFrom(live), 1, 3, rapid.ID[string]).Draw(rt, "upd")
		var rows []data.Row
		for _, id := range ids {
			r := randomPerson(rt, id)
			if rapid.IntRange(0, 3).Draw(rt, "same") == 0 {
				r = m["Person"][id]
			}
			rows = append(rows, r)
		}
		commitOn(t, g, b, func(tx *data.Txn) error { return tx.Update("Person", rows...) })
		for _, r := range rows {
			m.put("Person", r)
		}
	case 3: // delete one person and its edges
		id := rapid.SampledFrom(live).Draw(rt, "del")
		commitOn(t, g, b, func(tx *data.Txn) error { return tx.DeleteCascade("Person", id) })
		delete(m["Person"], id)
		for eid, e := range m["WorksAt"] { //detlint:ordered deletes only
			if e.From == id {
				delete(m["WorksAt"], eid)
			}
		}
	}
}

func randomPerson(rt *rapid.T, id string) data.Row {
	props := map[string]any{"name": rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "name")}
	switch rapid.IntRange(0, 2).Draw(rt, "nick") {
	case 1:
		props["nick"] = ""
	case 2:
		props["nick"] = "n"
	}
	switch rapid.IntRange(0, 2).Draw(rt, "avatar") {
	case 1:
		props["avatar"] = []byte{}
	case 2:
		props["avatar"] = []byte{1}
	}
	if rapid.Bool().Draw(rt, "age") {
		props["age"] = rapid.Int64Range(-2, 2).Draw(rt, "age-v")
	}
	return data.Row{ID: id, Props: props}
}

func (m model) put(typ string, r data.Row) {
	if m[typ] == nil {
		m[typ] = map[string]data.Row{}
	}
	m[typ][r.ID] = r
}

func clone(m model) model {
	out := model{}
	for typ, rows := range m { //detlint:ordered copies only
		out[typ] = maps.Clone(rows)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m { //detlint:ordered sorted next
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

func assertSameRows(rt *rapid.T, want, got model) {
	for _, typ := range []string{"Person", "Company", "WorksAt"} {
		w, gt := want[typ], got[typ]
		if len(w) != len(gt) {
			rt.Fatalf("%s: replayed %d rows, head has %d", typ, len(gt), len(w))
		}
		for id, r := range w { //detlint:ordered every id is checked
			g, ok := gt[id]
			if !ok || !data.RowsEqual(r, g) {
				rt.Fatalf("%s %s: replayed %+v, head %+v", typ, id, g, r)
			}
		}
	}
}
