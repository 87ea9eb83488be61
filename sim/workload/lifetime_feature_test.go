package workload

import (
	"strings"
	"testing"
)

// TestLifetimeFeatureBranchDoesWhatItSays: a lifetime seed without faults
// runs its long-lived feature branch as documented (lifetime_feature.go):
// b0 creates it with its first op, before any collection; it receives
// commits, is merged into main and main into it (real merges, not only
// up-to-date answers), its merge base with main is read after every op;
// collections run while it lives; in the quiet phase a bounded collection
// with it live completes, then its final merge into main and its delete
// succeed, and it is gone (feature-left) with its persons in main
// (lost-write, the final read).
func TestLifetimeFeatureBranchDoesWhatItSays(t *testing.T) {
	w, _ := Lookup("lifetime")
	opt := testOpts
	opt.TraceLines = 1 << 20
	r := Execute(w.Generate(1, "none"), opt)
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	f := r.Feature
	t.Logf("feature: %+v; cycles merged %d, collections %d", f, r.CyclesMerged, r.Collections)
	if f.Commits < 3 || f.Merges < 2 || f.Syncs < 2 || f.Bases < f.Commits || !f.Final {
		t.Fatalf("vacuous feature branch: %+v", f)
	}
	created, finalCollect, finalMerge := -1, -1, -1
	collectsLive, mergedIn, mergedOut := 0, 0, 0
	for i, l := range r.Trace {
		switch {
		case strings.Contains(l, " lfeat create feature (ok)"):
			if created < 0 {
				created = i
			}
		case strings.Contains(l, " mcollect ") && strings.HasSuffix(l, "(ok)"):
			if created < 0 {
				t.Fatalf("a collection before the feature branch was created: %s", l)
			}
			collectsLive++
		case strings.Contains(l, " lfeat final collect ") && strings.Contains(l, "Complete:true") && strings.HasSuffix(l, "(ok)"):
			finalCollect = i
		case strings.Contains(l, "_janitor lfeat merge feature into main: ") && strings.HasSuffix(l, "(ok)"):
			finalMerge = i
		case strings.Contains(l, " lfeat merge feature into main: merged "):
			mergedIn++
		case strings.Contains(l, " lfeat merge main into feature: merged "), strings.Contains(l, " lfeat merge main into feature: fast-forward "):
			mergedOut++
		}
	}
	t.Logf("created at trace line %d; %d collections while live; %d real merges into main, %d of main into it; final collect %d, final merge %d",
		created, collectsLive, mergedIn, mergedOut, finalCollect, finalMerge)
	if created < 0 || collectsLive == 0 || mergedIn == 0 || mergedOut == 0 || finalCollect < 0 || finalMerge < finalCollect {
		t.Fatal("vacuous: the feature branch did not live through collections, merge both ways, and end with a completed collection, then its final merge")
	}
}

// TestLifetimeFeatureLivesThroughLongForm: in the long form (lifetime-10k's
// shape scaled down to 120 cycles, no faults) the feature branch merges
// rarely, so it stays unmerged across many cycles; it still merges, ends
// with its final merge and delete, and the run is clean.
func TestLifetimeFeatureLivesThroughLongForm(t *testing.T) {
	s := genLifetime(1, "none", 120)
	r := Execute(s, testOpts)
	t.Logf("feature: %+v; cycles merged %d, collections %d", r.Feature, r.CyclesMerged, r.Collections)
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	if r.Feature.Commits == 0 || !r.Feature.Final || r.Feature.Merges < 1 || r.Feature.Merges > r.Feature.Commits {
		t.Fatalf("feature: %+v", r.Feature)
	}
}
