package data

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// ErrSchemaConflict matches a *MergeConflictError listing at least one
// schema conflict (kernel/merge SchemaConflict, with its SchemaRule): the
// branches changed their schemas in ways that do not merge. No policy
// resolves it; nothing was published.
var ErrSchemaConflict = errors.New("data: schema conflict")

// mergeSchemas merges the three snapshots' schemas (kernel/merge
// MergeSchemas) and fills in the catalogs the rest of the round uses. When
// the three schemas are one, nothing changes: the target's catalog reads
// and writes. Otherwise the merged catalog writes and checks, a copy with
// every property nullable reads every side's fragments (a required
// property added on one side is absent from the base's), and the target
// head is read under the merged catalog. Schema conflicts are returned in
// in.schemaConflicts.
func (g *Graph) mergeSchemas(in *mergeInput) error {
	in.cat, in.read, in.on = in.tgt.cat, in.tgt.cat, in.tgt
	id := in.tgt.cat.contractID
	if in.src.cat.contractID == id && in.base.cat.contractID == id {
		return nil
	}
	sm := merge.MergeSchemas(merge.SchemaInput{Base: in.base.cat.schema, Source: in.src.cat.schema, Target: in.tgt.cat.schema,
		SourceRows: writtenRows(in.base, in.src), TargetRows: writtenRows(nil, in.tgt)})
	if len(sm.Conflicts) > 0 {
		in.schemaConflicts = sm.Conflicts
		in.comparable = newCatalog(nullable(sm.Comparable), "")
		return nil
	}
	contract, err := sm.Schema.Contract()
	if err != nil {
		return fmt.Errorf("merged schema: %w", err)
	}
	if sum := schema.ContractID(contract); sum != id {
		s, err := schema.Decode(contract)
		if err != nil {
			return fmt.Errorf("merged schema: %w", err)
		}
		in.cat, in.contract = newCatalog(s, sum), contract
		in.on = &Snapshot{g: g, ks: in.tgt.ks, cat: in.cat, r: newReader(g, in.cat), views: map[string]*tableView{}}
	}
	in.read = newCatalog(nullable(in.cat.schema), in.cat.contractID)
	return nil
}

// writtenRows counts the rows of every type of head, by storage table
// (a type's identity across the schemas); with a base, only of the types
// head wrote since it (whose pin differs): the others hold the base's
// rows.
func writtenRows(base, head *Snapshot) map[string]uint64 {
	out := map[string]uint64{}
	for _, name := range head.cat.names {
		t := head.cat.tables[name]
		if base != nil && pinOf(base.ks, t) == pinOf(head.ks, t) {
			continue
		}
		if p, ok := head.ks.Table(t.Storage); ok && p.Rows > 0 {
			out[t.Storage] = p.Rows
		}
	}
	return out
}

// nullable returns s with every property nullable (a reading layout).
func nullable(s schema.Schema) schema.Schema {
	s = s.Normalized()
	for i := range s.Nodes {
		for j := range s.Nodes[i].Props {
			s.Nodes[i].Props[j].Required = false
		}
	}
	for i := range s.Edges {
		for j := range s.Edges[i].Props {
			s.Edges[i].Props[j].Required = false
		}
	}
	return s
}

// publishSchema stores the merged contract (when the merge changes the
// target's schema) and sets the intent to name it, expecting the target's
// schema: the merge commit is the schema change.
func (g *Graph) publishSchema(ctx context.Context, in mergeInput, intent *kernel.LineageIntent) error {
	if in.contract == nil {
		return nil
	}
	if _, err := g.k.PutSchema(ctx, in.contract); err != nil {
		return err
	}
	intent.ExpectSchema, intent.NewSchema = in.tgt.cat.contractID, in.cat.contractID
	return nil
}

func hasSchemaConflict(cs []MergeConflict) bool {
	for _, c := range cs {
		if c.Kind == merge.SchemaConflict {
			return true
		}
	}
	return false
}
