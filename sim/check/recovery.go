package check

import (
	"slices"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// CheckForks checks every forked incarnation's version-0 manifest against
// its fork point: the source manifest exists, its head is the fork commit,
// and the new incarnation pins exactly the source's tables (nothing copied,
// nothing lost).
func CheckForks(g Graph) []Violation {
	byKey := map[string]Incarnation{}
	for _, inc := range g.Incarnations {
		byKey[inc.Key] = inc
	}
	var vs []Violation
	for _, inc := range g.Incarnations {
		m0 := inc.Manifests[0]
		if m0.ForkOf == nil {
			continue
		}
		f := m0.ForkOf
		src, ok := byKey[IncarnationKey(f.Branch, f.Incarnation)]
		if !ok || f.ManifestVersion >= uint64(len(src.Manifests)) {
			vs = append(vs, violation("fork", "%s forks from %s#%d v%d, which does not exist", inc.Key, f.Branch, f.Incarnation, f.ManifestVersion))
			continue
		}
		sm := src.Manifests[f.ManifestVersion]
		if !legacy(&sm) && (sm.Head != f.CommitID || m0.Head != f.CommitID) {
			vs = append(vs, violation("fork", "%s: fork commit %s, source head %s, own head %s", inc.Key, f.CommitID, sm.Head, m0.Head))
		}
		if !slices.Equal(sm.Tables, m0.Tables) {
			vs = append(vs, violation("fork", "%s: pins %v differ from the fork point's %v", inc.Key, m0.Tables, sm.Tables))
		}
	}
	return vs
}

// CheckNoSidecars checks that no recovery sidecar (R/sidecars/) is left:
// after the quiet phase every interrupted write must have been resolved.
func CheckNoSidecars(in Inspector, root string) []Violation {
	var vs []Violation
	for _, k := range in.Keys(format.NewKeys(root).SidecarPrefix()) {
		vs = append(vs, violation("sidecar-left", "sidecar %q still present after the quiet phase", k))
	}
	return vs
}

// CheckAudits checks the recovery audit records (R/audit/<opID>...): at
// most one per operation id, and exactly one for every op id in recovered
// (sidecars recovery resolved).
func CheckAudits(in Inspector, root string, recovered []string) []Violation {
	prefix := format.NewKeys(root).AuditPrefix()
	count := map[string]int{}
	var ops []string
	for _, k := range in.Keys(prefix) {
		op := strings.SplitN(strings.TrimPrefix(k, prefix), "/", 2)[0]
		if count[op] == 0 {
			ops = append(ops, op)
		}
		count[op]++
	}
	var vs []Violation
	for _, op := range ops {
		if count[op] > 1 {
			vs = append(vs, violation("audit-once", "operation %s has %d audit records", op, count[op]))
		}
	}
	for _, op := range recovered {
		if count[op] == 0 {
			vs = append(vs, violation("audit-once", "recovery resolved the sidecar of %s without an audit record", op))
		}
	}
	return vs
}
