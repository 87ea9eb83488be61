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

// CheckRecoveryCommits counts effects, not only records: every recovery
// commit (kind recovery) in the graph must be named by exactly one audit
// record, and every audit record that names a commit must name one in the
// graph. Racing recoverers that each publish their own recovery commit for
// one abandoned write leave a recovery commit no audit names, even when the
// audit records are exactly one per op. Call it only once every sidecar
// must be resolved (after the quiet phase).
func CheckRecoveryCommits(g Graph, in Inspector, root string) []Violation {
	var vs []Violation
	named := map[format.ID][]string{} // recovery commit -> the ops whose audits name it
	var audited []format.Audit
	for _, k := range in.Keys(format.NewKeys(root).AuditPrefix()) {
		b, _ := in.Peek(k)
		a, _, err := format.DecodeAudit(b)
		if err != nil {
			vs = append(vs, violation("recovery-once", "audit record %s does not decode: %v", k, err))
			continue
		}
		audited = append(audited, a)
		if a.RecoveryCommit != (format.ID{}) {
			named[a.RecoveryCommit] = append(named[a.RecoveryCommit], a.Op.String())
		}
	}
	inGraph := map[format.ID]bool{}
	for _, inc := range g.Incarnations {
		for _, m := range inc.Manifests {
			if m.Commit == nil {
				continue
			}
			inGraph[m.Commit.ID] = true
			if m.Commit.Kind != format.KindRecovery {
				continue
			}
			switch ops := named[m.Commit.ID]; len(ops) {
			case 1:
			case 0:
				vs = append(vs, violation("recovery-once", "%s v%d: recovery commit %s (%q) is named by no audit record",
					inc.Key, m.Version, m.Commit.ID, m.Commit.Message))
			default:
				vs = append(vs, violation("recovery-once", "%s v%d: recovery commit %s is named by the audit records of %d ops %v",
					inc.Key, m.Version, m.Commit.ID, len(ops), ops))
			}
		}
	}
	for _, a := range audited {
		if a.RecoveryCommit != (format.ID{}) && !inGraph[a.RecoveryCommit] {
			vs = append(vs, violation("recovery-once", "the audit record of op %s names commit %s, which is in no chain", a.Op, a.RecoveryCommit))
		}
	}
	return vs
}
