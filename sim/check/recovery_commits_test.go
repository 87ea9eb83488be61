package check

import (
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	objsim "github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/oklog/ulid/v2"
)

func rcID(n byte) format.ID { var id ulid.ULID; id[15] = n; id[0] = 1; return id }

// rcAudit stores an audit record of op naming commit.
func rcAudit(t *testing.T, st *objsim.Store, op, commit format.ID) {
	t.Helper()
	a := format.Audit{Op: op, Branch: format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: rcID(99)}, WriterKind: "write",
		Actor: "t", Decision: format.DecisionRollBack, RecoveryCommit: commit,
		Tables: []format.AuditTable{{Table: "a", Fork: rcID(99)}}}
	b, err := format.EncodeAudit(&a, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), format.NewKeys(root).Audit(op), b, objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
}

// rcGraph is one incarnation whose manifests carry commits of the given kinds.
func rcGraph(commits ...format.Commit) Graph {
	inc := Incarnation{Key: IncarnationKey("main", 1)}
	for i := range commits {
		inc.Manifests = append(inc.Manifests, format.Manifest{Version: uint64(i), Commit: &commits[i]})
	}
	return Graph{Root: root, Incarnations: []Incarnation{inc}}
}

// TestRecoveryCommitsNamedOnce pins CheckRecoveryCommits: one recovery
// commit named by one audit is clean; a second recovery commit for the same
// op (named by no audit), an audit naming a commit in no chain, and two
// audits naming one commit are each a recovery-once violation.
func TestRecoveryCommitsNamedOnce(t *testing.T) {
	plain := format.Commit{ID: rcID(1), Kind: format.KindCommit}
	rc1 := format.Commit{ID: rcID(2), Kind: format.KindRecovery, Message: "roll-back 1"}
	rc2 := format.Commit{ID: rcID(3), Kind: format.KindRecovery, Message: "roll-back 2"}
	for _, tc := range []struct {
		name   string
		graph  Graph
		audits [][2]format.ID // op, commit
		want   string         // substring of the one violation; "" = clean
	}{
		{"one commit, one audit", rcGraph(plain, rc1), [][2]format.ID{{rcID(10), rc1.ID}}, ""},
		{"a second recovery commit", rcGraph(plain, rc1, rc2), [][2]format.ID{{rcID(10), rc1.ID}}, "named by no audit record"},
		{"an audit naming no commit", rcGraph(plain), [][2]format.ID{{rcID(10), rc1.ID}}, "in no chain"},
		{"two audits, one commit", rcGraph(plain, rc1), [][2]format.ID{{rcID(10), rc1.ID}, {rcID(11), rc1.ID}}, "audit records of 2 ops"},
		{"a discard names nothing", rcGraph(plain), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := objsim.New(objsim.Config{Seed: 1})
			for _, a := range tc.audits {
				rcAudit(t, st, a[0], a[1])
			}
			vs := CheckRecoveryCommits(tc.graph, st, root)
			switch {
			case tc.want == "" && len(vs) != 0:
				t.Fatalf("want clean, got %v", vs)
			case tc.want != "" && (len(vs) != 1 || vs[0].Check != "recovery-once" || !strings.Contains(vs[0].Detail, tc.want)):
				t.Fatalf("want one recovery-once violation with %q, got %v", tc.want, vs)
			}
		})
	}
}
