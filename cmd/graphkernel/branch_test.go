package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBranchCreateDelete: branch create from main (the default), from
// BRANCH@VERSION and from a commit id, a load onto the new branch and its
// merge; branch delete; and each refusal with its typed error and hint:
// exists, has dependents (named), main protected, not found. A refusal
// writes nothing.
func TestBranchCreateDelete(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.buildGraph()
			var created branchOpJSON
			decodeJSON(t, f.mustRun(0, "branch", "create", f.spec, testRoot, "edit", "--json"), &created)
			if mh := f.headOf("main"); created.Action != "create" || created.Branch != "edit" || created.Head != mh.ID || created.From != "main" {
				t.Fatalf("create: %+v, want edit at main's head %s", created, mh.ID)
			}
			if out := f.mustRun(0, "branch", "create", f.spec, testRoot, "old", "--from", "main@1"); !strings.Contains(out, "created branch old#") {
				t.Fatalf("create --from main@1: %s", out)
			}
			fh := f.headOf("feature")
			if out := f.mustRun(0, "branch", "create", f.spec, testRoot, "atcommit", "--from", fh.ID); !strings.Contains(out, fh.ID) {
				t.Fatalf("create --from a commit id: %s", out)
			}
			if h := f.headOf("atcommit"); h.ID != fh.ID {
				t.Fatalf("atcommit head %s, want %s", h.ID, fh.ID)
			}
			f.mustRun(0, "load", f.spec, testRoot, "edit", writeFiles(t, t.TempDir(), map[string]string{"Person.jsonl": `{"id":"p1","age":50}` + "\n"})[0], "--upsert")
			if m := f.mergeJSON(0, "merge", f.spec, testRoot, "edit", "main"); m.Commit == nil {
				t.Fatalf("merge of the new branch: %+v", m)
			}
			f.mustRun(0, "branch", "create", f.spec, testRoot, "child", "--from", "edit")

			for _, c := range []struct {
				name, hint string
				args       []string
				want       int
			}{
				{"exists", "pick another name", []string{"branch", "create", f.spec, testRoot, "edit"}, 1},
				{"dependents", "forked from it", []string{"branch", "delete", f.spec, testRoot, "edit"}, 1},
				{"main", "", []string{"branch", "delete", f.spec, testRoot, "main"}, 1},
				{"not found", "graphkernel branches", []string{"branch", "delete", f.spec, testRoot, "nosuch"}, 1},
				{"from not found", "graphkernel branches", []string{"branch", "create", f.spec, testRoot, "x", "--from", "nosuch"}, 1},
				{"bad action", "", []string{"branch", "rename", f.spec, testRoot, "edit"}, 2},
				{"--from with delete", "", []string{"branch", "delete", f.spec, testRoot, "edit", "--from", "main"}, 2},
			} {
				before := f.store.Writes()
				code, _, errs := f.run(c.args...)
				if code != c.want || !strings.Contains(errs, c.hint) {
					t.Errorf("%s: exit %d (want %d), want hint %q\n%s", c.name, code, c.want, c.hint, errs)
				}
				if c.hint == "" && strings.Contains(errs, "hint:") {
					t.Errorf("%s: a hint where none applies:\n%s", c.name, errs)
				}
				if w := f.store.Writes(); w != before {
					t.Errorf("%s: a refused branch command wrote %d objects", c.name, w-before)
				}
				if c.name == "dependents" && !strings.Contains(errs, "child") {
					t.Errorf("dependents: the dependent is not named:\n%s", errs)
				}
			}
			f.mustRun(0, "branch", "delete", f.spec, testRoot, "child")
			var deleted branchOpJSON
			decodeJSON(t, f.mustRun(0, "branch", "delete", f.spec, testRoot, "edit", "--json"), &deleted)
			if deleted.Action != "delete" || deleted.Branch != "edit" || deleted.Head == "" {
				t.Fatalf("delete: %+v", deleted)
			}
			var bs []branchJSON
			if err := json.Unmarshal([]byte(f.mustRun(0, "branches", f.spec, testRoot, "--json")), &bs); err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				if b.Name == "edit" || b.Name == "child" {
					t.Fatalf("deleted branch %s still listed", b.Name)
				}
			}
			f.mustRun(0, "verify", f.spec, testRoot)
		})
	}
}
