package check

import (
	"github.com/graphkernel/graphkernel/kernel/format"
)

// RidingCoverage is what CheckRidingBudget saw: the distinct table
// versions that rode a manifest (format 11), those named per attempt
// that were written as objects though they could have ridden (not
// content-preserving: spilled past a budget or redone over it), and the
// manifests that pin both kinds at once.
type RidingCoverage struct {
	Rode, Spilled, Mixed int
}

// CheckRidingBudget checks every manifest of g against the riding budget
// every writer of the run was given (kernel.Options.RidingBudget, the
// same for all: version and manifest bytes, 0 meaning the format's
// maxima): its riding payloads total at most manifest bytes and each is
// at most version bytes. A write rides only within the budget of the
// head it plans on and the publish re-checks it on the head it builds on
// (lineage.RidingOverBudget), and a fork copies pins from a manifest
// within it, so no manifest exceeds it (invariants.md K20).
func CheckRidingBudget(in Inspector, g Graph, version, manifest int) ([]Violation, RidingCoverage) {
	version, manifest = format.RidingBounds(version, manifest)
	keys := format.NewKeys(g.Root)
	var vs []Violation
	var cov RidingCoverage
	seen := map[string]bool{}
	spilledAt := map[string]bool{} // by key: decoded once
	isSpilled := func(k string) bool {
		sp, ok := spilledAt[k]
		if !ok {
			sp = spilledVersion(in, k)
			spilledAt[k] = sp
		}
		return sp
	}
	for _, inc := range g.Incarnations {
		for _, m := range inc.Manifests {
			if n := format.RidingBytes(m.Tables); n > manifest {
				vs = append(vs, violation("riding-budget", "%s v%d carries %d riding bytes, over the writers' budget of %d", inc.Key, m.Version, n, manifest))
			}
			rides, spills := false, false
			for _, p := range m.Tables {
				if p.Riding != "" && len(p.Riding) > version {
					vs = append(vs, violation("riding-budget", "%s v%d: %s v%d rides %d bytes, over the writers' version budget of %d", inc.Key, m.Version, p.Name, p.Version, len(p.Riding), version))
				}
				if !p.Ref().Named() {
					continue
				}
				k := keys.TableVersionRef(p.Name, p.Ref())
				spilled := p.Riding == "" && isSpilled(k)
				rides, spills = rides || p.Riding != "", spills || spilled
				if seen[k] {
					continue
				}
				seen[k] = true
				if p.Riding != "" {
					cov.Rode++
				} else if spilled {
					cov.Spilled++
				}
			}
			if rides && spills {
				cov.Mixed++
			}
		}
	}
	return vs, cov
}

// spilledVersion reports whether the object at k holds a table version
// that could have ridden (not content-preserving); an absent or
// unreadable one is not counted (CheckTableHeads judges heads).
func spilledVersion(in Inspector, k string) bool {
	b, ok := in.Peek(k)
	if !ok {
		return false
	}
	tv, _, err := format.DecodeTableVersion(b)
	return err == nil && !tv.ContentPreserving
}
