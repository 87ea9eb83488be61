package check

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model/datamodel"
)

// TestReadsVsModel pins the replay rules of CheckReadsVsModel: tagged
// commits apply their recorded operations, roll-backs keep the parent's
// rows, an unexplained commit makes the rest of the chain unmodelled
// (counted, not passed), a read that differs from the model is a
// violation, and so is an acknowledged commit the model's rules refuse.
func TestReadsVsModel(t *testing.T) {
	s, err := schema.Parse([]byte("node Person { name: string }\nedge Knows: Person -> Person {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	person := func(id, name string) datamodel.Op {
		return datamodel.Op{Kind: datamodel.Upsert, Type: "Person", Row: datamodel.Row{ID: id, Props: map[string]any{"name": name}}}
	}
	knows := datamodel.Op{Kind: datamodel.Insert, Type: "Knows", Row: datamodel.Row{ID: "k1", From: "p1", To: "p9"}}
	commit := func(v uint64, kind format.CommitKind, msg string) format.Manifest {
		return format.Manifest{Version: v, Commit: &format.Commit{Kind: kind, Message: msg}}
	}
	get := func(v uint64, got string) ModelRead {
		return ModelRead{Key: "main#1", Version: v, What: "Get(Person, p1)", Got: []string{got},
			Want: func(m *datamodel.State) ([]string, error) {
				r, ok := m.Get("Person", "p1")
				if !ok {
					return []string{"absent"}, nil
				}
				return []string{datamodel.RowString(r)}, nil
			}}
	}
	chain := []format.Manifest{
		commit(0, format.KindGenesis, ""),
		commit(1, format.KindCommit, MessageFor("w.0")),
		commit(2, format.KindRecovery, kernel.RecoveryMessagePrefix+"roll-back of op x"),
		commit(3, format.KindRecovery, MessageFor("w.1")), // a roll-forward carries the writer's message
		commit(4, format.KindCommit, "someone else's commit"),
		commit(5, format.KindCommit, MessageFor("w.2")),
	}
	cases := []struct {
		name             string
		chain            []format.Manifest
		reads            []ModelRead
		violations       []string // substrings, in order
		checked, unknown int
	}{
		{"agreeing reads", chain, []ModelRead{get(0, "absent"), get(1, "p1 name=a"), get(2, "p1 name=a"), get(3, "p1 name=b")}, nil, 4, 0},
		{"a wrong row", chain, []ModelRead{get(3, "p1 name=a")}, []string{"Get(Person, p1) = [p1 name=a], the reference model at commit"}, 1, 0},
		{"unexplained commit: counted, not passed", chain, []ModelRead{get(4, "p1 name=b"), get(5, "anything")}, nil, 0, 2},
		{"a refused commit", []format.Manifest{chain[0], chain[1], commit(2, format.KindCommit, MessageFor("w.bad"))},
			[]ModelRead{get(2, "p1 name=a")}, []string{"refused by the model"}, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d DataRecord
			d.Txn("w.0", []datamodel.Op{person("p1", "a")})
			d.Txn("w.1", []datamodel.Op{person("p1", "b")})
			d.Txn("w.2", []datamodel.Op{person("p2", "c")})
			d.Txn("w.bad", []datamodel.Op{knows})
			for _, r := range tc.reads {
				d.Read(r)
			}
			g := Graph{Incarnations: []Incarnation{{Key: "main#1", Manifests: tc.chain}}}
			vs, cov := CheckReadsVsModel(g, &s, &d)
			if len(vs) != len(tc.violations) {
				t.Fatalf("violations %v, want %d", vs, len(tc.violations))
			}
			for i, v := range vs {
				if v.Check != "reads-vs-model" || !strings.Contains(v.Detail, tc.violations[i]) {
					t.Fatalf("violation %d = %v, want reads-vs-model with %q", i, v, tc.violations[i])
				}
			}
			if cov.Checked != tc.checked || cov.Unmodelled != tc.unknown {
				t.Fatalf("coverage %+v, want %d checked, %d unmodelled", cov, tc.checked, tc.unknown)
			}
		})
	}
}
