package gc

import (
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// IncKey names one branch incarnation.
type IncKey struct {
	Name string
	Inc  uint64
}

// IncState is what the load saw of one incarnation: its fork (incarnation
// id), its newest manifest version and that manifest's pins, and whether
// it is a deleted incarnation past retention.
type IncState struct {
	Fork        format.ID
	HeadVersion uint64
	Pins        map[string]uint64 // table -> version pinned by the head manifest
	Expired     bool
	// Deleted: the head is a tombstone (the incarnation can never be live
	// again); TombUnixNano is its commit time.
	Deleted      bool
	TombUnixNano int64
}

// Known is the load's view of every branch incarnation, by key and by fork.
type Known struct {
	Incs  map[IncKey]IncState
	Forks map[format.ID]IncKey
}

// NewKnown returns an empty Known.
func NewKnown() *Known {
	return &Known{Incs: map[IncKey]IncState{}, Forks: map[format.ID]IncKey{}}
}

// Add records one incarnation.
func (k *Known) Add(key IncKey, s IncState) {
	k.Incs[key] = s
	k.Forks[s.Fork] = key
}

// young reports whether a ULID-named object may still be in use by a write
// the load could not see: minted less than the settle time ago.
func young(id format.ID, p Policy, now time.Time) bool {
	if plant.Enabled(plant.GCNoGrace) { // planted bug: the grace period is ignored
		return false
	}
	return ulid.Time(id.Time()).After(now.Add(-p.settle()))
}

// parseULID parses a canonical ULID name; ok=false for anything else.
func parseULID(s string) (format.ID, bool) {
	id, err := ulid.ParseStrict(s)
	return id, err == nil && id.String() == s
}

// KeepManifest decides a listed manifest: kept when the root set reaches
// it, or when the load did not see it (a newer version, or an incarnation
// created since).
func KeepManifest(m *Marks, k *Known, key string, inc IncKey, version uint64) bool {
	if m.Manifests[key] {
		return true
	}
	s, ok := k.Incs[inc]
	return !ok || version > s.HeadVersion
}

// KeepTableVersion decides a listed table version (newest: it is the
// newest version listed on its fork for its table). Kept when reached;
// when its fork is unknown to the load and not older than the settle time
// (a branch created since); when its fork's incarnation is not past
// retention and the version is the fork's newest (no version number is
// ever reused), belongs to a table the incarnation's head does not pin,
// or lies above that pin (an in-flight write, a recovery restore or fence).
// Everything else — below a live pin and reached by no retained manifest
// of any branch, no sidecar and no lease, or of a deleted incarnation past
// retention — is unreachable.
//
// A version named per attempt (format 8, t.Attempt set) is authoritative
// only through a manifest that pins it: unreached, it is kept only while
// its attempt is younger than the settle time (the fragment rule,
// KeepFragment: the writer's grace rule stops a write staged longer ago
// from publishing it).
func KeepTableVersion(m *Marks, k *Known, t TableKey, newest bool, p Policy, now time.Time) bool {
	if m.TableMarked(t) {
		return true
	}
	if t.Attempt != (format.ID{}) {
		return young(t.Attempt, p, now)
	}
	ik, ok := k.Forks[t.Fork]
	if !ok {
		return young(t.Fork, p, now)
	}
	s := k.Incs[ik]
	if s.Expired {
		return false
	}
	pin, pinned := s.Pins[t.Table]
	return newest || !pinned || t.Version > pin
}

// KeepFragment decides a listed fragment: kept when a reached table
// version names it, when its name is not a ULID (not ours to judge), or
// when it is younger than the settle time (a write in another process may
// have staged it and not published yet: the grace rule).
func KeepFragment(m *Marks, f FragKey, p Policy, now time.Time) bool {
	if m.Frags[f] {
		return true
	}
	id, ok := parseULID(f.Name)
	return !ok || young(id, p, now)
}

// KeepAdjacency decides a listed adjacency chunk or page by the same rule
// as a fragment: reached, not a ULID, or younger than the settle time.
func KeepAdjacency(m *Marks, f FragKey, p Policy, now time.Time) bool {
	if m.Adj[f] {
		return true
	}
	id, ok := parseULID(f.Name)
	return !ok || young(id, p, now)
}

// KeepCommitIndex decides a commit index (never authoritative): kept when
// its commit is in a reached manifest or it is younger than the settle
// time.
func KeepCommitIndex(m *Marks, id format.ID, p Policy, now time.Time) bool {
	return m.Commits[id] || young(id, p, now)
}

// LeaseLive reports whether a lease still pins its snapshot: it expires
// later than now minus the skew margin.
func LeaseLive(l format.Lease, p Policy, now time.Time) bool {
	return l.ExpiresUnixNano > now.Add(-p.SkewMargin).UnixNano()
}
