package gc

import (
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// The keep rules of a graph's metadata (docs/gc.md rules 1, 1a, 8, 10):
// what decides whether a dead name's manifests, name and fork markers,
// audit records and roll-back plans are kept. Pure: the driver
// (kernel/maintain) lists, loads and deletes.

// retained reports whether t (unix nanoseconds; 0: unknown) is within
// retention: newer than now − KeepFor − Grace − SkewMargin. Unknown is
// retained (if in doubt, keep).
func retained(t int64, p Policy, now time.Time) bool {
	return t == 0 || t > now.Add(-p.KeepFor-p.settle()).UnixNano()
}

// NameManifests is one branch name's listed manifests, every incarnation,
// in listing order (newest incarnation first, newest version first), and
// for each whether the other keep rules (KeepManifest) keep it.
type NameManifests struct {
	Name string
	Keys []string
	Incs []uint64 // incarnation number of each key
	Kept []bool
}

// NameHead is what the load saw of a name's newest incarnation (the first
// listed key): its head manifest.
type NameHead struct {
	Known         bool  // the head was read (else: keep everything)
	Tombstone     bool  // the newest incarnation is deleted
	TombUnixNano  int64 // the tombstone's commit time (0: unknown)
	NewestVersion bool  // the first listed key is that head
}

// NameDead decides whether a name is dead (docs/gc.md rule 1): its newest
// incarnation is deleted, its tombstone is past retention (KeepFor + Grace
// + SkewMargin), and no other rule keeps any manifest of the name (of any
// incarnation: a kept lower manifest with its tombstone gone would read as
// a live head). main is never dead, and a name whose first listed key is
// not of its highest incarnation (the listing order is not the expected
// one) is not judged. A dead name's every manifest goes, the tombstone
// last (DeadNameOrder).
func NameDead(n NameManifests, h NameHead, p Policy, now time.Time) bool {
	if n.Name == format.MainBranch || len(n.Keys) == 0 || !h.Known || !h.Tombstone || !h.NewestVersion {
		return false
	}
	if retained(h.TombUnixNano, p, now) {
		return false
	}
	for _, inc := range n.Incs {
		if inc > n.Incs[0] { // the first listed key is not the newest incarnation's: not ours to judge
			return false
		}
	}
	for _, k := range n.Kept {
		if k {
			return false
		}
	}
	return true
}

// KeepIncarnationTops returns n.Kept with the newest listed manifest of
// every incarnation kept when any other manifest of that incarnation is
// (docs/gc.md rule 2): a deleted incarnation's tombstone goes only with
// the last of its history. Without it, an older incarnation of a
// re-created name past retention lost its tombstone while rule 3b kept
// a merged-from manifest of it, and that rest read as a live incarnation
// to every later collection — and to one racing the delete, which found
// the head gone, judged the fork unknown and deleted the table versions
// the kept manifest pins (simrun -seed 44).
func KeepIncarnationTops(n NameManifests) []bool {
	out := append([]bool(nil), n.Kept...)
	for top := 0; top < len(n.Keys); {
		end := top + 1
		for end < len(n.Keys) && n.Incs[end] == n.Incs[top] {
			end++
		}
		for i := top + 1; i < end; i++ {
			if out[i] {
				out[top] = true
				break
			}
		}
		top = end
	}
	return out
}

// KeepNameHead decides the first listed manifest of a name that is not
// dead: a head is kept whatever the other rules say (a tombstone tells
// Branch and Log that the name was deleted).
func KeepNameHead(dead bool) bool { return !dead }

// DeadNameOrder is the order in which a name's keys (listing order) are
// deleted (the collector iterates every name, live or dead, this way): the
// reverse, so each incarnation's head goes after its older manifests and so the newest incarnation's tombstone goes
// last and a crash between deletes leaves a tombstone as the name's head
// (never a lower manifest, which would read as a live branch).
func DeadNameOrder(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[len(keys)-1-i] = k
	}
	return out
}

// FloorFor is the incarnation floor a collection must have on the store
// before it deletes the tombstones of dead names whose newest incarnation
// numbers are incs (docs/gc.md rule 1a): 1 + the highest; write is false
// when there is nothing to delete or the floor already there (current, 0
// when none) is at least that.
func FloorFor(incs []uint64, current uint64) (floor uint64, write bool) {
	for _, i := range incs {
		floor = max(floor, i+1)
	}
	if noFloor() { // planted bug: no floor, a re-created name reuses incarnation 1
		return 0, false
	}
	return floor, floor > current && floor >= 2
}

// KeepNameMarker decides a branch-name marker (docs/gc.md rule 10): kept
// while the listing saw a manifest of the name (and always for main).
func KeepNameMarker(name string, hasManifests bool) bool {
	return hasManifests || name == format.MainBranch
}

// KeepForkMarker decides a fork marker naming child incarnation id
// (docs/gc.md rule 10): kept while the load saw that incarnation live;
// deleted when it saw it deleted (it can never be live again); when no
// listed manifest carries the id, kept while the id is younger than the
// settle time (a create in flight writes its marker first).
func KeepForkMarker(k *Known, child format.ID, p Policy, now time.Time) bool {
	ik, ok := k.Forks[child]
	if !ok {
		return young(child, p, now)
	}
	return !k.Incs[ik].Deleted
}

// KeepAudit decides an audit record (docs/gc.md rule 8): kept while its
// op's sidecar is pending, and while its time (0: unknown) is within
// KeepFor + Grace + SkewMargin — R5 relies on its presence to stop a
// second recovery commit by a recoverer that read the sidecar before it
// was deleted.
func KeepAudit(sidecarPending bool, auditUnixNano int64, p Policy, now time.Time) bool {
	return sidecarPending || retained(auditUnixNano, p, now)
}

// AuditMayGo is a cheap pre-filter on an audit record's key: a record of
// an op minted within retention (plus the skew margin: the record's time
// is at least the op's, within the skew) is kept without reading it.
func AuditMayGo(op format.ID, p Policy, now time.Time) bool {
	return !retained(int64(op.Time())*int64(time.Millisecond), Policy{KeepFor: p.KeepFor + p.SkewMargin, Grace: p.Grace, SkewMargin: p.SkewMargin}, now)
}

// PlanAudit is what the collection knows of a roll-back plan's op.
type PlanAudit uint8

// What a collection saw of a plan's op.
const (
	PlanAuditAbsent  PlanAudit = iota // no audit record (and no sidecar)
	PlanAuditKept                     // an audit record this collection keeps
	PlanAuditDeleted                  // an audit record this collection deletes
)

// KeepPlan decides a roll-back plan (docs/gc.md rule 8): kept while its
// op's sidecar is pending; with an audit record, exactly as long as that
// record; without one (a recoverer crashed after writing the plan and the
// writer's own publish landed), while the plan's commit id — minted when
// the plan was made or replaced — is within retention.
func KeepPlan(sidecarPending bool, a PlanAudit, planCommit format.ID, p Policy, now time.Time) bool {
	switch {
	case sidecarPending || a == PlanAuditKept:
		return true
	case a == PlanAuditDeleted:
		return false
	}
	return retained(int64(ulid.Time(planCommit.Time()).UnixNano()), p, now)
}

// noFloor is the switch of the planted bug tombstone-reuse.
var noFloor = func() bool { return plant.Enabled(plant.TombstoneReuse) }
