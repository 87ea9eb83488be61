package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// changeCommands are diff and changes, both over the change feed
// (kernel/changefeed). They open the graph read-only and write nothing.
func changeCommands() []command {
	return []command{
		{name: "diff", args: "STORE ROOT FROM TO", nargs: exactly(4),
			summary: "every change from snapshot FROM to snapshot TO (refs: commit id, BRANCH or BRANCH@VERSION; any branches): " +
				"op, type, id, edge endpoints, changed properties of updates; streamed page by page",
			example: "graphkernel diff fs:/var/lib/graphs g1 main@3 feature --type Person --op update",
			flags:   filterFlags, run: runDiff},
		{name: "changes", args: "STORE ROOT REF", nargs: exactly(3),
			summary: "the changes of the commit at REF relative to its first parent (a merge's too), with the commit as their cause",
			example: "graphkernel changes fs:/var/lib/graphs g1 01JGJFGR489VX2QM8Y7AF9FRQ2 --op delete",
			flags:   filterFlags, run: runChanges},
	}
}

// maxChangeLimit bounds --limit.
const maxChangeLimit = 1 << 40

// filterFlags registers --type, --op and --limit.
func filterFlags(fs *flag.FlagSet, o *opts) {
	fs.Func("type", "only changes of type `T` (repeatable)", func(s string) error {
		if s == "" {
			return errors.New("empty type name")
		}
		o.types = append(o.types, s)
		return nil
	})
	fs.Func("op", "only changes with operation `OP`: insert, update or delete (repeatable, or comma-separated)", func(s string) error {
		for _, name := range strings.Split(s, ",") {
			op, ok := opByName(name)
			if !ok {
				return fmt.Errorf("operation %q: want insert, update or delete", name)
			}
			o.ops = append(o.ops, op)
		}
		return nil
	})
	fs.Int64Var(&o.limit, "limit", 0, "print at most `N` changes (0: all)")
}

func opByName(s string) (feed.Op, bool) {
	for _, op := range []feed.Op{feed.OpInsert, feed.OpUpdate, feed.OpDelete} {
		if op.String() == s {
			return op, true
		}
	}
	return 0, false
}

// changeFilter checks the filter flags against the schema of s: a type the
// schema does not have is a usage error (it could never match).
func changeFilter(o *opts, s *data.Snapshot) (feed.Filter, error) {
	if o.limit < 0 || o.limit > maxChangeLimit {
		return feed.Filter{}, &usageError{fmt.Sprintf("--limit %d: want 0..%d", o.limit, int64(maxChangeLimit))}
	}
	sc := s.Schema()
	for _, t := range o.types {
		_, node := sc.Node(t)
		_, edge := sc.Edge(t)
		if !node && !edge {
			return feed.Filter{}, &usageError{fmt.Sprintf("--type %q: the schema has no such node or edge type", t)}
		}
	}
	return feed.Filter{Types: o.types, Ops: o.ops}, nil
}

// snapJSON names one side of a diff.
type snapJSON struct {
	Ref             string `json:"ref"`
	Commit          string `json:"commit"`
	Branch          string `json:"branch"`
	ManifestVersion uint64 `json:"manifest_version"`
}

func toSnapJSON(ref string, s *data.Snapshot) snapJSON {
	ks := s.Kernel()
	return snapJSON{Ref: ref, Commit: ks.Head().String(), Branch: fmt.Sprintf("%s#%d", ks.Branch(), ks.Incarnation()),
		ManifestVersion: ks.ManifestVersion()}
}

func runDiff(ctx context.Context, a *app, o *opts, pos []string) error {
	m := a.newMeter("diff", "changes", 0)
	a.storeBytes(m)
	defer m.done()
	from, to, err := resolvePair(ctx, a, pos)
	if err != nil {
		return err
	}
	filter, err := changeFilter(o, to)
	if err != nil {
		return err
	}
	d, err := changefeed.Diff(from, to, filter)
	if err != nil {
		return fmt.Errorf("diff %s %s: %w", pos[2], pos[3], err)
	}
	fj, tj := toSnapJSON(pos[2], from), toSnapJSON(pos[3], to)
	out := newChangeWriter(a.stdout, o.json, o.limit)
	sc := changefeed.SchemaChangeOf(from, to)
	if o.json {
		out.header(append([]any{"from", fj, "to", tj}, schemaHeader(sc)...)...)
	} else {
		out.textf("diff %s %s\nfrom %s (%s v%d)\nto   %s (%s v%d)\n\n", fj.Ref, tj.Ref,
			fj.Commit, fj.Branch, fj.ManifestVersion, tj.Commit, tj.Branch, tj.ManifestVersion)
		writeSchemaChange(out, sc)
	}
	err = pageLoop(out, a.feedLimits, func(lim feed.Limits) ([]changefeed.Change, bool, error) {
		p, err := d.Next(ctx, lim)
		m.add(int64(len(p.Changes)), 0)
		m.flush()
		return p.Changes, p.Done, err
	})
	m.done()
	if err != nil {
		return fmt.Errorf("diff %s %s: %w", pos[2], pos[3], err)
	}
	return out.finish()
}

func runChanges(ctx context.Context, a *app, o *opts, pos []string) error {
	m := a.newMeter("changes", "changes", 0)
	a.storeBytes(m)
	defer m.done()
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	s, err := resolveRef(ctx, g, pos[2])
	if err != nil {
		return err
	}
	filter, err := changeFilter(o, s)
	if err != nil {
		return err
	}
	id := s.Kernel().Head()
	c, err := g.Kernel().Commit(ctx, id)
	if err != nil {
		return fmt.Errorf("commit %s: %w", id, err)
	}
	f, token := changefeed.New(g), ""
	sc, err := f.CommitSchemaChange(ctx, id)
	if err != nil {
		return fmt.Errorf("changes of commit %s: %w", id, err)
	}
	out := newChangeWriter(a.stdout, o.json, o.limit)
	if o.json {
		out.header(append([]any{"commit", toCommitJSON(c)}, schemaHeader(sc)...)...)
	} else {
		writeCommit(out.w, c)
		writeSchemaChange(out, sc)
	}
	err = pageLoop(out, a.feedLimits, func(lim feed.Limits) ([]changefeed.Change, bool, error) {
		p, err := f.CommitChanges(ctx, id, token, filter, lim)
		m.add(int64(len(p.Changes)), 0)
		m.flush()
		token = p.Next
		return p.Changes, p.Next == "", err
	})
	m.done()
	if err != nil {
		return fmt.Errorf("changes of commit %s: %w", id, err)
	}
	return out.finish()
}

// pageLoop pulls pages from next and writes each before pulling the next,
// so at most one page is held. With a --limit it asks for at most one
// change more than it still prints, which tells whether the output was
// cut. A page that is not the last must hold a change (the feed always
// makes progress); an empty one is refused rather than looped on.
func pageLoop(out *changeWriter, base feed.Limits, next func(feed.Limits) ([]changefeed.Change, bool, error)) error {
	base, err := base.Normalize()
	if err != nil {
		return err
	}
	for {
		lim := base
		if out.limit > 0 {
			lim.MaxChanges = int(min(int64(lim.MaxChanges), out.limit-out.n+1))
		}
		changes, done, err := next(lim)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if out.full() {
				out.truncated = true
				break
			}
			out.change(ch)
		}
		if err := out.flush(); err != nil {
			return err
		}
		if done || out.truncated {
			return nil
		}
		if len(changes) == 0 {
			return errors.New("the change feed returned an empty page before the end")
		}
		// Exactly the limit printed and the feed not exhausted: the next
		// page asks for one change, which tells whether anything was cut.
	}
}

// changeJSON is one change as --json prints it. From and To are the edge's
// endpoints (of the row after the change; before it for a delete). Props
// is the inserted row's properties (insert) or the deleted row's (delete),
// nulls omitted; Changed lists an update's differing properties, endpoint
// moves as "from" and "to" (reserved names no property can take).
type changeJSON struct {
	Op      string         `json:"op"`
	Type    string         `json:"type"`
	Edge    bool           `json:"edge,omitempty"`
	ID      string         `json:"id"`
	From    string         `json:"from,omitempty"`
	To      string         `json:"to,omitempty"`
	Props   map[string]any `json:"props,omitempty"`
	Changed []propChange   `json:"changed,omitempty"`
}

// propChange is one property of an update: its value before and after
// (null when absent), rendered as export's JSON Lines renders values.
type propChange struct {
	Property string `json:"property"`
	Before   any    `json:"before"`
	After    any    `json:"after"`
}

func toChangeJSON(ch changefeed.Change) changeJSON {
	out := changeJSON{Op: ch.Op.String(), Type: ch.Type, Edge: ch.Edge, ID: ch.ID}
	img := ch.After
	if img == nil {
		img = ch.Before
	}
	if ch.Edge && img != nil {
		out.From, out.To = img.From, img.To
	}
	switch {
	case ch.Op == feed.OpUpdate && ch.Before != nil && ch.After != nil:
		out.Changed = changedProps(*ch.Before, *ch.After, ch.Edge)
	case img != nil:
		out.Props = map[string]any{}
		for k, v := range img.Props { //detlint:ordered building a map; JSON sorts its keys
			if v != nil {
				out.Props[k] = textOf(v)
			}
		}
	}
	return out
}

// changedProps lists what differs between two images of one row: the
// endpoints (edges) first, then properties by name; absent and nil are
// both null.
func changedProps(before, after data.Row, edge bool) []propChange {
	var out []propChange
	if edge {
		if before.From != after.From {
			out = append(out, propChange{"from", before.From, after.From})
		}
		if before.To != after.To {
			out = append(out, propChange{"to", before.To, after.To})
		}
	}
	var names []string
	for k := range before.Props { //detlint:ordered sorted below
		names = append(names, k)
	}
	for k := range after.Props { //detlint:ordered sorted below
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range slices.Compact(names) {
		b, a := before.Props[k], after.Props[k]
		if !data.ValuesEqual(b, a) {
			out = append(out, propChange{k, textOrNil(b), textOrNil(a)})
		}
	}
	return out
}

func textOrNil(v any) any {
	if v == nil {
		return nil
	}
	return textOf(v)
}
