package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The maintenance workload's margins, in simulated time: every process's
// kernel refuses to publish a write staged longer ago than maintGrace, and
// collections use the same grace plus maintSkew.
const (
	maintGrace    = 20 * time.Second
	maintSkew     = 10 * time.Second
	maintKeepLast = 2
	maintLeaseTTL = 40 * time.Second
)

// The floors of the margins on a real store (Run.margin): a grace and a
// skew margin a loaded machine's fs requests fit in, and a lease that
// outlasts a pinned snapshot's read through a fresh handle.
const (
	realGraceFloor = 2 * time.Second
	realSkewFloor  = time.Second
	realLeaseFloor = 5 * time.Second
)

// maintPolicy is the collections' policy during the run.
func (r *Run) maintPolicy() maintain.Policy {
	return maintain.Policy{Policy: gc.Policy{KeepLast: maintKeepLast, Grace: r.maintGrace(), SkewMargin: r.maintSkew()}, MaxDuration: maintCollectFor}
}

// maintGrace, maintSkew and maintLease are the run's margins (Run.margin).
func (r *Run) maintGrace() time.Duration { return r.margin(maintGrace, realGraceFloor) }
func (r *Run) maintSkew() time.Duration  { return r.margin(maintSkew, realSkewFloor) }
func (r *Run) maintLease() time.Duration { return r.margin(maintLeaseTTL, realLeaseFloor) }

// maintCollectFor bounds one collection in simulated time (its record's
// expiry, docs/gc.md §5a): a crashed collector's record is stale after it
// plus the skew margin, well before the final collection.
const maintCollectFor = time.Minute

// maintCompact makes compaction frequent: tables of a few small fragments.
var maintCompact = compact.Policy{TargetRows: 64, MinFragments: 2}

var maintShape = shape{faultPhase: 2 * time.Minute, quietPhase: 4 * time.Minute}

func init() {
	Register(&Workload{
		Name: "maint",
		Doc: "maintenance beside live writers: compactions and collections racing data transactions (strict renames, " +
			"inserts), forked branches sharing table versions and merged from main, readers holding leased snapshots, pins racing collections (gpinrace: main's retention edge pinned while a collection loads, read again by a fresh handle once it ended); checks retained " +
			"history and pinned snapshots read whole, acknowledged inserts never vanish, strict writes never fail for a " +
			"compaction alone, merges between live branches find their merge base, branch names deleted and collected are re-created as new incarnations, ListBranches lists every fork created before a collection listed the name markers (branch-listed), a writer and a collector whose clocks run " +
			"behind beyond the skew margin are refused (ErrClockSkew, check clock-skew), and after a final zero-retention collection nothing leaks",
		Generate:   genMaint,
		Plants:     []string{plant.CompactDropsWrite, plant.GCNoGrace, plant.GCBranchLocal, plant.GCNoMergeBase, plant.SkewUnchecked, plant.TombstoneReuse, plant.PinLeaseReadOnce, plant.GCMarkerNoLookup, plant.GCSkipsRiding},
		Contract:   mustContract(dataSchema),
		Seed:       seedData,
		Grace:      maintGrace,
		SkewMargin: maintSkew,
		// The smallest reach bounds: merges compact reaches into folds, so
		// rule 3b's merge-base keep and the leak check meet them.
		ReachEntries: 2, ReachFolds: 2,
		Reclaims: true,
		Final:    maintFinal,
	})
	Register(&Workload{
		Name: "maint-oscrash",
		Doc: "the maint workload under machine crashes (fault profile oscrash, whatever -faults asks): the store defers " +
			"durability as fs does and a power loss loses what was not yet durable, so a manifest durable before what it pins " +
			"loses table versions and fragments (table-head, retained-readable)",
		Generate:     func(seed uint64, _ string) *Scenario { return genMaint(seed, "oscrash") },
		Plants:       []string{plant.PublishSkipsDeferred},
		Contract:     mustContract(dataSchema),
		Seed:         seedData,
		Grace:        maintGrace,
		SkewMargin:   maintSkew,
		ReachEntries: 2, ReachFolds: 2,
		Reclaims: true,
		Final:    maintFinal,
	})
	RegisterOp("gtx", opMaintTx)
	RegisterOp("gread", opMaintRead)
	RegisterOp("gcompact", opMaintCompact)
	RegisterOp("gcollect", opMaintCollect)
	RegisterOp("gfork", opMaintFork)
	RegisterOp("gmerge", opMaintMerge)
	RegisterOp("gpin", opMaintPin)
	RegisterOp("gpinread", opMaintPinRead)
	RegisterOp("grecycle", opMaintRecycle)
}

// maintState is what the maintenance workload's processes share: the
// acknowledged inserts (which must never vanish) and the live pins.
type maintState struct {
	mu     sync.Mutex
	acked  []string // ids of acknowledged inserts on main, in ack order
	forks  int
	pinned []maintPin
	// basesUnknown: some collection could not read a live head's reach
	// (maintain.Report.MergeBasesUnknown), so it kept no merge base for it.
	basesUnknown bool
	// incs: per recycled name, the highest incarnation number created.
	incs map[string]uint64
	// releases counts the pins' lease releases gpinread made (Result).
	releases atomic.Int64
	// forkSpans: when (run clock) each fork gfork created began its create
	// and when the create was acknowledged. Forks are never deleted, and
	// each name is created once.
	forkSpans map[string]forkSpan
	// markerLists: when (run clock) a collector listed the name markers
	// (every page).
	markerLists []time.Time
	// collecting numbers the collections of exact-clock processes running
	// now (gcollect; gpinrace races them), collectSeq the last number
	// given.
	collecting []runningCollect
	collectSeq uint64
}

// forkSpan is when a fork's create began and when it was acknowledged.
type forkSpan struct{ start, ack time.Time }

// unlisted returns, sorted, the forks acknowledged before since (when a
// ListBranches began) missing from listed, its answer, that it must list
// (check branch-listed). docs/gc.md rule 10
// keeps the marker of a name whose manifest a collector finds when it
// looks the name up; a create racing that collection loses it for a
// while only if its manifest landed after the look-up, which follows the
// collector's listing of the markers, which followed the create's first
// marker write: a fork is excused when some collector listed the markers
// between the start of its create and its acknowledgement. (A miss it
// excuses lasts until the collection's re-check, or, if that collector
// crashed or failed in between, until a later collection puts the marker
// back.)
func (s *maintState) unlisted(since time.Time, listed []kernel.BranchRef) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, f := range s.forkSpans { //detlint:ordered the result is sorted
		if !f.ack.Before(since) || slices.ContainsFunc(listed, func(b kernel.BranchRef) bool { return b.Name() == name }) {
			continue
		}
		if !slices.ContainsFunc(s.markerLists, func(at time.Time) bool { return at.After(f.start) && at.Before(f.ack) }) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// markerListStore is the store of the maintenance workload's collectors:
// every call passes through unchanged (batched reads and deletes as
// batches), and each listing of the name markers is noted
// (maintState.markerLists) for check branch-listed.
type markerListStore struct {
	objstore.Store
	p      *Proc
	prefix string
}

func (s markerListStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if prefix == s.prefix {
		st := &s.p.run.maint
		st.mu.Lock()
		st.markerLists = append(st.markerLists, s.p.run.clock.Now())
		st.mu.Unlock()
	}
	return s.Store.List(ctx, prefix, after, limit)
}

func (s markerListStore) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	return objstore.GetMany(ctx, s.Store, keys)
}

func (s markerListStore) DeleteMany(ctx context.Context, keys []string) []error {
	return objstore.DeleteMany(ctx, s.Store, keys)
}

// deferringMarkerListStore is markerListStore over a store that defers
// durability (the oscrash profile's sim.Deferring view), which it passes
// through: a collection makes the commit indexes it keeps merge bases by
// durable before deleting. Over any other store the collectors get a
// plain markerListStore, so they do not take it for one that defers.
type deferringMarkerListStore struct {
	markerListStore
	d objstore.DeferredPutter
}

func (s deferringMarkerListStore) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	return s.d.PutDeferred(ctx, key, data)
}

func (s deferringMarkerListStore) SyncDeferred(ctx context.Context, keys []string) error {
	return s.d.SyncDeferred(ctx, keys)
}

// dropPin forgets the pin with lease id (released).
func (s *maintState) dropPin(id format.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pin := range s.pinned {
		if pin.id == id {
			s.pinned = append(s.pinned[:i], s.pinned[i+1:]...)
			return
		}
	}
}

// maintPin is one leased snapshot and what it held when pinned.
type maintPin struct {
	id      format.ID
	version uint64
	expires time.Time
	rows    string
}

func (s *maintState) ackedNow() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acked...)
}

// genMaint generates a maintenance scenario.
func genMaint(seed uint64, faults string) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x6d61696e74)) // "maint"
	s := &Scenario{Workload: "maint", Seed: seed, Faults: faults, FaultPhase: maintShape.faultPhase, QuietPhase: maintShape.quietPhase}
	think := [2]time.Duration{300 * time.Millisecond, 3 * time.Second}
	for i := 0; i < 3+rng.IntN(2); i++ {
		a := ActorPlan{Name: fmt.Sprintf("d%d", i)}
		for n := opsFor(maintShape, think); n > 0; n-- {
			a.Ops = append(a.Ops, genMaintTx(rng, think))
		}
		s.Actors = append(s.Actors, a)
	}
	s.Actors = append(s.Actors, genMaintActor(rng, "m0", [2]time.Duration{time.Second, 6 * time.Second}, func(rng *rand.Rand) Op {
		if rng.IntN(2) == 0 {
			return Op{Kind: "gcompact", Args: map[string]string{}}
		}
		return Op{Kind: "gcollect", Args: map[string]string{}}
	}))
	s.Actors = append(s.Actors, genMaintActor(rng, "m1", [2]time.Duration{2 * time.Second, 8 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gcollect", Args: map[string]string{}}
	}))
	s.Actors = append(s.Actors, genMaintActor(rng, "b0", [2]time.Duration{5 * time.Second, 20 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gfork", Args: map[string]string{}}
	}))
	s.Actors = append(s.Actors, genMaintActor(rng, "b2", [2]time.Duration{3 * time.Second, 10 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "grecycle", Args: map[string]string{"name": fmt.Sprint(rng.IntN(maintRecycleNames))}}
	}))
	s.Actors = append(s.Actors, genMaintActor(rng, "b1", [2]time.Duration{3 * time.Second, 12 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gmerge", Args: map[string]string{"fork": fmt.Sprint(rng.IntN(maintMergeForks))}}
	}))
	s.Actors = append(s.Actors, genMaintActor(rng, "r0", [2]time.Duration{time.Second, 5 * time.Second}, func(rng *rand.Rand) Op {
		switch rng.IntN(3) {
		case 0:
			return genPinOp(rng)
		case 1:
			return Op{Kind: "gpinread", Args: map[string]string{}}
		}
		return Op{Kind: "gread", Args: map[string]string{}}
	}))
	s.Actors = append(s.Actors, genMaintSkewed(rng)...)
	// Last, so the other actors' plans are drawn as before it was added.
	s.Actors = append(s.Actors, genMaintActor(rng, "r1", [2]time.Duration{4 * time.Second, 12 * time.Second}, func(rng *rand.Rand) Op {
		return Op{Kind: "gpinrace", Args: map[string]string{}}
	}))
	return s
}

func genMaintActor(rng *rand.Rand, name string, th [2]time.Duration, op func(*rand.Rand) Op) ActorPlan {
	a := ActorPlan{Name: name}
	for n := opsFor(maintShape, th); n > 0; n-- {
		o := op(rng)
		o.Think = think(rng, th)
		a.Ops = append(a.Ops, o)
	}
	return a
}

func genMaintTx(rng *rand.Rand, th [2]time.Duration) Op {
	op := Op{Kind: "gtx", Think: think(rng, th), Args: map[string]string{"person": dataPeople[rng.IntN(len(dataPeople))]}}
	switch x := rng.Float64(); {
	case x < 0.5:
		op.Args["kind"] = "insert"
	case x < 0.75:
		op.Args["kind"] = "rename"
	case x < 0.9:
		op.Args["kind"], op.Args["company"] = "link", dataCompanies[rng.IntN(len(dataCompanies))]
	default:
		op.Args["kind"] = "unlink"
	}
	return op
}

// opMaintTx runs one transaction on main: an insert of a fresh person
// (which must never vanish once acknowledged), a strict rename (which must
// never fail because of a compaction alone), a link or an unlink.
func opMaintTx(p *Proc, idx int, op Op) error {
	tag := p.Tag(idx)
	person := op.Arg("person")
	var base kernel.Snapshot
	err := p.dataCommit(tag, "main", func(tx *data.Txn) error {
		base = tx.Base()
		switch op.Arg("kind") {
		case "insert":
			return tx.Insert("Person", data.Row{ID: "m-" + tag, Props: map[string]any{"name": tag}})
		case "rename":
			return tx.Update("Person", data.Row{ID: person, Props: map[string]any{"name": tag}})
		case "link":
			return tx.Insert("WorksAt", data.Row{ID: "e-" + tag, From: person, To: op.Arg("company")})
		case "unlink":
			edges, err := tx.Out(p.Ctx(), "WorksAt", person)
			if err != nil || len(edges) == 0 {
				return errNothingToDo
			}
			return tx.Delete("WorksAt", edges[0].ID)
		}
		return fmt.Errorf("workload: unknown mtx kind %q", op.Arg("kind"))
	})
	if p.Over(err) {
		return p.end(err)
	}
	p.checkSkewAccepted("gtx "+tag, err)
	switch {
	case err == nil && op.Arg("kind") == "insert":
		st := &p.run.maint
		st.mu.Lock()
		st.acked = append(st.acked, "m-"+tag)
		st.mu.Unlock()
	case errors.Is(err, kernel.ErrVersionMismatch) && op.Arg("kind") == "rename":
		return p.checkStrictFailure(tag, base, err)
	case err != nil && !errors.Is(err, errNothingToDo):
		p.Unexpected("gtx", err)
	}
	return nil
}

// checkStrictFailure reports a strict rename that failed although Person
// moved past its base only through content-preserving versions and no
// other version sits above the pin: a failure because of a compaction
// alone. It follows based_on itself (not kernel.PinSatisfied).
func (p *Proc) checkStrictFailure(tag string, base kernel.Snapshot, cause error) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gtx: open", err)
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gtx: branch", err)
	}
	live, err := g.Kernel().SnapshotAt(ctx, ref)
	if err != nil {
		return p.readFailed("gtx: snapshot", err)
	}
	bp, _ := base.Table("Person")
	lp, _ := live.Table("Person")
	head, err := g.Kernel().TableHead(ctx, ref, "Person")
	if err != nil {
		return p.readFailed("gtx: table head", err)
	}
	if lp.Version == bp.Version || head.Version != lp.Version {
		return nil
	}
	at := lp.Ref()
	for steps := 0; steps < 64 && at.Version > bp.Version; steps++ {
		var tv kernel.TableVersion
		if at == lp.Ref() {
			tv, err = g.Kernel().ReadPinned(ctx, lp) // it may ride the manifest (format 11)
		} else {
			tv, err = g.Kernel().ReadTable(ctx, "Person", at)
		}
		if err != nil || !tv.ContentPreserving || tv.BasedOn == nil {
			return p.readFailed("gtx: read table", err)
		}
		at = *tv.BasedOn
	}
	if at.Version == bp.Version {
		p.run.Violate(check.Violation{Check: "strict-compaction", Detail: fmt.Sprintf(
			"%s: strict rename %s failed though Person moved from v%d to v%d only by compactions: %v", p.name, tag, bp.Version, lp.Version, cause)})
	}
	return nil
}

// maintainer returns the process's maintenance handle on the run's store,
// made once per process (a restart makes a new one, as a real process's
// would be).
func (p *Proc) maintainer() *maintain.Maintainer {
	if p.maint != nil {
		return p.maint
	}
	var store objstore.Store = markerListStore{Store: p.run.Store, p: p, prefix: format.NewKeys(p.run.Root).NamesPrefix()}
	if d, ok := p.run.Store.(objstore.DeferredPutter); ok {
		store = deferringMarkerListStore{markerListStore: store.(markerListStore), d: d}
	}
	m, err := maintain.NewWith(store, p.run.Root, p.env(), maintain.Options{ReachEntries: p.run.wl.ReachEntries, ReachFolds: p.run.wl.ReachFolds})
	if err != nil {
		panic(fmt.Sprintf("workload: maintainer: %v", err))
	}
	p.maint = m
	return m
}

// opMaintCompact compacts main and every fork.
func opMaintCompact(p *Proc, _ int, _ Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gcompact: open", err)
	}
	_, err = maintain.Maintain(p.Ctx(), g, p.maintainer(), maintain.RunPolicy{Compact: maintCompact, SkipCollect: true})
	if p.Over(err) {
		return p.end(err)
	}
	p.Unexpected("gcompact", err)
	return nil
}

// collectStepSlack is how far past its record's deletable time a bounded
// collection may return (collect-bound): the step in flight — one read or
// one batch of reads, with the kernel's retries under faults — and the
// removal of its record.
const collectStepSlack = 15 * time.Second

// collectBounded runs one collection under the bounded policy and checks
// that it returned within its bound (collect-bound, docs/gc.md §7: a run's
// reads stop where its deletes do, MaxDuration less the skew margin).
func (p *Proc) collectBounded(policy maintain.Policy) (maintain.Report, error) {
	start := p.run.clock.Now()
	rep, err := p.maintainer().Collect(p.Ctx(), policy)
	if took := p.run.clock.Now().Sub(start); took > policy.MaxDuration-policy.SkewMargin+collectStepSlack && !p.Over(err) {
		p.run.Violate(check.Violation{Check: "collect-bound", Detail: fmt.Sprintf("%s: a collection bounded at %v (deletable %v) took %v: %+v (%v)",
			p.name, policy.MaxDuration, policy.MaxDuration-policy.SkewMargin, took, rep, errText(err))})
	}
	return rep, err
}

// collectNoted is collectBounded, noted in maintState.collecting while it
// runs if the process's clock is exact (gpinrace waits for one).
func (p *Proc) collectNoted(policy maintain.Policy) (maintain.Report, error) {
	if p.plan.Clock != 0 {
		return p.collectBounded(policy)
	}
	n := p.run.maint.beginCollect(p)
	defer p.run.maint.endCollect(n)
	return p.collectBounded(policy)
}

// opMaintCollect collects, then reads every retained snapshot of every
// live branch whole (the newest maintKeepLast manifests of each).
func opMaintCollect(p *Proc, _ int, _ Op) error {
	rep, err := p.collectNoted(p.run.maintPolicy())
	if p.Over(err) {
		return p.end(err)
	}
	p.Unexpected("gcollect", err)
	p.checkSkewAccepted("gcollect", err)
	p.run.note("%s mcollect -> %+v (%v)", p.name, rep, errText(err))
	if err == nil {
		p.run.life.collections.Add(1)
		p.run.life.noteCollection(rep.MergeBases, rep.Complete)
	}
	if errors.Is(err, kernel.ErrClockSkew) {
		return nil // refused before deleting anything: nothing new to read
	}
	if rep.MergeBasesUnknown > 0 {
		p.run.maint.mu.Lock()
		p.run.maint.basesUnknown = true
		p.run.maint.mu.Unlock()
	}
	return p.readRetained(maintKeepLast)
}

// readRetained reads the newest keep snapshots of every live branch in
// full: they are retained by every collection, so any failure to read one
// is a violation.
func (p *Proc) readRetained(keep uint64) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("retained: open", err)
	}
	ctx := p.Ctx()
	listed := p.run.clock.Now()
	branches, err := g.Kernel().ListBranches(ctx)
	if err != nil {
		return p.readFailed("retained: branches", err)
	}
	for _, name := range p.run.maint.unlisted(listed, branches) {
		p.run.Violate(check.Violation{Check: "branch-listed", Detail: fmt.Sprintf(
			"%s: ListBranches misses fork %s, created before any collector listed the name markers since its create began", p.name, name)})
	}
	for _, b := range branches {
		head, err := g.Kernel().SnapshotAt(ctx, b)
		if errors.Is(err, kernel.ErrBranchNotFound) {
			continue
		}
		if err != nil {
			return p.readFailed("retained: head", err)
		}
		for i := uint64(0); i < keep && i <= head.ManifestVersion(); i++ {
			s, err := g.SnapshotAtVersion(ctx, b, head.ManifestVersion()-i)
			if err == nil {
				_, err = snapshotRows(p, s)
			}
			if err != nil {
				return p.retainedFailed(fmt.Sprintf("%s v%d", b, head.ManifestVersion()-i), err)
			}
		}
	}
	return nil
}

// retainedFailed records a failed read of retained state: reclaimed or
// missing is a violation; faults are not.
func (p *Proc) retainedFailed(what string, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	if errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrNotFound) || errors.Is(err, kernel.ErrCorrupt) {
		p.run.Violate(check.Violation{Check: "retained-readable", Detail: fmt.Sprintf("%s: %s: %v", p.name, what, err)})
	}
	return nil
}

// snapshotRows reads every row of every table of s and returns a
// fingerprint of them.
func snapshotRows(p *Proc, s *data.Snapshot) (string, error) {
	var parts []string
	for _, typ := range []string{"Company", "Knows", "Person", "WorksAt"} {
		rr, err := s.Scan(p.Ctx(), typ)
		if err != nil {
			return "", err
		}
		for rr.Next() {
			rec := rr.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				row := typ
				for c := 0; c < int(rec.NumCols()); c++ {
					row += "/" + rec.Column(c).ValueStr(i)
				}
				parts = append(parts, row)
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return "", err
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ","), nil
}

// opMaintRead reads main's head whole and checks that every insert
// acknowledged before the read began is there.
func opMaintRead(p *Proc, _ int, _ Op) error {
	acked := p.run.maint.ackedNow()
	_, s, stop, err := p.headSnapshot("gread", "main")
	if stop {
		return err
	}
	rows, err := snapshotRows(p, s)
	if err != nil {
		return p.retainedFailed("main head", err)
	}
	people := personIDs(rows)
	for _, id := range acked {
		if !people[id] {
			p.run.Violate(check.Violation{Check: "lost-write", Detail: fmt.Sprintf(
				"%s: acknowledged insert %s is missing from main v%d", p.name, id, s.Kernel().ManifestVersion())})
		}
	}
	return nil
}

// personIDs is the set of Person ids in rows (snapshotRows's form: rows
// "Type/id/..." joined by commas), built once per read: a lookup per
// acknowledged id is then O(1), where searching the joined rows for each
// was O(rows) and made a read O(acked x rows), quadratic in a long run's
// history (the lifetime-10k workload's reads dominated its wall time).
func personIDs(rows string) map[string]bool {
	ids := map[string]bool{}
	for _, row := range strings.Split(rows, ",") {
		rest, ok := strings.CutPrefix(row, "Person/")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, "/")
		ids[id] = true
	}
	return ids
}

// opMaintFork creates the next fork of main (sharing its table versions).
func opMaintFork(p *Proc, _ int, _ Op) error {
	st := &p.run.maint
	st.mu.Lock()
	n := st.forks
	st.forks++
	st.mu.Unlock()
	ctx := p.Ctx()
	main, err := p.g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gfork: branch", err)
	}
	start := p.run.clock.Now()
	_, err = p.g.CreateBranch(ctx, fmt.Sprintf("f%d", n), main)
	if p.Over(err) {
		return p.end(err)
	}
	if err == nil {
		st.mu.Lock()
		if st.forkSpans == nil {
			st.forkSpans = map[string]forkSpan{}
		}
		st.forkSpans[fmt.Sprintf("f%d", n)] = forkSpan{start: start, ack: p.run.clock.Now()}
		st.mu.Unlock()
	}
	if err != nil && !errors.Is(err, kernel.ErrBranchExists) {
		p.Unexpected("gfork", err)
	}
	return p.readRetained(maintKeepLast)
}

// maintMergeForks is how many of the first forks gmerge merges main into.
const maintMergeForks = 3

// opMaintMerge merges main into fork f<fork> (created by gfork; absent is
// skipped). Forks take no other writes, so the merge never conflicts, and
// after the first one the merge base is the main commit it merged — soon
// far below main's retention. Collections must keep it (docs/gc.md rule
// 3b; merges publish within the grace period of their reads), so a merge
// between live branches answering ErrReclaimed is a violation
// (merge-base-kept), unless a collection could not read some live head's
// reach (Report.MergeBasesUnknown), which keeps no base for it by design.
func opMaintMerge(p *Proc, idx int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gmerge: open", err)
	}
	ctx := p.Ctx()
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gmerge: branch", err)
	}
	fork, err := g.Branch(ctx, "f"+op.Arg("fork"))
	if errors.Is(err, kernel.ErrBranchNotFound) {
		return nil
	}
	if err != nil {
		return p.readFailed("gmerge: branch", err)
	}
	res, err := g.Merge(ctx, main, fork, kernel.LineageIntent{Actor: p.name, Message: p.Tag(idx)}, data.MergeOptions{})
	if p.Over(err) {
		return p.end(err)
	}
	p.run.note("%s gmerge main -> %s: %s %s (%v)", p.name, fork.Name(), res.Outcome, res.Commit.ID, errText(err))
	st := &p.run.maint
	st.mu.Lock()
	unknown := st.basesUnknown
	st.mu.Unlock()
	if errors.Is(err, kernel.ErrReclaimed) && !unknown {
		p.run.Violate(check.Violation{Check: "merge-base-kept", Detail: fmt.Sprintf("%s: merge main into %s between live branches: %v", p.name, fork.Name(), err)})
		return nil
	}
	p.Unexpected("gmerge", err)
	return nil
}

// opMaintPin leases a snapshot of main "back" versions below its head —
// often an old one outside retention, which a running collection may be
// about to delete — reads it whole and remembers what it holds. Pin may
// answer ErrReclaimed; once it succeeded, the snapshot must read whole
// until its lease ends (check pin-held, docs/gc.md rule 6).
func opMaintPin(p *Proc, _ int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gpin: open", err)
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gpin: branch", err)
	}
	head, err := g.Kernel().SnapshotAt(ctx, ref)
	if err != nil {
		return p.readFailed("gpin: head", err)
	}
	v, err := p.pinVersion(g, ref, head.ManifestVersion(), op)
	if err != nil {
		return p.readFailed("gpin: oldest", err)
	}
	s, err := g.SnapshotAtVersion(ctx, ref, v)
	if errors.Is(err, kernel.ErrReclaimed) {
		return nil // collected before we read it: nothing to pin
	}
	if err != nil {
		return p.readFailed("gpin: snapshot", err)
	}
	now := p.run.clock.Now()
	id, err := p.maintainer().Pin(ctx, s.Kernel(), p.run.maintLease(), p.name)
	p.run.note("%s gpin main v%d (head v%d) -> %s (%v)", p.name, v, head.ManifestVersion(), id, errText(err))
	if errors.Is(err, kernel.ErrReclaimed) {
		return nil
	}
	if err != nil {
		return p.readFailed("gpin: pin", err)
	}
	rows, err := snapshotRows(p, s)
	if err != nil {
		return p.pinHeldFailed(fmt.Sprintf("main v%d right after its Pin", v), err)
	}
	st := &p.run.maint
	st.mu.Lock()
	st.pinned = append(st.pinned, maintPin{id: id, version: v, expires: now.Add(p.run.maintLease()), rows: rows})
	st.mu.Unlock()
	return nil
}

// genPinOp plans a pin: half of them of the oldest retained version of
// main (the next a collection deletes: the race of docs/gc.md §5a), the
// others a few versions below the head, within or just beyond retention.
func genPinOp(rng *rand.Rand) Op {
	if rng.IntN(2) == 0 {
		return Op{Kind: "gpin", Args: map[string]string{"oldest": "1"}}
	}
	return Op{Kind: "gpin", Args: map[string]string{"back": fmt.Sprint(rng.IntN(3*maintKeepLast + 4))}}
}

// pinVersion is the version of main a pin op targets: "back" versions
// below head, or with "oldest" the oldest one still readable above the
// genesis (retention is a contiguous newest-first run, so a binary search
// of manifest reads finds it).
func (p *Proc) pinVersion(g *data.Graph, ref kernel.BranchRef, head uint64, op Op) (uint64, error) {
	if op.Arg("oldest") != "1" {
		return head - min(uint64(argInt(op, "back")), head), nil
	}
	lo, hi := uint64(1), head // the oldest readable lies in [lo, hi]
	for steps := 0; lo < hi && steps < 64; steps++ {
		mid := lo + (hi-lo)/2
		_, err := g.Kernel().SnapshotAtVersion(p.Ctx(), ref, mid)
		switch {
		case err == nil:
			hi = mid
		case errors.Is(err, kernel.ErrReclaimed):
			lo = mid + 1
		default:
			return 0, err
		}
	}
	return hi, nil
}

// pinHeldFailed records a failed read of a successfully pinned snapshot
// within its lease: reclaimed, missing or corrupt is a violation of rule 6
// (check pin-held); faults are not.
func (p *Proc) pinHeldFailed(what string, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	if errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrNotFound) || errors.Is(err, kernel.ErrCorrupt) {
		p.run.Violate(check.Violation{Check: "pin-held", Detail: fmt.Sprintf("%s: pinned %s: %v", p.name, what, err)})
	}
	return nil
}

// opMaintPinRead re-reads every pinned snapshot still within its lease and
// compares it with what it held; expired pins are released.
func opMaintPinRead(p *Proc, _ int, _ Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gpinread: open", err)
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gpinread: branch", err)
	}
	st := &p.run.maint
	st.mu.Lock()
	pins := append([]maintPin(nil), st.pinned...)
	st.mu.Unlock()
	for _, pin := range pins {
		if !p.run.clock.Now().Before(pin.expires.Add(-time.Second)) {
			st.releases.Add(1)
			err := p.maintainer().Release(ctx, pin.id)
			if p.Over(err) {
				return p.end(err)
			}
			if err == nil {
				st.dropPin(pin.id) // released: never again (the list keeps the pins not yet released)
			}
			p.Unexpected("gpinread: release", err) // a failed release is kept: the next gpinread tries again
			continue
		}
		s, err := g.SnapshotAtVersion(ctx, ref, pin.version)
		var rows string
		if err == nil {
			rows, err = snapshotRows(p, s)
		}
		if err != nil {
			if rerr := p.pinHeldFailed(fmt.Sprintf("main v%d", pin.version), err); rerr != nil {
				return rerr
			}
			continue
		}
		if rows != pin.rows {
			p.run.Violate(check.Violation{Check: "pinned-snapshot", Detail: fmt.Sprintf(
				"%s: pinned main v%d reads differently within its lease", p.name, pin.version)})
		}
	}
	return nil
}

// maintRecycleNames is the pool of names grecycle deletes and re-creates.
const maintRecycleNames = 4

// opMaintRecycle runs one branch-per-change cycle on name c<name>: create
// it from main (a name deleted before, and perhaps collected whole since,
// is re-created), insert one row on it, merge it into main, delete it.
// Check recreated-name: every creation of a name the run sees takes an
// incarnation number above every earlier one of that name (docs/gc.md
// rule 1a: a collected tombstone must not let the name reuse one), and the
// merged row is on main after the merge.
func opMaintRecycle(p *Proc, idx int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("grecycle: open", err)
	}
	ctx, name, tag := p.Ctx(), "c"+op.Arg("name"), p.Tag(idx)
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("grecycle: branch", err)
	}
	ref, err := g.Kernel().CreateBranch(ctx, name, main)
	if p.Over(err) {
		return p.end(err)
	}
	switch {
	case err == nil:
		p.noteIncarnation(name, ref)
	case errors.Is(err, kernel.ErrBranchExists): // a crashed cycle left it live
		if ref, err = g.Branch(ctx, name); err != nil {
			return p.readFailed("grecycle: branch", err)
		}
	default:
		p.Unexpected("grecycle", err)
		return nil
	}
	row := "r-" + tag
	err = p.dataCommit(tag, name, func(tx *data.Txn) error {
		return tx.Insert("Person", data.Row{ID: row, Props: map[string]any{"name": tag}})
	})
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil {
		p.Unexpected("grecycle", err)
		return nil
	}
	mtag := tag + "m"
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(main.Name(), main.Incarnation()), mtag, nil)
	res, err := g.Merge(ctx, ref, main, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(mtag)}, data.MergeOptions{})
	if p.Over(err) {
		return p.end(err)
	}
	pc.End(mergeOutcome(res, err))
	if err != nil {
		if !errors.Is(err, kernel.ErrHeadMoved) {
			p.Unexpected("grecycle", err)
		}
		return nil
	}
	if err := p.checkMergedRow(g, res, name, row); err != nil {
		return err
	}
	err = g.Kernel().DeleteBranch(ctx, name)
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil && !errors.Is(err, kernel.ErrBranchNotFound) {
		p.Unexpected("grecycle", err)
	}
	return nil
}

// noteIncarnation records a creation of name and reports recreated-name
// when its incarnation number is not above every earlier one.
func (p *Proc) noteIncarnation(name string, ref kernel.BranchRef) {
	st := &p.run.maint
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.incs == nil {
		st.incs = map[string]uint64{}
	}
	if prev := st.incs[name]; ref.Incarnation() <= prev {
		p.run.Violate(check.Violation{Check: "recreated-name", Detail: fmt.Sprintf(
			"%s: %s re-created as incarnation %d, not above the earlier incarnation %d (an old incarnation's number reused)", p.name, name, ref.Incarnation(), prev)})
	}
	st.incs[name] = max(st.incs[name], ref.Incarnation())
}

// checkMergedRow reports recreated-name when the row committed on the
// merged branch is not in the merge's result.
func (p *Proc) checkMergedRow(g *data.Graph, res data.MergeResult, name, row string) error {
	if res.Commit.ID == (kernel.CommitID{}) {
		p.run.Violate(check.Violation{Check: "recreated-name", Detail: fmt.Sprintf("%s: merging %s (row %s) into main published nothing (%s)", p.name, name, row, res.Outcome)})
		return nil
	}
	snap, err := g.SnapshotAtCommit(p.Ctx(), res.Commit.ID)
	if err != nil {
		return p.readFailed("grecycle: snapshot", err)
	}
	if _, ok, err := snap.Get(p.Ctx(), "Person", row); err != nil {
		return p.readFailed("grecycle: get", err)
	} else if !ok {
		p.run.Violate(check.Violation{Check: "recreated-name", Detail: fmt.Sprintf("%s: row %s of %s missing from main after the merge %s", p.name, row, name, res.Commit.ID)})
	}
	return nil
}
