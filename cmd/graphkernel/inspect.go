package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/objstore"
)

// maxLogN bounds log -n.
const maxLogN = 100_000

// openGraph opens the graph at STORE ROOT (read-only unless rw).
func (a *app) openGraph(ctx context.Context, spec, root string, rw bool) (*data.Graph, objstore.Store, error) {
	st, err := a.open(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	if a.wrapStore != nil {
		st = a.wrapStore(st)
	}
	g, err := data.Open(ctx, st, root, data.Options{Kernel: kernel.Options{ReadOnly: !rw, Env: a.env, ReachEntries: a.reachEntries, ReachFolds: a.reachFolds}, Limits: a.limits})
	if err != nil {
		return nil, nil, fmt.Errorf("open graph %q: %w", root, err)
	}
	return g, st, nil
}

// emitJSON writes v as one indented JSON document.
func (a *app) emitJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// commitJSON is a commit as --json prints it.
type commitJSON struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	Parents     []string  `json:"parents"`
	Actor       string    `json:"actor"`
	Message     string    `json:"message"`
	Time        time.Time `json:"time"`
	Branch      string    `json:"branch"`
	Incarnation uint64    `json:"incarnation"`
	Version     uint64    `json:"manifest_version"`
	Marks       []string  `json:"marks,omitempty"`
	// RetentionBoundary is set (log --json only) on the oldest commit
	// listed when the history below it was reclaimed by garbage collection.
	RetentionBoundary bool `json:"retention_boundary,omitempty"`
}

// marks says what is special about a commit: merge, recovery, genesis,
// branch-delete, or any kind other than a plain commit (maintenance
// commits, once they exist, show their kind the same way).
func marks(c kernel.Commit) []string {
	var m []string
	if string(c.Kind) != "commit" {
		m = append(m, string(c.Kind))
	} else if len(c.Parents) > 1 {
		m = append(m, "merge")
	}
	if c.Actor == kernel.RecoveryActor && string(c.Kind) != "recovery" {
		m = append(m, "recovery")
	}
	return m
}

func toCommitJSON(c kernel.Commit) commitJSON {
	ps := make([]string, len(c.Parents))
	for i, p := range c.Parents {
		ps[i] = p.String()
	}
	return commitJSON{ID: c.ID.String(), Kind: string(c.Kind), Parents: ps, Actor: c.Actor, Message: c.Message,
		Time: c.Time.UTC(), Branch: c.Branch, Incarnation: c.Incarnation, Version: c.ManifestVersion, Marks: marks(c)}
}

func (a *app) printCommit(c kernel.Commit) { writeCommit(a.stdout, c) }

// writeCommit prints a commit as log and show do.
func writeCommit(w io.Writer, c kernel.Commit) {
	fmt.Fprintf(w, "commit %s", c.ID)
	if m := marks(c); len(m) > 0 {
		fmt.Fprintf(w, " [%s]", strings.Join(m, ", "))
	}
	fmt.Fprintln(w)
	switch len(c.Parents) {
	case 0:
	case 1:
		fmt.Fprintf(w, "Parent:  %s\n", c.Parents[0])
	default:
		ps := make([]string, len(c.Parents))
		for i, p := range c.Parents {
			ps[i] = p.String()
		}
		fmt.Fprintf(w, "Merge:   %s\n", strings.Join(ps, " "))
	}
	fmt.Fprintf(w, "Branch:  %s#%d v%d\n", c.Branch, c.Incarnation, c.ManifestVersion)
	fmt.Fprintf(w, "Actor:   %s\n", c.Actor)
	fmt.Fprintf(w, "Date:    %s\n", c.Time.UTC().Format(time.RFC3339Nano))
	if c.Message != "" {
		fmt.Fprintf(w, "\n    %s\n", strings.ReplaceAll(c.Message, "\n", "\n    "))
	}
	fmt.Fprintln(w)
}

// branchJSON is one live branch as `branches --json` prints it. Depth is
// the head's manifest version in its incarnation (the number of publishes
// since the incarnation was created).
type branchJSON struct {
	Name          string    `json:"name"`
	Incarnation   uint64    `json:"incarnation"`
	IncarnationID string    `json:"incarnation_id"`
	Head          string    `json:"head"`
	Depth         uint64    `json:"depth"`
	HeadKind      string    `json:"head_kind"`
	HeadTime      time.Time `json:"head_time"`
}

func runBranches(ctx context.Context, a *app, o *opts, pos []string) error {
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	k := g.Kernel()
	refs, err := k.ListBranches(ctx)
	if err != nil {
		return fmt.Errorf("list branches: %w", err)
	}
	out := make([]branchJSON, 0, len(refs))
	for _, b := range refs {
		h, err := k.Head(ctx, b)
		if err != nil {
			return fmt.Errorf("head of %s: %w", b, err)
		}
		out = append(out, branchJSON{Name: b.Name(), Incarnation: b.Incarnation(), IncarnationID: b.IncarnationID().String(),
			Head: h.ID.String(), Depth: h.ManifestVersion, HeadKind: string(h.Kind), HeadTime: h.Time.UTC()})
	}
	if o.json {
		return a.emitJSON(out)
	}
	fmt.Fprintf(a.stdout, "%-24s %4s %7s  %-26s  %s\n", "BRANCH", "INC", "DEPTH", "HEAD", "TIME")
	for _, b := range out {
		fmt.Fprintf(a.stdout, "%-24s %4d %7d  %-26s  %s\n", b.Name, b.Incarnation, b.Depth, b.Head, b.HeadTime.Format(time.RFC3339))
	}
	return nil
}

func runLog(ctx context.Context, a *app, o *opts, pos []string) error {
	if o.n < 1 || o.n > maxLogN {
		return &usageError{fmt.Sprintf("-n %d: want 1..%d", o.n, maxLogN)}
	}
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	name := "main"
	if len(pos) == 3 {
		name = pos[2]
	}
	b, err := g.Branch(ctx, name)
	if err != nil {
		return err // names the branch
	}
	var all []kernel.Commit
	var cur kernel.LogCursor
	reclaimed := false
	for len(all) < o.n {
		page, err := g.Kernel().Log(ctx, b, cur, min(o.n-len(all), kernel.MaxLogLimit))
		if err != nil {
			return fmt.Errorf("log of %s: %w", b, err)
		}
		all = append(all, page.Commits...)
		reclaimed = reclaimed || page.Reclaimed
		if cur = page.Next; cur == "" || len(page.Commits) == 0 {
			break
		}
	}
	if o.json {
		out := make([]commitJSON, len(all))
		for i, c := range all {
			out[i] = toCommitJSON(c)
		}
		if reclaimed && len(out) > 0 {
			out[len(out)-1].RetentionBoundary = true
		}
		return a.emitJSON(out)
	}
	for _, c := range all {
		a.printCommit(c)
	}
	if reclaimed {
		fmt.Fprintln(a.stdout, "(older history was reclaimed by garbage collection: `graphkernel maintain` retention)")
	}
	return nil
}

// resolvePair opens the read-only graph STORE ROOT of pos[0], pos[1] and
// resolves the refs pos[2] (from) and pos[3] (to), as resolveRef: the
// operands of `diff` and `schema diff`.
func resolvePair(ctx context.Context, a *app, pos []string) (from, to *data.Snapshot, err error) {
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return nil, nil, err
	}
	if from, err = resolveRef(ctx, g, pos[2]); err != nil {
		return nil, nil, err
	}
	if to, err = resolveRef(ctx, g, pos[3]); err != nil {
		return nil, nil, err
	}
	return from, to, nil
}

// resolveRef finds the snapshot REF names: a commit id, BRANCH@VERSION (a
// manifest version of the branch's live incarnation) or BRANCH (its head).
func resolveRef(ctx context.Context, g *data.Graph, ref string) (*data.Snapshot, error) {
	if id, err := kernel.CommitIDFromString(ref); err == nil {
		s, err := g.SnapshotAtCommit(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", ref, err)
		}
		return s, nil
	}
	name, ver, hasVer := strings.Cut(ref, "@")
	b, err := g.Branch(ctx, name)
	if err != nil && hasVer {
		return nil, fmt.Errorf("ref %q: %w", ref, err)
	}
	if err != nil {
		return nil, err // names the branch, which is the ref
	}
	if !hasVer {
		s, err := g.SnapshotAt(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("ref %q: %w", ref, err)
		}
		return s, nil
	}
	v, err := strconv.ParseUint(ver, 10, 64)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("ref %q: version %q is not a number", ref, ver)}
	}
	s, err := g.SnapshotAtVersion(ctx, b, v)
	if err != nil {
		return nil, fmt.Errorf("ref %q: %w", ref, err)
	}
	return s, nil
}

// typeJSON is one type's pin in a snapshot.
type typeJSON struct {
	Type    string `json:"type"`
	Edge    bool   `json:"edge"`
	Pinned  bool   `json:"pinned"`
	Fork    string `json:"fork,omitempty"`
	Version uint64 `json:"version,omitempty"`
	Rows    uint64 `json:"rows"`
}

// showJSON is `show --json`.
type showJSON struct {
	Commit          commitJSON `json:"commit"`
	SnapshotBranch  string     `json:"snapshot_branch"`
	ManifestVersion uint64     `json:"snapshot_manifest_version"`
	Schema          string     `json:"schema"`
	Types           []typeJSON `json:"types"`
}

// snapshotTypes lists every type of the schema with its pin (nodes first).
func snapshotTypes(s *data.Snapshot) []typeJSON {
	ks := s.Kernel()
	var out []typeJSON
	add := func(name, table string, edge bool) {
		t := typeJSON{Type: name, Edge: edge}
		if p, ok := ks.Table(table); ok { // the type's storage table (its name unless renamed)
			t.Pinned, t.Fork, t.Version, t.Rows = true, p.Fork.String(), p.Version, p.Rows
		}
		out = append(out, t)
	}
	sc := s.Schema()
	for _, n := range sc.Nodes {
		add(n.Name, n.StorageTable(), false)
	}
	for _, e := range sc.Edges {
		add(e.Name, e.StorageTable(), true)
	}
	return out
}

func runShow(ctx context.Context, a *app, o *opts, pos []string) error {
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	s, err := resolveRef(ctx, g, pos[2])
	if err != nil {
		return err
	}
	ks := s.Kernel()
	c, err := g.Kernel().Commit(ctx, ks.Head())
	if err != nil {
		return fmt.Errorf("commit %s: %w", ks.Head(), err)
	}
	out := showJSON{Commit: toCommitJSON(c), SnapshotBranch: fmt.Sprintf("%s#%d", ks.Branch(), ks.Incarnation()),
		ManifestVersion: ks.ManifestVersion(), Schema: ks.SchemaHash(), Types: snapshotTypes(s)}
	if o.json {
		return a.emitJSON(out)
	}
	a.printCommit(c)
	fmt.Fprintf(a.stdout, "Snapshot: %s v%d  schema %s\n\n", out.SnapshotBranch, out.ManifestVersion, out.Schema)
	fmt.Fprintf(a.stdout, "%-24s %-5s %-26s %8s %10s\n", "TYPE", "KIND", "FORK", "VERSION", "ROWS")
	for _, t := range out.Types {
		kind := "node"
		if t.Edge {
			kind = "edge"
		}
		if !t.Pinned {
			fmt.Fprintf(a.stdout, "%-24s %-5s %-26s %8s %10d\n", t.Type, kind, "-", "-", 0)
			continue
		}
		fmt.Fprintf(a.stdout, "%-24s %-5s %-26s %8d %10d\n", t.Type, kind, t.Fork, t.Version, t.Rows)
	}
	return nil
}

func runSchema(ctx context.Context, a *app, o *opts, pos []string) error {
	g, _, err := a.openGraph(ctx, pos[0], pos[1], false)
	if err != nil {
		return err
	}
	b, err := g.Kernel().Schema(ctx)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if o.json {
		return a.emitJSON(struct {
			Contract string `json:"contract"`
		}{string(b)})
	}
	_, err = a.stdout.Write(b)
	return err
}

// isNotFound reports the one benign absence.
func isNotFound(err error) bool {
	return errors.Is(err, objstore.ErrNotFound) || errors.Is(err, kernel.ErrNotFound)
}
