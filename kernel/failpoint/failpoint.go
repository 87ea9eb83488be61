// Package failpoint is graphkernel's catalog of named failpoints: places in
// the kernel's write, recovery and migration paths where a test or the
// simulator can inject an error, a crash, or a pause at a rendezvous.
//
// Names are Go constants, so a typo is a compile error. A disabled failpoint
// costs one nil check: the kernel holds a *Set that is nil unless a test or
// the simulator armed one, and (*Set)(nil).Hit returns nil at once.
//
// There is no process-global registry: each Set is injected through the
// kernel's environment, so parallel tests never interfere.
package failpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Name identifies one failpoint site. Only the constants below are valid.
type Name string

// The catalog. Each constant names exactly one site in the kernel.
const (
	// AfterSidecarWrite fires after the recovery sidecar is durable and
	// before any table HEAD moves.
	AfterSidecarWrite Name = "write.after_sidecar_write"
	// AfterTableCommit fires after each table's new version is durable
	// (once per touched table), before the publish.
	AfterTableCommit Name = "write.after_table_commit"
	// BeforePublish fires after every table commit and before the
	// manifest publish.
	BeforePublish Name = "write.before_publish"
	// AfterPublishBeforeSidecarDelete fires after the publish succeeded and
	// before the sidecar is deleted.
	AfterPublishBeforeSidecarDelete Name = "write.after_publish_before_sidecar_delete"
	// BeforeRollForwardPublish fires in the recovery sweep after a sidecar
	// was classified for roll-forward and before its publish.
	BeforeRollForwardPublish Name = "recovery.before_roll_forward_publish"
	// BeforeRollBackPublish fires in the recovery sweep after the table
	// HEADs were restored and before the roll-back publish.
	BeforeRollBackPublish Name = "recovery.before_roll_back_publish"
	// AfterRecoveryPublishBeforeAudit fires after a recovery commit (a
	// roll-forward or a roll-back) landed and before its audit record is
	// written: a recoverer held here is the one whose racing peer must not
	// publish a second recovery commit.
	AfterRecoveryPublishBeforeAudit Name = "recovery.after_recovery_publish_before_audit"
	// AfterAuditBeforeSidecarDelete fires after the recovery audit record
	// is durable and before the sidecar is deleted.
	AfterAuditBeforeSidecarDelete Name = "recovery.after_audit_before_sidecar_delete"
	// MigrationLegacyRead fires where the v3->v4 migration reads legacy
	// lineage; an injected error there must abort the migration unstamped.
	MigrationLegacyRead Name = "migration.v3_to_v4.legacy_read"
	// MigrationBeforeStamp fires after the lineage backfill and before the
	// format stamp is written.
	MigrationBeforeStamp Name = "migration.before_stamp"
	// PublishBeforeWrite fires inside the publish retry loop after the
	// branch head was re-loaded and before the create-only manifest write.
	PublishBeforeWrite Name = "publish.before_write"
	// RidingRedo fires when a write's publish was refused because its
	// riding versions no longer fit the riding budget on the head it built
	// on (format 11), before the round is done again with every version an
	// object: nothing of the refused round was published. Its hit count is
	// how often a round was redone over the budget.
	RidingRedo Name = "write.riding_redo"
)

// All lists every catalogued failpoint in sorted order.
func All() []Name {
	names := []Name{
		AfterSidecarWrite, AfterTableCommit, BeforePublish,
		AfterPublishBeforeSidecarDelete, BeforeRollForwardPublish,
		BeforeRollBackPublish, AfterRecoveryPublishBeforeAudit, AfterAuditBeforeSidecarDelete,
		MigrationLegacyRead, MigrationBeforeStamp, PublishBeforeWrite, RidingRedo,
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// Known reports whether n is in the catalog.
func Known(n Name) bool {
	for _, k := range All() {
		if k == n {
			return true
		}
	}
	return false
}

// ErrInjected is wrapped by every error a failpoint returns, so callers and
// tests can tell an injected failure from a real one.
var ErrInjected = errors.New("failpoint: injected failure")

// ErrCrashed is returned by a failpoint armed to crash. The kernel must treat
// it like any other error and propagate it; the Set's crash hook (see
// OnCrash) is what stops the process's further durable effects.
var ErrCrashed = errors.New("failpoint: crashed here")

// Kind is what an armed failpoint does when it fires.
type Kind uint8

// The failpoint actions.
const (
	// ReturnError makes Hit return the armed error (wrapped with
	// ErrInjected).
	ReturnError Kind = iota + 1
	// Crash calls the Set's crash hook, then makes Hit return ErrCrashed.
	Crash
	// Pause blocks Hit at the armed Rendezvous until it is released or the
	// context ends.
	Pause
)

// Action is one arming of a failpoint.
type Action struct {
	Kind Kind
	// Err is returned (wrapped) for ReturnError; nil means a generic
	// injected error.
	Err error
	// Rendezvous is where Pause parks; required for Pause.
	Rendezvous *Rendezvous
	// Times bounds how often the action fires; 0 means every time.
	Times int
}

// Decider lets the simulator decide per hit, from its own seeded PRNG,
// whether a site fires (BUGGIFY style). It returns the action to take, or
// ok=false to pass.
type Decider func(n Name) (a Action, ok bool)

// Set holds the armed failpoints of one process (one kernel handle or one
// simulated actor). The zero Set has nothing armed; a nil *Set is disabled.
// A Set is safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	armed   map[Name]*armed
	decide  Decider
	onCrash func()
	hits    map[Name]int
}

type armed struct {
	action Action
	fired  int
}

// NewSet returns an empty, enabled Set.
func NewSet() *Set { return &Set{armed: map[Name]*armed{}, hits: map[Name]int{}} }

// Arm makes n perform a on its next hits. It panics on a name outside the
// catalog or a Pause without a Rendezvous: both are test bugs.
func (s *Set) Arm(n Name, a Action) {
	if !Known(n) {
		panic(fmt.Sprintf("failpoint: %q is not in the catalog", n))
	}
	if a.Kind == Pause && a.Rendezvous == nil {
		panic(fmt.Sprintf("failpoint: Pause at %q needs a Rendezvous", n))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed[n] = &armed{action: a}
}

// Disarm removes any arming of n.
func (s *Set) Disarm(n Name) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.armed, n)
}

// SetDecider installs the simulator's per-hit decider. Explicit Arm calls
// take precedence over it.
func (s *Set) SetDecider(d Decider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decide = d
}

// OnCrash installs the hook a Crash action calls before Hit returns
// ErrCrashed: typically it kills the process's store so that no durable
// effect follows the crash point.
func (s *Set) OnCrash(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCrash = f
}

// Hits reports how often n was reached (armed or not).
func (s *Set) Hits(n Name) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[n]
}

// Hit is called by the kernel at site n. It returns nil unless n is armed
// (or the decider fires it). A nil Set is disabled and returns nil at once.
func (s *Set) Hit(ctx context.Context, n Name) error {
	if s == nil {
		return nil
	}
	a, ok, crash := s.take(n)
	if !ok {
		return nil
	}
	switch a.Kind {
	case ReturnError:
		cause := a.Err
		if cause == nil {
			cause = fmt.Errorf("at %s", n)
		}
		return fmt.Errorf("failpoint %s: %w", n, errors.Join(ErrInjected, cause))
	case Crash:
		if crash != nil {
			crash()
		}
		return fmt.Errorf("failpoint %s: %w", n, ErrCrashed)
	case Pause:
		return a.Rendezvous.park(ctx)
	}
	panic(fmt.Sprintf("failpoint: unknown action kind %d at %q", a.Kind, n))
}

func (s *Set) take(n Name) (Action, bool, func()) {
	if !Known(n) {
		panic(fmt.Sprintf("failpoint: hit of uncatalogued name %q", n))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[n]++
	if arm, ok := s.armed[n]; ok {
		if arm.action.Times > 0 && arm.fired >= arm.action.Times {
			return Action{}, false, nil
		}
		arm.fired++
		return arm.action, true, s.onCrash
	}
	if s.decide != nil {
		if a, ok := s.decide(n); ok {
			return a, true, s.onCrash
		}
	}
	return Action{}, false, nil
}

// Rendezvous coordinates a test with a paused failpoint without sleeps: the
// kernel parks at it, the test waits until it is reached, does its work,
// then releases it.
type Rendezvous struct {
	reachedOnce sync.Once
	reached     chan struct{}
	releaseOnce sync.Once
	release     chan struct{}
}

// NewRendezvous returns an unreached, unreleased Rendezvous.
func NewRendezvous() *Rendezvous {
	return &Rendezvous{reached: make(chan struct{}), release: make(chan struct{})}
}

// Reached is closed once a failpoint parks here.
func (r *Rendezvous) Reached() <-chan struct{} { return r.reached }

// Release lets every parked (and every future) hit continue.
func (r *Rendezvous) Release() { r.releaseOnce.Do(func() { close(r.release) }) }

func (r *Rendezvous) park(ctx context.Context) error {
	r.reachedOnce.Do(func() { close(r.reached) })
	select {
	case <-r.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
