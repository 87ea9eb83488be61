package changefeed

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// SchemaChange is a schema change as the feed delivers it (docs/invariants.md
// 3b, S12): the commit (or the diff) changed the schema from From to To.
// It comes before the row changes of its commit, on the first page of the
// commit's block, and once: a page token that continues the commit does
// not repeat it (a consumer restarting from its last cursor sees the whole
// commit again, the event included: apply it only when the schema it holds
// is From). The row changes after it are expressed in To: a renamed
// property under its new name, a dropped property or type absent, an added
// property null. A property or type change that touched no row (a rename,
// a drop, an add) is not repeated as row changes: applying Steps to the
// rows held is what the consumer does. It is delivered whatever the
// filter selects: it says how to read what follows.
type SchemaChange struct {
	// From and To are the schema ids (the sha256 hex of the contracts)
	// before and after.
	From, To string
	// Steps is what changed (schema.Compare): added and dropped types,
	// added, dropped, renamed and loosened properties, re-bounded @card.
	// They apply in order, each naming types and properties as the steps
	// before it left them (a rename onto a dropped name follows the drop;
	// a swap goes through a temporary name). It is empty when the two
	// contracts differ only in columns no property uses (a merged schema's
	// retired columns).
	Steps []schema.Step
	// Schema is the schema after, with its storage columns.
	Schema schema.Schema
}

// SchemaChangeOf returns the schema change from snapshot from to snapshot
// to, nil when both have one schema.
func SchemaChangeOf(from, to *data.Snapshot) *SchemaChange {
	a, b := from.Kernel().SchemaHash(), to.Kernel().SchemaHash()
	if a == b {
		return nil
	}
	return &SchemaChange{From: a, To: b, Steps: schema.Compare(from.Schema(), to.Schema()), Schema: to.Schema()}
}

// CommitSchemaChange returns the schema change of commit id relative to
// its first parent (a merge commit's too), nil when it changed none.
func (f *Feed) CommitSchemaChange(ctx context.Context, id kernel.CommitID) (*SchemaChange, error) {
	_, s, err := f.commitSpan(ctx, id, feed.Filter{})
	if err != nil {
		return nil, gapOf(id.String(), err)
	}
	return s.schema, nil
}

// size is what the event counts against a page's MaxBytes: a fixed
// overhead, the two ids and each step as text (deterministic, so page
// boundaries are the same on every poll).
func (sc *SchemaChange) size() int {
	n := feed.ChangeSize("", sc.From+sc.To)
	for _, st := range sc.Steps {
		n += len(st.String())
	}
	return n
}
