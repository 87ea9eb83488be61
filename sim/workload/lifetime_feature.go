package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The lifetime workload's long-lived feature branch: beside the
// branch-per-change cycles, one process (lifeFeatureActor) forks
// lifeFeature from main with its first op and keeps it live for the whole
// run; now and then it commits a new person on it, merges it into main, or
// merges main into it (the "sync main into my branch" workflow). It is
// never deleted during the run: the janitor merges it into main and deletes
// it in the quiet phase (lifeFeatureFinal), after one bounded collection
// with it still live must complete (feature-collect). While it lives,
// every collection keeps, as merge bases of the pair (docs/gc.md rule 3b),
// main's history since the pair's last merge either way: the workload
// generates the known gap of docs/invariants.md ("a long-lived branch can
// stall bounded collections").
//
// Checks: a merge involving the feature branch (either way, the final one
// included) or a MergeBaseOf of its head and main's never answers
// ErrReclaimed unless a collection counted MergeBasesUnknown
// (feature-merge, as cycle-merge); the final merge and delete succeed
// (feature-final); the branch is never found missing while it lives
// (feature-lost) nor live after the final checks (feature-left); its
// persons acknowledged by a merge into main never vanish from main
// (lost-write, with the cycles' persons).

const (
	lifeFeature      = "feature"
	lifeFeatureActor = "b0"
	// lifeFeatureOps and lifeLongFeatureOps are about how many feature ops
	// run over the default and the long form's expected length (two think
	// times per cycle); the plan covers the whole fault-phase bound.
	lifeFeatureOps     = 20
	lifeLongFeatureOps = 100
	// lifeFeatureMix and lifeLongFeatureMix: two ops in that many merge,
	// the rest commit on the feature branch; the merges alternate between
	// the feature into main and main into it (the first way drawn), so a
	// run with two merges has both. The long form merges rarely, so its
	// branch stays unmerged for hundreds of cycles at a time.
	lifeFeatureMix     = 4
	lifeLongFeatureMix = 16
	// lifeFeatureCollects bounds the collections (maintPolicy: 1-minute
	// bound) the janitor runs with the feature branch live, one of which
	// must complete (feature-collect). Since a run's reads stop at its
	// bound too (docs/gc.md §7), a cold janitor's first load of the
	// branch's merge-base history (~9,000 cycles without a sync in
	// lifetime-10k seed 3: 11 min of reads, once three unbounded runs)
	// is spread over bounded runs, each caching what it read.
	lifeFeatureCollects = 16
)

// lifeFeatureState is the feature branch's shared state (guarded by
// lifeState.mu) and counts (Result).
type lifeFeatureState struct {
	created bool     // the branch was seen live once
	pending []string // persons committed on it, acknowledged, not yet merged into main
	// commits, merges, syncs and bases count acknowledged commits on it,
	// merges of it into main and of main into it, and MergeBaseOf answers
	// of its head and main's; final: the final merge and delete succeeded.
	commits, merges, syncs, bases int
	final                         bool
	finalCollects                 int
}

// FeatureCounts is what the lifetime workload's long-lived feature branch
// did: commits on it, merges into main and of main into it, MergeBaseOf
// answers, whether its final merge and delete succeeded, and the keys the
// collections with it live kept as merge bases (the largest
// Report.MergeBases of any collection while it lived).
type FeatureCounts struct {
	Commits, Merges, Syncs, Bases int
	Final                         bool
	MaxMergeBases                 int
	// FinalCollects is how many bounded collections the janitor ran with
	// the branch live before one completed (or lifeFeatureCollects).
	FinalCollects int
}

// genLifeFeature plans the feature branch's process: a create early, then
// commits, merges into main and syncs from main, spread so that about ops
// of them fall in est (the expected length of the cycles) and the plan
// covers bound. It draws from its own PRNG, so the other actors' plans are
// those of a run without it.
func genLifeFeature(seed uint64, long bool, est, bound time.Duration) ActorPlan {
	rng := rand.New(rand.NewPCG(seed, 0x66656174)) // "feat"
	ops, mix := lifeFeatureOps, lifeFeatureMix
	if long {
		ops, mix = lifeLongFeatureOps, lifeLongFeatureMix
	}
	th := [2]time.Duration{est / time.Duration(2*ops), 3 * est / time.Duration(2*ops)}
	a := ActorPlan{Name: lifeFeatureActor}
	a.Ops = append(a.Ops, Op{Kind: "lfeat", Think: think(rng, [2]time.Duration{500 * time.Millisecond, 2 * time.Second}), Args: map[string]string{"do": "create"}})
	ways := [2]string{"merge", "sync"}
	way := rng.IntN(2)
	for planned := a.Ops[0].Think; planned < bound && len(a.Ops) < MaxActorOps; {
		do := "commit"
		if rng.IntN(mix) < 2 {
			do, way = ways[way], 1-way
		}
		o := Op{Kind: "lfeat", Think: think(rng, th), Args: map[string]string{"do": do}}
		planned += o.Think
		a.Ops = append(a.Ops, o)
	}
	return a
}

// opLifeFeature is one step of the feature branch: create it (every op
// first creates it if no op saw it live yet), commit one new person on it
// (do=commit), merge it into main (do=merge) or main into it (do=sync);
// then read the merge base of its head and main's.
func opLifeFeature(p *Proc, idx int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("lfeat: open", err)
	}
	br, ok, err := p.lifeFeatureBranch(g)
	if err != nil || !ok {
		return err
	}
	st := &p.run.life
	switch op.Arg("do") {
	case "commit":
		id := "f-" + sanitizeTag(p.Tag(idx))
		err := lifeCommit(p, g, br, id)
		p.run.note("%s lfeat commit %s (%v)", p.name, id, errText(err))
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("lfeat: commit", err)
		if err == nil {
			st.mu.Lock()
			st.feature.pending = append(st.feature.pending, id)
			st.feature.commits++
			st.mu.Unlock()
		}
	case "merge":
		if err := p.lifeFeatureMerge(g, lifeFeature, "main", false); err != nil {
			return err
		}
	case "sync":
		if err := p.lifeFeatureMerge(g, "main", lifeFeature, false); err != nil {
			return err
		}
	}
	return p.lifeFeatureBase(g)
}

// lifeFeatureBranch returns the feature branch, forking it from main if no
// op saw it live yet (a create whose outcome was lost is read back). ok is
// false when it is not live yet (its create failed); err is set only when
// the process must end. A branch seen live once and then not found is a
// violation (feature-lost): nothing deletes it before the final checks.
func (p *Proc) lifeFeatureBranch(g *data.Graph) (kernel.BranchRef, bool, error) {
	ctx, st := p.Ctx(), &p.run.life
	st.mu.Lock()
	created := st.feature.created
	st.mu.Unlock()
	if !created {
		main, err := g.Branch(ctx, "main")
		if err != nil {
			return kernel.BranchRef{}, false, p.readFailed("lfeat: main", err)
		}
		_, err = g.Kernel().CreateBranch(ctx, lifeFeature, main)
		p.run.note("%s lfeat create %s (%v)", p.name, lifeFeature, errText(err))
		if p.Over(err) {
			return kernel.BranchRef{}, false, p.end(err)
		}
		if !errors.Is(err, kernel.ErrBranchExists) {
			p.Unexpected("lfeat: create", err)
		}
	}
	br, err := g.Branch(ctx, lifeFeature)
	switch {
	case errors.Is(err, kernel.ErrBranchNotFound) && created:
		p.run.Violate(check.Violation{Check: "feature-lost", Detail: fmt.Sprintf("%s: the feature branch, live since its create and never deleted, is not found: %v", p.name, err)})
		return kernel.BranchRef{}, false, nil
	case errors.Is(err, kernel.ErrBranchNotFound):
		return kernel.BranchRef{}, false, nil
	case err != nil:
		return kernel.BranchRef{}, false, p.readFailed("lfeat: branch", err)
	}
	st.mu.Lock()
	st.feature.created = true
	st.mu.Unlock()
	return br, true, nil
}

// lifeFeatureMerge merges branch src into branch dst (one of them the
// feature branch, the other main), re-reading both heads at every attempt;
// a retryable failure is tried again as a cycle's merge is (lifeMerge). A
// merge into main acknowledges the feature's persons committed before it
// (they must never vanish from main). ErrReclaimed is a violation
// (feature-merge) unless a collection could not read some live head's
// reach; so is a conflict (the feature's persons are its own). final: the
// janitor's merge, which must succeed (feature-final). It returns an error
// only when the process must end.
func (p *Proc) lifeFeatureMerge(g *data.Graph, src, dst string, final bool) error {
	ctx, st := p.Ctx(), &p.run.life
	st.mu.Lock()
	pending := append([]string(nil), st.feature.pending...)
	st.mu.Unlock()
	var err error
	for attempt := 1; attempt <= lifeMergeAttempts; attempt++ {
		if attempt > 1 {
			if err := p.h.Sleep(min(lifeMergePause<<(attempt-1), lifeMergePauseMax)); err != nil {
				return err
			}
		}
		var from, into kernel.BranchRef
		var res data.MergeResult
		if from, err = g.Branch(ctx, src); err == nil {
			if into, err = g.Branch(ctx, dst); err == nil {
				res, err = g.Merge(ctx, from, into, kernel.LineageIntent{Actor: p.name, Message: fmt.Sprintf("merge %s into %s", src, dst)}, data.MergeOptions{})
			}
		}
		p.run.note("%s lfeat merge %s into %s: %s %s (%v)", p.name, src, dst, res.Outcome, res.Commit.ID, errText(err))
		if err == nil {
			break
		}
		if errors.Is(err, kernel.ErrReclaimed) && !p.run.maint.unknownBases() {
			p.run.Violate(check.Violation{Check: "feature-merge", Detail: fmt.Sprintf("%s: merge of %s into %s: %v", p.name, src, dst, err)})
		}
		var conflict *data.MergeConflictError
		if errors.As(err, &conflict) {
			p.run.Violate(check.Violation{Check: "feature-merge", Detail: fmt.Sprintf("%s: merge of %s into %s conflicts: %v", p.name, src, dst, err)})
		}
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("lfeat: merge", err)
		if !lifeRetryable(err) {
			break
		}
	}
	if err != nil {
		if final {
			p.run.Violate(check.Violation{Check: "feature-final", Detail: fmt.Sprintf("%s: the final merge of %s into %s failed: %v", p.name, src, dst, err)})
		}
		return nil
	}
	st.mu.Lock()
	if dst == "main" {
		st.feature.merges++
		// Drop the merged commits by id: another merge of the feature
		// branch (a restarted process's, or the final one running beside
		// it in the quiet phase) may have dropped some already; slicing
		// off len(pending) then ran past the end and the panic, under
		// st.mu, left the lock held for the run's result
		// (lifetime-resume-after-failed-listing hung).
		st.feature.pending = withoutIDs(st.feature.pending, pending)
	} else {
		st.feature.syncs++
	}
	st.mu.Unlock()
	if dst == "main" {
		ms := &p.run.maint
		ms.mu.Lock()
		ms.acked = append(ms.acked, pending...)
		ms.mu.Unlock()
	}
	return nil
}

// lifeFeatureBase reads the merge base of the feature branch's head and
// main's (kernel.Graph.MergeBaseOf, as a merge computes it): ErrReclaimed
// is a violation (feature-merge) unless a collection could not read some
// live head's reach.
func (p *Proc) lifeFeatureBase(g *data.Graph) error {
	ctx, k := p.Ctx(), g.Kernel()
	var heads [2]kernel.Commit
	for i, name := range []string{lifeFeature, "main"} {
		br, err := k.Branch(ctx, name)
		if err == nil {
			heads[i], err = k.Head(ctx, br)
		}
		if err != nil {
			return p.readFailed("lfeat: head", err)
		}
	}
	base, err := k.MergeBaseOf(ctx, heads[0].ID, heads[1].ID)
	p.run.note("%s lfeat base %s %s -> %s (%v)", p.name, heads[0].ID, heads[1].ID, base.ID, errText(err))
	if errors.Is(err, kernel.ErrReclaimed) && !p.run.maint.unknownBases() {
		p.run.Violate(check.Violation{Check: "feature-merge", Detail: fmt.Sprintf("%s: merge base of %s and main: %v", p.name, lifeFeature, err)})
	}
	if err != nil {
		return p.readFailed("lfeat: merge base", err)
	}
	st := &p.run.life
	st.mu.Lock()
	st.feature.bases++
	st.mu.Unlock()
	return nil
}

// lifeFeatureFinal runs in the janitor before the final checks: with the
// feature branch still live, a bounded collection (the run's maintPolicy)
// must complete within lifeFeatureCollects runs (feature-collect: the
// known gap, rule 3b's merge-base work over main's history since the
// pair's last merge, stalls it); then the branch's final merge into main
// and its delete must succeed (feature-final). A feature branch whose
// create never landed is noted only.
func (p *Proc) lifeFeatureFinal() error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("lfeat final: open", err)
	}
	st := &p.run.life
	st.mu.Lock()
	created := st.feature.created
	st.mu.Unlock()
	if _, err := g.Branch(p.Ctx(), lifeFeature); errors.Is(err, kernel.ErrBranchNotFound) && !created {
		p.run.note("lfeat final: the feature branch was never created")
		return nil
	} else if err != nil {
		return p.readFailed("lfeat final: branch", err)
	}
	st.mu.Lock()
	st.feature.created = true
	st.mu.Unlock()
	var reps []string
	complete := false
	for n := 0; n < lifeFeatureCollects && !complete; n++ {
		rep, err := p.collectBounded(p.run.maintPolicy())
		p.run.note("%s lfeat final collect -> %+v (%v)", p.name, rep, errText(err))
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("lfeat final: collect", err)
		if err == nil {
			p.run.life.noteCollection(rep.MergeBases, rep.Complete)
		}
		complete = err == nil && rep.Complete
		reps = append(reps, fmt.Sprintf("complete=%t merge bases %d (%v)", rep.Complete, rep.MergeBases, errText(err)))
	}
	p.run.note("%s lfeat final: %d bounded collections, complete %v", p.name, len(reps), complete)
	st.mu.Lock()
	st.feature.finalCollects = len(reps)
	st.mu.Unlock()
	if !complete {
		p.run.Violate(check.Violation{Check: "feature-collect", Detail: fmt.Sprintf("no collection with the feature branch live completed in %d bounded runs: %v", lifeFeatureCollects, reps)})
	}
	if err := p.lifeFeatureMerge(g, lifeFeature, "main", true); err != nil {
		return err
	}
	deleted, err := p.lifeDeleteName(lifeFeature, "lfeat final: delete")
	if err != nil {
		return err
	}
	if !deleted {
		p.run.Violate(check.Violation{Check: "feature-final", Detail: "the feature branch's final delete failed"})
		return nil
	}
	st.mu.Lock()
	st.feature.final = st.feature.final || len(st.feature.pending) == 0
	st.mu.Unlock()
	return nil
}

// featureCounts returns the feature branch's counts (Result).
func (st *lifeState) featureCounts() FeatureCounts {
	st.mu.Lock()
	defer st.mu.Unlock()
	f := st.feature
	return FeatureCounts{Commits: f.commits, Merges: f.merges, Syncs: f.syncs, Bases: f.bases, Final: f.final, MaxMergeBases: st.maxBases, FinalCollects: f.finalCollects}
}

// withoutIDs returns ids without any of drop, in order.
func withoutIDs(ids, drop []string) []string {
	gone := make(map[string]bool, len(drop))
	for _, id := range drop {
		gone[id] = true
	}
	out := ids[:0:0]
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out
}
