package check

import (
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// TestFeedReplayCatchesDifferences: the replay checker passes equal states
// and reports a missing row, an extra row and a row whose value differs
// only by null versus empty string.
func TestFeedReplayCatchesDifferences(t *testing.T) {
	row := func(id string, props map[string]any) data.Row { return data.Row{ID: id, Props: props} }
	head := Rows{"Person": {"a": row("a", map[string]any{"name": "A"}), "b": row("b", map[string]any{"name": ""})}}
	if v := FeedReplay("c", "main", head, head); len(v) != 0 {
		t.Fatalf("equal states: %v", v)
	}
	cases := []struct {
		name     string
		replayed Rows
		want     string
	}{
		{"missing", Rows{"Person": {"a": head["Person"]["a"]}}, "never replayed"},
		{"extra", Rows{"Person": {"a": head["Person"]["a"], "b": head["Person"]["b"], "c": row("c", nil)}}, "not at head"},
		{"null vs empty", Rows{"Person": {"a": head["Person"]["a"], "b": row("b", map[string]any{"name": nil})}}, "b (replayed"},
	}
	for _, c := range cases {
		v := FeedReplay("c", "main", c.replayed, head)
		if len(v) != 1 || v[0].Check != "feed-replay" || !strings.Contains(v[0].Detail, c.want) {
			t.Errorf("%s: %v", c.name, v)
		}
	}
}
