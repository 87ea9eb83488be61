package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The pin racer's bounds, in simulated time: how often it looks whether a
// collection is running and how long it waits for one to begin; how often
// it looks whether the collections running at its Pin ended, and how long
// after its Pin it waits for them (half the lease: it must read the
// snapshot again within the lease).
const (
	pinRacePoll  = 50 * time.Millisecond
	pinRaceAwait = 20 * time.Second
	// pinRaceAwaitSteps bounds the polls of that wait.
	pinRaceAwaitSteps = int(pinRaceAwait / pinRacePoll)
	pinRaceEndPoll    = 250 * time.Millisecond
	pinRaceEndWait    = maintLeaseTTL / 2
	// pinRaceEndSteps bounds the polls of that wait.
	pinRaceEndSteps = int(pinRaceEndWait/pinRaceEndPoll) + 1
	// A listing of main's manifests reads at most this many pages of
	// this many keys, newest first.
	pinRaceListPages = 8
	pinRaceListLimit = 256
)

func init() {
	RegisterOp("gpinrace", opMaintPinRace)
}

// runningCollect is one collection gcollect is running: its number and
// its process (a crashed process's collection is over, though its call
// never returns).
type runningCollect struct {
	n uint64
	p *Proc
}

// beginCollect notes that a collection by p (a process with an exact
// clock) began, for gpinrace, and returns its number for endCollect.
func (s *maintState) beginCollect(p *Proc) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collectSeq++
	s.collecting = slices.DeleteFunc(s.collecting, func(c runningCollect) bool { return c.p.h.Crashed() })
	s.collecting = append(s.collecting, runningCollect{n: s.collectSeq, p: p})
	return s.collectSeq
}

// endCollect notes that collection n returned.
func (s *maintState) endCollect(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collecting = slices.DeleteFunc(s.collecting, func(c runningCollect) bool { return c.n == n })
}

// runningUpTo returns the number of the newest collection running whose
// number is at most upTo, or 0 if none is.
func (s *maintState) runningUpTo(upTo uint64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	newest := uint64(0)
	for _, c := range s.collecting {
		if c.n <= upTo && !c.p.h.Crashed() {
			newest = max(newest, c.n)
		}
	}
	return newest
}

// opMaintPinRace races a Pin against a running collection (docs/gc.md
// rule 6, §5a): it waits (bounded) until a collection by an exact-clock
// collector is running, then pins main's retention edge — the oldest
// version of the newest contiguous readable run, the next one a
// collection deletes — so that the lease lands while the collection loads,
// after its first listing of the leases and before its plan: the window
// only the re-list after the plan closes. Once the Pin succeeded the
// snapshot must read whole, right after the Pin and again once every
// collection running at the Pin has returned (pin-held, pinned-snapshot);
// then the lease is released (a failed release goes to gpinread's list,
// which releases it when it expires).
func opMaintPinRace(p *Proc, _ int, _ Op) error {
	st := &p.run.maint
	var raced uint64
	for steps := 0; raced == 0; steps++ {
		if steps >= pinRaceAwaitSteps || p.run.quiet() {
			return nil
		}
		if err := p.sleep(pinRacePoll); err != nil {
			return err
		}
		raced = st.runningUpTo(math.MaxUint64)
	}
	g, err := p.dg()
	if err != nil {
		return p.readFailed("gpinrace: open", err)
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("gpinrace: branch", err)
	}
	head, v, err := p.retentionEdge(ref)
	if err != nil {
		return p.readFailed("gpinrace: edge", err)
	}
	s, err := g.SnapshotAtVersion(ctx, ref, v)
	if errors.Is(err, kernel.ErrReclaimed) {
		return nil // collected since the search: nothing to pin
	}
	if err != nil {
		return p.readFailed("gpinrace: snapshot", err)
	}
	now := p.run.clock.Now()
	id, err := p.maintainer().Pin(ctx, s.Kernel(), p.run.maintLease(), p.name)
	p.run.note("%s gpinrace main v%d (head v%d, collection %d running) -> %s (%v)", p.name, v, head, raced, id, errText(err))
	if errors.Is(err, kernel.ErrReclaimed) {
		return nil
	}
	if err != nil {
		return p.readFailed("gpinrace: pin", err)
	}
	rows, err := snapshotRows(p, s)
	if err != nil {
		if err := p.pinHeldFailed(fmt.Sprintf("main v%d right after its Pin", v), err); err != nil {
			return err
		}
		return p.releaseRaced(id, v, now, rows)
	}
	// Wait for the collections, and read again well within the lease: a
	// lease ends maintLeaseTTL after the Pin (plus the collectors' skew
	// margin), and the read takes a few seconds at most.
	endWait := p.run.maintLease() / 2 // pinRaceEndWait, as the run's lease is (Run.margin)
	for steps := 0; st.runningUpTo(raced) != 0 && p.run.clock.Now().Before(now.Add(endWait)) && steps < pinRaceEndSteps; steps++ {
		if err := p.sleep(pinRaceEndPoll); err != nil {
			return err
		}
	}
	if p.run.clock.Now().After(now.Add(endWait + pinRaceEndPoll)) {
		return p.releaseRaced(id, v, now, rows) // too late to read within the lease for sure
	}
	// A fresh handle reads the snapshot again: the process's own caches
	// hold what it read right after the Pin, deleted or not.
	fresh, err := p.openData()
	if err != nil {
		return p.readFailed("gpinrace: open", err)
	}
	again, err := fresh.SnapshotAtVersion(ctx, ref, v)
	var reread string
	if err == nil {
		reread, err = snapshotRows(p, again)
	}
	if err != nil {
		if err := p.pinHeldFailed(fmt.Sprintf("main v%d after the collections its Pin raced", v), err); err != nil {
			return err
		}
		return p.releaseRaced(id, v, now, rows)
	}
	if reread != rows {
		p.run.Violate(check.Violation{Check: "pinned-snapshot", Detail: fmt.Sprintf(
			"%s: pinned main v%d reads differently within its lease", p.name, v)})
	}
	return p.releaseRaced(id, v, now, rows)
}

// releaseRaced releases gpinrace's lease id on main v (pinned at pinned,
// holding rows, "" if unread); a failed release hands a pin that was read
// to gpinread's list, which reads it while its lease lasts and then
// releases it (an unread one's lease just expires).
func (p *Proc) releaseRaced(id format.ID, v uint64, pinned time.Time, rows string) error {
	err := p.maintainer().Release(p.Ctx(), id)
	if p.Over(err) {
		return p.end(err)
	}
	p.Unexpected("gpinrace: release", err)
	if err != nil && rows != "" {
		st := &p.run.maint
		st.mu.Lock()
		st.pinned = append(st.pinned, maintPin{id: id, version: v, expires: pinned.Add(p.run.maintLease()), rows: rows})
		st.mu.Unlock()
	}
	return nil
}

// retentionEdge lists the manifests of ref's incarnation, newest first,
// and returns the newest one (the head) and the oldest of the run of
// consecutive versions from the head down (above the genesis): retention
// keeps such a run, so its oldest is the next a collection deletes.
// Older versions a lease or a merge base keeps lie below the first gap.
func (p *Proc) retentionEdge(ref kernel.BranchRef) (head, edge uint64, err error) {
	keys := format.NewKeys(p.run.Root)
	after := ""
	for page := 0; page < pinRaceListPages; page++ {
		pg, err := p.run.Store.List(p.Ctx(), keys.IncarnationPrefix(ref.Name(), ref.Incarnation()), after, pinRaceListLimit)
		if err != nil {
			return 0, 0, err
		}
		for _, key := range pg.Keys {
			_, v, err := keys.ParseManifestKey(ref.Name(), key)
			if err != nil {
				return 0, 0, err
			}
			switch {
			case head == 0 && edge == 0:
				head, edge = v, v
			case v == 0 || v != edge-1:
				return head, edge, nil
			default:
				edge = v
			}
		}
		if !pg.Truncated || len(pg.Keys) == 0 {
			break
		}
		after = pg.Keys[len(pg.Keys)-1]
	}
	if head == 0 {
		return 0, 0, fmt.Errorf("gpinrace: no manifest of %s listed: %w", ref.Name(), kernel.ErrNotFound)
	}
	return head, edge, nil
}
