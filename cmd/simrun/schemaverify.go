package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/sim/check"
)

// schemaCall is one recorded call of the schema workload: its invoke and
// its return (nil while pending: the process was killed in the call).
type schemaCall struct {
	seg    string
	invoke histRecord
	ret    *histRecord
}

// outcome is the call's outcome as recorded.
func (c *schemaCall) outcome() model.Outcome {
	if c.ret == nil {
		return model.Ambiguous
	}
	return outcomeOf(c.ret.Kind)
}

// checkSchema checks a schema run (see schemaproc.go): the default
// workload's store checks over the recorded calls, main's schema chain,
// the typed refusals, the rows under the final schema, and verify.
func (r *procRun) checkSchema(c *config, segs []*segment, s *Summary) []check.Violation {
	h, vs := buildHistory(segs)
	calls := map[string]*schemaCall{}
	var tags []string
	for _, sg := range segs {
		for i, rec := range sg.recs {
			switch rec.Kind {
			case recInvoke:
				calls[rec.Tag] = &schemaCall{seg: sg.name, invoke: rec}
				tags = append(tags, rec.Tag)
			case recOK, recFail, recUnknown:
				if call, ok := calls[rec.Tag]; ok {
					call.ret = &sg.recs[i]
				}
			case recCardViolation:
				vs = append(vs, check.Violation{Check: "schema-card", Detail: fmt.Sprintf("%s: %s", sg.name, rec.Err)})
			}
		}
	}
	g, gvs := r.storeChecksGraph(c, h, s)
	vs = append(vs, gvs...)
	vs = append(vs, schemaChain(g, calls)...)
	for _, tag := range tags {
		call := calls[tag]
		switch {
		case call.outcome() == model.OK && call.invoke.Op != "":
			s.SchemaChanges++
			if call.invoke.Op == opRenameType {
				s.TypeRenames++
			}
			if call.invoke.Op == opRenameProp {
				s.PropRenames++
			}
		case call.outcome() == model.OK:
			s.Writes++
		case call.ret != nil && call.ret.Class == classSchema && call.invoke.Op == "":
			s.StaleRefused++
		}
		vs = append(vs, typedRefusal(tag, call)...)
	}
	s.Commits = s.Writes + s.SchemaChanges
	vs = append(vs, r.schemaRows(calls, tags)...)
	return append(vs, r.verify(noCollection, s)...)
}

// typedRefusal checks a failed call's error: a write refused for its
// schema must say so with *kernel.SchemaChangedError naming the schema it
// was staged under; nothing but that, a store outcome or contention may
// refuse a write of fresh rows (a schema change may also be refused by
// the data or the planner, typed).
func typedRefusal(tag string, call *schemaCall) []check.Violation {
	if call.ret == nil || call.ret.Kind == recOK {
		return nil
	}
	switch cl := call.ret.Class; {
	case cl == classSchema && call.ret.Schema != call.invoke.Schema:
		return []check.Violation{{Check: "schema-untyped-error", Detail: fmt.Sprintf(
			"%s (%s): refused as staged under %.12s, but it was staged under %.12s: %s", tag, call.seg, call.ret.Schema, call.invoke.Schema, call.ret.Err)}}
	case cl == classSchema, cl == classStore, cl == classContention:
		return nil
	case cl == classRefused && call.invoke.Op != "":
		return nil
	case cl == classCard && call.invoke.EdgeIn:
		return nil // a seeded person's out-degree at the @card's bound
	case cl == classConflict && len(call.invoke.Trim) > 0:
		return nil // a trim's deletes lost to a concurrent write or trim
	}
	return []check.Violation{{Check: "schema-untyped-error", Detail: fmt.Sprintf(
		"%s (%s, %s): refused with an error of class %q, not a typed retryable one: %s", tag, call.seg, opName(call.invoke.Op), call.ret.Class, call.ret.Err)}}
}

func opName(op string) string {
	if op == "" {
		return "write"
	}
	return op
}

// schemaChain checks main's chain of schemas: a manifest's schema differs
// from its parent's only in a schema change's commit, which landed on the
// schema it was written for and, acknowledged, published the schema it
// returned; every write landed under the schema it was staged under.
func schemaChain(g check.Graph, calls map[string]*schemaCall) []check.Violation {
	var vs []check.Violation
	bad := func(kind, f string, a ...any) {
		vs = append(vs, check.Violation{Check: kind, Detail: fmt.Sprintf(f, a...)})
	}
	for _, inc := range g.Incarnations {
		if !strings.HasPrefix(inc.Key, "main#") {
			continue
		}
		for i := 1; i < len(inc.Manifests); i++ {
			prev, m := inc.Manifests[i-1], inc.Manifests[i]
			if m.Commit == nil {
				continue
			}
			changed := m.Schema != prev.Schema
			tags, _ := check.TagsOf(m.Commit.Message)
			if len(tags) == 0 && changed {
				bad("schema-chain", "%s v%d: an untagged commit (%q) changed the schema", inc.Key, m.Version, m.Commit.Message)
			}
			for _, tag := range tags {
				call, ok := calls[tag]
				switch {
				case !ok:
					// CheckCommits reports a tag nobody issued.
				case call.invoke.Op != "" && prev.Schema != call.invoke.Schema:
					bad("schema-chain", "%s v%d: schema change %s (%s) was written for %.12s but landed on %.12s", inc.Key, m.Version, tag, call.invoke.Op, call.invoke.Schema, prev.Schema)
				case call.invoke.Op != "" && !changed:
					bad("schema-chain", "%s v%d: schema change %s (%s) left the schema %.12s", inc.Key, m.Version, tag, call.invoke.Op, m.Schema)
				case call.invoke.Op != "" && call.outcome() == model.OK && call.ret.Schema != m.Schema:
					bad("schema-chain", "%s v%d: schema change %s (%s) returned %.12s but published %.12s", inc.Key, m.Version, tag, call.invoke.Op, call.ret.Schema, m.Schema)
				case call.invoke.Op == "" && m.Schema != call.invoke.Schema:
					bad("schema-stale-commit", "%s v%d: write %s was staged under %.12s but landed under %.12s", inc.Key, m.Version, tag, call.invoke.Schema, m.Schema)
				case call.invoke.Op == "" && changed:
					bad("schema-chain", "%s v%d: write %s changed the schema", inc.Key, m.Version, tag)
				}
			}
		}
	}
	return vs
}

// schemaHead is what main's head holds, read under its own schema.
type schemaHead struct {
	names  schemaNames
	values map[string]any    // node id -> the value property's value
	edges  map[string]string // edge id -> source node id
}

// schemaRows checks main's head under the final schema: every
// acknowledged write's node (with its value under the value property's
// final name) and edge, no definitely failed one's, a write's node and
// edge together, every source's out-degree within the final @card, and
// no row of a tag nobody wrote.
func (r *procRun) schemaRows(calls map[string]*schemaCall, tags []string) []check.Violation {
	head, err := r.schemaHead()
	if err != nil {
		return []check.Violation{{Check: "rows", Detail: err.Error()}}
	}
	var vs []check.Violation
	bad := func(kind, f string, a ...any) {
		vs = append(vs, check.Violation{Check: kind, Detail: fmt.Sprintf(f, a...)})
	}
	trims := map[string][]*schemaCall{} // edge id -> the trims deleting it
	for _, tag := range tags {
		for _, id := range calls[tag].invoke.Trim {
			trims[id] = append(trims[id], calls[tag])
		}
	}
	trimmed := func(edge string, want func(model.Outcome) bool) bool {
		return slices.ContainsFunc(trims[edge], func(c *schemaCall) bool { return want(c.outcome()) })
	}
	wrote := map[string]bool{}
	for _, tag := range tags {
		call := calls[tag]
		if call.invoke.Op != "" || len(call.invoke.Trim) > 0 {
			continue
		}
		node, edge := "n-"+tag, "e-"+tag
		wrote[node], wrote[edge] = true, call.invoke.Edge
		v, hasNode := head.values[node]
		_, hasEdge := head.edges[edge]
		switch out := call.outcome(); {
		case out == model.OK && !hasNode:
			bad("lost-row", "acknowledged write %s: node %s is not on main's head (%s)", tag, node, head.names.node)
		case out == model.Failed && (hasNode || hasEdge):
			bad("failed-row-visible", "write %s failed definitely (%s), yet its rows are on main's head", tag, call.ret.Err)
		}
		if hasNode && v != schemaValue(tag) {
			bad("schema-rename", "node %s: %s.%s = %v, want %d (written under %.12s)", node, head.names.node, head.names.value, v, schemaValue(tag), call.invoke.Schema)
		}
		gone := call.invoke.Edge && hasNode && !hasEdge && trimmed(edge, func(o model.Outcome) bool { return o != model.Failed })
		if hasEdge && !call.invoke.Edge || call.invoke.Edge && hasNode != hasEdge && !gone {
			bad("partial-commit", "write %s: node on main %v, edge on main %v, edge written %v", tag, hasNode, hasEdge, call.invoke.Edge)
		}
		if hasEdge && trimmed(edge, func(o model.Outcome) bool { return o == model.OK }) {
			bad("trimmed-edge-visible", "edge %s of write %s was deleted by an acknowledged trim, yet it is on main's head", edge, tag)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(head.values)) {
		if !wrote[id] && !strings.HasPrefix(id, "s") {
			bad("unknown-row", "node %s on main's head was never written", id)
		}
	}
	out := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(head.edges)) {
		if !wrote[id] {
			bad("unknown-row", "edge %s on main's head was never written", id)
		}
		out[head.edges[id]]++
	}
	for _, from := range slices.Sorted(maps.Keys(out)) {
		if n := out[from]; !head.names.card.Allows(uint64(n)) {
			bad("schema-card", "%s %s has %d %s edges, outside @card(%s)", head.names.node, from, n, head.names.edge, head.names.card)
		}
	}
	return vs
}

// schemaHead reads main's head (no process runs any more), retrying.
func (r *procRun) schemaHead() (schemaHead, error) {
	var last error
	for a := 0; a < finalAttempts; a++ {
		h, err := r.schemaHeadOnce(context.Background())
		if err == nil {
			return h, nil
		}
		last = err
		time.Sleep(finalRetryPause)
	}
	return schemaHead{}, fmt.Errorf("read main's head: %w", last)
}

func (r *procRun) schemaHeadOnce(ctx context.Context) (schemaHead, error) {
	g, err := data.Open(ctx, r.ps.st, r.root, data.Options{Kernel: kernel.Options{Env: kernel.SystemEnv(), ReadOnly: true}})
	if err != nil {
		return schemaHead{}, err
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return schemaHead{}, err
	}
	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		return schemaHead{}, err
	}
	nm, ok := schemaNamesOf(snap.Schema())
	if !ok {
		return schemaHead{}, fmt.Errorf("main's final schema is not of the workload's shape:\n%s", snap.Schema())
	}
	h := schemaHead{names: nm, values: map[string]any{}, edges: map[string]string{}}
	if err := scanRows(ctx, snap, nm.node, []string{schema.ColID, nm.value}, func(rec arrow.Record, i int) {
		col := rec.Column(1)
		if col.IsNull(i) {
			h.values[rec.Column(0).(*array.String).Value(i)] = nil
			return
		}
		h.values[rec.Column(0).(*array.String).Value(i)] = col.(*array.Int64).Value(i)
	}); err != nil {
		return schemaHead{}, err
	}
	if err := scanRows(ctx, snap, nm.edge, []string{schema.ColID, schema.ColFrom}, func(rec arrow.Record, i int) {
		h.edges[rec.Column(0).(*array.String).Value(i)] = rec.Column(1).(*array.String).Value(i)
	}); err != nil {
		return schemaHead{}, err
	}
	return h, nil
}

// scanRows calls f for every row of typ on snap, read with columns.
func scanRows(ctx context.Context, snap *data.Snapshot, typ string, columns []string, f func(arrow.Record, int)) error {
	rr, err := snap.Scan(ctx, typ, columns...)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			f(rec, i)
		}
	}
	return rr.Err()
}
