package gc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// history is a random commit graph with the reach of every manifest,
// built through lineage.JoinReach as the kernel builds them.
type history struct {
	lim       lineage.Limits
	reach     map[format.ManifestRef]lineage.Reach
	parents   map[format.ID][]format.ID
	heads     []format.ManifestRef // per incarnation, its newest manifest
	live      []bool               // per incarnation
	all       []format.ManifestRef
	collected map[format.ManifestRef]bool
	ids       uint64
}

func newHistory(lim lineage.Limits) *history {
	at := format.ManifestRef{Branch: "main", Incarnation: 1}
	g := lineage.Reach{At: at, HeadAt: at, ID: format.ID{15: 1}, Gen: 1, Explicit: []format.ReachEntry{{ManifestRef: at, Gen: 1}}}
	return &history{lim: lim, reach: map[format.ManifestRef]lineage.Reach{at: g}, parents: map[format.ID][]format.ID{g.ID: nil},
		heads: []format.ManifestRef{at}, live: []bool{true}, all: []format.ManifestRef{at}, collected: map[format.ManifestRef]bool{}, ids: 1}
}

func (h *history) fork(src format.ManifestRef) {
	at := format.ManifestRef{Branch: fmt.Sprintf("b%d", len(h.heads)%3), Incarnation: uint64(len(h.heads))}
	h.reach[at] = h.reach[src].ForManifest(at)
	h.heads, h.live, h.all = append(h.heads, at), append(h.live, true), append(h.all, at)
}

func (h *history) commit(i int, hi uint64, merged *format.ManifestRef) {
	p := h.heads[i]
	at := p
	at.Version++
	h.ids++
	var id format.ID
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], h.ids)
	parents := []format.ID{h.reach[p].ID}
	var mr *lineage.Reach
	if merged != nil {
		r := h.reach[*merged]
		if r.ID == h.reach[p].ID {
			return
		}
		mr = &r
		parents = append(parents, r.ID)
	}
	h.parents[id] = parents
	h.reach[at] = lineage.JoinReach(at, id, h.reach[p], mr, h.lim, false)
	h.heads[i] = at
	h.all = append(h.all, at)
}

func (h *history) load(at format.ManifestRef) (lineage.Reach, bool, error) {
	if h.collected[at] {
		return lineage.Reach{}, false, nil
	}
	return h.reach[at], true, nil
}

// step draws one change: a fork of a live head, a commit, a merge of a
// live head into another, or a delete.
func (h *history) step(t *rapid.T) {
	var live []int
	for i, ok := range h.live {
		if ok {
			live = append(live, i)
		}
	}
	i := rapid.SampledFrom(live).Draw(t, "inc")
	switch rapid.IntRange(0, 4).Draw(t, "op") {
	case 0:
		h.fork(h.heads[i])
	case 1:
		h.commit(i, rapid.Uint64Range(1, 8).Draw(t, "hi"), nil)
	case 2, 3:
		src := h.heads[rapid.SampledFrom(live).Draw(t, "src")]
		h.commit(i, rapid.Uint64Range(1, 8).Draw(t, "hi"), &src)
	default:
		if i != 0 {
			h.live[i] = false
		}
	}
}

func (h *history) liveHeads() []lineage.Reach {
	var out []lineage.Reach
	for i, ok := range h.live {
		if ok {
			out = append(out, h.reach[h.heads[i]])
		}
	}
	return out
}

// collect deletes every manifest that is not a live head, not in keep and
// not among the newest `recent` manifests (retention); with keepMain, none
// of main's (a history lease, a pin or a long retention holding it).
func (h *history) collect(keep []format.ManifestRef, recent int, keepMain bool) {
	for k, at := range h.all {
		if k >= len(h.all)-recent || slices.Contains(keep, at) || keepMain && at.Branch == "main" {
			continue
		}
		if i := slices.Index(h.heads, at); i >= 0 && h.live[i] {
			continue
		}
		h.collected[at] = true
	}
}

// checkPairs: every live pair's reach merge base is the full graph's.
func (h *history) checkPairs(t *rapid.T, when string) {
	heads := h.liveHeads()
	for i := range heads {
		for j := i + 1; j < len(heads); j++ {
			want, wok := lineage.MergeBase(h.parents, heads[i].ID, heads[j].ID)
			got, err := lineage.ReachMergeBase(heads[i], heads[j], h.load)
			if !wok && errors.Is(err, lineage.ErrNoCommonAncestor) {
				continue
			}
			if err != nil || got.ID != want {
				t.Fatalf("%s: merge base of %v and %v: %v %v, want %v", when, heads[i].At, heads[j].At, got.ID, err, want)
			}
		}
	}
}

// TestMergeBaseKeepKeepsWhatMergeBaseNeeds (rapid): over random histories
// (forks, merges among live branches, deletes, small reach limits), after
// collecting everything but the live heads, a short retention window and
// MergeBaseKeep's manifests, every live pair's merge base answers as the
// full graph does — and still after more random changes and collections
// (later merges find what they need). Main's history is collected like
// the rest, or kept whole (keepMain: then a fresh fork's merge base may
// expand main's fold chain down to merged-from manifests of deleted
// branches collected while no live pair needed them).
func TestMergeBaseKeepKeepsWhatMergeBaseNeeds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHistory(lineage.Limits{Entries: rapid.IntRange(2, 5).Draw(t, "entries"), Folds: 2})
		keepMain := rapid.Bool().Draw(t, "keep-main")
		for round := range rapid.IntRange(1, 4).Draw(t, "rounds") {
			for range rapid.IntRange(1, 30).Draw(t, "steps") {
				h.step(t)
			}
			res, err := MergeBaseKeep(h.liveHeads(), h.load, nil)
			if err != nil || !res.Exact {
				t.Fatalf("MergeBaseKeep: %+v %v", res, err)
			}
			if res.Unknown != 0 {
				t.Fatalf("round %d: %d pairs already need collected manifests", round, res.Unknown)
			}
			h.collect(res.Keep, rapid.IntRange(0, 3).Draw(t, "recent"), keepMain)
			h.checkPairs(t, fmt.Sprint("after collection ", round))
		}
	})
}

// TestMergeBaseKeepFallsBackWhenTooLarge: past the work bound it keeps
// every position and fold the live heads name, and says so.
func TestMergeBaseKeepFallsBackWhenTooLarge(t *testing.T) {
	h := newHistory(lineage.Limits{Entries: 2, Folds: 2})
	h.fork(h.heads[0])
	h.commit(1, 1, nil)
	h.commit(0, 2, nil)
	src := h.heads[1]
	h.commit(0, 3, &src)
	defer func(n int) { maxBaseChecks = n }(maxBaseChecks)
	maxBaseChecks = 0
	res, err := MergeBaseKeep(h.liveHeads(), h.load, nil)
	if err != nil || res.Exact {
		t.Fatalf("over the bound: %+v %v, want inexact", res, err)
	}
	for _, r := range h.liveHeads() {
		for _, e := range append(slices.Clone(r.Explicit), r.Folds...) {
			if !slices.Contains(res.Keep, e.ManifestRef) {
				t.Fatalf("fallback dropped %v", e.ManifestRef)
			}
		}
	}
}

// TestMergeBaseKeepBranchPerChange (rapid): branch per change (fork from
// main, commit, merge into main, delete) with small limits; main's whole
// history kept (a history lease), each deleted change collected as soon
// as MergeBaseKeep leaves it (after each cycle: only main is live, so it
// keeps nothing of them). A change forked afterwards, with more changes
// merged into main while it lives (collections between, keeping what
// the live pair needs), still finds its merge base with main.
func TestMergeBaseKeepBranchPerChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHistory(lineage.Limits{Entries: rapid.IntRange(2, 6).Draw(t, "entries"), Folds: rapid.IntRange(2, 4).Draw(t, "folds")})
		collect := func(when string) {
			res, err := MergeBaseKeep(h.liveHeads(), h.load, nil)
			if err != nil || !res.Exact || res.Unknown != 0 {
				t.Fatalf("%s: MergeBaseKeep: %+v %v", when, res, err)
			}
			h.collect(res.Keep, 0, true)
		}
		cycle := func() {
			h.fork(h.heads[0])
			i := len(h.heads) - 1
			h.commit(i, rapid.Uint64Range(1, 8).Draw(t, "hi"), nil)
			src := h.heads[i]
			h.commit(0, rapid.Uint64Range(1, 8).Draw(t, "hi"), &src)
			h.live[i] = false
		}
		for n := range rapid.IntRange(0, 40).Draw(t, "before") {
			cycle()
			collect(fmt.Sprint("cycle ", n))
		}
		h.fork(h.heads[0])
		g := len(h.heads) - 1
		h.commit(g, rapid.Uint64Range(1, 8).Draw(t, "hi"), nil)
		for n := range rapid.IntRange(0, 5).Draw(t, "lag") {
			cycle()
			collect(fmt.Sprint("lag cycle ", n))
		}
		h.checkPairs(t, "fresh change")
	})
}

// mapMemo is a PairMemo over a map; it answers only while every manifest
// on a pair's list is uncollected in h.
type mapMemo struct {
	h     *history
	pairs map[[2]format.ManifestRef][]format.ManifestRef
	hits  int
}

func (m *mapMemo) Pair(a, b format.ManifestRef) ([]format.ManifestRef, bool) {
	loaded, ok := m.pairs[[2]format.ManifestRef{a, b}]
	for _, at := range loaded {
		if m.h.collected[at] {
			return nil, false
		}
	}
	if ok {
		m.hits++
	}
	return loaded, ok
}

func (m *mapMemo) SetPair(a, b format.ManifestRef, loaded []format.ManifestRef) {
	m.pairs[[2]format.ManifestRef{a, b}] = loaded
}

// TestMergeBaseKeepMemoReplaysTheSearch (rapid): over random histories
// and collections, MergeBaseKeep with a memo kept across rounds keeps
// exactly what it keeps without one, and counts the same unknown pairs.
func TestMergeBaseKeepMemoReplaysTheSearch(t *testing.T) {
	hits := 0
	rapid.Check(t, func(t *rapid.T) {
		h := newHistory(lineage.Limits{Entries: rapid.IntRange(2, 5).Draw(t, "entries"), Folds: 2})
		memo := &mapMemo{h: h, pairs: map[[2]format.ManifestRef][]format.ManifestRef{}}
		for round := range rapid.IntRange(1, 5).Draw(t, "rounds") {
			for range rapid.IntRange(0, 12).Draw(t, "steps") {
				h.step(t)
			}
			want, err := MergeBaseKeep(h.liveHeads(), h.load, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MergeBaseKeep(h.liveHeads(), h.load, memo)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Keep, want.Keep) || got.Unknown != want.Unknown || got.Exact != want.Exact {
				t.Fatalf("round %d: with the memo %+v, without %+v", round, got, want)
			}
			h.collect(want.Keep, rapid.IntRange(0, 3).Draw(t, "recent"), false)
		}
		hits += memo.hits
	})
	if hits == 0 {
		t.Error("no pair was ever replayed from the memo")
	}
}
