package check

import (
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Heads returns the head manifest (newest incarnation, newest version) of
// every branch name under root, tombstones included, sorted by name. A head
// that does not decode is left out (LoadGraph reports it).
func Heads(in Inspector, root string) []format.Manifest {
	prefix := format.NewKeys(root).Root() + "/branches/"
	var heads []format.Manifest
	last := ""
	for _, k := range in.Keys(prefix) { // ascending: a name's first key is its head
		name, _, _ := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		if name == last {
			continue
		}
		last = name
		if b, ok := in.Peek(k); ok {
			if m, _, err := format.DecodeManifestAnyStamp(b); err == nil {
				heads = append(heads, m)
			}
		}
	}
	return heads
}

// LiveForks returns the identities of the live heads forked from
// incarnation src.
func LiveForks(heads []format.Manifest, src format.ID) []format.BranchIdentity {
	var out []format.BranchIdentity
	for _, m := range heads {
		if !m.Tombstone && m.ForkOf != nil && m.ForkOf.IncarnationID == src {
			out = append(out, m.Branch)
		}
	}
	return out
}

// CheckDeleteDependents checks one acknowledged DeleteBranch of incarnation
// deleted: no incarnation forked from it may have been live both when the
// delete was invoked (before) and when it returned (after). Incarnations
// are never revived, so such a fork was live throughout and the delete's
// dependents check had to see it. (A fork created while the delete ran is
// the documented gap between the check and the tombstone: not reported.)
func CheckDeleteDependents(deleted format.BranchIdentity, before, after []format.BranchIdentity) []Violation {
	var vs []Violation
	for _, b := range before {
		for _, a := range after {
			if a.IncarnationID == b.IncarnationID {
				vs = append(vs, violation("delete-dependents", "delete of %s#%d succeeded while %s#%d, forked from it, was live throughout",
					deleted.Name, deleted.Incarnation, a.Name, a.Incarnation))
			}
		}
	}
	return vs
}
