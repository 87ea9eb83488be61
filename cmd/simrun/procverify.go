package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// noCollection is the --keep-last of verify after a run that collects
// nothing: every manifest must be present.
const noCollection = 1 << 30

// workload is the run's process workload: maintWorkload,
// schemaProcWorkload, or "" for the default writers.
func (r *procRun) workload() string {
	switch r.c.workload {
	case maintWorkload, schemaProcWorkload:
		return r.c.workload
	}
	return ""
}

// verify runs internal/verify (graphkernel verify, the same code) on the
// final store with the retention the run collected with; each problem is a
// violation, and so is a verify that cannot run.
func (r *procRun) verify(keepLast int, s *Summary) []check.Violation {
	rep, err := verify.Graph(context.Background(), r.ps.st, r.root, kernel.SystemEnv(), time.Now(), keepLast)
	if err != nil {
		s.Verify = "error: " + err.Error()
		return []check.Violation{{Check: "verify", Detail: err.Error()}}
	}
	if len(rep.ProblemCount) == 0 {
		s.Verify = fmt.Sprintf("clean (%d manifests, %d table versions, %d fragments)", rep.Manifests, rep.TableVersions, rep.Fragments)
		return nil
	}
	var rules []string
	for rule, n := range rep.ProblemCount { //detlint:ordered sorted below
		rules = append(rules, fmt.Sprintf("%s %d", rule, n))
		s.VerifyProblems += n
	}
	sort.Strings(rules)
	s.Verify = "problems: " + strings.Join(rules, ", ")
	var vs []check.Violation
	for _, p := range rep.Problems {
		vs = append(vs, check.Violation{Check: "verify", Detail: fmt.Sprintf("%s %s: %s", p.Rule, p.Key, p.Detail)})
	}
	return vs
}

// checkMaint checks a maintenance run: every violation a process recorded;
// every acknowledged insert (on main, or on a feature branch merged into
// main) is on main's head, and no insert on main that failed definitely
// is; verify with maintKeepLast finds nothing.
func (r *procRun) checkMaint(segs []*segment, s *Summary) []check.Violation {
	var vs []check.Violation
	acked, failed := map[string]bool{}, map[string]bool{}
	keyOf := map[string]string{}
	for _, sg := range segs {
		for _, rec := range sg.recs {
			switch rec.Kind {
			case recInvoke:
				keyOf[rec.Tag] = rec.Key
			case recOK:
				acked[rec.Tag] = true
				if rec.Group > 1 {
					s.GroupedCommits++
				}
			case recFail:
				failed[rec.Tag] = keyOf[rec.Tag] == keyMain || keyOf[rec.Tag] == keySchema
			case recViolation:
				vs = append(vs, check.Violation{Check: "kernel-error", Detail: fmt.Sprintf("%s: %s", sg.name, rec.Err)})
			case recCollect:
				s.Collections++
				s.CollectDeleted += rec.Deleted
			case recPinRead:
				s.PinReads++
			case recFeed:
				s.FeedChanges += rec.Deleted
			case recGap:
				s.FeedGaps++
			}
		}
	}
	s.Commits = len(acked) // data commits and schema changes (s.SchemaChanges of them, counted below)
	s.Recoveries = len(auditedOps(workload.StoreInspector(r.ps.st), r.root))
	rows, props, err := r.mainRows()
	if err != nil {
		return append(vs, check.Violation{Check: "rows", Detail: err.Error()})
	}
	onMain := func(tag string) bool {
		if keyOf[tag] == keySchema {
			return props[tag]
		}
		return rows[tag]
	}
	for _, tag := range sortedKeys(acked) {
		if keyOf[tag] == keySchema {
			s.SchemaChanges++
		}
		if !onMain(tag) {
			vs = append(vs, check.Violation{Check: lostCheck(keyOf[tag]), Detail: fmt.Sprintf("acknowledged %s %s is not on main", keyOf[tag], tag)})
		}
	}
	for _, tag := range sortedKeys(failed) {
		if failed[tag] && onMain(tag) {
			vs = append(vs, check.Violation{Check: failedCheck(keyOf[tag]), Detail: fmt.Sprintf("%s %s failed definitely, yet it is on main", keyOf[tag], tag)})
		}
	}
	return append(vs, r.verify(maintKeepLast, s)...)
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m { //detlint:ordered sorted below
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// lostCheck names the check an acknowledged call of kind key failed: a
// row (keyMain, keyMerge) or a schema change (keySchema) not on main.
func lostCheck(key string) string {
	if key == keySchema {
		return "lost-schema-change"
	}
	return "lost-row"
}

// failedCheck names the check a definitely failed call of kind key
// failed: its row or schema change is on main all the same.
func failedCheck(key string) string {
	if key == keySchema {
		return "failed-schema-change-visible"
	}
	return "failed-row-visible"
}

// mainRows reads the ids of main's head and the names of its Item
// properties (no process runs any more).
func (r *procRun) mainRows() (rows, props map[string]bool, err error) {
	ctx := context.Background()
	var last error
	for a := 0; a < finalAttempts; a++ {
		rows, props, err := r.mainRowsOnce(ctx)
		if err == nil {
			return rows, props, nil
		}
		last = err
		time.Sleep(finalRetryPause)
	}
	return nil, nil, fmt.Errorf("read main's rows: %w", last)
}

func (r *procRun) mainRowsOnce(ctx context.Context) (rows, props map[string]bool, err error) {
	g, err := data.Open(ctx, r.ps.st, r.root, data.Options{Kernel: kernel.Options{Env: kernel.SystemEnv(), ReadOnly: true}})
	if err != nil {
		return nil, nil, err
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return nil, nil, err
	}
	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		return nil, nil, err
	}
	props = map[string]bool{}
	for _, n := range snap.Schema().Nodes {
		if n.Name == maintType {
			for _, pr := range n.Props {
				props[pr.Name] = true
			}
		}
	}
	rr, err := snap.Scan(ctx, maintType, "id")
	if err != nil {
		return nil, nil, err
	}
	defer rr.Release()
	rows = map[string]bool{}
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			rows[rec.Column(0).ValueStr(i)] = true
		}
	}
	return rows, props, rr.Err()
}
