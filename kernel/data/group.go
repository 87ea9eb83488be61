package data

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// Group commit (issue #31). With GroupOptions.Enabled, concurrent
// Txn.Commit calls on one branch through one Graph handle queue. The first
// caller to find no leader running becomes the leader (the kernel starts no
// goroutine): it takes the queue (bounded by members, rows and bytes),
// checks every member against the handle's view of the branch, as a lone
// Commit does (a refusal on a stale view stands only once the head
// confirms it: confirmRefusals), and writes the members it admits as ONE
// kernel write — one table version per table, one sidecar,
// one publish carrying one commit that lists them (docs/format.md, "Group
// commit"). Every member gets its own outcome:
//
//   - admitted and published: the group's commit (the same id for every
//     member) and its position in the group (Txn.Group);
//   - its own expectations fail (a strict table moved since its Begin, or
//     validation rejects its rows): that error, for it alone;
//   - the publish is ambiguous: that ambiguity, for every admitted member
//     (resolved by read-back inside the kernel, as for any write);
//   - the group write fails definitely (nothing published): every member
//     then commits alone, exactly as without grouping, and gets that
//     outcome.
//
// Members are admitted only when they are independent of the members
// before them: no row id, edge endpoint or @card source node in common, no
// Update (strict) of a table an earlier member writes, the same schema.
// A member that is not independent waits for the next group, so it is
// checked against the state the earlier members leave, as if they had
// committed first. Independent members cannot change one another's
// validation, so checking each against the live snapshot is checking it
// against the state the previous members leave.
//
// Waiting is through the handle's clock (Clock.Sleep polls), never a
// channel: in the simulator a waiting follower is a parked actor. A group
// is written under its leader's context: a leader whose context ends
// makes the group fail (definitely: every member then commits alone under
// its own context; or ambiguously, for every member).

// GroupOptions configure group commit. The zero value disables it: every
// Commit runs alone, as before.
type GroupOptions struct {
	// Enabled turns group commit on for transactions without deletes and
	// with a plain lineage intent (no merged parent, ExpectHead or
	// ReadSince); others always commit alone.
	Enabled bool
	// MaxWait is how long a leader waits for more members before it takes
	// the queue. 0 never waits: a lone writer commits at once, as without
	// grouping, and groups form only from callers that queued while an
	// earlier group was being written.
	MaxWait time.Duration
	// RegroupWait bounds how long a leader (after MaxWait) waits for its
	// branch's expected commits to queue: as many as were decided by the
	// branch's previous group plus those queued behind it, since a
	// service's writers commit in a loop and come back. It takes the queue
	// as soon as they are queued (or MaxMembers are). A lone writer
	// expects no one and never waits; a shrinking set of writers costs at
	// most one RegroupWait, after which the expectation is what came. 0
	// disables it (today's behaviour).
	RegroupWait time.Duration
	// MaxMembers bounds a group (default DefaultGroupMembers).
	MaxMembers int
	// MaxRows and MaxBytes bound a group's staged rows and bytes (default:
	// the handle's transaction Limits). A member that would exceed them
	// waits for the next group; a member alone is never refused by them.
	MaxRows  int
	MaxBytes int64
	// QueueLimit bounds the commits queued on one branch (default
	// DefaultGroupQueue); one more fails at once with ErrGroupQueueFull.
	QueueLimit int
	// Poll is how soon a queued commit first looks for its outcome
	// (default DefaultGroupPoll), through Clock.Sleep; the interval then
	// doubles up to 8×Poll.
	Poll time.Duration
	// MaxFollowerWait bounds a queued commit's wait (default
	// DefaultGroupFollowerWait): a commit no leader took by then fails
	// with ErrGroupWait (nothing written); one a leader took but did not
	// report on fails with *GroupOutcomeUnknownError (ambiguous).
	MaxFollowerWait time.Duration
}

// maxPollFactor caps a follower's poll interval at this multiple of Poll.
const maxPollFactor = 8

// Group commit defaults.
const (
	DefaultGroupMembers      = 64
	DefaultGroupQueue        = 1024
	DefaultGroupPoll         = 200 * time.Microsecond
	DefaultGroupFollowerWait = 5 * time.Minute
)

func (o GroupOptions) withDefaults(l Limits) GroupOptions {
	if o.MaxMembers <= 0 {
		o.MaxMembers = DefaultGroupMembers
	}
	if o.MaxRows <= 0 || o.MaxRows > l.MaxRows {
		o.MaxRows = l.MaxRows
	}
	if o.MaxBytes <= 0 || o.MaxBytes > l.MaxBytes {
		o.MaxBytes = l.MaxBytes
	}
	if o.QueueLimit <= 0 {
		o.QueueLimit = DefaultGroupQueue
	}
	if o.Poll <= 0 {
		o.Poll = DefaultGroupPoll
	}
	if o.MaxFollowerWait <= 0 {
		o.MaxFollowerWait = DefaultGroupFollowerWait
	}
	o.MaxWait = max(o.MaxWait, 0)
	o.RegroupWait = max(o.RegroupWait, 0)
	return o
}

// ErrGroupQueueFull is the back-pressure of group commit: the branch's
// queue holds GroupOptions.QueueLimit commits. Nothing was written; retry
// later.
var ErrGroupQueueFull = errors.New("data: group commit queue full")

// ErrGroupWait says a queued commit was not taken by a leader within
// GroupOptions.MaxFollowerWait (or its context ended first). Nothing was
// written; retry.
var ErrGroupWait = errors.New("data: group commit wait exceeded")

// GroupOutcomeUnknownError says a leader took this commit into its group
// and did not report an outcome before the member stopped waiting (its
// context ended, or MaxFollowerWait passed): the group may still publish.
// It matches objstore.ErrAmbiguous; resolve it by reading back (the commit
// appears on the branch with its group) as for any ambiguous write.
type GroupOutcomeUnknownError struct {
	Branch string
	Cause  error
}

// Error implements error.
func (e *GroupOutcomeUnknownError) Error() string {
	return fmt.Sprintf("data: group commit on %s: outcome unknown, taken by a leader that did not report: %v", e.Branch, e.Cause)
}

// Is matches objstore.ErrAmbiguous.
func (e *GroupOutcomeUnknownError) Is(target error) bool { return target == objstore.ErrAmbiguous }

// Unwrap returns the cause.
func (e *GroupOutcomeUnknownError) Unwrap() error { return e.Cause }

// GroupInfo is where a committed transaction landed in its group: its
// position (from 0, in queue order) among Size members published by the
// same commit. A commit made alone is {0, 1}.
type GroupInfo struct {
	Position int
	Size     int
}

// Group returns where the transaction's commit landed in its group (the
// zero GroupInfo before a successful Commit).
func (t *Txn) Group() GroupInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.grouped
}

// grouper is a handle's group-commit state: one queue per branch.
type grouper struct {
	opts   GroupOptions
	mu     sync.Mutex
	queues map[kernel.BranchRef]*groupQueue
	heads  map[kernel.BranchRef]*headLookups // shared Begin lookups (group_begin.go)
}

// groupQueue is one branch's queue. busy is true while a leader runs;
// then every pending slot waits for it (busy false implies pending empty).
// expect is how many commits the next leader expects to find queued
// (RegroupWait): the last group's decided members plus those queued
// behind it. An idle queue is kept only while it expects more than one.
type groupQueue struct {
	busy    bool
	pending []*groupSlot
	expect  int
}

// groupSlot is one queued Commit. The flags are read and written under
// grouper.mu; the outcome fields are written by the leader before done
// and read by the member after it.
type groupSlot struct {
	t      *Txn
	intent kernel.LineageIntent
	rows   int
	bytes  int64

	lead, taken, done bool
	// gone: the member stopped waiting after a leader took it (it returned
	// *GroupOutcomeUnknownError and handed its staging to the leader,
	// which releases it and never requeues it).
	gone bool

	// outcome
	solo     bool // commit alone (t.commit)
	onView   bool // err is a validation refusal on the leader's view (confirmRefusals)
	deferred bool // back to the queue: not independent of the group
	c        kernel.Commit
	err      error
	info     GroupInfo
}

func newGrouper(o GroupOptions, l Limits) *grouper {
	if !o.Enabled {
		return nil
	}
	return &grouper{opts: o.withDefaults(l), queues: map[kernel.BranchRef]*groupQueue{}, heads: map[kernel.BranchRef]*headLookups{}}
}

// commitGrouped is Commit's body (lock held): grouped when group commit
// is on and the transaction may join a group, else t.commit.
func (t *Txn) commitGrouped(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	gr := t.g.group
	if gr == nil || !groupable(t, intent) {
		t.grouped = GroupInfo{Position: 0, Size: 1}
		return t.commit(ctx, intent)
	}
	s := &groupSlot{t: t, intent: intent, rows: t.s.rows, bytes: t.s.bytes}
	if err := gr.enqueue(s); err != nil {
		return kernel.Commit{}, err
	}
	if err := gr.await(ctx, s); err != nil {
		var unknown *GroupOutcomeUnknownError
		if errors.As(err, &unknown) {
			t.done = true // the leader still reads the staging and releases it (finish)
		}
		return kernel.Commit{}, err
	}
	if s.lead {
		gr.lead(ctx, s)
	}
	return s.settle(ctx)
}

// settle returns a decided slot's outcome: a member sent to commit alone
// does so now, in its own context.
func (s *groupSlot) settle(ctx context.Context) (kernel.Commit, error) {
	if s.solo {
		s.t.grouped = GroupInfo{Position: 0, Size: 1}
		return s.t.commit(ctx, s.intent)
	}
	if s.err == nil {
		s.t.grouped = s.info
	}
	return s.c, s.err
}

// groupable reports whether t may join a group: no deletes (a cascade's
// reach is only known at commit) and a plain intent.
func groupable(t *Txn, intent kernel.LineageIntent) bool {
	return t.s.kind >= 0 && intent.MergedParent == nil && intent.ExpectHead == nil && intent.ReadSince.IsZero()
}

// enqueue appends s to its branch's queue, making it the leader if none
// runs; a full queue refuses it (back-pressure).
func (gr *grouper) enqueue(s *groupSlot) error {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	q, ok := gr.queues[s.t.branch]
	if !ok {
		q = &groupQueue{}
		gr.queues[s.t.branch] = q
	}
	if len(q.pending) >= gr.opts.QueueLimit {
		return fmt.Errorf("%w: %d commits queued on %s (limit %d); retry later", ErrGroupQueueFull, len(q.pending), s.t.branch, gr.opts.QueueLimit)
	}
	q.pending = append(q.pending, s)
	if !q.busy {
		q.busy, s.lead = true, true
	}
	return nil
}

// await waits, polling through the clock, until s leads or is decided.
// It gives up after MaxFollowerWait or when ctx ends: definitely (nothing
// written) if no leader took s, else ambiguously.
func (gr *grouper) await(ctx context.Context, s *groupSlot) error {
	clock := s.t.g.clock
	start := clock.Now()
	maxPolls := int(gr.opts.MaxFollowerWait/gr.opts.Poll) + 1
	poll := gr.opts.Poll
	for range maxPolls {
		gr.mu.Lock()
		ready := s.lead || s.done
		gr.mu.Unlock()
		if ready {
			return nil
		}
		if clock.Now().Sub(start) >= gr.opts.MaxFollowerWait {
			break
		}
		if err := clock.Sleep(ctx, poll); err != nil {
			return gr.abandon(s, err)
		}
		poll = min(2*poll, maxPollFactor*gr.opts.Poll)
	}
	return gr.abandon(s, fmt.Errorf("waited %s", gr.opts.MaxFollowerWait))
}

// abandon stops s waiting: nil if it was made leader or decided meanwhile.
func (gr *grouper) abandon(s *groupSlot, cause error) error {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	if s.lead || s.done {
		return nil
	}
	if s.taken {
		s.gone = true
		return &GroupOutcomeUnknownError{Branch: s.t.branch.String(), Cause: cause}
	}
	q := gr.queues[s.t.branch]
	for i, p := range q.pending {
		if p == s {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			break
		}
	}
	return fmt.Errorf("%w on %s: %w", ErrGroupWait, s.t.branch, cause)
}

// lead runs one group whose first member is s, publishes the members'
// outcomes and hands leadership to the next queued commit.
func (gr *grouper) lead(ctx context.Context, s *groupSlot) {
	var waitErr error
	if gr.opts.MaxWait > 0 {
		waitErr = s.t.g.clock.Sleep(ctx, gr.opts.MaxWait)
	}
	if waitErr == nil && gr.opts.RegroupWait > 0 {
		waitErr = gr.regroup(ctx, s)
	}
	members := gr.take(s.t.branch)
	if waitErr != nil { // the leader's context ended: nothing written; everyone else commits alone
		for _, m := range members[1:] {
			m.solo = true
		}
		s.err = waitErr
	} else {
		gr.run(ctx, members)
	}
	gr.finish(s.t.branch, members)
}

// regroup waits, polling every Poll through the clock, while fewer
// commits are queued on the leader's branch than it expects (capped at
// MaxMembers), at most RegroupWait; an error is the leader's context
// ending.
func (gr *grouper) regroup(ctx context.Context, s *groupSlot) error {
	clock := s.t.g.clock
	start := clock.Now()
	for range int(gr.opts.RegroupWait/gr.opts.Poll) + 1 {
		if !gr.short(s.t.branch) {
			return nil
		}
		left := gr.opts.RegroupWait - clock.Now().Sub(start)
		if left <= 0 {
			return nil
		}
		if err := clock.Sleep(ctx, min(gr.opts.Poll, left)); err != nil {
			return err
		}
	}
	return nil
}

// short reports whether fewer commits are queued on b than expected.
func (gr *grouper) short(b kernel.BranchRef) bool {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	q := gr.queues[b]
	return len(q.pending) < min(q.expect, gr.opts.MaxMembers)
}

// take removes the group from the head of the queue: at most MaxMembers,
// within MaxRows and MaxBytes (the first always).
func (gr *grouper) take(b kernel.BranchRef) []*groupSlot {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	q := gr.queues[b]
	var members, rest []*groupSlot
	rows, bytes := 0, int64(0)
	for _, p := range q.pending {
		fits := len(members) < gr.opts.MaxMembers && rows+p.rows <= gr.opts.MaxRows && bytes+p.bytes <= gr.opts.MaxBytes
		if len(members) == 0 || fits {
			p.taken = true
			members = append(members, p)
			rows, bytes = rows+p.rows, bytes+p.bytes
			continue
		}
		rest = append(rest, p)
	}
	q.pending = rest
	return members
}

// finish decides every member but the deferred ones, which return to the
// head of the queue in order (unless their caller left), and hands
// leadership on.
func (gr *grouper) finish(b kernel.BranchRef, members []*groupSlot) {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	q := gr.queues[b]
	var back []*groupSlot
	decided := 0
	for _, m := range members {
		if m.gone { // its caller left: nothing more is done for it
			m.done = true
			m.t.s.release()
			continue
		}
		if m.deferred {
			m.deferred, m.taken = false, false
			back = append(back, m)
			continue
		}
		m.done = true
		decided++
	}
	q.pending = append(back, q.pending...)
	q.expect = decided + len(q.pending)
	if len(q.pending) > 0 {
		q.pending[0].lead = true
		return
	}
	q.busy = false
	if q.expect <= 1 || gr.opts.RegroupWait == 0 {
		delete(gr.queues, b)
	}
}

// run decides the members of one group (leader's context).
func (gr *grouper) run(ctx context.Context, members []*groupSlot) {
	if len(members) == 1 { // a group of one is a plain commit
		alone(ctx, members[0])
		return
	}
	lead := members[0].t
	live, err := lead.g.k.SnapshotView(ctx, lead.branch) // as t.commit: no head discovery on a current view
	if err != nil {
		for _, m := range members {
			m.solo = true
		}
		return
	}
	admitted := admit(ctx, live, members)
	com, published := publishGroup(ctx, live, admitted)
	confirmRefusals(ctx, lead, live, members, com, published)
}

// confirmRefusals keeps the validation refusals the group computed on the
// view (isolate) only if the view was the head: the group published right
// after it, or a loaded head is the view. Otherwise each refused member
// commits alone, and its own Commit confirms or revises the refusal on
// the head, as a lone Commit's refusal on the view is (t.commit). A
// member's moved strict table (admit) needs no confirmation: the view is
// never older than a Begin on this handle, and pins only move forward.
func confirmRefusals(ctx context.Context, lead *Txn, live kernel.Snapshot, members []*groupSlot, com kernel.Commit, published bool) {
	var refused []*groupSlot
	for _, m := range members {
		if m.onView && m.err != nil {
			refused = append(refused, m)
		}
	}
	if len(refused) == 0 {
		return
	}
	if published && com.Incarnation == live.Incarnation() && com.ManifestVersion == live.ManifestVersion()+1 {
		return // the group's create-only write at the view's next version proves the view was the head
	}
	if fresh, err := lead.g.k.SnapshotAt(ctx, lead.branch); err == nil && sameHead(fresh, live) {
		return
	}
	for _, m := range refused {
		m.err, m.solo = nil, true
	}
}

// alone commits s by itself (the leader's context).
func alone(ctx context.Context, s *groupSlot) {
	s.c, s.err = s.t.commit(ctx, s.intent)
	s.info = GroupInfo{Position: 0, Size: 1}
}

// admit returns, in queue order, the members that join the group: each
// one's strict tables are checked against live (a moved one fails that
// member alone), and one that is not independent of the members admitted
// before it is deferred to the next group.
func admit(ctx context.Context, live kernel.Snapshot, members []*groupSlot) []*groupSlot {
	var out []*groupSlot
	used := map[string]bool{}    // row keys of the admitted members (groupKeys)
	written := map[string]bool{} // tables they write
	text := 0
	for _, m := range members {
		c := &committer{t: m.t, live: live}
		if err := c.checkStrict(ctx, m.t.stagedStrict()); err != nil {
			if ownFailure(err) {
				m.err = err
			} else {
				m.solo = true
			}
			if !plant.Enabled(plant.GroupSharedFailure) || !ownFailure(err) {
				continue
			} // planted: the failed member is committed with the group anyway
		}
		keys := groupKeys(m.t.s)
		n := len(m.intent.Actor) + len(m.intent.Message) + 32
		if len(out) > 0 && (m.t.cat != out[0].t.cat || overlaps(keys, used) || strictOnWritten(m.t, written) ||
			text+n > format.MaxMessageBytes-64) {
			m.deferred = true
			continue
		}
		for _, k := range keys {
			used[k] = true
		}
		for _, name := range m.t.s.names() {
			written[name] = true
		}
		text += n
		out = append(out, m)
	}
	return out
}

// ownFailure reports whether err is a transaction's own failed
// expectation: a validation rejection or a moved strict table.
func ownFailure(err error) bool {
	var mm *kernel.VersionMismatchError
	return errors.Is(err, ErrValidation) || errors.As(err, &mm)
}

// groupKeys lists the row keys a staging touches ("type\x00id"): every
// written id, and for edges both endpoints (their node type's key), which
// also names the @card source whose out-edges validation counts.
func groupKeys(s *staging) []string {
	var out []string
	for _, name := range s.names() {
		st := s.tables[name]
		for _, ref := range st.index() {
			out = append(out, name+"\x00"+st.id(ref))
			if st.t.Edge {
				out = append(out, st.t.From+"\x00"+st.str(ref, colFrom), st.t.To+"\x00"+st.str(ref, colTo))
			}
		}
	}
	return out
}

func overlaps(keys []string, used map[string]bool) bool {
	for _, k := range keys {
		if used[k] {
			return true
		}
	}
	return false
}

// strictOnWritten reports whether t updates a table an earlier member
// writes: alone after that member, t's Update would be stale.
func strictOnWritten(t *Txn, written map[string]bool) bool {
	for _, name := range t.stagedStrict() {
		if written[name] {
			return true
		}
	}
	return false
}

// publishGroup validates the admitted members together, isolating the
// ones whose own validation fails, and writes the rest as one commit.
func publishGroup(ctx context.Context, live kernel.Snapshot, adm []*groupSlot) (kernel.Commit, bool) {
	switch len(adm) {
	case 0: // every member failed its own check (admit): nothing to write
		return kernel.Commit{}, false
	case 1:
		alone(ctx, adm[0])
		return kernel.Commit{}, false
	}
	u := unionTxn(live, adm)
	defer func() { u.s.release() }() // the last union built (release is idempotent)
	c, err := u.prepare(ctx, live)
	if err != nil && ownFailure(err) && plant.Enabled(plant.GroupSharedFailure) {
		for _, m := range adm { // planted: one member's failure fails them all
			m.err = err
		}
		return kernel.Commit{}, false
	}
	if err != nil && ownFailure(err) {
		u.s.release()
		adm = isolate(ctx, live, adm)
		if len(adm) == 1 {
			alone(ctx, adm[0])
			return kernel.Commit{}, false
		}
		if len(adm) == 0 {
			return kernel.Commit{}, false
		}
		u = unionTxn(live, adm)
		c, err = u.prepare(ctx, live)
	}
	if err != nil { // not the members' doing (a read failed): each commits alone
		for _, m := range adm {
			m.solo = true
		}
		return kernel.Commit{}, false
	}
	com, err := c.write(ctx, groupIntent(adm))
	switch {
	case err == nil:
		for i, m := range adm {
			m.c, m.info = com, GroupInfo{Position: i, Size: len(adm)}
		}
		return com, true
	case errors.Is(err, objstore.ErrAmbiguous):
		for i, m := range adm {
			m.err = fmt.Errorf("group commit (member %d of %d): %w", i, len(adm), err)
		}
	default: // definite: nothing of the group is or will be visible
		for _, m := range adm {
			m.solo = true
		}
	}
	return kernel.Commit{}, false
}

// isolate checks each member alone against live (they are independent,
// so that is the state the others leave) and returns the ones that hold;
// a failing one gets its own error.
func isolate(ctx context.Context, live kernel.Snapshot, adm []*groupSlot) []*groupSlot {
	var keep []*groupSlot
	for _, m := range adm {
		u := unionTxn(live, []*groupSlot{m})
		_, err := u.prepare(ctx, live)
		u.s.release()
		switch {
		case err == nil:
			keep = append(keep, m)
		case ownFailure(err):
			m.err, m.onView = err, true
		default:
			m.solo = true
		}
	}
	return keep
}

// unionTxn is a transaction on live staging every row of the members (the
// records are shared, retained): the group's one write.
func unionTxn(live kernel.Snapshot, adm []*groupSlot) *Txn {
	t0 := adm[0].t
	u := newStaging(t0.cat, Limits{MaxRows: int(^uint(0) >> 1), MaxBytes: int64(^uint64(0) >> 1)})
	for _, m := range adm {
		for _, name := range m.t.s.names() {
			st := m.t.s.tables[name]
			for _, w := range st.writes {
				w.rec.Retain()
				u.add(w.op, st.t, w.rec, recordBytes(w.rec))
			}
		}
	}
	return &Txn{g: t0.g, branch: t0.branch, base: live, cat: t0.cat, r: newReader(t0.g, t0.cat),
		views: map[string]*tableView{}, s: u}
}

// groupIntent is the lineage of a group's one commit: the members' actor
// if they share one (else "group"), and a message listing every member in
// order, one line each: position, actor, first line of its message.
func groupIntent(adm []*groupSlot) kernel.LineageIntent {
	actor := adm[0].intent.Actor
	for _, m := range adm[1:] {
		if m.intent.Actor != actor {
			actor = "group"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "group commit of %d transactions", len(adm))
	for i, m := range adm {
		msg, _, _ := strings.Cut(m.intent.Message, "\n")
		fmt.Fprintf(&b, "\n%d\t%s\t%s", i, m.intent.Actor, msg)
	}
	return kernel.LineageIntent{Actor: actor, Message: b.String()}
}
