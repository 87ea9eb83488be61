package workload

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/sim/check"
)

// TestSchemaFeedConsumerRules pins the schema-feed consumer's rules: a
// rename event moves the value; an event from another schema, an event in
// a continued block, an id twice in a commit and a Before that is not the
// held row are each reported.
func TestSchemaFeedConsumerRules(t *testing.T) {
	c1 := kernel.Commit{ID: kernel.CommitID{1}}
	rename := &changefeed.SchemaChange{From: "s0", To: "s1", Steps: []schema.Step{{Op: schema.RenameProp, Type: "Person", From: "v", Prop: "w"}}}
	row := func(v int64) *data.Row { return &data.Row{ID: "a", Props: map[string]any{"name": "a", "w": v}} }
	start := func() *schemaFeedState {
		return &schemaFeedState{schema: "s0", rows: check.Rows{"Person": {"a": {ID: "a", Props: map[string]any{"name": "a", "v": int64(1)}}}}}
	}
	s := start()
	if v := s.apply(changefeed.Block{Commit: c1, Schema: rename, Changes: []changefeed.Change{
		{Type: "Person", ID: "a", Op: feed.OpUpdate, Before: row(1), After: row(2)}}}, map[string]bool{}); v != "" || s.schema != "s1" ||
		s.rows["Person"]["a"].Props["w"] != int64(2) {
		t.Fatalf("rename then update: %q, %+v", v, s)
	}
	for name, tc := range map[string]struct {
		b    changefeed.Block
		want string
	}{
		"other schema": {changefeed.Block{Commit: c1, Schema: &changefeed.SchemaChange{From: "sx", To: "s1"}}, "consumer at s0"},
		"continued":    {changefeed.Block{Commit: c1, Schema: rename, Continued: true}, "continued=true"},
		"twice": {changefeed.Block{Commit: c1, Changes: []changefeed.Change{{Type: "Person", ID: "b", Op: feed.OpInsert, After: &data.Row{ID: "b"}},
			{Type: "Person", ID: "b", Op: feed.OpInsert, After: &data.Row{ID: "b"}}}}, "delivered twice"},
		"stale before": {changefeed.Block{Commit: c1, Changes: []changefeed.Change{{Type: "Person", ID: "a", Op: feed.OpUpdate, Before: row(1), After: row(2)}}}, "before"},
	} { //detlint:ordered independent cases
		if v := start().apply(tc.b, map[string]bool{}); !strings.Contains(v, tc.want) {
			t.Errorf("%s: %q, want %q", name, v, tc.want)
		}
	}
}
