package lineage

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestReachMergeBaseOfAForkWithSeveralCommits: a change forked from main's
// head whose head is not its first commit (a maintenance compaction, or a
// second commit, published on it while its merge waited), merged back
// after `lag` other changes landed on main (with and without main's
// compactions), finds its fork point without loading anything of main's
// history before the fork but the fork point itself. The fork point is a
// fold of the change's reach, so every fold of main's side at or below it
// lies in the change's reach and is common: opening it adds nothing. Red
// before: only a change at its version 1 kept main's older folds closed
// (outsideOther), so a compacted change opened main's whole fold chain and
// met what collections deleted before the fork existed (the simulator's
// lifetime-10k cycle-merge: a manifest still cached whose index was
// collected answers "no complete reach", the kernel walks, and the walk
// meets a collected manifest: ErrReclaimed).
func TestReachMergeBaseOfAForkWithSeveralCommits(t *testing.T) {
	for _, commits := range []int{1, 2, 3} {
		for _, lag := range []int{0, 1, 3} {
			for _, compactMain := range []bool{false, true} {
				t.Run(fmt.Sprintf("commits%d-lag%d-compact%v", commits, lag, compactMain), func(t *testing.T) {
					m := newModel(Limits{Entries: 4, Folds: 2})
					step := func(i int, merged *format.ManifestRef, compact bool) {
						t.Helper()
						if ok, err := m.commit(i, m.id(1), merged, compact); err != nil || !ok {
							t.Fatal(ok, err)
						}
					}
					change := func(n int) int {
						m.fork(m.heads[0])
						i := len(m.heads) - 1
						for range n {
							step(i, nil, false)
						}
						return i
					}
					for range 30 {
						b := m.heads[change(1)]
						step(0, &b, false)
					}
					before := len(m.all) // every manifest so far is history before the fork
					fork := m.heads[0]
					mine := change(commits)
					for k := range lag {
						b := m.heads[change(1)]
						step(0, &b, compactMain && k%2 == 0)
					}
					old := map[format.ManifestRef]bool{}
					for _, at := range m.all[:before] {
						old[at] = at != fork
					}
					load := func(at format.ManifestRef) (Reach, bool, error) {
						if old[at] {
							return Reach{}, false, fmt.Errorf("loaded %v, history before the fork point %v", at, fork)
						}
						return m.load(at)
					}
					a, b := m.heads[mine], m.heads[0]
					got, err := ReachMergeBase(m.reach[a], m.reach[b], load)
					if err != nil || got.ID != m.reach[fork].ID {
						t.Fatalf("merge base of %v and %v: %v at %v (%v), want the fork point %v", a, b, got.ID, got.HeadAt, err, fork)
					}
					// The collector's variant (rule 3b) may open the folds of
					// main's head where main has not moved (lag 0), but never
					// needs what is gone there: collected, it is set aside.
					for at, o := range old {
						m.collected[at] = o
					}
					got, err = ReachMergeBaseOpenAll(m.reach[a], m.reach[b], m.load)
					if err != nil || got.ID != m.reach[fork].ID {
						t.Fatalf("open-all merge base of %v and %v: %v at %v (%v), want the fork point %v", a, b, got.ID, got.HeadAt, err, fork)
					}
				})
			}
		}
	}
}
