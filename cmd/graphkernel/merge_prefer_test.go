package main

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// conflictGraph builds the graph of TestMergeConflicts: feature renames p1
// and deletes p4, main renames p1 differently and changes p4
// (DivergentUpdate p1.name, DeleteVsUpdate p4).
func (f *fixture) conflictGraph() {
	f.t.Helper()
	g := f.buildGraph()
	f.mustRun(0, "merge", f.spec, testRoot, "main", "feature")
	f.commit(g, "feature", "rename Ann", func(tx *data.Txn) error { return tx.Upsert("Person", person("p1", "Ana")) })
	f.commit(g, "feature", "drop Dee", func(tx *data.Txn) error { return tx.Delete("Person", "p4") })
	f.commit(g, "main", "main edits", func(tx *data.Txn) error {
		if err := tx.Upsert("Person", person("p1", "Anna")); err != nil {
			return err
		}
		return tx.Upsert("Person", person("p4", "Deb"))
	})
}

// TestMergePrefer: --prefer source takes the source's side of both
// conflicts (p1 renamed Ana, p4 deleted), --prefer target keeps main's;
// both exit 0 with one two-parent commit and list the resolved conflicts
// (text and JSON). --prefer DivergentUpdate=source alone still refuses
// the DeleteVsUpdate (outcome conflict, exit 1, nothing written) and lists
// the one it resolved. A bad --prefer is a usage error.
func TestMergePrefer(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.conflictGraph()
			before := f.store.Writes()
			m := f.mergeJSON(1, "merge", f.spec, testRoot, "feature", "main", "--prefer", "DivergentUpdate=source")
			if m.Outcome != outcomeConflict || len(m.Conflicts) != 1 || m.Conflicts[0].Kind != "DeleteVsUpdate" ||
				len(m.Resolved) != 1 || m.Resolved[0].Property != "name" || m.Prefer["DivergentUpdate"] != "source" {
				t.Fatalf("per-kind preference: %+v", m)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("a refused merge wrote %d objects", w-before)
			}
			for _, bad := range []string{"both", "OrphanEdge=source", "DivergentUpdate=refuse", "Nope=target"} {
				if code, _, errs := f.run("merge", f.spec, testRoot, "feature", "main", "--prefer", bad); code != 2 {
					t.Errorf("--prefer %s: exit %d, want 2\n%s", bad, code, errs)
				}
			}
			dry := f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main", "--prefer", "target", "--dry-run")
			if dry.Outcome != "merged" || len(dry.Resolved) != 2 || dry.Commit != nil {
				t.Fatalf("--prefer target --dry-run: %+v", dry)
			}
			f.mustRun(0, "branch", "create", f.spec, testRoot, "main2", "--from", "main")
			code, out, _ := f.run("merge", f.spec, testRoot, "feature", "main", "--prefer", "source")
			if code != 0 || !strings.Contains(out, "2 conflict(s) resolved by --prefer") || !strings.Contains(out, "(took source)") {
				t.Fatalf("--prefer source: exit %d\n%s", code, out)
			}
			rows := strings.Join(f.canonicalRows(testRoot), "\n")
			if !strings.Contains(rows, `"name":"Ana"`) || strings.Contains(rows, `"id":"p4"`) {
				t.Fatalf("after --prefer source: p1 should be Ana and p4 gone:\n%s", rows)
			}
			m = f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main2", "--prefer", "target")
			if m.Commit == nil || len(m.Commit.Parents) != 2 || len(m.Resolved) != 2 {
				t.Fatalf("--prefer target: %+v", m)
			}
			rows = strings.Join(f.canonicalRowsOn(testRoot, "main2"), "\n")
			if !strings.Contains(rows, `"name":"Anna"`) || !strings.Contains(rows, `"name":"Deb"`) {
				t.Fatalf("after --prefer target: p1 should be Anna and p4 Deb:\n%s", rows)
			}
		})
	}
}
