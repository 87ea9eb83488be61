package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The lifetime workload (issue #27): a graph serving one short-lived
// branch per change — fork from main, commit, merge into main, delete —
// beside collections and compactions, pins of old snapshots and a lagging
// change-feed consumer holding its history with a lease, under crashes
// and store faults. Its hooks are the ops below; clock skew and the
// metadata retention of other issues plug in as further ops or actors.
// Beside the cycles, one long-lived feature branch lives through the whole
// run, merged into main and synced from it now and then, merged and
// deleted only at the end (lifetime_feature.go).
//
// Checks: acknowledged cycles' rows are in main (lost-write, via gread);
// a merge of a branch forked a moment ago never answers ErrReclaimed
// (cycle-merge, unless a collection could not read some live head's reach:
// issue #27 part 1); pinned snapshots read whole within their lease
// (pin-held); a feed consumer holding a live lease never meets a gap
// (feed-held) and its replayed state equals main's head at the end
// (feed-replay); retained history reads whole and nothing leaks after the
// final collection (retained-readable, leak); the feature branch's checks
// are listed in lifetime_feature.go.

// lifeCycles is the default scenario's number of branch-per-change cycles
// (modest: the default soak runs many short seeds); lifetime-10k runs
// 10^4.
const (
	lifeCycles     = 60
	lifeLongCycles = 10_000
	lifeFeedTTL    = maintLeaseTTL
	lifeConsumer   = "f0"
	lifeChangers   = 2
	// lifeMaxPerChanger keeps each changer's plan within a scenario's
	// bound on ops per actor (MaxActorOps); longer runs get more changers
	// (lifetime-10k: 3, racing for main).
	lifeMaxPerChanger = 4000
	// lifeMergeAttempts bounds a cycle's merge into main: a retryable
	// failure (a lost race, a lost or ambiguous reply, a transient fault)
	// re-reads main and merges again, at most this many times in all,
	// after pauses doubling from lifeMergePause up to lifeMergePauseMax.
	// The pauses add up to 35.5 s, past kernel.RecoveryLease (30 s): an
	// interrupted write's sidecar holds main's writers off until a
	// heal-first sweep may act on it.
	lifeMergeAttempts = 8
	lifeMergePause    = 250 * time.Millisecond
	lifeMergePauseMax = 10 * time.Second
	// lifeMarkEvery: the long form records a progress mark (LifeMark)
	// every this many cycles ended.
	lifeMarkEvery = 1000
	// lifeLongCycleCost is the long form's estimate of a cycle's
	// simulated time beyond its think (four writes and a merge's reads,
	// with retries); its fault phase is bounded by lifeLongBound times
	// the estimate and ends as soon as every planned cycle was attempted.
	lifeLongCycleCost = 3 * time.Second
	lifeLongBound     = 3
	// lifeLongIndexFanout is the index fanout of the long forms' data
	// handles: trees from 256 rows, in two or three levels over the
	// cycles' tables, where the short form's simIndexFanout (4) makes
	// about 16 times the index objects, which the long forms' collections
	// would spend their bound on (docs/invariants.md V10).
	lifeLongIndexFanout = 16
	// lifeReachEntries and lifeReachFolds bound the commit-index reaches
	// (kernel.Options): a few cycles' merges fold them.
	lifeReachEntries = 4
	lifeReachFolds   = 2
)

var lifeCycleThink = [2]time.Duration{500 * time.Millisecond, 2500 * time.Millisecond}

func init() {
	for _, w := range []struct {
		name   string
		cycles int
	}{{"lifetime", lifeCycles}, {"lifetime-10k", lifeLongCycles}} {
		cycles := w.cycles
		var phaseDone func(*Run) bool
		if cycles > lifeCycles {
			phaseDone = lifeCyclesAttempted // the long form runs every cycle
		}
		Register(&Workload{
			Name:        w.name,
			RidingScale: ridingScaleData,
			Doc: fmt.Sprintf("%d branch-per-change cycles (fork from main, commit, merge into main, delete) beside collections, "+
				"compactions, pins of old snapshots, a lagging change-feed consumer holding its history with a lease and a long-lived feature branch "+
				"(commits, merges into main and from main, merged and deleted at the end); checks pinned snapshots and the leased feed never lose history, merged rows never vanish, nothing leaks", cycles),
			Generate:   func(seed uint64, faults string) *Scenario { return genLifetime(seed, faults, cycles) },
			Contract:   mustContract(dataSchema),
			Seed:       seedData,
			Grace:      maintGrace,
			SkewMargin: maintSkew,
			// Small reach bounds: a seed's merges fold reaches, so the
			// merges of just-forked branches (cycle-merge) and rule 3b's
			// merge-base keep meet folds.
			ReachEntries: lifeReachEntries, ReachFolds: lifeReachFolds,
			IndexFanout: lifeIndexFanout(cycles),
			Reclaims:    true,
			Final:       lifeFinal,
			Long:        cycles > lifeCycles,
			PhaseDone:   phaseDone,
		})
	}
	RegisterOp("lcycle", opLifeCycle)
	RegisterOp("lfeed", opLifeFeed)
	RegisterOp("lfeat", opLifeFeature)
}

// lifeState is what the lifetime workload's processes share: the leased
// consumer's durable lease (its cursor and progress live in the run's
// feed saves, ops_feed.go).
type lifeState struct {
	mu      sync.Mutex
	lease   format.ID // the consumer's current history lease (zero: none)
	leaseAt string    // the cursor it was pinned at
	expires time.Time // by the pinner's clock
	lapsed  bool      // the consumer once held no live lease: a gap is allowed from then on
	// cycles, merged and deleted count cycles begun, merged and whose
	// branch was deleted; ended counts cycle ops that returned; retries
	// counts merges tried again; collections counts successful
	// collections (opMaintCollect) (Result).
	cycles, merged, deleted, ended, retries, collections atomic.Int64
	marks                                                []LifeMark // guarded by mu
	// feature is the long-lived feature branch's state (lifetime_feature.go).
	feature lifeFeatureState
	// incomplete counts successful collections that stopped early
	// (Report.Complete false); maxBases and markBases are the largest
	// Report.MergeBases of any successful collection, and of those since
	// the last mark (all guarded by mu).
	incomplete, maxBases, markBases int
}

// noteCollection records a successful collection's merge bases and
// whether it completed (the marks and Result report them).
func (st *lifeState) noteCollection(bases int, complete bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !complete {
		st.incomplete++
	}
	st.maxBases = max(st.maxBases, bases)
	st.markBases = max(st.markBases, bases)
}

// LifeMark is one progress mark of the lifetime workload: after Cycles
// cycles ended, the simulated time, the store requests so far (every
// process's) and the keys on the store; the successful collections so far
// and those of them that stopped early (Incomplete: a bound hit), and the
// largest Report.MergeBases of a collection since the previous mark.
type LifeMark struct {
	Cycles      int
	SimTime     time.Duration
	Requests    uint64
	Keys        int
	Collections int
	Incomplete  int
	MergeBases  int
}

// marksCopy returns the progress marks so far.
func (st *lifeState) marksCopy() []LifeMark {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]LifeMark(nil), st.marks...)
}

// lifeCyclesAttempted is the long form's PhaseDone: every planned cycle
// op has run to its end (a crash ends one early; its restart goes on with
// the next).
func lifeCyclesAttempted(r *Run) bool {
	planned := 0
	for _, a := range r.S.Actors {
		for _, op := range a.Ops {
			if op.Kind == "lcycle" {
				planned++
			}
		}
	}
	return r.life.ended.Load() >= int64(planned)
}

// lifeCycleEnded counts a cycle op's end and, every lifeMarkEvery, records
// a progress mark (simulated store only).
func (r *Run) lifeCycleEnded() {
	n := r.life.ended.Add(1)
	if n%lifeMarkEvery != 0 || r.W == nil {
		return
	}
	st := r.W.Store()
	m := LifeMark{Cycles: int(n), SimTime: r.W.Elapsed(), Requests: st.Counters().Requests(), Keys: st.Len(), Collections: int(r.life.collections.Load())}
	r.life.mu.Lock()
	m.Incomplete, m.MergeBases = r.life.incomplete, r.life.markBases
	r.life.markBases = 0
	r.life.marks = append(r.life.marks, m)
	r.life.mu.Unlock()
	r.note("lifetime mark: %d cycles ended, sim %v, requests %d, keys %d, collections %d (%d incomplete), merge bases ≤ %d",
		m.Cycles, m.SimTime, m.Requests, m.Keys, m.Collections, m.Incomplete, m.MergeBases)
}

// lifeCycleOver counts the process's cycle op ended, once: when it
// returns, or when the process crashes in it (Run.restart). A crashed
// process's op returns only when the world stops, so counting returns
// alone left the long form's phase (lifeCyclesAttempted) waiting for it
// until its bound.
func (p *Proc) lifeCycleOver() {
	if p.lifeInCycle.Swap(false) {
		p.run.lifeCycleEnded()
	}
}

// genLifetime plans cycles cycles over lifeChangers changers (more when
// one would exceed lifeMaxPerChanger); every other
// actor's plan fills the same fault phase.
func genLifetime(seed uint64, faults string, cycles int) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x6c696665)) // "life"
	changers := max(lifeChangers, (cycles+lifeMaxPerChanger-1)/lifeMaxPerChanger)
	per := (cycles + changers - 1) / changers
	mean := (lifeCycleThink[0] + lifeCycleThink[1]) / 2
	// A cycle takes about as long as its think time again (four writes
	// and a merge's reads, under faults and retries): twice the think.
	// The quiet phase grows with the history the final checks walk (the
	// consumer's catch-up, the final collection): 200 ms a cycle.
	sh := shape{faultPhase: 2 * time.Duration(per) * mean, quietPhase: maintShape.quietPhase + time.Duration(cycles)*200*time.Millisecond}
	if cycles > lifeCycles {
		// The long form's phase ends when every cycle was attempted
		// (lifeCyclesAttempted); its length here is only the bound,
		// and the other actors' plans cover it (at most MaxActorOps).
		sh.faultPhase = min(MaxPhase, lifeLongBound*time.Duration(per)*(mean+lifeLongCycleCost))
	}
	s := &Scenario{Workload: "lifetime", Seed: seed, Faults: faults, FaultPhase: sh.faultPhase, QuietPhase: sh.quietPhase}
	if cycles != lifeCycles {
		s.Workload = "lifetime-10k"
	}
	for i := 0; i < changers; i++ {
		a := ActorPlan{Name: fmt.Sprintf("c%d", i)}
		for n := 0; n < per && i*per+n < cycles; n++ {
			a.Ops = append(a.Ops, Op{Kind: "lcycle", Think: think(rng, lifeCycleThink), Args: map[string]string{}})
		}
		s.Actors = append(s.Actors, a)
	}
	life := func(name string, th [2]time.Duration, op func(*rand.Rand) Op) ActorPlan {
		a := ActorPlan{Name: name}
		for n := min(opsFor(sh, th), MaxActorOps); n > 0; n-- {
			o := op(rng)
			o.Think = think(rng, th)
			a.Ops = append(a.Ops, o)
		}
		return a
	}
	s.Actors = append(s.Actors, lifeShifts(rng, sh, "m0", [2]time.Duration{2 * time.Second, 8 * time.Second}, func(rng *rand.Rand) Op {
		if rng.IntN(3) == 0 {
			return Op{Kind: "gcompact", Args: map[string]string{}}
		}
		return Op{Kind: "gcollect", Args: map[string]string{}}
	})...)
	s.Actors = append(s.Actors, lifeShifts(rng, sh, "m1", [2]time.Duration{3 * time.Second, 10 * time.Second}, func(*rand.Rand) Op {
		return Op{Kind: "gcollect", Args: map[string]string{}}
	})...)
	s.Actors = append(s.Actors, lifeShifts(rng, sh, "r0", [2]time.Duration{time.Second, 5 * time.Second}, func(rng *rand.Rand) Op {
		switch rng.IntN(3) {
		case 0:
			return genPinOp(rng)
		case 1:
			return Op{Kind: "gpinread", Args: map[string]string{}}
		}
		return Op{Kind: "gread", Args: map[string]string{}}
	})...)
	s.Actors = append(s.Actors, life(lifeConsumer, [2]time.Duration{4 * time.Second, 12 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "lfeed", Args: map[string]string{"pages": fmt.Sprint(1 + rng.IntN(6)), "commits": fmt.Sprint(1 + rng.IntN(5)),
			"crash": fmt.Sprint(rng.IntN(4) / 3)}}
	}))
	s.Actors = append(s.Actors, genLifeSkewed(sh, life)...)
	s.Actors = append(s.Actors, genLifeFeature(seed, cycles > lifeCycles, 2*time.Duration(per)*mean, sh.faultPhase))
	return s
}

// lifeMaxShifts bounds the actors one lifeShifts plan is split into.
const lifeMaxShifts = 8

// lifeShifts plans one background role (collector, reader) to cover the
// whole fault phase. One actor holds at most MaxActorOps ops, which at the
// role's think time covers less than the long form's phase bound (a
// collector's 4096 ops, ~20,000 s, against a 45,000 s bound: a faulty
// lifetime-10k run lost its collections halfway and its store grew); so
// the plan continues in shifts NAME-1, NAME-2, ..., each starting (its
// first think) where the previous shift's thinks end. A plan that fits in
// one actor is exactly the one-actor plan (same ops, same draws).
func lifeShifts(rng *rand.Rand, sh shape, name string, th [2]time.Duration, op func(*rand.Rand) Op) []ActorPlan {
	var out []ActorPlan
	var offset time.Duration
	for left := opsFor(sh, th); left > 0 && len(out) < lifeMaxShifts; {
		a := ActorPlan{Name: name}
		if len(out) > 0 {
			a.Name = fmt.Sprintf("%s-%d", name, len(out))
		}
		var planned time.Duration
		for n := min(left, MaxActorOps); n > 0; n-- {
			o := op(rng)
			o.Think = think(rng, th)
			planned += o.Think
			a.Ops = append(a.Ops, o)
		}
		a.Ops[0].Think = min(MaxPhase, a.Ops[0].Think+offset)
		offset += planned
		left -= len(a.Ops)
		out = append(out, a)
	}
	return out
}

// genLifeSkewed plans the lifetime workload's skewed actors, as the
// maintenance workload's (genMaintSkewed): s0 inserts on main and s1
// collects, both with a clock behind the world's by more than the skew
// margin plus the whole run, so every publish of s0 and every collection
// of s1 must refuse with kernel.ErrClockSkew (check clock-skew) and no
// row of s0 is ever acknowledged.
func genLifeSkewed(sh shape, life func(string, [2]time.Duration, func(*rand.Rand) Op) ActorPlan) []ActorPlan {
	w := life("s0", [2]time.Duration{4 * time.Second, 20 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gtx", Args: map[string]string{"kind": "insert", "person": dataPeople[rng.IntN(len(dataPeople))]}}
	})
	c := life("s1", [2]time.Duration{10 * time.Second, 40 * time.Second}, func(*rand.Rand) Op {
		return Op{Kind: "gcollect", Args: map[string]string{}}
	})
	behind := max(maintClockBehind, maintClockBehind+sh.faultPhase+sh.quietPhase)
	w.Clock, c.Clock = -behind, -behind
	return []ActorPlan{w, c}
}

// opLifeCycle is one change: fork ch-<tag> from main, commit one new
// person on it, merge it into main, delete it. A step that fails (a fault,
// a lost race) ends the cycle; the branch is deleted if it exists. The
// person is acknowledged (must never vanish from main) once the merge is.
func opLifeCycle(p *Proc, idx int, _ Op) error {
	p.lifeInCycle.Store(true)
	defer p.lifeCycleOver()
	if p.gen > 0 && !p.lifeResumed {
		// A restarted changer first deletes every branch of its own
		// earlier cycles still live (the restart resumes with the next op):
		// the one its crash interrupted, and one an earlier restart crashed
		// before deleting.
		if err := p.lifeDeleteLeftCycles(idx); err != nil {
			return err
		}
	}
	g, err := p.dg()
	if err != nil {
		return p.readFailed("lcycle: open", err)
	}
	ctx, tag := p.Ctx(), p.Tag(idx)
	name := "ch-" + sanitizeTag(tag)
	p.run.life.cycles.Add(1)
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("lcycle: branch", err)
	}
	br, err := g.Kernel().CreateBranch(ctx, name, main)
	if err != nil {
		return p.lifeCycleFailed(name, "fork", err)
	}
	if err := lifeCommit(p, g, br, "l-"+tag); err != nil {
		return p.lifeCycleFailed(name, "commit", err)
	}
	if err := p.lifeMerge(g, br, name, tag); err != nil {
		return p.lifeCycleFailed(name, "merge", err)
	}
	p.run.life.merged.Add(1)
	st := &p.run.maint
	st.mu.Lock()
	st.acked = append(st.acked, "l-"+tag)
	st.mu.Unlock()
	return p.lifeDelete(name)
}

// lifeMerge merges br into main's current head. A retryable failure (a
// lost race, a lost or ambiguous reply, a transient fault: lifeRetryable)
// re-reads main and merges again, after a pause (doubling, bounded), at
// most lifeMergeAttempts times in all; a merge that did land before its reply
// was lost answers up to date the next time. Any other error, or the last
// one, is returned. ErrReclaimed is a violation (cycle-merge) unless a
// collection could not read some live head's reach.
func (p *Proc) lifeMerge(g *data.Graph, br kernel.BranchRef, name, tag string) error {
	ctx := p.Ctx()
	var err error
	for attempt := 1; attempt <= lifeMergeAttempts; attempt++ {
		if attempt > 1 {
			p.run.life.retries.Add(1)
			if err := p.h.Sleep(min(lifeMergePause<<(attempt-1), lifeMergePauseMax)); err != nil {
				return err
			}
		}
		var main kernel.BranchRef
		if main, err = g.Branch(ctx, "main"); err == nil {
			var res data.MergeResult
			res, err = g.Merge(ctx, br, main, kernel.LineageIntent{Actor: p.name, Message: "merge " + tag}, data.MergeOptions{})
			p.run.note("%s lcycle %s: merge %s %s (%v)", p.name, name, res.Outcome, res.Commit.ID, errText(err))
		}
		if err == nil {
			return nil
		}
		if errors.Is(err, kernel.ErrReclaimed) && !p.run.maint.unknownBases() {
			p.run.Violate(check.Violation{Check: "cycle-merge", Detail: fmt.Sprintf("%s: merge of %s (forked from main just before) into main: %v", p.name, name, err)})
		}
		if p.Over(err) || !lifeRetryable(err) {
			return err
		}
	}
	return err
}

// unknownBases reports whether some collection could not read a live
// head's reach (Report.MergeBasesUnknown).
func (st *maintState) unknownBases() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.basesUnknown
}

// lifeRetryable reports whether a merge's failure is typed retryable: a
// kernel error whose Retryable method says so (*kernel.ContentionError,
// *kernel.HeadMovedError, *kernel.GraceExpiredError, ...) or a transient,
// conflicting or ambiguous store error.
func lifeRetryable(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return objstore.IsRetryable(err) || objstore.IsAmbiguous(err)
}

// sanitizeTag makes a tag a branch-name segment ("c0.3" -> "c0-3").
func sanitizeTag(tag string) string {
	b := []byte(tag)
	for i, c := range b {
		if c == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}

// lifeCommit inserts person id on br in one transaction.
func lifeCommit(p *Proc, g *data.Graph, br kernel.BranchRef, id string) error {
	tx, err := g.Begin(p.Ctx(), br)
	if err != nil {
		return err
	}
	if err := tx.Insert("Person", data.Row{ID: id, Props: map[string]any{"name": id}}); err != nil {
		tx.Discard()
		return err
	}
	_, err = tx.Commit(p.Ctx(), kernel.LineageIntent{Actor: p.name, Message: "change " + id})
	return err
}

// lifeCycleFailed ends the process if it must, records kernel errors, and
// deletes the cycle's branch (if it exists) so it does not outlive it.
func (p *Proc) lifeCycleFailed(name, step string, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	p.run.note("%s lcycle %s: %s failed (%v)", p.name, name, step, errText(err))
	p.Unexpected("lcycle: "+step, err)
	return p.lifeDelete(name)
}

// lifeDelete deletes branch name, retrying a few times; absent is fine
// (counted deleted only if an earlier attempt may have deleted it).
// lifeAfterCycles is a restarted changer's cleanup once its ops ran out
// (or the quiet phase began) before any cycle of its own ran: a cycle
// deletes the branches the changer's crash left (opLifeCycle), so a crash
// in the changer's last cycle left that cycle's branch live for good
// (cycle-branch-left: sim/testdata/lifetime-crash-in-last-cycle.txt).
func (p *Proc) lifeAfterCycles() error {
	if p.gen == 0 || p.lifeResumed || !slices.ContainsFunc(p.plan.Ops, func(op Op) bool { return op.Kind == "lcycle" }) {
		return nil
	}
	return p.lifeDeleteLeftCycles(p.next)
}

// lifeDeleteLeftCycles deletes every live cycle branch of this changer's
// ops before idx (ch-<plan>-<k>, k < idx). A listing that fails leaves
// lifeResumed unset, so the next cycle tries again; the cycle the crash
// interrupted stays the one before the op this generation resumed at
// (resumedAt), not before idx (sim/testdata/lifetime-resume-after-failed-listing.txt).
func (p *Proc) lifeDeleteLeftCycles(idx int) error {
	branches, err := p.g.ListBranches(p.Ctx())
	if err != nil {
		if p.Over(err) {
			return p.end(err)
		}
		return nil
	}
	p.lifeResumed = true
	prefix := "ch-" + sanitizeTag(p.plan.Name) + "-"
	interrupted := prefix + strconv.Itoa(p.resumedAt-1)
	listed := false
	for _, b := range branches {
		k, err := strconv.Atoi(strings.TrimPrefix(b.Name(), prefix))
		if !strings.HasPrefix(b.Name(), prefix) || err != nil || k < 0 || k >= idx {
			continue
		}
		listed = listed || b.Name() == interrupted
		if err := p.lifeDelete(b.Name()); err != nil {
			return err
		}
	}
	if listed || p.resumedAt == 0 {
		return nil
	}
	// ListBranches misses a live name while a collection has deleted its
	// marker and not yet put it back (docs/gc.md rule 10): the cycle the
	// crash interrupted is deleted by name too (Branch finds it).
	return p.lifeDelete(interrupted)
}

// lifeDelete deletes cycle branch name, retrying a failure after a pause
// (doubling, bounded, as lifeMerge's), at most lifeMergeAttempts times in
// all. Before, four immediate attempts could all meet one burst of
// injected faults (the publish failpoint) and leave the branch live for
// good (cycle-branch-left), and with it, by rule 3b (docs/gc.md), main's
// history since its fork kept as merge bases by every later collection.
func (p *Proc) lifeDelete(name string) error {
	deleted, err := p.lifeDeleteName(name, "lcycle: delete")
	if deleted {
		p.run.life.deleted.Add(1)
	}
	return err
}

// lifeDeleteName deletes branch name as lifeDelete does; deleted reports
// that it did (or that an earlier attempt may have: absent after a failed
// one). err is set only when the process must end.
func (p *Proc) lifeDeleteName(name, what string) (deleted bool, err error) {
	for attempt := 0; attempt < lifeMergeAttempts; attempt++ {
		if attempt > 0 {
			if err := p.h.Sleep(min(lifeMergePause<<(attempt-1), lifeMergePauseMax)); err != nil {
				return false, err
			}
		}
		err := p.g.DeleteBranch(p.Ctx(), name)
		if err == nil || errors.Is(err, kernel.ErrBranchNotFound) && attempt > 0 {
			return true, nil
		}
		if errors.Is(err, kernel.ErrBranchNotFound) {
			return false, nil
		}
		if p.Over(err) {
			return false, p.end(err)
		}
		p.Unexpected(what, err)
	}
	return false, nil
}

// opLifeFeed is the lagging consumer: it holds a history lease on its
// saved cursor (maintain.PinFeed, renewed as the cursor advances, the old
// lease released after), polls a few small pages, and sometimes crashes
// (drops its unsaved progress). A gap while its lease is live is a
// violation (feed-held).
func opLifeFeed(p *Proc, _ int, op Op) error {
	fc, err := p.consumer(lifeConsumer)
	if err != nil {
		return p.readFailed("lfeed: open", err)
	}
	if _, ok := p.run.savedFeed(lifeConsumer); !ok {
		// The first cursor: the genesis commit (an empty block).
		if _, err := fc.poll(p, lifeConsumer, feed.Limits{MaxCommits: 1}, 1); err != nil {
			return p.lifeFeedFailed(err)
		}
	}
	if err := p.lifeRenew(); err != nil {
		return err
	}
	lim := feed.Limits{MaxCommits: argInt(op, "commits")}
	_, err = fc.poll(p, lifeConsumer, lim, argInt(op, "pages"))
	if op.Arg("crash") == "1" {
		p.fc = nil
	}
	if err != nil {
		return p.lifeFeedFailed(err)
	}
	return p.lifeRenew()
}

// lifeRenew pins the consumer's saved cursor when its lease is on an
// older one (or it has none), then releases the old lease. A Pin that
// answers ErrReclaimed (the history is gone: the lease had lapsed) marks
// the consumer lapsed.
func (p *Proc) lifeRenew() error {
	saved, ok := p.run.savedFeed(lifeConsumer)
	st := &p.run.life
	st.mu.Lock()
	old, at := st.lease, st.leaseAt
	st.mu.Unlock()
	if !ok || at == saved.cursor {
		return nil
	}
	now := p.run.clock.Now()
	m := p.maintainer()
	id, err := m.PinFeed(p.Ctx(), "main", saved.cursor, lifeFeedTTL, p.name)
	p.run.note("%s lfeed pin -> %s (%v)", p.name, id, errText(err))
	switch {
	case p.Over(err):
		return p.end(err)
	case errors.Is(err, kernel.ErrReclaimed):
		st.mu.Lock()
		st.lapsed = true
		st.mu.Unlock()
		return nil
	case err != nil:
		p.Unexpected("lfeed: pin", err)
		return nil
	}
	st.mu.Lock()
	if old != (format.ID{}) && !p.lifeLeaseLive(now) {
		st.lapsed = true // the old lease ended before this one began
	}
	st.lease, st.leaseAt, st.expires = id, saved.cursor, now.Add(lifeFeedTTL)
	st.mu.Unlock()
	if old != (format.ID{}) {
		if err := m.Release(p.Ctx(), old); p.Over(err) {
			return p.end(err)
		}
	}
	return nil
}

// lifeLeaseLive: the consumer's lease is live at now (a second's margin);
// the caller holds st.mu.
func (p *Proc) lifeLeaseLive(now time.Time) bool {
	st := &p.run.life
	return st.lease != (format.ID{}) && now.Before(st.expires.Add(-time.Second))
}

// lifeFeedFailed records a gap met while the lease is live (feed-held);
// other feed refusals are feed-error, as for any consumer.
func (p *Proc) lifeFeedFailed(err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	if errors.Is(err, feed.ErrGap) {
		st := &p.run.life
		st.mu.Lock()
		live := p.lifeLeaseLive(p.run.clock.Now()) && !st.lapsed
		if !live {
			st.lapsed = true
		}
		st.mu.Unlock()
		if live {
			p.run.Violate(check.Violation{Check: "feed-held", Detail: fmt.Sprintf("%s: a gap while holding a live history lease: %v", p.name, err)})
		}
		return nil
	}
	return p.feedFailed(lifeConsumer, err)
}

// lifeFinal catches the consumer up (no collection runs any more) and
// checks its replayed state against main's head unless its lease ever
// lapsed, releases the lease, collects once more with the feature branch
// live and then merges it into main and deletes it (lifeFeatureFinal),
// then runs the maintenance workload's final checks (retained history,
// acknowledged rows, zero-retention collection, no leak).
func lifeFinal(p *Proc) error {
	if err := p.lifeFinalFeed(); err != nil {
		return err
	}
	st := &p.run.life
	st.mu.Lock()
	id := st.lease
	st.mu.Unlock()
	if id != (format.ID{}) {
		if err := p.maintainer().Release(p.Ctx(), id); err != nil {
			return p.readFailed("lfeed: release", err)
		}
	}
	if err := p.lifeFeatureFinal(); err != nil {
		return err
	}
	if err := p.lifeBranchesLeft(); err != nil {
		return err
	}
	return maintFinal(p)
}

// lifeBranchesLeft reports every cycle branch still live once the cycles
// ended (check cycle-branch-left): each cycle deletes its branch, and a
// changer restarted after a crash deletes the branch of the cycle the
// crash interrupted. A branch left live for good is a long-lived fork of
// main whose merge base every later collection keeps (docs/gc.md rule 3b)
// at a cost that grows with main's history since.
func (p *Proc) lifeBranchesLeft() error {
	branches, err := p.g.ListBranches(p.Ctx())
	if err != nil {
		return p.readFailed("lifetime final: branches", err)
	}
	for _, b := range branches {
		if strings.HasPrefix(b.Name(), "ch-") {
			p.run.Violate(check.Violation{Check: "cycle-branch-left", Detail: fmt.Sprintf("cycle branch %s still live after the cycles ended", b.Name())})
		}
		if b.Name() == lifeFeature {
			p.run.Violate(check.Violation{Check: "feature-left", Detail: "the feature branch is still live after its final merge and delete"})
		}
	}
	return nil
}

func (p *Proc) lifeFinalFeed() error {
	if _, ok := p.run.savedFeed(lifeConsumer); !ok {
		return nil
	}
	g, err := p.dg()
	if err != nil {
		return p.readFailed("lfeed final: open", err)
	}
	p.fc = nil
	fc, err := p.consumer(lifeConsumer)
	if err != nil {
		return p.readFailed("lfeed final: consumer", err)
	}
	caught, err := fc.poll(p, lifeConsumer, feed.Limits{}, 0)
	if err != nil {
		return p.lifeFeedFailed(err)
	}
	st := &p.run.life
	st.mu.Lock()
	lapsed := st.lapsed
	st.mu.Unlock()
	if !caught {
		p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("%s: feed not caught up in %d polls", lifeConsumer, maxFeedPolls)})
		return nil
	}
	if lapsed {
		p.run.note("lfeed final: the consumer's lease lapsed once; replay not checked")
		return nil
	}
	head, err := headRows(p, g)
	if err != nil {
		return p.readFailed("lfeed final: head", err)
	}
	for _, v := range check.FeedReplay(lifeConsumer, "main", fc.state, head) {
		p.run.Violate(v)
	}
	p.fc = nil
	return nil
}

// lifeIndexFanout is the index fanout of the lifetime form of cycles
// cycles: the simulator's default for the short form, lifeLongIndexFanout
// for the long ones.
func lifeIndexFanout(cycles int) int {
	if cycles > lifeCycles {
		return lifeLongIndexFanout
	}
	return 0
}
