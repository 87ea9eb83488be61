package workload

import (
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The schema workload's feed check (schema-feed, docs/invariants.md 3b
// S12): in the quiet phase a consumer replays main's feed from the
// beginning across its schema changes (renames v <-> w, Person <-> Human
// and Knows <-> Links, @card changes,
// merges that bring f1's), with small pages so commits split, restarting
// twice from its last saved cursor. It holds the rows and the schema id;
// each schema change must come once per delivery of its commit, in the
// commit's first block, from the schema it holds; each delete's and
// update's Before must equal the row it holds (row changes in their
// commit's schema); no (commit, type, id) twice between restarts; at the
// end its rows equal main's head (feed-replay) and its schema is the
// head's.

// schemaFeedLimits are the consumer's page limits: a few changes a page.
var schemaFeedLimits = feed.Limits{MaxChanges: 3, MaxCommits: 4}

// schemaFeedRestarts is how many times the consumer drops its unsaved
// progress and resumes from its saved cursor (every schemaFeedRestartEvery
// pages).
const (
	schemaFeedRestarts     = 2
	schemaFeedRestartEvery = 5
)

// schemaFeedState is the consumer's persisted state.
type schemaFeedState struct {
	rows   check.Rows
	schema string
	cursor string
}

func (s schemaFeedState) clone() schemaFeedState {
	out := schemaFeedState{rows: check.Rows{}, schema: s.schema, cursor: s.cursor}
	for typ, rows := range s.rows { //detlint:ordered a copy
		m := make(map[string]data.Row, len(rows))
		for id, r := range rows { //detlint:ordered a copy
			m[id] = cloneRow(r)
		}
		out.rows[typ] = m
	}
	return out
}

func cloneRow(r data.Row) data.Row {
	props := make(map[string]any, len(r.Props))
	for k, v := range r.Props { //detlint:ordered a copy
		props[k] = v
	}
	r.Props = props
	return r
}

// checkSchemaFeed runs the consumer and reports its violations.
func checkSchemaFeed(p *Proc) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("schema feed: open", err)
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return p.readFailed("schema feed: branch", err)
	}
	genesis, err := g.Kernel().SnapshotAtVersion(ctx, ref, 0)
	if err != nil {
		return p.readFailed("schema feed: genesis", err)
	}
	head, err := g.SnapshotAt(ctx, ref)
	if err != nil {
		return p.readFailed("schema feed: head", err)
	}
	want, err := headRows(p, g)
	if err != nil {
		return p.readFailed("schema feed: head rows", err)
	}
	f := changefeed.New(g)
	state := schemaFeedState{rows: check.Rows{}, schema: genesis.SchemaHash()}
	saved, pos, seen, restarts := state.clone(), changefeed.Beginning(), map[string]bool{}, 0
	for n := 1; n <= maxFeedPolls; n++ {
		page, err := f.Poll(ctx, "main", pos, feed.Filter{}, schemaFeedLimits)
		if err != nil {
			return p.feedFailed("schema-feed", err)
		}
		for _, b := range page.Blocks {
			if v := state.apply(b, seen); v != "" {
				p.run.Violate(check.Violation{Check: "schema-feed", Detail: fmt.Sprintf("%s: %s", p.name, v)})
				return nil
			}
		}
		if page.Cursor != "" {
			state.cursor = page.Cursor
			saved = state.clone()
		}
		if page.CaughtUp {
			if state.schema != head.Kernel().SchemaHash() {
				p.run.Violate(check.Violation{Check: "schema-feed", Detail: fmt.Sprintf("%s: replayed to schema %.12s, head has %.12s", p.name, state.schema, head.Kernel().SchemaHash())})
			}
			for _, v := range check.FeedReplay(p.name+" (schema-feed)", "main", state.rows, want) {
				p.run.Violate(v)
			}
			return nil
		}
		pos = changefeed.FromToken(page.Cursor + page.PageToken)
		if restarts < schemaFeedRestarts && n%schemaFeedRestartEvery == 0 { // a restart: back to the saved cursor
			restarts++
			state, seen, pos = saved.clone(), map[string]bool{}, changefeed.Beginning()
			if state.cursor != "" {
				pos = changefeed.FromToken(state.cursor)
			}
		}
	}
	p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("%s: schema feed not caught up in %d polls", p.name, maxFeedPolls)})
	return nil
}

// apply applies one block and returns what broke the feed's rules ("" if
// nothing).
func (s *schemaFeedState) apply(b changefeed.Block, seen map[string]bool) string {
	if sc := b.Schema; sc != nil {
		if b.Continued || sc.From != s.schema {
			return fmt.Sprintf("commit %s: schema change %.12s -> %.12s in a block continued=%v, consumer at %.12s", b.Commit.ID, sc.From, sc.To, b.Continued, s.schema)
		}
		applySchemaSteps(s.rows, sc.Steps)
		s.schema = sc.To
	}
	for _, c := range b.Changes {
		key := fmt.Sprintf("%s/%s/%s", b.Commit.ID, c.Type, c.ID)
		if seen[key] {
			return key + " delivered twice"
		}
		seen[key] = true
		if c.Op != feed.OpInsert {
			held, ok := s.rows[c.Type][c.ID]
			if !ok || !data.RowsEqual(held, *c.Before) {
				return fmt.Sprintf("commit %s: %s %s %s: before %v, consumer holds %v (%v)", b.Commit.ID, c.Op, c.Type, c.ID, c.Before.Props, held.Props, ok)
			}
		}
		applyChange(s.rows, c)
	}
	return ""
}

// applySchemaSteps is what a consumer does with a schema change: renamed
// types and properties move, dropped properties and types go, added types
// start empty.
func applySchemaSteps(rows check.Rows, steps []schema.Step) {
	for _, st := range steps {
		switch st.Op {
		case schema.AddNode, schema.AddEdge:
			rows[st.Type] = map[string]data.Row{}
		case schema.DropType:
			delete(rows, st.Type)
		case schema.RenameType:
			rows[st.Type] = rows[st.From]
			delete(rows, st.From)
		case schema.RenameProp, schema.DropProp:
			for id, r := range rows[st.Type] { //detlint:ordered each row on its own
				r = cloneRow(r)
				if v, ok := r.Props[st.From]; ok && st.Op == schema.RenameProp {
					r.Props[st.Prop] = v
					delete(r.Props, st.From)
				}
				if st.Op == schema.DropProp {
					delete(r.Props, st.Prop)
				}
				rows[st.Type][id] = r
			}
		}
	}
}
