package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/sim"
	"github.com/graphkernel/graphkernel/sim/check"
)

// Root is the graph root every simulated graph lives under.
const Root = "g"

// SchemaContract is the schema contract simulated graphs are created with.
var SchemaContract = []byte("graphkernel simulator schema v1\n")

// Bounds of a process's lifecycle.
const (
	maxOpenAttempts  = 2000
	openRetryDelay   = 500 * time.Millisecond
	maxFinalAttempts = 20
	finalRetryDelay  = time.Second
	maxHeldSnapshots = 8
	maxRecordedSnaps = 20000
	maxLogPages      = 64
	logPageSize      = 256
)

// Options tune Execute.
type Options struct {
	// TraceLines keeps that many human-readable trace lines (0: none).
	TraceLines int
	// LinTimeout bounds porcupine per partition (check.DefaultLinTimeout if
	// zero).
	LinTimeout time.Duration
	// NoRecoveryChecks turns off the two checkers that need the recovery
	// sweep (no sidecar left after the quiet phase, one audit record per
	// recovery): until the open-time sweep lands, every interrupted write
	// leaves its sidecar for good.
	NoRecoveryChecks bool
}

// Result is everything one scenario run produced.
type Result struct {
	Scenario       *Scenario
	TraceHash      [32]byte
	SimTime        time.Duration
	Ops            int
	Commits        int // acknowledged commits
	FaultsInjected uint64
	Crashes        int
	// MachineCrashes counts machine crashes (sim.MachineCrashConfig) and
	// Volatile what they did to the objects not yet durable: lost,
	// reverted, torn, kept.
	MachineCrashes int
	Volatile       [4]int
	Recoveries     int
	Migrations     int
	Cuts           int
	// Cycles, CyclesMerged and CyclesDeleted count the lifetime
	// workload's branch-per-change cycles begun, merged into main and
	// whose branch was deleted; MergeRetries the merges it tried again
	// after a retryable failure; Collections the collections (gcollect,
	// any workload) that succeeded.
	Cycles, CyclesMerged, CyclesDeleted, MergeRetries, Collections int
	// PinReleases counts the lease releases of expired pins (gpinread).
	PinReleases int
	// LifeMarks are the lifetime workload's progress marks (every
	// lifeMarkEvery cycles ended): simulated time, store requests and keys.
	LifeMarks []LifeMark
	// Feature is what the lifetime workload's long-lived feature branch
	// did (lifetime_feature.go).
	Feature  FeatureCounts
	Resolved int // sidecars the janitor's quiescent sweep resolved
	Reads    int
	// ModelReads and ModelUnmodelled count the data reads compared with
	// the reference data model and those at a commit it cannot explain.
	ModelReads      int
	ModelUnmodelled int
	// ModelCoverage is the reference data model's full account.
	ModelCoverage check.ModelCoverage
	// Groups is what the grouped commits covered (check.CheckGroups).
	Groups check.GroupCoverage
	// Riding is what the scenario's riding budget did (Scenario.Riding).
	Riding RidingCounts
	// ChunkForms counts the index chunks left on the store by payload
	// form (JSON writers and binary ones, jsonIndexChunks).
	ChunkForms  check.ChunkForms
	LinChecks   int
	LinUnknown  int
	Violations  []check.Violation
	LinFailures []check.LinFailure
	Trace       []string
}

// RidingCounts is what a run's riding budget (Scenario.Riding) did:
// whether the budget was below the format's maxima, the rounds redone
// over it (failpoint.RidingRedo hits), and what the final manifests pin
// (check.RidingCoverage: versions that rode, spilled versions, manifests
// mixing both).
type RidingCounts struct {
	Budgeted bool
	Redone   int
	check.RidingCoverage
}

// Failed reports whether the run found any violation.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// host is what a process needs from the actor it runs on.
type host interface {
	Context() context.Context
	Rand() *rand.Rand
	Entropy() io.Reader
	Failpoints() *failpoint.Set
	Sleep(d time.Duration) error
	Crashed() bool
	ID() int
}

// margin is a scenario's time margin d (a grace, a skew margin, a lease)
// as this run must apply it: d itself in a simulated run; on a real store,
// whose phases and think times shrink by RealEnv.Scale, d shrunk the same
// way but not below floor (nor above d), because real requests take real
// time. A margin left at its scenario value would outlast the shrunk run:
// a 20-second grace keeps everything a 2-second run wrote, so a final
// collection could reclaim nothing and the leak check would report the
// young garbage it keeps (TestRealStore/fs/maint).
func (r *Run) margin(d, floor time.Duration) time.Duration {
	if !r.shrunk() {
		return d
	}
	return min(d, max(time.Duration(float64(d)*r.scale), floor))
}

// scenarioTime is the scenario duration a process sleeps (host.Sleep scales
// it) to let real time d pass: d in a simulated run, d divided by the
// scale on a real store.
func (r *Run) scenarioTime(d time.Duration) time.Duration {
	if !r.shrunk() {
		return d
	}
	return time.Duration(float64(d) / r.scale)
}

// shrunk reports whether r is a real run whose times shrink by its scale.
func (r *Run) shrunk() bool { return r.W == nil && r.scale > 0 && r.scale < 1 }

// Run is one scenario in progress.
type Run struct {
	S     *Scenario
	wl    *Workload
	W     *sim.World // nil on a real store
	Store objstore.Store
	Insp  check.Inspector
	H     *check.History
	Root  string

	clock   kernel.Clock
	scale   float64 // a real run's RealEnv.Scale; 0 in a simulated run (margin)
	quiet   func() bool
	stopped func() bool

	mu         sync.Mutex
	violations []check.Violation
	snaps      []snapRecord
	opt        Options
	fixture    *migrate.Fixture // the migrate workload's v3 graph
	procs      map[int]*Proc    // by actor id
	sidecars   map[string]sidecarLife
	feedSaves  map[string]feedSave // feed consumers' durable records (ops_feed.go)
	models     check.DataRecord    // data transactions and reads for the reference data model (ops_data.go)
	modelCov   check.ModelCoverage // what CheckReadsVsModel explained

	maint maintState // the maintenance workload's shared observations
	life  lifeState  // the lifetime workload's leased feed consumer (lifetime.go)

	services map[string]*service // by name: the live generation (service.go)
	groups   groupRecord         // grouped commits' observations (ops_group.go)
	riding   RidingCounts        // set by finalChecks
	forms    check.ChunkForms    // set by finalChecks

	ops, recoveries, migrations, cuts, resolved atomic.Int64
	setupDone                                   atomic.Bool
}

// Violate records a violation found while the run is in progress.
func (r *Run) Violate(v check.Violation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, v)
}

// AddMigrations and AddCuts let later workloads report their counts.
func (r *Run) AddMigrations(n int) { r.migrations.Add(int64(n)) }

// AddCuts adds n exercised crash cuts.
func (r *Run) AddCuts(n int) { r.cuts.Add(int64(n)) }

// Execute runs s on a fresh simulated world and checks it.
func Execute(s *Scenario, opt Options) *Result {
	res := &Result{Scenario: s}
	if err := s.Validate(); err != nil {
		res.Violations = []check.Violation{{Check: "scenario", Detail: err.Error()}}
		return res
	}
	wl, _ := Lookup(s.Workload)
	prof, err := sim.Profile(s.Faults)
	if wl.Pending != "" || err != nil {
		res.Violations = []check.Violation{{Check: "scenario", Detail: fmt.Sprintf("cannot run: %v%s", err, wl.Pending)}}
		return res
	}
	if wl.Run != nil {
		return wl.Run(s, opt)
	}
	if wl.BuggifyFire > 0 && prof.Buggify.FireProb > 0 {
		prof.Buggify.FireProb = wl.BuggifyFire
	}
	w := sim.New(prof.Apply(sim.Config{Seed: s.Seed, TraceLines: opt.TraceLines}))
	r := &Run{S: s, wl: wl, W: w, opt: opt, Store: w.Client(), Insp: w.Store(), H: check.NewHistory(w.Tick), Root: Root,
		clock: w.Clock(), quiet: w.Quiet, stopped: w.Stopped,
		procs: map[int]*Proc{}, sidecars: map[string]sidecarLife{}}
	w.OnCrash(r.restart)
	w.Observe(r.observe)
	r.spawn(&ActorPlan{Name: initActor}, 0, 0, 0)
	for i := range s.Actors {
		r.spawn(&s.Actors[i], 0, 0, time.Second+time.Duration(i)*time.Millisecond)
	}
	end := s.FaultPhase
	if wl.PhaseDone == nil {
		r.spawn(&ActorPlan{Name: janitorActor}, 0, 0, s.FaultPhase)
		w.RunUntil(s.FaultPhase)
	} else {
		end = r.runUntilDone(wl.PhaseDone)
		r.spawn(&ActorPlan{Name: janitorActor}, 0, 0, 0)
	}
	w.EnterQuietPhase()
	if w.RunUntil(end + s.QuietPhase) {
		for _, a := range w.Live() {
			r.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf(
				"actor %s still running when the quiet phase ended at %v", a.Name(), w.Elapsed())})
		}
	}
	w.Stop()
	for _, p := range w.Stats().Panics {
		r.Violate(check.Violation{Check: "panic", Detail: p})
	}
	r.finalChecks()
	return r.result(w, opt)
}

// phaseStep is how often (in simulated time) a workload's PhaseDone is
// asked.
const phaseStep = time.Minute

// runUntilDone runs the fault phase until done reports true (asked every
// phaseStep) or the scenario's FaultPhase, its bound, is reached; it
// returns the simulated time the phase ended at.
func (r *Run) runUntilDone(done func(*Run) bool) time.Duration {
	for t := phaseStep; ; t += phaseStep {
		if t >= r.S.FaultPhase {
			r.W.RunUntil(r.S.FaultPhase)
			return r.S.FaultPhase
		}
		r.W.RunUntil(t)
		if done(r) {
			return t
		}
	}
}

// result runs porcupine and gathers the counters of a simulated run:
// every run's (counts) and the world's.
func (r *Run) result(w *sim.World, opt Options) *Result {
	res := r.counts(opt)
	st := w.Stats()
	res.TraceHash, res.SimTime, res.FaultsInjected = w.TraceHash(), w.Elapsed(), w.Store().FaultsInjected()
	res.Crashes, res.MachineCrashes, res.Volatile = st.Crashes, st.MachineCrashes, [4]int{st.Lost, st.Reverted, st.Torn, st.Kept}
	res.Trace = w.Trace()
	return res
}

// counts runs porcupine and gathers the counters a run keeps whatever
// it runs on, simulated or real (ExecuteReal): one place, so a real
// run reports everything a simulated one does but the world's own
// (trace, simulated time, injected faults and crashes).
func (r *Run) counts(opt Options) *Result {
	lin := check.Linearizable(r.H, opt.LinTimeout)
	for _, f := range lin.Failures {
		r.violations = append(r.violations, f.Violation())
	}
	_, acked, reads := r.H.Counts()
	return &Result{
		Scenario: r.S, Ops: int(r.ops.Load()), Commits: acked, Reads: reads,
		ModelReads: r.modelCov.Checked, ModelUnmodelled: r.modelCov.Unmodelled, ModelCoverage: r.modelCov, Groups: r.groups.cov, Riding: r.riding, ChunkForms: r.forms,
		Recoveries: int(r.recoveries.Load()), Migrations: int(r.migrations.Load()),
		Cuts: int(r.cuts.Load()), Cycles: int(r.life.cycles.Load()), CyclesMerged: int(r.life.merged.Load()),
		CyclesDeleted: int(r.life.deleted.Load()), MergeRetries: int(r.life.retries.Load()), Collections: int(r.life.collections.Load()), LifeMarks: r.life.marksCopy(),
		Feature:     r.life.featureCounts(),
		PinReleases: int(r.maint.releases.Load()),
		Resolved:    int(r.resolved.Load()), LinChecks: lin.Checks, LinUnknown: lin.Unknown,
		Violations: r.violations, LinFailures: lin.Failures,
	}
}

// The harness's own processes; scenario actor names cannot start with '_'.
const (
	initActor    = "_init"
	janitorActor = "_janitor"
)

// othersDone reports whether every process but the running janitor ended
// (done or crashed with no restart pending).
func (r *Run) othersDone() bool {
	if r.W == nil {
		return true // real stores start the janitor after the others
	}
	return len(r.W.Live()) <= 1
}

// othersLive names the processes other than the janitor still running
// (simulated world only), in actor order.
func (r *Run) othersLive() string {
	if r.W == nil {
		return ""
	}
	var names []string
	for _, a := range r.W.Live() {
		if a.Name() != janitorActor {
			names = append(names, a.Name())
		}
	}
	return strings.Join(names, ", ")
}

// spawn starts a process running plan from op index next; gen counts its
// restarts.
func (r *Run) spawn(plan *ActorPlan, next, gen int, delay time.Duration) {
	name := plan.Name
	if gen > 0 {
		name = fmt.Sprintf("%s~%d", plan.Name, gen)
	}
	p := &Proc{run: r, plan: plan, name: name, gen: gen, next: next, resumedAt: next}
	r.joinService(p)
	p.actor = r.W.SpawnAfter(delay, name, func(a *sim.Actor) error { return p.main(a) })
	r.procs[p.actor.ID()] = p
}

// restart is the world's crash callback: a crashed process comes back as a
// new one after a seeded delay, reopens the graph (which recovers) and goes
// on with the operations after the one it crashed in.
func (r *Run) restart(a *sim.Actor) {
	p, ok := r.procs[a.ID()]
	if !ok {
		panic(fmt.Sprintf("workload: crash of unknown actor %d", a.ID()))
	}
	p.lifeCycleOver() // a cycle it crashed in has ended (lifetime.go)
	delay := 200*time.Millisecond + time.Duration(a.Rand().Int64N(int64(3*time.Second)))
	if p.svc != nil { // the process dies whole (service.go)
		r.restartService(p, delay)
		return
	}
	r.spawn(p.plan, p.next, p.gen+1, delay)
}

// finalChecks runs the structural checkers on the durable state.
func (r *Run) finalChecks() {
	load := check.LoadGraph
	if r.wl.Reclaims {
		load = check.LoadRetainedGraph
	}
	g, vs := load(r.Insp, r.Root)
	r.migrations.Store(int64(g.Migrations()))
	if !r.wl.Reclaims { // these walk the whole history, which a collection truncates
		vs = append(vs, check.CheckChains(g)...)
		vs = append(vs, check.CheckForks(g)...)
		vs = append(vs, check.CheckCommits(g, r.H)...)
		vs = append(vs, r.checkSnapshots(g)...)
		vs = append(vs, r.checkReadsVsModel(g)...)
		vs = append(vs, r.checkGroups(g)...)
	}
	vs = append(vs, check.CheckTableHeads(r.Insp, g)...)
	r.forms = check.CountChunkForms(r.Insp, r.Root)
	if r.wl.RidingScale > 0 { // a workload with its own Run (cuts) counts its own
		rvs, cov := check.CheckRidingBudget(r.Insp, g, r.S.Riding.VersionBytes, r.S.Riding.ManifestBytes)
		vs = append(vs, rvs...)
		r.riding = RidingCounts{Budgeted: r.S.Riding != (kernel.RidingBudget{}), RidingCoverage: cov}
		if r.W != nil { // a real run's handles have no world failpoints
			r.riding.Redone = r.W.FailpointHits(failpoint.RidingRedo)
		}
	}
	if !r.opt.NoRecoveryChecks {
		vs = append(vs, check.CheckNoSidecars(r.Insp, r.Root)...)
		recovered := r.recoveredSidecars()
		if r.wl.Reclaims {
			recovered = nil // a collection deletes audit records past retention (docs/gc.md rule 8): at most one each
		}
		vs = append(vs, check.CheckAudits(r.Insp, r.Root, recovered)...)
		if !r.wl.Reclaims {
			vs = append(vs, check.CheckRecoveryCommits(g, r.Insp, r.Root)...)
		}
	}
	for _, v := range vs {
		r.Violate(v)
	}
}

// checkReadsVsModel compares the data reads with the reference data
// model (a workload with a data schema whose readers recorded reads).
func (r *Run) checkReadsVsModel(g check.Graph) []check.Violation {
	if r.models.Reads() == 0 || r.wl.Contract == nil {
		return nil
	}
	s, err := schema.Decode(r.wl.Contract)
	if err != nil {
		return []check.Violation{{Check: "reads-vs-model", Detail: fmt.Sprintf("the workload's contract does not decode: %v", err)}}
	}
	vs, cov := check.CheckReadsVsModel(g, &s, &r.models)
	r.modelCov = cov
	return vs
}

// sidecarLife records who wrote and who removed one recovery sidecar.
type sidecarLife struct {
	writer, remover int // actor ids; -1 if none yet
}

// observe follows sidecar writes and deletes (key layout R/sidecars/<opID>).
func (r *Run) observe(actor int, c *objsim.Call, applied bool, _ error) {
	if !applied {
		return
	}
	if len(c.Keys) == 0 {
		r.observeKey(actor, c.Op, c.Key)
		return
	}
	for _, k := range c.Keys { // a batched delete: as if each key's (a key that was absent counts as removed, as a Delete of it would)
		r.observeKey(actor, c.Op, k)
	}
}

// observeKey follows one key's write or delete.
func (r *Run) observeKey(actor int, o objstore.Op, key string) {
	prefix := format.NewKeys(r.Root).SidecarPrefix()
	if !strings.HasPrefix(key, prefix) {
		return
	}
	op := strings.SplitN(strings.TrimPrefix(key, prefix), "/", 2)[0]
	life, ok := r.sidecars[op]
	if !ok {
		life = sidecarLife{writer: -1, remover: -1}
	}
	switch o {
	case objstore.OpPut:
		if life.writer < 0 {
			life.writer = actor
		}
	case objstore.OpDelete:
		life.remover = actor
	}
	r.sidecars[op] = life
}

// recoveredSidecars lists the op ids whose sidecar some process other than
// its writer removed: recovery acted on them, so each needs one audit record.
func (r *Run) recoveredSidecars() []string {
	var out []string
	//detlint:ordered collects op ids, sorted next
	for op, life := range r.sidecars {
		if life.remover >= 0 && life.remover != life.writer {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// Outcome classifies a kernel error for the models: nil is OK; errors the
// kernel documents as definite (nothing was or will be applied) are Failed,
// unless the error also matches objstore.ErrAmbiguous; everything else,
// including a ContentionError marked Ambiguous, an injected failpoint error
// and a crash, is Ambiguous.
func Outcome(err error) model.Outcome {
	if err == nil {
		return model.OK
	}
	// Ambiguity wins over every definite kind the error also matches (K4):
	// a refusal seen on a head that did not yet show a pending write.
	if objstore.IsAmbiguous(err) {
		return model.Ambiguous
	}
	var ce *kernel.ContentionError
	if errors.As(err, &ce) {
		return model.Failed
	}
	for _, definite := range []error{
		kernel.ErrVersionMismatch, kernel.ErrBranchNotFound, kernel.ErrInvalidArgument,
		kernel.ErrInvalidName, kernel.ErrReadOnly, kernel.ErrHasDependents, kernel.ErrBranchExists,
		data.ErrValidation, kernel.ErrClockSkew, data.ErrGroupQueueFull, data.ErrGroupWait,
	} {
		if errors.Is(err, definite) {
			return model.Failed
		}
	}
	return model.Ambiguous
}
