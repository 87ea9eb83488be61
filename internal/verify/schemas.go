package verify

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Schema evolution: each manifest names its branch's schema, and a
// fragment is read through the schema of a manifest that pins it (every
// schema descended from the one that wrote it reads it: storage columns
// are never reused). Main's schema (v.sch, v.tables) is the fallback.

// schemaView is one schema and the storage view of its types.
type schemaView struct {
	sch    schema.Schema
	tables map[string]*data.Table
}

// viewOf returns the view of schema sum (main's when sum is empty, no
// data handle is open, or the schema does not load: checkSchema reports
// the contract itself).
func (v *verifier) viewOf(ctx context.Context, sum string) schemaView {
	main := schemaView{sch: v.sch, tables: v.tables}
	if sum == "" || v.g == nil || v.tables == nil {
		return main
	}
	if sv, ok := v.views[sum]; ok {
		return sv
	}
	sch, tables, err := v.g.SchemaTables(ctx, sum)
	if err != nil {
		return main
	}
	sv := schemaView{sch: sch, tables: tables}
	v.views[sum] = sv
	return sv
}

// tableIn returns the storage view of table under schema sum (nil: not a
// type of that schema).
func (v *verifier) tableIn(ctx context.Context, sum, table string) *data.Table {
	return v.viewOf(ctx, sum).tables[table]
}
