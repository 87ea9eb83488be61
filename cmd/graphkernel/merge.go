package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/merge"
)

// mergeCommand is merge, over data.Graph.Merge (kernel/data, merge.go).
func mergeCommand() command {
	return command{name: "merge", args: "STORE ROOT SOURCE TARGET", nargs: exactly(4),
		summary: "three-way merge of branch SOURCE into branch TARGET: already up to date, fast-forward or merged " +
			"(one two-parent commit, a fast-forward too); a conflict (outcome conflict) lists every conflict (kind, type, id, property, message), writes nothing and exits 1",
		notes: "Outcomes: already-up-to-date (nothing written), fast-forward, merged, conflict (exit 1, nothing written).\n" +
			"Unlike git, a fast-forward is not a pointer move: it writes one commit with two parents (the\n" +
			"target head and the source head), like a merge, so each branch keeps its own chain of commits.\n" +
			"--prefer resolves conflicts instead of refusing: --prefer source (or target) for every resolvable\n" +
			"kind, or --prefer KIND=source|target per kind (repeatable; KIND is DivergentInsert, DeleteVsUpdate\n" +
			"or DivergentUpdate). A resolved conflict takes that side's whole row (insert, delete vs update) or\n" +
			"property (update) and is listed as resolved. OrphanEdge and CardinalityViolation are never resolved.",
		example: "graphkernel merge fs:/var/lib/graphs g1 feature main --dry-run --prefer DivergentUpdate=source",
		flags: func(fs *flag.FlagSet, o *opts) {
			fs.BoolVar(&o.dryRun, "dry-run", false, "print the outcome and every conflict, write nothing (read-only open)")
			fs.Func("prefer", "resolve conflicts with one side: `source|target`, or KIND=source|target (repeatable)", func(v string) error {
				o.prefer = append(o.prefer, v)
				return nil
			})
			fs.StringVar(&o.actor, "actor", "graphkernel-merge", "merge commit `actor`")
			fs.StringVar(&o.message, "message", "", "merge commit `message` (default: merge SOURCE into TARGET)")
		},
		run: runMerge}
}

// conflictJSON is one merge conflict as merge prints it.
type conflictJSON struct {
	Kind     string `json:"kind"`
	Rule     string `json:"rule,omitempty"` // SchemaConflict: its merge.SchemaRule
	Type     string `json:"type"`
	ID       string `json:"id"`
	Property string `json:"property,omitempty"`
	Message  string `json:"message"`
}

// mergeJSON is `merge --json`. SourceHead is the source head the merge
// captured (the source may have moved since), TargetHead the target head
// it was computed on (and published on), Base their merge base. Commit is
// the published merge commit: absent when already up to date, on
// conflict, in a dry run and when the merge failed.
type mergeJSON struct {
	Source     string            `json:"source"`
	Target     string            `json:"target"`
	DryRun     bool              `json:"dry_run"`
	Outcome    string            `json:"outcome"`
	Base       string            `json:"base"`
	SourceHead string            `json:"source_head"`
	TargetHead string            `json:"target_head"`
	Commit     *commitJSON       `json:"commit,omitempty"`
	Changes    map[string]int    `json:"changes"`
	Conflicts  []conflictJSON    `json:"conflicts"`
	Resolved   []conflictJSON    `json:"resolved"` // conflicts --prefer resolved
	Prefer     map[string]string `json:"prefer,omitempty"`
	Rounds     int               `json:"rounds"`
	Error      string            `json:"error,omitempty"`
}

func runMerge(ctx context.Context, a *app, o *opts, pos []string) error {
	srcName, tgtName := pos[2], pos[3]
	if srcName == tgtName {
		return &usageError{fmt.Sprintf("SOURCE and TARGET are both %q: a branch cannot be merged into itself", srcName)}
	}
	policy, err := parsePrefer(o.prefer)
	if err != nil {
		return err
	}
	// A dry run opens read-only: a read-write open may run the recovery
	// sweep, and a dry run writes nothing.
	g, _, err := a.openGraph(ctx, pos[0], pos[1], !o.dryRun)
	if err != nil {
		return err
	}
	src, err := g.Branch(ctx, srcName)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	tgt, err := g.Branch(ctx, tgtName)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	msg := o.message
	if msg == "" {
		msg = fmt.Sprintf("merge %s into %s", srcName, tgtName)
	}
	res, mergeErr := g.Merge(ctx, src, tgt, kernel.LineageIntent{Actor: o.actor, Message: msg}, data.MergeOptions{DryRun: o.dryRun, Prefer: policy})
	var ce *data.MergeConflictError
	conflicted := errors.As(mergeErr, &ce)
	if mergeErr != nil && !conflicted {
		return mergeErr
	}
	out := toMergeJSON(src, tgt, o.dryRun, res, policy)
	if conflicted {
		out.Outcome = outcomeConflict
	}
	if o.json {
		if err := a.emitJSON(out); err != nil {
			return err
		}
	} else {
		a.printMerge(out)
	}
	if conflicted {
		if !o.json {
			fmt.Fprintf(a.stderr, "hint: %s\n", hintFor(mergeErr))
		}
		return errProblems
	}
	return nil
}

// outcomeConflict is the outcome merge reports for a merge refused for
// conflicts (the library's outcome says what the heads made it).
const outcomeConflict = "conflict"

// parsePrefer turns --prefer values into a policy: "source" or "target"
// for every resolvable kind, or KIND=source|target for one.
func parsePrefer(vals []string) (merge.Policy, error) {
	var p merge.Policy
	for _, v := range vals {
		kindName, sideName, perKind := strings.Cut(v, "=")
		if !perKind {
			sideName = v
		}
		side, ok := merge.ParseSide(sideName)
		if !ok || side == merge.Refuse {
			return p, &usageError{fmt.Sprintf("--prefer %q: want source or target (or KIND=source|target)", v)}
		}
		if !perKind {
			p = merge.PreferAll(side)
			continue
		}
		k, ok := merge.KindByName(kindName)
		if ok {
			p, ok = p.Set(k, side)
		}
		if !ok {
			return p, &usageError{fmt.Sprintf("--prefer %q: KIND must be DivergentInsert, DeleteVsUpdate or DivergentUpdate", v)}
		}
	}
	return p, nil
}

func toMergeJSON(src, tgt kernel.BranchRef, dryRun bool, res data.MergeResult, policy merge.Policy) mergeJSON {
	out := mergeJSON{Source: src.String(), Target: tgt.String(), DryRun: dryRun, Outcome: res.Outcome.String(),
		Base: res.Base.String(), SourceHead: res.Source.String(), TargetHead: res.Target.String(),
		Changes: map[string]int{}, Conflicts: []conflictJSON{}, Resolved: []conflictJSON{}, Rounds: res.Rounds}
	for _, k := range []merge.Kind{merge.DivergentInsert, merge.DeleteVsUpdate, merge.DivergentUpdate} {
		if s := policy.For(k); s != merge.Refuse {
			if out.Prefer == nil {
				out.Prefer = map[string]string{}
			}
			out.Prefer[k.String()] = s.String()
		}
	}
	for _, c := range res.Resolved {
		out.Resolved = append(out.Resolved, conflictJSON{Kind: c.Kind.String(), Type: c.Type, ID: c.ID, Property: c.Property, Message: c.Message})
	}
	for t, n := range res.Changes { //detlint:ordered building a map; JSON sorts its keys
		out.Changes[t] = n
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, conflictJSON{Kind: c.Kind.String(), Rule: ruleOf(c), Type: c.Type, ID: c.ID, Property: c.Property, Message: c.Message})
	}
	if res.Commit.ID != (kernel.CommitID{}) {
		cj := toCommitJSON(res.Commit)
		out.Commit = &cj
	}
	return out
}

func (a *app) printMerge(m mergeJSON) {
	w := a.stdout
	fmt.Fprintf(w, "merge %s into %s", m.Source, m.Target)
	if m.DryRun {
		fmt.Fprint(w, " (dry run: nothing written)")
	}
	fmt.Fprintf(w, "\noutcome: %s\nsource:  %s (head captured)\ntarget:  %s (head merged into)\nbase:    %s\n",
		m.Outcome, m.SourceHead, m.TargetHead, m.Base)
	if len(m.Changes) > 0 {
		types := make([]string, 0, len(m.Changes))
		for t := range m.Changes { //detlint:ordered sorted below
			types = append(types, t)
		}
		slices.Sort(types)
		fmt.Fprint(w, "changes:")
		for _, t := range types {
			fmt.Fprintf(w, " %s %d", t, m.Changes[t])
		}
		fmt.Fprintln(w)
	}
	if len(m.Resolved) > 0 {
		fmt.Fprintf(w, "%d conflict(s) resolved by --prefer:\n", len(m.Resolved))
		for _, c := range m.Resolved {
			fmt.Fprintf(w, "  %-20s %-16s %-20q %-12s %s (took %s)\n", c.Kind, c.Type, c.ID, orDash(c.Property), c.Message, m.Prefer[c.Kind])
		}
	}
	switch {
	case m.Commit != nil:
		fmt.Fprintf(w, "commit:  %s (%s#%d v%d)\n", m.Commit.ID, m.Commit.Branch, m.Commit.Incarnation, m.Commit.Version)
	case len(m.Conflicts) > 0:
		fmt.Fprintf(w, "%d conflict(s); nothing written:\n", len(m.Conflicts))
		fmt.Fprintf(w, "  %-20s %-16s %-20s %-12s %s\n", "KIND", "TYPE", "ID", "PROPERTY", "MESSAGE")
		for _, c := range m.Conflicts {
			fmt.Fprintf(w, "  %-20s %-16s %-20q %-12s %s\n", c.Kind, c.Type, c.ID, orDash(c.Property), c.Message)
		}
	default:
		fmt.Fprintln(w, "commit:  - (nothing written)")
	}
}

// ruleOf names a schema conflict's rule ("" for a row conflict).
func ruleOf(c data.MergeConflict) string {
	if c.Rule == 0 {
		return ""
	}
	return c.Rule.String()
}
