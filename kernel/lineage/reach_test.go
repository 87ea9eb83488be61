package lineage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/format"
	"pgregory.net/rapid"
)

func ref(b string, inc, v uint64) format.ManifestRef {
	return format.ManifestRef{Branch: b, Incarnation: inc, Version: v}
}

func ent(b string, inc, v, gen uint64) format.ReachEntry {
	return format.ReachEntry{ManifestRef: ref(b, inc, v), Gen: gen}
}

// TestJoinReach: the join keeps the highest version per incarnation, pins
// its own, takes gen one above its inputs' and their folds; past the
// limits (or forced) it compacts to {own, merged} with folds {prev,
// merged} (a commit-less version 0 folded as its fork commit's manifest).
// Every result is a valid index.
func TestJoinReach(t *testing.T) {
	lim := Limits{Entries: 3, Folds: 2}
	genesis := Reach{At: ref("main", 1, 0), HeadAt: ref("main", 1, 0), ID: format.ID{1}, Gen: 1, Explicit: []format.ReachEntry{ent("main", 1, 0, 1)}}
	forkA := Reach{At: ref("a", 1, 3), HeadAt: ref("a", 1, 3), ID: format.ID{2}, Gen: 7,
		Explicit: []format.ReachEntry{ent("a", 1, 3, 7), ent("main", 1, 2, 3)}, Folds: []format.ReachEntry{ent("x", 1, 4, 2)}}
	prev := Reach{At: ref("main", 1, 8), HeadAt: ref("main", 1, 8), ID: format.ID{3}, Gen: 9,
		Explicit: []format.ReachEntry{ent("main", 1, 8, 9)}, Folds: []format.ReachEntry{ent("x", 1, 2, 1)}}
	for _, tc := range []struct {
		name    string
		at      format.ManifestRef
		prev    Reach
		merged  *Reach
		compact bool
		want    Reach
	}{
		{"commit on its parent", ref("main", 1, 1), genesis, nil, false,
			Reach{Gen: 2, Explicit: []format.ReachEntry{ent("main", 1, 1, 2)}}},
		{"merge: highest version per incarnation, folds joined", ref("main", 1, 9), prev, &forkA, false,
			Reach{Gen: 10, Explicit: []format.ReachEntry{ent("a", 1, 3, 7), ent("main", 1, 9, 10)}, Folds: []format.ReachEntry{ent("x", 1, 4, 2)}}},
		{"forced compaction", ref("main", 1, 9), prev, &forkA, true,
			Reach{Gen: 10, Explicit: []format.ReachEntry{ent("a", 1, 3, 7), ent("main", 1, 9, 10)},
				Folds: []format.ReachEntry{ent("a", 1, 3, 7), ent("main", 1, 8, 9)}}},
		{"compaction past the entry limit", ref("b", 1, 1),
			Reach{At: ref("b", 1, 0), HeadAt: ref("main", 1, 8), ID: format.ID{3}, Gen: 9,
				Explicit: []format.ReachEntry{ent("b", 1, 0, 9), ent("c", 1, 1, 2), ent("d", 1, 1, 3), ent("main", 1, 8, 9)}}, nil, false,
			Reach{Gen: 10, Explicit: []format.ReachEntry{ent("b", 1, 1, 10)}, Folds: []format.ReachEntry{ent("main", 1, 8, 9)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := JoinReach(tc.at, format.ID{9}, tc.prev, tc.merged, lim, tc.compact)
			tc.want.At, tc.want.HeadAt, tc.want.ID = tc.at, tc.at, format.ID{9}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("JoinReach (-want +got):\n%s", d)
			}
			x := got.Index()
			if err := format.ValidateCommitIndex(&x); err != nil {
				t.Fatalf("the joined reach is not a valid index: %v", err)
			}
		})
	}
}

// TestLegacyIndexReach: a legacy flat index reads with the derived gen
// Σ(version+1), entries of unknown gen and no folds.
func TestLegacyIndexReach(t *testing.T) {
	x := format.CommitIndex{ID: format.ID{1}, At: ref("main", 1, 4), Complete: true,
		Reach: []format.ReachEntry{ent("a", 1, 2, 0), ent("main", 1, 4, 0)}}
	if err := format.ValidateCommitIndex(&x); err != nil {
		t.Fatal(err)
	}
	r := FromIndex(x)
	if r.Gen != 8 || len(r.Folds) != 0 || r.HeadAt != x.At {
		t.Fatalf("legacy reach %+v, want gen 8, no folds", r)
	}
}

// model is a random commit graph with the reach of every manifest, built
// only through JoinReach and ForManifest, as the kernel builds them.
type model struct {
	lim       Limits
	reach     map[format.ManifestRef]Reach
	parents   map[format.ID][]format.ID
	heads     []format.ManifestRef // per incarnation, its newest manifest
	all       []format.ManifestRef
	collected map[format.ManifestRef]bool
	ids       uint64
}

func newModel(lim Limits) *model {
	at := ref("main", 1, 0)
	g := Reach{At: at, HeadAt: at, ID: format.ID{15: 1}, Gen: 1, Explicit: []format.ReachEntry{{ManifestRef: at, Gen: 1}}}
	return &model{lim: lim, reach: map[format.ManifestRef]Reach{at: g}, parents: map[format.ID][]format.ID{g.ID: nil},
		heads: []format.ManifestRef{at}, all: []format.ManifestRef{at}, collected: map[format.ManifestRef]bool{}, ids: 1}
}

// id draws a unique commit id in random order (criss-cross ties).
func (m *model) id(hi uint64) format.ID {
	m.ids++
	var id format.ID
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], m.ids)
	return id
}

// fork starts a new incarnation at a commit-less version 0 on src.
func (m *model) fork(src format.ManifestRef) {
	at := ref(fmt.Sprintf("b%d", len(m.heads)%3), uint64(len(m.heads)), 0)
	m.reach[at] = m.reach[src].ForManifest(at)
	m.heads = append(m.heads, at)
	m.all = append(m.all, at)
}

// commit publishes commit id on incarnation i, merging merged if not nil.
// It reports false (nothing published) for a merge of the head itself.
func (m *model) commit(i int, id format.ID, merged *format.ManifestRef, compact bool) (bool, error) {
	p := m.heads[i]
	at := p
	at.Version++
	parents := []format.ID{m.reach[p].ID}
	var mr *Reach
	if merged != nil {
		r := m.reach[*merged]
		if r.ID == m.reach[p].ID {
			return false, nil // merging one's own head is refused (ResolveParents)
		}
		mr = &r
		parents = append(parents, r.ID)
	}
	r := JoinReach(at, id, m.reach[p], mr, m.lim, compact)
	x := r.Index()
	if err := format.ValidateCommitIndex(&x); err != nil {
		return false, fmt.Errorf("joined reach of %v is not a valid index: %v", at, err)
	}
	if r.Gen <= m.reach[p].Gen || mr != nil && r.Gen <= mr.Gen {
		return false, fmt.Errorf("gen %d of %v is not above its parents'", r.Gen, at)
	}
	m.parents[id] = parents
	m.reach[at] = r
	m.heads[i] = at
	m.all = append(m.all, at)
	return true, nil
}

func (m *model) load(at format.ManifestRef) (Reach, bool, error) {
	r, ok := m.reach[at]
	if !ok {
		panic(fmt.Sprintf("load of %v, which never existed", at))
	}
	if m.collected[at] {
		return Reach{}, false, nil
	}
	return r, true, nil
}

// build draws a random history: forks (of forks, of old manifests),
// commits, merges from any manifest (criss-cross included) and forced
// compactions.
func build(t *rapid.T) *model {
	m := newModel(Limits{Entries: rapid.IntRange(2, 6).Draw(t, "entries"), Folds: rapid.IntRange(2, 4).Draw(t, "folds")})
	for range rapid.IntRange(1, 60).Draw(t, "steps") {
		op := rapid.IntRange(0, 3).Draw(t, "op")
		if op == 0 {
			m.fork(rapid.SampledFrom(m.all).Draw(t, "src"))
			continue
		}
		var merged *format.ManifestRef
		if op >= 2 {
			src := rapid.SampledFrom(m.all).Draw(t, "merged")
			merged = &src
		}
		i := rapid.IntRange(0, len(m.heads)-1).Draw(t, "inc")
		id := m.id(rapid.Uint64Range(1, 8).Draw(t, "idhi"))
		if _, err := m.commit(i, id, merged, rapid.IntRange(0, 4).Draw(t, "compact") == 0); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestReachMergeBaseMatchesBruteForce: over random commit graphs (forks
// of forks, merges from any manifest, criss-cross, compactions at random
// points, small limits), ReachMergeBase answers exactly lineage.MergeBase
// over the full parents graph; with random manifests collected it answers
// the same or ErrReachMissing — never another base.
func TestReachMergeBaseMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := build(t)
		a := rapid.SampledFrom(m.all).Draw(t, "a")
		b := rapid.SampledFrom(m.all).Draw(t, "b")
		want, wok := MergeBase(m.parents, m.reach[a].ID, m.reach[b].ID)
		got, err := ReachMergeBase(m.reach[a], m.reach[b], m.load)
		switch {
		case !wok && !errors.Is(err, ErrNoCommonAncestor):
			t.Fatalf("no common ancestor, got %v %v", got.ID, err)
		case wok && err != nil:
			t.Fatalf("merge base of %v and %v: %v, want %v", a, b, err, want)
		case wok && got.ID != want:
			t.Fatalf("merge base of %v and %v: %v at %v, want %v", a, b, got.ID, got.HeadAt, want)
		case wok && m.reach[got.HeadAt].ID != want:
			t.Fatalf("merge base's HeadAt %v does not hold %v", got.HeadAt, want)
		}
		for _, at := range m.all {
			if at != a && at != b && rapid.IntRange(0, 3).Draw(t, "collect") == 0 {
				m.collected[at] = true
			}
		}
		got, err = ReachMergeBase(m.reach[a], m.reach[b], m.load)
		if err != nil && !errors.Is(err, ErrReachMissing) && !errors.Is(err, ErrNoCommonAncestor) {
			t.Fatalf("with collected manifests: %v", err)
		}
		if err == nil && (!wok || got.ID != want) {
			t.Fatalf("with collected manifests: base %v, want %v (%v): a wrong base", got.ID, want, wok)
		}
	})
}

// TestReachMergeBaseCrissCross: two branches that merged each other's
// heads have two best common ancestors; the greatest id wins, with and
// without compaction.
func TestReachMergeBaseCrissCross(t *testing.T) {
	for _, compact := range []bool{false, true} {
		m := newModel(Limits{Entries: 2, Folds: 2})
		m.fork(ref("main", 1, 0))
		m.fork(ref("main", 1, 0))
		step := func(i int, merged *format.ManifestRef, hi uint64) {
			if ok, err := m.commit(i, m.id(hi), merged, compact); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		step(1, nil, 1) // x1
		step(2, nil, 9) // y1: the greater id
		x1, y1 := m.heads[1], m.heads[2]
		step(1, &y1, 2) // x2 = x1 + y1
		step(2, &x1, 3) // y2 = y1 + x1
		step(1, nil, 4)
		step(2, nil, 5)
		want, _ := MergeBase(m.parents, m.reach[m.heads[1]].ID, m.reach[m.heads[2]].ID)
		got, err := ReachMergeBase(m.reach[m.heads[1]], m.reach[m.heads[2]], m.load)
		if err != nil || got.ID != want || want != m.reach[y1].ID {
			t.Fatalf("compact=%v: criss-cross base %v %v, want %v (y1, the greater id)", compact, got.ID, err, want)
		}
	}
}

// TestReachMergeBaseOfAFreshFork: a branch forked from main's head with
// one commit, merged back after main merged further branches (the
// branch-per-change cycle), finds its fork point without opening main's
// older folds: with every other manifest collected the base is still
// answered (a collection before the fork cannot know the pair).
func TestReachMergeBaseOfAFreshFork(t *testing.T) {
	m := newModel(Limits{Entries: 2, Folds: 2})
	cycle := func() format.ManifestRef {
		m.fork(m.heads[0])
		i := len(m.heads) - 1
		if ok, err := m.commit(i, m.id(1), nil, false); err != nil || !ok {
			t.Fatal(ok, err)
		}
		return m.heads[i]
	}
	merge := func(br format.ManifestRef) {
		if ok, err := m.commit(0, m.id(1), &br, false); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	for range 30 {
		merge(cycle())
	}
	fork := m.heads[0]
	mine := cycle()
	merge(cycle()) // another change lands on main first
	for _, at := range m.all {
		m.collected[at] = at != fork && at != mine && at != m.heads[0]
	}
	got, err := ReachMergeBase(m.reach[mine], m.reach[m.heads[0]], m.load)
	if err != nil || got.ID != m.reach[fork].ID {
		t.Fatalf("merge base of a fresh fork: %v at %v (%v), want its fork point %v", got.ID, got.HeadAt, err, fork)
	}
}

// TestReachMergeBaseBranchPerChange: branch per change (fork b from main,
// commit, merge into main) with small limits and random compactions; a
// change g forked from main's head, then `lag` more changes merged into
// main; every manifest of every change merged before g's fork collected
// (deleted names past retention, collected while only main lived: no live
// pair kept anything of them), main's kept. The merge base of g and main's
// head is answered, exactly: nothing it needs lies outside the two live
// incarnations (red while a set-aside collected fold had to be reached
// without passing through other collected folds).
func TestReachMergeBaseBranchPerChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newModel(Limits{Entries: rapid.IntRange(2, 6).Draw(t, "entries"), Folds: rapid.IntRange(2, 4).Draw(t, "folds")})
		step := func(i int, merged *format.ManifestRef) {
			if ok, err := m.commit(i, m.id(rapid.Uint64Range(1, 8).Draw(t, "idhi")), merged, rapid.IntRange(0, 6).Draw(t, "compact") == 0); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		change := func() int {
			m.fork(m.heads[0])
			i := len(m.heads) - 1
			step(i, nil)
			return i
		}
		var done []format.ManifestRef // changes merged before g's fork: deleted, then collected while only main lived
		for range rapid.IntRange(0, 40).Draw(t, "before") {
			b := m.heads[change()]
			step(0, &b)
			done = append(done, b)
		}
		g := change()
		for range rapid.IntRange(0, 5).Draw(t, "lag") {
			b := m.heads[change()]
			step(0, &b)
		}
		a, b := m.heads[g], m.heads[0]
		for _, at := range m.all {
			if slices.ContainsFunc(done, func(d format.ManifestRef) bool { return format.CompareIncarnation(d, at) == 0 }) {
				m.collected[at] = true
			}
		}
		want, wok := MergeBase(m.parents, m.reach[a].ID, m.reach[b].ID)
		got, err := ReachMergeBase(m.reach[a], m.reach[b], m.load)
		if err != nil || !wok || got.ID != want {
			t.Fatalf("merge base of %v and %v with other changes collected: %v %v, want %v", a, b, got.ID, err, want)
		}
	})
}
