package gc

import (
	"sort"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// This file is the pure half of docs/gc.md rule 6 (a successful Pin is
// never undone by a concurrent collection): the collector's plan (which
// manifests it may delete), what a lease holds, and Pin's verdict from the
// collection records it read after writing its lease.

// PlanOf compresses the manifests a collection will delete into ranges of
// consecutive versions per incarnation, sorted by branch, incarnation and
// version (refs in any order; duplicates merge).
func PlanOf(refs []format.ManifestRef) []format.PlanRange {
	s := append([]format.ManifestRef(nil), refs...)
	sort.Slice(s, func(i, j int) bool {
		a, b := s[i], s[j]
		if a.Branch != b.Branch {
			return a.Branch < b.Branch
		}
		if a.Incarnation != b.Incarnation {
			return a.Incarnation < b.Incarnation
		}
		return a.Version < b.Version
	})
	var out []format.PlanRange
	for _, r := range s {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.Branch == r.Branch && last.Incarnation == r.Incarnation && r.Version <= last.To+1 {
				last.To = max(last.To, r.Version)
				continue
			}
		}
		out = append(out, format.PlanRange{Branch: r.Branch, Incarnation: r.Incarnation, From: r.Version, To: r.Version})
	}
	return out
}

// LeaseHolds reports whether lease l holds the manifest at ref: its
// snapshot, or for a history lease (Through) any later manifest of the
// same incarnation too.
func LeaseHolds(l format.Lease, ref format.ManifestRef) bool {
	s := l.Snapshot
	if s.Branch != ref.Branch || s.Incarnation != ref.Incarnation {
		return false
	}
	return ref.Version == s.Version || l.Through && ref.Version > s.Version
}

// PlanHolds reports whether plan may delete a manifest lease l holds.
func PlanHolds(plan []format.PlanRange, l format.Lease) bool {
	s := l.Snapshot
	for _, r := range plan {
		if r.Branch != s.Branch || r.Incarnation != s.Incarnation || r.To < s.Version {
			continue
		}
		if r.From <= s.Version || l.Through {
			return true
		}
	}
	return false
}

// RecordStale reports whether a collection record no longer binds anyone:
// its expiry passed by more than its skew margin by now (the reader's
// clock). Its collector stopped deleting at its expiry minus the margin
// (MayDelete), so under the skew assumption of docs/gc.md §4 none of its
// deletes can still take effect.
func RecordStale(c format.Collection, now time.Time) bool {
	return now.UnixNano() > c.ExpiresUnixNano+c.SkewMarginNanos
}

// MayDelete reports whether the collector that wrote c may still issue a
// delete at now (its own clock): before its expiry minus its margin.
func MayDelete(c format.Collection, now time.Time) bool {
	return now.UnixNano() < c.ExpiresUnixNano-c.SkewMarginNanos
}

// PinReclaimed is Pin's verdict once its lease is written and it has read
// every collection record: true when a record that is not stale is in
// state deleting with a plan that may delete a manifest the lease holds
// (that collector may have decided before the lease existed and re-listed
// before it too). A record in state loading is safe: its collector writes
// its plan after this read and re-lists the leases after that, so it sees
// the lease (docs/gc.md rule 6).
func PinReclaimed(records []format.Collection, l format.Lease, now time.Time) bool {
	for _, c := range records {
		if c.State == format.CollectionDeleting && !RecordStale(c, now) && PlanHolds(c.Plan, l) {
			return true
		}
	}
	return false
}

// AddRoots marks further root manifests (leases the collector's re-list
// found) into m, as Mark does for the first roots.
func (m *Marks) AddRoots(roots []RootManifest) error {
	more, err := Mark(roots, nil, nil)
	if err != nil {
		return err
	}
	for k := range more.Manifests { //detlint:ordered set union, no output
		m.Manifests[k] = true
	}
	for k := range more.Commits { //detlint:ordered set union, no output
		m.Commits[k] = true
	}
	for k := range more.Tables { //detlint:ordered set union, no output
		m.markTable(k) // a named pin's number too (NamedVersion)
	}
	for k, p := range more.Riding { //detlint:ordered set union, no output
		m.Riding[k] = p
	}
	if m.n += more.n; m.n > MaxMarks {
		return ErrTooLarge
	}
	return nil
}
