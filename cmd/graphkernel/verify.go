package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
)

// verifyReport is `verify --json` (internal/verify.Report).
type verifyReport = verify.Report

// Rules the tests name (internal/verify).
const (
	ruleAdjacency   = verify.RuleAdjacency
	ruleCard        = verify.RuleCard
	ruleChain       = verify.RuleChain
	ruleChainGap    = verify.RuleChainGap
	ruleCommitIndex = verify.RuleCommitIndex
	ruleDangling    = verify.RuleDangling
	ruleDecode      = verify.RuleDecode
	ruleDuplicateID = verify.RuleDuplicateID
	ruleEnvelope    = verify.RuleEnvelope
	ruleForkIndex   = verify.RuleForkIndex
	ruleForkPoint   = verify.RuleForkPoint
	ruleFragment    = verify.RuleFragment
	ruleLease       = verify.RuleLease
	ruleLocation    = verify.RuleLocation
	ruleMissing     = verify.RuleMissing
)

// verifyGraph runs internal/verify.Graph.
func verifyGraph(ctx context.Context, st objstore.Store, root string, env kernel.Env, now time.Time, keepLast int) (*verifyReport, error) {
	return verify.Graph(ctx, st, root, env, now, keepLast)
}

func runVerify(ctx context.Context, a *app, o *opts, pos []string) error {
	st, err := a.open(ctx, pos[0])
	if err != nil {
		return err
	}
	if o.keepLast < 1 {
		return &usageError{fmt.Sprintf("--keep-last %d: want >= 1", o.keepLast)}
	}
	st, m := a.meterStore(st, "verify")
	rep, err := verifyGraph(ctx, st, pos[1], a.env, a.now(), o.keepLast)
	m.done()
	if err != nil {
		return err
	}
	if o.json {
		if err := a.emitJSON(rep); err != nil {
			return err
		}
	} else {
		a.printVerify(rep)
	}
	if len(rep.ProblemCount) > 0 {
		return errProblems
	}
	return nil
}

func (a *app) printVerify(r *verifyReport) {
	w := a.stdout
	fmt.Fprintf(w, "live branches: %s\n", strings.Join(r.LiveBranches, ", "))
	fmt.Fprintf(w, "checked: %d manifests, %d table versions, %d fragments, %d adjacency chunks and pages, %d rows\n",
		r.Manifests, r.TableVersions, r.Fragments, r.AdjacencyObjects, r.RowsChecked)
	for _, s := range r.Sidecars {
		lease := "within the lease (a live writer's, probably)"
		if s.PastLease {
			lease = "past the lease: recovery will resolve it"
		}
		fmt.Fprintf(w, "pending sidecar %s: op %s, age %s, %s, %s [%s]; %s\n", s.Key, s.Op,
			(time.Duration(s.AgeSeconds) * time.Second).String(), orDash(s.Branch), orDash(s.WriterKind), strings.Join(s.Tables, ","), lease)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM %s: %s: %s\n", p.Rule, p.Key, p.Detail)
	}
	rules := make([]string, 0, len(r.ProblemCount))
	total := 0
	for rule, n := range r.ProblemCount { //detlint:ordered sorted below
		rules = append(rules, fmt.Sprintf("%s %d", rule, n))
		total += n
	}
	sort.Strings(rules)
	if total == 0 {
		fmt.Fprintln(w, "ok: no problems")
		return
	}
	fmt.Fprintf(w, "%d problem(s): %s\n", total, strings.Join(rules, ", "))
}
