// Package gc is the pure core of garbage collection (docs/gc.md): which
// manifests the retention policy protects, what the root set reaches
// (across every branch at once, never per branch) and, for each listed
// candidate key, whether it is kept and why. It performs no I/O and reads
// no clock: the driver (kernel/maintain) loads state, passes the time in,
// and deletes what these functions say is unreachable. If in doubt, keep.
package gc

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Defaults of Policy.
const (
	DefaultKeepLast   = 10
	DefaultGrace      = time.Hour // equals kernel.DefaultGrace
	DefaultSkewMargin = 5 * time.Minute
	// MaxMarks bounds the objects one collection may mark reachable (its
	// memory); beyond it the collection stops with ErrTooLarge, deleting
	// nothing.
	MaxMarks = 1 << 22
)

// ErrTooLarge: the reachable set is larger than MaxMarks.
var ErrTooLarge = errors.New("gc: reachable set too large for one collection")

// Policy is a collection's retention and safety margins.
type Policy struct {
	// KeepLast manifests of every live branch incarnation are retained
	// (>= 1; 0 means DefaultKeepLast).
	KeepLast int
	// KeepFor retains every manifest whose commit is newer than this
	// (0: only KeepLast), and a deleted incarnation until its tombstone is
	// older than this.
	KeepFor time.Duration
	// Grace must be the writers' kernel.Options.Grace (0: DefaultGrace).
	Grace time.Duration
	// SkewMargin covers clock skew and request latency (docs/gc.md §4);
	// 0 means DefaultSkewMargin.
	SkewMargin time.Duration
}

// WithDefaults fills zero fields and rejects negative ones.
func (p Policy) WithDefaults() (Policy, error) {
	if p.KeepLast < 0 || p.KeepFor < 0 || p.Grace < 0 || p.SkewMargin < 0 {
		return Policy{}, fmt.Errorf("gc: negative field in policy %+v", p)
	}
	if p.KeepLast == 0 {
		p.KeepLast = DefaultKeepLast
	}
	if p.Grace == 0 {
		p.Grace = DefaultGrace
	}
	if p.SkewMargin == 0 {
		p.SkewMargin = DefaultSkewMargin
	}
	return p, nil
}

// settle is how long an object must have been unreachable (or alive) before
// it may be deleted: the grace period plus the skew margin.
func (p Policy) settle() time.Duration { return p.Grace + p.SkewMargin }

// ManifestTime is what the retention walk knows of one manifest: its
// version and its time (its commit's; for a branch create, when the branch
// was created; 0: unknown, which keeps it).
type ManifestTime struct {
	Version        uint64
	CommitUnixNano int64
}

// Protected decides how many of an incarnation's manifests, newest first,
// retention protects: always the newest p.KeepLast, then each older one
// whose commit is younger than KeepFor + the settle time, or that was
// pushed out of the last KeepLast less than the settle time ago (by the
// commit of the manifest KeepLast versions newer), or whose time is
// unknown. Protection is a contiguous newest-first run, so Log stops
// cleanly at its end. loaded are the manifests read so far, newest first
// (loaded[0] is the head); when the answer needs the next one, more is
// true. A deleted incarnation (tombstoneUnixNano != 0) whose tombstone is
// older than KeepFor + the settle time protects nothing.
func Protected(loaded []ManifestTime, total int, tombstoneUnixNano int64, p Policy, now time.Time) (n int, more bool) {
	horizon := now.Add(-p.KeepFor - p.settle()).UnixNano()
	if tombstoneUnixNano != 0 && tombstoneUnixNano <= horizon {
		return 0, false
	}
	pushed := now.Add(-p.settle()).UnixNano()
	for i := 0; i < total; i++ {
		if i >= len(loaded) {
			return i, true
		}
		if i < p.KeepLast {
			continue
		}
		m, pusher := loaded[i], loaded[i-p.KeepLast]
		if m.CommitUnixNano == 0 || pusher.CommitUnixNano == 0 || m.CommitUnixNano > horizon || pusher.CommitUnixNano > pushed {
			continue
		}
		return i, false
	}
	return total, false
}

// SidecarFloor extends a protected run of n manifests (versions newest
// first) down to the oldest version at or above floor: a pending sidecar's
// recovery reads every manifest of its incarnation since the one its write
// was planned on (its base_manifest), so those stay while it is pending.
func SidecarFloor(n int, versions []uint64, floor uint64) int {
	for n < len(versions) && versions[n] >= floor {
		n++
	}
	return n
}

// TableKey names one table version. Attempt is zero for a counter-named
// version and the attempt's ULID for one named per attempt (format 8).
type TableKey struct {
	Table   string
	Fork    format.ID
	Version uint64
	Attempt format.ID
}

// AnyFork names a version of a table on whatever fork holds it (sidecars
// name an expected or read version without its fork).
type AnyFork struct {
	Table   string
	Version uint64
}

// FragKey names one data fragment: R/data/<Table>/<Name>.
type FragKey struct {
	Table, Name string
}

// RootManifest is one manifest of the root set: its incarnation (the fork
// its own table versions live on) and its pins.
type RootManifest struct {
	Key    string
	Fork   format.ID
	Commit format.ID // zero when the manifest has no commit
	Pins   []format.TablePin
}

// Marks is what the root set reaches. Build it with Mark, then add the
// fragments of every marked table version with MarkFragments.
type Marks struct {
	Manifests map[string]bool
	Commits   map[format.ID]bool
	Tables    map[TableKey]bool
	AnyFork   map[AnyFork]bool
	Frags     map[FragKey]bool
	Adj       map[FragKey]bool // adjacency chunks and pages (R/adj/<table>/<name>)
	n         int
	// named maps each marked version named per attempt to its number
	// (from the pins that mark it; see NamedVersion).
	named map[namedKey]uint64
	// anyForkTables are the tables an AnyFork mark names.
	anyForkTables map[string]bool
	// Riding holds the pin of every marked version that rides a root
	// manifest (format 11): no object of it is listed, so the driver
	// marks the fragments and index objects it names from the pin's
	// payload (RidingKeys gives them in order).
	Riding map[TableKey]format.TablePin
}

// RidingKeys returns the keys of m.Riding, sorted (table, fork, version,
// attempt): the order a driver marks them in.
func (m *Marks) RidingKeys() []TableKey {
	keys := make([]TableKey, 0, len(m.Riding))
	for k := range m.Riding { //detlint:ordered sorted next
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		if a.Fork != b.Fork {
			return a.Fork.Compare(b.Fork) < 0
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Attempt.Compare(b.Attempt) < 0
	})
	return keys
}

// Mark returns the marks of the root set: every root manifest, its commit
// and every table version it pins — on whatever fork it is, so a version
// shared by many branches is kept while any of them retains it — and the
// versions pending sidecars name.
func Mark(roots []RootManifest, sidecars []AnyFork, sidecarVersions []TableKey) (*Marks, error) {
	m := &Marks{Manifests: map[string]bool{}, Commits: map[format.ID]bool{}, Tables: map[TableKey]bool{},
		AnyFork: map[AnyFork]bool{}, Frags: map[FragKey]bool{}, Adj: map[FragKey]bool{},
		named: map[namedKey]uint64{}, anyForkTables: map[string]bool{}, Riding: map[TableKey]format.TablePin{}}
	for _, r := range roots {
		m.Manifests[r.Key] = true
		if r.Commit != (format.ID{}) {
			m.Commits[r.Commit] = true
		}
		for _, p := range r.Pins {
			if skipInherited() && p.Fork != r.Fork {
				continue // planted bug: reachability per branch, inherited pins not followed
			}
			k := TableKey{Table: p.Name, Fork: p.Fork, Version: p.Version, Attempt: p.Attempt}
			m.markTable(k)
			if p.Riding != "" && !plant.Enabled(plant.GCSkipsRiding) { // planted bug: a riding version's objects go unmarked
				m.Riding[k] = p
			}
		}
		if m.n += 1 + len(r.Pins); m.n > MaxMarks {
			return nil, ErrTooLarge
		}
	}
	for _, a := range sidecars {
		m.AnyFork[a] = true
		m.anyForkTables[a.Table] = true
	}
	for _, k := range sidecarVersions {
		m.markTable(k)
	}
	return m, nil
}

// TableMarked reports whether the table version is reached.
func (m *Marks) TableMarked(k TableKey) bool {
	return m.Tables[k] || m.AnyFork[AnyFork{Table: k.Table, Version: k.Version}]
}

// MarkFragments marks the fragments a reached table version names.
func (m *Marks) MarkFragments(table string, fragments []string) error {
	for _, f := range fragments {
		m.Frags[FragKey{Table: table, Name: f}] = true
	}
	if m.n += len(fragments); m.n > MaxMarks {
		return ErrTooLarge
	}
	return nil
}

// MarkAdjacency marks adjacency objects (chunks or pages) a reached edge
// table version's index names.
func (m *Marks) MarkAdjacency(table string, names []string) error {
	for _, n := range names {
		m.Adj[FragKey{Table: table, Name: n}] = true
	}
	if m.n += len(names); m.n > MaxMarks {
		return ErrTooLarge
	}
	return nil
}

// skipInherited is the switch of the planted bug gc-branch-local.
var skipInherited = func() bool { return plant.Enabled(plant.GCBranchLocal) }
