package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"time"

	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// maintainOpts are maintain's flags (defaults: the library's).
type maintainOpts struct {
	keepLast     int
	keepFor      time.Duration
	grace        time.Duration
	targetRows   uint64
	minFragments int
	maxDeletes   int
	noCollect    bool
	// reachEntries and reachFolds are the writers' reach bounds
	// (kernel.Options.ReachEntries/ReachFolds): the Maintainer rebuilds
	// lost commit indexes under them (maintain.Options), and the
	// command's own handle writes its indexes under them.
	reachEntries int
	reachFolds   int
}

// maintainCommand is maintain, over maintain.Maintain (kernel/maintain).
// The library has no dry run, so neither has the command.
func maintainCommand() command {
	return command{name: "maintain", args: "STORE ROOT", nargs: exactly(2),
		summary: "compact every live branch's small fragments, then collect what retention no longer keeps (docs/gc.md); " +
			"prints the compactions and what collection deleted and kept per category",
		notes: "--reach-entries and --reach-folds must be the bounds the graph's writers use (kernel.Options; the defaults are the kernel's): " +
			"a collection rebuilds a lost commit index under them and stores it (never over a usable one); a handle that rebuilt the same index under other bounds " +
			"and could not store it (read-only, or its write failed) would search by another reach than the one the collection kept merge bases by (docs/gc.md rule 3b)",
		example: "graphkernel maintain fs:/var/lib/graphs g1 --keep-last 20 --keep-for 168h",
		flags: func(fs *flag.FlagSet, o *opts) {
			m := &o.maint
			fs.IntVar(&m.keepLast, "keep-last", gc.DefaultKeepLast, "retain the newest `N` manifests of every branch incarnation (>= 1)")
			fs.DurationVar(&m.keepFor, "keep-for", 0, "also retain manifests newer than this `duration` (0: only --keep-last)")
			fs.DurationVar(&m.grace, "grace", gc.DefaultGrace, "the writers' grace period (must equal their kernel.Options.Grace)")
			fs.Uint64Var(&m.targetRows, "target-rows", compact.DefaultTargetRows, "compaction: fragments below `N` rows are small; a rewritten fragment holds at most N")
			fs.IntVar(&m.minFragments, "min-fragments", compact.DefaultMinFragments, "compaction: a table needs `N` small fragments before it is rewritten (>= 2)")
			fs.IntVar(&m.maxDeletes, "max-deletes", maintain.DefaultMaxDeletes, "collection: at most `N` deletes in this run (run again to go on)")
			fs.BoolVar(&m.noCollect, "no-collect", false, "compact only")
			fs.IntVar(&m.reachEntries, "reach-entries", lineage.DefaultReachEntries, "the writers' reach bound: at most `N` explicit entries in a commit index's reach (must equal their kernel.Options.ReachEntries; >= 2)")
			fs.IntVar(&m.reachFolds, "reach-folds", lineage.DefaultReachFolds, "the writers' reach bound: at most `N` folds in a commit index's reach (must equal their kernel.Options.ReachFolds; >= 2)")
		},
		run: runMaintain}
}

// maintainPolicy turns the flags into the library's policy, checked.
func maintainPolicy(m maintainOpts) (maintain.RunPolicy, error) {
	if m.keepLast < 1 || m.keepFor < 0 || m.grace <= 0 || m.maxDeletes < 1 {
		return maintain.RunPolicy{}, &usageError{fmt.Sprintf("--keep-last %d, --keep-for %s, --grace %s, --max-deletes %d: want keep-last >= 1, keep-for >= 0, grace > 0, max-deletes >= 1",
			m.keepLast, m.keepFor, m.grace, m.maxDeletes)}
	}
	p := maintain.RunPolicy{
		Compact:     compact.Policy{TargetRows: m.targetRows, MinFragments: m.minFragments},
		Collect:     maintain.Policy{Policy: gc.Policy{KeepLast: m.keepLast, KeepFor: m.keepFor, Grace: m.grace}, MaxDeletes: m.maxDeletes},
		SkipCollect: m.noCollect,
	}
	if _, err := p.Compact.WithDefaults(); err != nil {
		return maintain.RunPolicy{}, &usageError{err.Error()}
	}
	return p, nil
}

// maintainOptions turns the reach flags into the Maintainer's options,
// checked (lineage's bounds).
func maintainOptions(m maintainOpts) (maintain.Options, error) {
	if !(lineage.Limits{Entries: m.reachEntries, Folds: m.reachFolds}).Valid() {
		return maintain.Options{}, &usageError{fmt.Sprintf("--reach-entries %d, --reach-folds %d: want each >= %d and within the format's caps", m.reachEntries, m.reachFolds, lineage.MinReachBound)}
	}
	return maintain.Options{ReachEntries: m.reachEntries, ReachFolds: m.reachFolds}, nil
}

// compactionJSON is one table compaction.
type compactionJSON struct {
	Branch          string `json:"branch"`
	Table           string `json:"table"`
	Commit          string `json:"commit"`
	FragmentsBefore int    `json:"fragments_before"`
	FragmentsAfter  int    `json:"fragments_after"`
	Rows            uint64 `json:"rows"`
}

// countsJSON is what collection did with one category.
type countsJSON struct {
	Deleted int `json:"deleted"`
	Kept    int `json:"kept"`
}

// maintainJSON is `maintain --json`. Collection is absent with --no-collect;
// Complete is false when --max-deletes or the collection's time bound
// stopped it early; OutOfTime says the bound came while it was still
// loading (maintain.Report.OutOfTime: it deleted nothing).
type maintainJSON struct {
	Compactions []compactionJSON      `json:"compactions"`
	Collected   bool                  `json:"collected"`
	Complete    bool                  `json:"complete"`
	OutOfTime   bool                  `json:"out_of_time,omitempty"`
	Collection  map[string]countsJSON `json:"collection,omitempty"`
	// MergeBases and MergeBasesUnknown are maintain.Report's (rule 3b).
	MergeBases        int  `json:"merge_bases_kept"`
	MergeBasesUnknown int  `json:"merge_bases_unknown"`
	MergeBasesInexact bool `json:"merge_bases_inexact"`
	// ReachesUnknown is maintain.Report's (rule 3c): kept manifests whose
	// reach the run could neither read nor rebuild before deleting what a
	// rebuild would need; a later merge base through one may answer
	// ErrReclaimed.
	ReachesUnknown int `json:"reaches_unknown"`
}

func runMaintain(ctx context.Context, a *app, o *opts, pos []string) error {
	p, err := maintainPolicy(o.maint)
	if err != nil {
		return err
	}
	mo, err := maintainOptions(o.maint)
	if err != nil {
		return err
	}
	a.reachEntries, a.reachFolds = mo.ReachEntries, mo.ReachFolds
	var meter *meter
	a.wrapStore = func(st objstore.Store) objstore.Store {
		st, meter = a.meterStore(st, "maintain")
		return st
	}
	g, st, err := a.openGraph(ctx, pos[0], pos[1], true)
	if err != nil {
		return err
	}
	defer meter.done()
	newMaintainer := a.newMaintainer
	if newMaintainer == nil {
		newMaintainer = maintain.NewWith
	}
	m, err := newMaintainer(st, pos[1], a.env, mo)
	if err != nil {
		return err
	}
	rep, err := maintain.Maintain(ctx, g, m, p)
	meter.done()
	out := toMaintainJSON(rep, !p.SkipCollect && err == nil)
	if err != nil {
		a.printMaintain(out) // what was done before the failure
		return err
	}
	if o.json {
		return a.emitJSON(out)
	}
	a.printMaintain(out)
	return nil
}

func toMaintainJSON(rep maintain.RunReport, collected bool) maintainJSON {
	out := maintainJSON{Compactions: []compactionJSON{}, Collected: collected}
	branches := make([]string, 0, len(rep.Compactions))
	for b := range rep.Compactions { //detlint:ordered sorted below
		branches = append(branches, b)
	}
	sort.Strings(branches)
	for _, b := range branches {
		for _, tc := range rep.Compactions[b] {
			out.Compactions = append(out.Compactions, compactionJSON{Branch: b, Table: tc.Table, Commit: tc.Commit.ID.String(),
				FragmentsBefore: tc.FragmentsBefore, FragmentsAfter: tc.FragmentsAfter, Rows: tc.Rows})
		}
	}
	if !collected {
		return out
	}
	c := rep.Collect
	out.Complete, out.OutOfTime = c.Complete, c.OutOfTime
	out.MergeBases, out.MergeBasesUnknown, out.MergeBasesInexact = c.MergeBases, c.MergeBasesUnknown, c.MergeBasesInexact
	out.ReachesUnknown = c.ReachesUnknown
	out.Collection = map[string]countsJSON{}
	for name, n := range map[string]maintain.Counts{"manifests": c.Manifests, "table_versions": c.TableVersions, //detlint:ordered building a map; JSON sorts its keys
		"fragments": c.Fragments, "adjacency": c.Adjacency, "commit_indexes": c.CommitIndexes, "leases": c.Leases,
		"name_markers": c.NameMarkers, "fork_markers": c.ForkMarkers, "audit_records": c.Audits, "plans": c.Plans} {
		out.Collection[name] = countsJSON{Deleted: n.Deleted, Kept: n.Kept}
	}
	return out
}

// collectionCategories is the print order of collection's categories.
var collectionCategories = []string{"manifests", "table_versions", "fragments", "adjacency", "commit_indexes", "leases",
	"name_markers", "fork_markers", "audit_records", "plans"}

func (a *app) printMaintain(m maintainJSON) {
	w := a.stdout
	if len(m.Compactions) == 0 {
		fmt.Fprintln(w, "compaction: nothing to compact")
	}
	for _, c := range m.Compactions {
		fmt.Fprintf(w, "compacted %s %s: %d -> %d fragments, %d rows (commit %s)\n", c.Branch, c.Table, c.FragmentsBefore, c.FragmentsAfter, c.Rows, c.Commit)
	}
	if !m.Collected {
		fmt.Fprintln(w, "collection: not run")
		return
	}
	fmt.Fprintf(w, "collection: %-15s %8s %8s\n", "CATEGORY", "DELETED", "KEPT")
	for _, name := range collectionCategories {
		n := m.Collection[name]
		fmt.Fprintf(w, "            %-15s %8d %8d\n", name, n.Deleted, n.Kept)
	}
	fmt.Fprintf(w, "            merge bases kept %d (live heads of unknown reach: %d)\n", m.MergeBases, m.MergeBasesUnknown)
	if m.ReachesUnknown > 0 {
		fmt.Fprintf(w, "            kept manifests of unknown reach: %d (a merge base through one may answer reclaimed)\n", m.ReachesUnknown)
	}
	switch {
	case m.OutOfTime:
		fmt.Fprintf(w, "collection stopped at its time bound (%v) while loading, deleting nothing: run maintain again\n", maintain.DefaultMaxDuration)
	case !m.Complete:
		fmt.Fprintln(w, "collection stopped at --max-deletes or its time bound: run maintain again to go on")
	}
}
