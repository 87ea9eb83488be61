package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// manyCommits builds a graph with n single-row commits on main (each adds
// a fragment to Person) and a branch forked early; it returns main's head.
func (f *fixture) manyCommits(n int) *data.Graph {
	f.t.Helper()
	g := f.buildGraph()
	for i := range n {
		f.commit(g, "main", fmt.Sprintf("c%d", i), func(tx *data.Txn) error {
			return tx.Insert("Person", person(fmt.Sprintf("q%03d", i), "Q"))
		})
	}
	return g
}

// TestMaintain: after many commits, maintain compacts the small fragments
// and collects what retention no longer keeps (per category); log then
// stops cleanly at the retention boundary and verify is clean.
func TestMaintain(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			f.objects = true // fragment objects to collect
			f.manyCommits(12)
			f.clock.Advance(2 * time.Hour) // past grace + skew margin
			var m maintainJSON
			decodeJSON(t, f.mustRun(0, "maintain", f.spec, testRoot, "--keep-last", "5", "--min-fragments", "2", "--json"), &m)
			if len(m.Compactions) == 0 || !m.Collected || !m.Complete {
				t.Fatalf("maintain: %+v", m)
			}
			var person *compactionJSON
			for i, c := range m.Compactions {
				if c.Branch == "main" && c.Table == "Person" {
					person = &m.Compactions[i]
				}
			}
			if person == nil || person.FragmentsAfter >= person.FragmentsBefore || person.Rows != 16 {
				t.Fatalf("no compaction of main's Person (16 rows): %+v", m.Compactions)
			}
			if c := m.Collection["manifests"]; c.Deleted == 0 || c.Kept == 0 {
				t.Fatalf("collection of manifests: %+v", m.Collection)
			}
			if c := m.Collection["fragments"]; c.Deleted == 0 {
				t.Fatalf("collection of fragments: %+v", m.Collection)
			}

			// log stops at the boundary: the 5 newest commits (the
			// compaction's among them) and the one the compaction pushed out
			// of the last 5 less than grace ago (docs/gc.md §2), then the note.
			out := f.mustRun(0, "log", f.spec, testRoot, "main", "-n", "100")
			if !strings.Contains(out, "reclaimed by garbage collection") || strings.Count(out, "commit ") != 6 {
				t.Fatalf("log after collection:\n%s", out)
			}
			var log []commitJSON
			decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "main", "-n", "100", "--json"), &log)
			if len(log) != 6 {
				t.Fatalf("log --json after collection: %d commits, want the 6 retained", len(log))
			}
			// --json marks the boundary as the text does: on the oldest
			// retained commit only, and not when -n stops short of it.
			for i, c := range log {
				if c.RetentionBoundary != (i == len(log)-1) {
					t.Fatalf("log --json: commit %d retention_boundary=%v, want it on the oldest (6th) only", i, c.RetentionBoundary)
				}
			}
			decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "main", "-n", "3", "--json"), &log)
			for i, c := range log {
				if c.RetentionBoundary {
					t.Fatalf("log -n 3 --json: commit %d marked as the retention boundary before reaching it", i)
				}
			}
			if _, _, help := f.run("log", "-h"); !strings.Contains(help, "retention_boundary") {
				t.Fatalf("log -h does not document retention_boundary:\n%s", help)
			}

			// A collected graph verifies clean: its truncated chains are
			// retention, not damage.
			f.mustRun(0, "verify", f.spec, testRoot, "--keep-last", "5")

			text := f.mustRun(0, "maintain", f.spec, testRoot)
			for _, line := range []string{"compaction: nothing to compact", "collection: CATEGORY", "manifests", "leases"} {
				if !strings.Contains(text, line) {
					t.Errorf("maintain text lacks %q:\n%s", line, text)
				}
			}
		})
	}
}

// TestMaintainUsage: bad policies are usage errors (2); -h has an example.
func TestMaintainUsage(t *testing.T) {
	f := newFixture(t, "sim")
	f.initGraph()
	for _, args := range [][]string{
		{"--keep-last", "0"}, {"--keep-for", "-1h"}, {"--grace", "0s"}, {"--min-fragments", "1"}, {"--target-rows", "1"}, {"--max-deletes", "0"}, {"extra"},
	} {
		if code, _, _ := f.run(append([]string{"maintain", f.spec, testRoot}, args...)...); code != exitUsage {
			t.Errorf("maintain %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	code, _, errs := f.run("maintain", "-h")
	if code != exitOK || !strings.Contains(errs, "example:\n  graphkernel maintain") {
		t.Fatalf("maintain -h: exit %d\n%s", code, errs)
	}
}

// TestMaintainMaxDeletes: --max-deletes bounds one run's deletes and says
// the collection is incomplete (verify still clean); the next run goes on.
func TestMaintainMaxDeletes(t *testing.T) {
	f := newFixture(t, "sim")
	f.manyCommits(6)
	f.clock.Advance(2 * time.Hour)
	var m maintainJSON
	decodeJSON(t, f.mustRun(0, "maintain", f.spec, testRoot, "--keep-last", "2", "--max-deletes", "1", "--json"), &m)
	deleted := 0
	for _, c := range m.Collection {
		deleted += c.Deleted
	}
	if m.Complete || deleted != 1 {
		t.Fatalf("--max-deletes 1: complete %v, %d deleted", m.Complete, deleted)
	}
	// A collection stopped part-way leaves history below the window in
	// any shape: it is still no damage.
	f.mustRun(0, "verify", f.spec, testRoot, "--keep-last", "2")
	if out := f.mustRun(0, "maintain", f.spec, testRoot, "--keep-last", "2", "--max-deletes", "1"); !strings.Contains(out, "stopped at --max-deletes") {
		t.Fatalf("text lacks the stop:\n%s", out)
	}
	decodeJSON(t, f.mustRun(0, "maintain", f.spec, testRoot, "--keep-last", "2", "--json"), &m)
	if !m.Complete || m.Collection["manifests"].Deleted == 0 {
		t.Fatalf("the next run: %+v", m)
	}
}

// TestMaintainReachFlags: --reach-entries and --reach-folds reach the
// Maintainer (maintain.Options) and the command's own handle; their
// defaults are the kernel's; bounds below lineage's minimum are a usage
// error (exit 2).
func TestMaintainReachFlags(t *testing.T) {
	f := newFixture(t, "sim")
	f.manyCommits(2)
	for _, tc := range []struct {
		args []string
		want maintain.Options
	}{
		{nil, maintain.Options{ReachEntries: lineage.DefaultReachEntries, ReachFolds: lineage.DefaultReachFolds}},
		{[]string{"--reach-entries", "4", "--reach-folds", "2"}, maintain.Options{ReachEntries: 4, ReachFolds: 2}},
	} {
		var out, errb bytes.Buffer
		a := f.app(&out, &errb)
		var got maintain.Options
		a.newMaintainer = func(st objstore.Store, root string, env kernel.Env, o maintain.Options) (*maintain.Maintainer, error) {
			got = o
			return maintain.NewWith(st, root, env, o)
		}
		args := append([]string{"maintain", f.spec, testRoot, "--json"}, tc.args...)
		if code := a.run(context.Background(), args); code != 0 {
			t.Fatalf("graphkernel %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		if got != tc.want || a.reachEntries != tc.want.ReachEntries || a.reachFolds != tc.want.ReachFolds {
			t.Fatalf("graphkernel %v: Maintainer options %+v, handle bounds %d/%d; want %+v", args, got, a.reachEntries, a.reachFolds, tc.want)
		}
	}
	if code, _, errs := f.run("maintain", f.spec, testRoot, "--reach-folds", "1"); code != 2 || !strings.Contains(errs, "--reach-folds 1") {
		t.Fatalf("maintain --reach-folds 1: exit %d, stderr %q; want a usage error (2) naming the flag", code, errs)
	}
}

// TestMaintainReportsUnknownReaches: a collection's ReachesUnknown (kept
// manifests whose reach it could neither read nor rebuild, docs/gc.md
// rule 3c) reaches the command's JSON and its text, where an operator
// sees it; zero prints nothing extra.
func TestMaintainReportsUnknownReaches(t *testing.T) {
	for _, n := range []int{0, 3} {
		var rep maintain.RunReport
		rep.Collect.ReachesUnknown = n
		out := toMaintainJSON(rep, true)
		if out.ReachesUnknown != n {
			t.Fatalf("json reaches_unknown %d, want %d", out.ReachesUnknown, n)
		}
		var buf bytes.Buffer
		(&app{stdout: &buf}).printMaintain(out)
		if got := strings.Contains(buf.String(), "kept manifests of unknown reach: 3"); got != (n == 3) {
			t.Fatalf("text with %d unknown reaches:\n%s", n, buf.String())
		}
	}
}
