package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

func (f *fixture) mergeJSON(want int, args ...string) mergeJSON {
	f.t.Helper()
	var m mergeJSON
	decodeJSON(f.t, f.mustRun(want, append(args, "--json")...), &m)
	return m
}

// headOf returns the head commit id of branch, read through the command.
func (f *fixture) headOf(branch string) commitJSON {
	f.t.Helper()
	var log []commitJSON
	decodeJSON(f.t, f.mustRun(0, "log", f.spec, testRoot, branch, "-n", "1", "--json"), &log)
	return log[0]
}

// TestMerge: merge prints each outcome with the captured source head, the
// base, the target head and the new commit: already up to date writes
// nothing; --dry-run prints the outcome and writes nothing; a merge
// publishes one two-parent commit with the --actor and --message given
// (defaults otherwise); a fast-forward is a two-parent commit too.
func TestMerge(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph() // feature is already merged into main (lineage only)

			before := f.store.Writes()
			fh := f.headOf("feature")
			m := f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main")
			if m.Outcome != "already-up-to-date" || m.Commit != nil || m.SourceHead != fh.ID || m.Base != fh.ID {
				t.Fatalf("merge of a merged branch: %+v", m)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("an up-to-date merge wrote %d objects", w-before)
			}

			f.commit(g, "feature", "add Gil", func(tx *data.Txn) error {
				return tx.Insert("Person", person("p10", "Gil"))
			})
			f.commit(g, "feature", "Gil knows Ann", func(tx *data.Txn) error {
				return tx.Insert("Knows", edgeRow("k9", "p10", "p1"))
			})
			fh2, mh := f.headOf("feature"), f.headOf("main")

			before = f.store.Writes()
			dry := f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main", "--dry-run")
			if dry.Outcome != "merged" || !dry.DryRun || dry.Commit != nil || dry.SourceHead != fh2.ID || dry.TargetHead != mh.ID ||
				dry.Base != fh.ID || dry.Changes["Person"] != 1 || dry.Changes["Knows"] != 1 || len(dry.Conflicts) != 0 {
				t.Fatalf("dry run: %+v", dry)
			}
			text := f.mustRun(0, "merge", f.spec, testRoot, "feature", "main", "--dry-run")
			for _, line := range []string{"(dry run: nothing written)", "outcome: merged", "source:  " + fh2.ID, "base:    " + fh.ID,
				"changes: Knows 1 Person 1", "commit:  - (nothing written)"} {
				if !strings.Contains(text, line) {
					t.Errorf("dry-run text lacks %q:\n%s", line, text)
				}
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("a dry run wrote %d objects", w-before)
			}

			m = f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main", "--actor", "ann", "--message", "ship it")
			if m.Outcome != "merged" || m.Commit == nil || m.Base != fh.ID || m.SourceHead != fh2.ID ||
				!slices.Equal(m.Commit.Parents, []string{mh.ID, fh2.ID}) || m.Commit.Actor != "ann" || m.Commit.Message != "ship it" {
				t.Fatalf("merge: %+v (commit %+v)", m, m.Commit)
			}
			if h := f.headOf("main"); h.ID != m.Commit.ID || !slices.Contains(h.Marks, "merge") {
				t.Fatalf("main head %+v, want the merge commit %s", h, m.Commit.ID)
			}
			if got := summary(f.diffJSON("diff", f.spec, testRoot, mh.ID, "main").Changes); got != "insert Person p10\ninsert Knows k9\n" {
				t.Errorf("the merge changed main by:\n%s", got)
			}

			// main now holds feature's head: merging main into feature
			// fast-forwards, with a two-parent commit and default intent.
			out := f.mustRun(0, "merge", f.spec, testRoot, "main", "feature")
			ff := f.headOf("feature")
			for _, line := range []string{"merge main#1 into feature#1", "outcome: fast-forward", "base:    " + fh2.ID, "commit:  " + ff.ID} {
				if !strings.Contains(out, line) {
					t.Errorf("fast-forward text lacks %q:\n%s", line, out)
				}
			}
			if !slices.Equal(ff.Parents, []string{fh2.ID, m.Commit.ID}) || ff.Actor != "graphkernel-merge" || ff.Message != "merge main into feature" {
				t.Errorf("fast-forward commit: %+v", ff)
			}
			if out := f.mustRun(0, "merge", f.spec, testRoot, "main", "feature"); !strings.Contains(out, "outcome: already-up-to-date") ||
				!strings.Contains(out, "commit:  - (nothing written)") {
				t.Errorf("second merge:\n%s", out)
			}
		})
	}
}

// TestMergeConflicts: a conflicting merge, dry run or not, prints every
// conflict with kind, type, id, property and message, exits 1 and writes
// nothing.
func TestMergeConflicts(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph()
			f.mustRun(0, "merge", f.spec, testRoot, "main", "feature") // feature catches up
			f.commit(g, "feature", "rename Ann", func(tx *data.Txn) error {
				return tx.Upsert("Person", person("p1", "Ana"))
			})
			f.commit(g, "feature", "drop Dee", func(tx *data.Txn) error {
				return tx.Delete("Person", "p4")
			})
			f.commit(g, "main", "main edits", func(tx *data.Txn) error {
				if err := tx.Upsert("Person", person("p1", "Anna")); err != nil {
					return err
				}
				return tx.Upsert("Person", person("p4", "Deb"))
			})
			mh := f.headOf("main")
			want := []conflictJSON{
				{Kind: "DivergentUpdate", Type: "Person", ID: "p1", Property: "name"},
				{Kind: "DeleteVsUpdate", Type: "Person", ID: "p4"},
			}
			before := f.store.Writes()
			for _, dry := range []string{"--dry-run", "--dry-run=false"} {
				m := f.mergeJSON(1, "merge", f.spec, testRoot, "feature", "main", dry)
				if m.Outcome != outcomeConflict || m.Commit != nil || len(m.Conflicts) != len(want) {
					t.Fatalf("%s: %+v", dry, m)
				}
				for i, c := range m.Conflicts {
					if c.Message == "" {
						t.Errorf("%s: conflict %d has no message: %+v", dry, i, c)
					}
					c.Message = ""
					if !slices.Contains(want, c) {
						t.Errorf("%s: unexpected conflict %+v", dry, c)
					}
				}
				code, out, _ := f.run("merge", f.spec, testRoot, "feature", "main", dry)
				if code != 1 || !strings.Contains(out, "2 conflict(s); nothing written") || !strings.Contains(out, "outcome: conflict\n") ||
					!strings.Contains(out, "DivergentUpdate") || !strings.Contains(out, `"p1"`) || !strings.Contains(out, " name ") ||
					!strings.Contains(out, "DeleteVsUpdate") || !strings.Contains(out, `"p4"`) {
					t.Errorf("%s text: exit %d\n%s", dry, code, out)
				}
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("a conflicting merge wrote %d objects", w-before)
			}
			if h := f.headOf("main"); h.ID != mh.ID {
				t.Fatalf("main moved to %s", h.ID)
			}
		})
	}
}

// TestMergeUsage: a branch merged into itself or a wrong argument count is
// a usage error (2); a branch that does not exist is a failure (1).
func TestMergeUsage(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	for _, args := range [][]string{
		{"merge", f.spec, testRoot, "main", "main"},
		{"merge", f.spec, testRoot, "feature"},
		{"merge", f.spec, testRoot, "feature", "main", "extra"},
		{"merge", f.spec, testRoot, "feature", "main", "--dry-run=maybe"},
	} {
		if code, _, errs := f.run(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errs)
		}
	}
	if code, _, errs := f.run("merge", f.spec, testRoot, "nosuch", "main"); code != 1 || !strings.Contains(errs, "nosuch") {
		t.Errorf("missing source branch: exit %d\n%s", code, errs)
	}
}

// TestMergeDryRunOpensReadOnly: with an abandoned write past the recovery
// lease (which a read-write open would sweep), a dry run still writes
// nothing; the real merge then sweeps it and publishes.
func TestMergeDryRunOpensReadOnly(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph()
			f.commit(g, "feature", "add Gil", func(tx *data.Txn) error {
				return tx.Insert("Person", person("p10", "Gil"))
			})
			f.crashWrite()
			f.clock.Advance(2 * kernel.RecoveryLease)
			before := f.store.Writes()
			if m := f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main", "--dry-run"); m.Outcome != "merged" || m.Changes["Person"] != 1 {
				t.Fatalf("dry run: %+v", m)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("a dry run with a sidecar past the lease wrote %d objects", w-before)
			}
			if m := f.mergeJSON(0, "merge", f.spec, testRoot, "feature", "main"); m.Commit == nil {
				t.Fatalf("merge: %+v", m)
			}
			if code, r := f.verify(); code != 0 || len(r.Sidecars) != 0 {
				t.Fatalf("verify after the merge: exit %d, %+v", code, r)
			}
		})
	}
}
