package gc

import "github.com/graphkernel/graphkernel/kernel/format"

// ReachInputs returns the manifests the reach of manifest m (at at) is
// joined from, as its publish joined it (lineage.JoinReach) and as a
// repair rebuilds it when its commit index is lost: for a manifest
// holding its head commit, the one before it and, for a merge, the
// merged-from manifest; for a commit-less version 0 (a branch's
// creation), the manifest of its fork commit. A genesis has none.
func ReachInputs(at format.ManifestRef, m *format.Manifest) []format.ManifestRef {
	if m.Commit == nil || m.Commit.ID != m.Head {
		if m.Version != 0 || m.ForkOf == nil {
			return nil
		}
		f := m.ForkOf
		return []format.ManifestRef{{Branch: f.Branch, Incarnation: f.Incarnation, Version: f.ManifestVersion}}
	}
	if m.Version == 0 {
		return nil // a genesis (a fork's version 0 never holds its head commit)
	}
	prev := at
	prev.Version--
	out := []format.ManifestRef{prev}
	if mf := m.Commit.MergedFrom; mf != nil {
		out = append(out, *mf)
	}
	return out
}

// ReachBoundary reports whether a collection that keeps the manifest m
// at at must make its reach durable before deleting anything (docs/gc.md
// rule 3c): m holds its head commit (a commit-less version 0's reach is
// its fork commit's) and some manifest its reach is rebuilt from is not
// kept (kept), or is a kept commit-less version 0 whose fork commit's
// manifest is not (forkOf: the fork commit's manifest of a commit-less
// version 0, false when at is not one or is unknown). Once the
// collection ran, nobody could rebuild that reach should its commit
// index be lost, and an index is written unsynced.
func ReachBoundary(at format.ManifestRef, m *format.Manifest, kept func(format.ManifestRef) bool,
	forkOf func(format.ManifestRef) (format.ManifestRef, bool)) bool {
	if m.Commit == nil || m.Commit.ID != m.Head {
		return false
	}
	for _, in := range ReachInputs(at, m) {
		if !kept(in) {
			return true
		}
		if src, ok := forkOf(in); ok && !kept(src) {
			return true
		}
	}
	return false
}
