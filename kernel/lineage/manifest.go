package lineage

import (
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Update moves one table's pin to a new version.
type Update struct {
	Table   string
	Fork    format.ID
	Version uint64
	Rows    uint64
	// Attempt names a version keyed per write attempt (format 8); zero
	// for a counter-named one. The pin records it.
	Attempt format.ID
	// Riding is the payload of a version that rides the manifest
	// (format 11, format.RidingPayload): no object holds it. The pin
	// records it. Only a named version rides.
	Riding string
}

// ValidateUpdates rejects update lists that are wrong whatever the loaded
// state: bad names, zero fork or version, one table twice.
func ValidateUpdates(updates []Update) error {
	seen := make(map[string]bool, len(updates))
	for _, u := range updates {
		if err := format.ValidateName(u.Table); err != nil {
			return fmt.Errorf("%w: update: %v", ErrInvalid, err)
		}
		if u.Fork == (format.ID{}) || u.Version == 0 {
			return fmt.Errorf("%w: update of %q: zero fork or version", ErrInvalid, u.Table)
		}
		if u.Riding != "" && u.Attempt == (format.ID{}) {
			return fmt.Errorf("%w: update of %q: a counter-named version rides", ErrInvalid, u.Table)
		}
		if seen[u.Table] {
			return fmt.Errorf("%w: table %q updated twice", ErrInvalid, u.Table)
		}
		seen[u.Table] = true
	}
	return nil
}

// ApplyUpdates returns pins with every update applied, sorted by name. An
// update that would not advance the table's published version (someone
// else already published that version or a newer one) is a Mismatch whose
// Expected is the update's implied base (Version-1) and Actual the pinned
// version.
func ApplyUpdates(pins []format.TablePin, updates []Update) ([]format.TablePin, *Mismatch) {
	out := append([]format.TablePin(nil), pins...)
	for _, u := range sortedUpdates(updates) {
		i := sort.Search(len(out), func(i int) bool { return out[i].Name >= u.Table })
		pin := format.TablePin{Name: u.Table, Fork: u.Fork, Version: u.Version, Rows: u.Rows, Attempt: u.Attempt, Riding: u.Riding}
		if i < len(out) && out[i].Name == u.Table {
			if out[i].Version >= u.Version {
				return nil, &Mismatch{Table: u.Table, Expected: u.Version - 1, Actual: out[i].Version}
			}
			out[i] = pin
			continue
		}
		out = append(out, format.TablePin{})
		copy(out[i+1:], out[i:])
		out[i] = pin
	}
	return out, nil
}

func sortedUpdates(updates []Update) []Update {
	s := append([]Update(nil), updates...)
	sort.Slice(s, func(i, j int) bool { return s[i].Table < s[j].Table })
	return s
}

// Proposal is what a publish wants to add on top of the loaded manifest.
// Commit.Parents must come from ResolveParents on that same manifest.
type Proposal struct {
	Updates   []Update
	Commit    format.Commit
	Tombstone bool
	// Schema, if set, is the schema the successor names (a schema
	// change); empty keeps prev's.
	Schema string
}

// NextManifest builds the successor of prev for proposal p: version+1, same
// incarnation and fork point, updated pins, the new commit as head. A
// *Mismatch reports an update that would move a pin backwards; any other
// error is a caller bug. A commit id that is zero or equals one of its
// parents is ErrInvalid: it comes from an Env whose clock and entropy
// replay ids already on the store (two handles seeded alike).
func NextManifest(prev *format.Manifest, p Proposal) (format.Manifest, *Mismatch, error) {
	if prev.Tombstone {
		return format.Manifest{}, nil, fmt.Errorf("%w: successor of a tombstone", ErrInvalid)
	}
	if err := checkFreshID(p.Commit); err != nil {
		return format.Manifest{}, nil, err
	}
	if err := ValidateUpdates(p.Updates); err != nil {
		return format.Manifest{}, nil, err
	}
	pins, mm := ApplyUpdates(prev.Tables, p.Updates)
	if mm != nil {
		return format.Manifest{}, mm, nil
	}
	c := p.Commit
	c.Parents = append([]format.ID(nil), c.Parents...)
	next := format.Manifest{
		Version:     prev.Version + 1,
		Branch:      prev.Branch,
		ForkOf:      copyFork(prev.ForkOf),
		Tombstone:   p.Tombstone,
		Tables:      pins,
		Commit:      &c,
		Head:        c.ID,
		Schema:      prev.Schema,
		FormatStamp: format.CurrentFormat,
	}
	if p.Schema != "" {
		next.Schema = p.Schema
	}
	if len(next.Tables) == 0 {
		next.Tables = nil
	}
	return next, nil, nil
}

// RidingOverBudget reports whether next, built for updates, breaks the
// riding budget of manifest bytes (the writer's, at most
// format.MaxRidingManifestBytes; 0 means that maximum): some update rides
// and the riding payloads next carries exceed it (the write planned its
// riding on an older head; it must write its versions as objects
// instead). A manifest whose updates ride nothing may carry what it
// inherited.
func RidingOverBudget(next *format.Manifest, updates []Update, manifest int) bool {
	_, manifest = format.RidingBounds(0, manifest)
	for _, u := range updates {
		if u.Riding != "" {
			return format.RidingBytes(next.Tables) > manifest
		}
	}
	return false
}

// checkFreshID refuses a zero commit id or one equal to a parent.
func checkFreshID(c format.Commit) error {
	if c.ID == (format.ID{}) {
		return fmt.Errorf("%w: zero commit id", ErrInvalid)
	}
	for _, p := range c.Parents {
		if p == c.ID {
			return fmt.Errorf("%w: commit id %s equals its parent (the Env replayed an id already on the store: give each handle its own entropy)", ErrInvalid, c.ID)
		}
	}
	return nil
}

func copyFork(f *format.ForkPoint) *format.ForkPoint {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// CheckSuccessor asserts every invariant a publish must hold before its
// write: next is valid on its own, its version is prev's plus one, it keeps
// prev's incarnation and fork point, and prev's schema unless it is an
// ordinary or merge commit (a schema change), no pin disappears or goes
// backwards, and its commit's first parent is prev's head. The kernel panics
// on a non-nil result: it is an internal bug, never a race.
func CheckSuccessor(prev, next *format.Manifest) error {
	if err := format.ValidateManifest(next); err != nil {
		return err
	}
	switch {
	case prev.Tombstone:
		return fmt.Errorf("successor of a tombstone")
	case next.Version != prev.Version+1:
		return fmt.Errorf("version %d does not follow %d", next.Version, prev.Version)
	case next.Branch != prev.Branch:
		return fmt.Errorf("incarnation changed from %+v to %+v", prev.Branch, next.Branch)
	case !sameFork(prev.ForkOf, next.ForkOf):
		return fmt.Errorf("fork point changed")
	case next.Schema != prev.Schema && (next.Tombstone || next.Commit == nil || !schemaMayChange(next.Commit.Kind)):
		return fmt.Errorf("schema changed by a %s", describe(next))
	case next.Commit == nil:
		return fmt.Errorf("successor without a commit")
	case next.Commit.Parents[0] != prev.Head:
		return fmt.Errorf("first parent %s is not the previous head %s", next.Commit.Parents[0], prev.Head)
	}
	for _, p := range prev.Tables {
		q, ok := next.Pin(p.Name)
		if !ok || q.Version < p.Version {
			return fmt.Errorf("pin of %q went backwards from %d", p.Name, p.Version)
		}
	}
	return nil
}

// schemaMayChange reports whether a commit of kind k may name a schema
// other than its predecessor's: an ordinary commit (a schema change) or a
// merge (which adopts the merged schema); never a recovery commit or a
// tombstone.
func schemaMayChange(k format.CommitKind) bool {
	return k == format.KindCommit || k == format.KindMerge
}

func describe(m *format.Manifest) string {
	switch {
	case m.Tombstone:
		return "tombstone"
	case m.Commit == nil:
		return "manifest without a commit"
	}
	return string(m.Commit.Kind) + " commit"
}

func sameFork(a, b *format.ForkPoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Genesis builds the version-0 manifest of a new graph's main branch.
func Genesis(id format.BranchIdentity, c format.Commit, schema string) format.Manifest {
	c.Kind, c.Parents, c.MergedFrom = format.KindGenesis, nil, nil
	return format.Manifest{Branch: id, Commit: &c, Head: c.ID, Schema: schema, FormatStamp: format.CurrentFormat}
}

// Fork builds the version-0 manifest of a new branch incarnation id created
// from manifest src (the fork point is src's own incarnation and version): it copies
// src's pins (nothing is copied in storage), adds no commit, and records the
// fork point. Its head is src's head.
func Fork(src *format.Manifest, id format.BranchIdentity) (format.Manifest, error) {
	if src.Tombstone {
		return format.Manifest{}, fmt.Errorf("%w: cannot fork from a tombstone", ErrInvalid)
	}
	m := format.Manifest{
		Branch: id,
		ForkOf: &format.ForkPoint{Branch: src.Branch.Name, Incarnation: src.Branch.Incarnation,
			IncarnationID: src.Branch.IncarnationID, ManifestVersion: src.Version, CommitID: src.Head},
		Tables:      append([]format.TablePin(nil), src.Tables...),
		Head:        src.Head,
		Schema:      src.Schema,
		FormatStamp: format.CurrentFormat,
	}
	if len(m.Tables) == 0 {
		m.Tables = nil
	}
	return m, nil
}
