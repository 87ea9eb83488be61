package check

import (
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// Rows is a replayed or read graph state: type -> id -> row.
type Rows map[string]map[string]data.Row

// FeedReplay checks the change feed's replay property: the state a feed
// consumer built by applying a branch's feed (from the beginning, across
// its crashes and resumes from saved cursors) equals the branch head's
// rows exactly (data.RowsEqual: null, empty string and empty bytes
// distinct). It reports at most a few differing ids per type.
func FeedReplay(consumer, branch string, replayed, head Rows) []Violation {
	var out []Violation
	for _, typ := range typeNames(replayed, head) {
		var diffs []string
		for _, id := range idsOf(replayed[typ], head[typ]) {
			r, inR := replayed[typ][id]
			h, inH := head[typ][id]
			switch {
			case inR && !inH:
				diffs = append(diffs, id+" (replayed, not at head)")
			case !inR && inH:
				diffs = append(diffs, id+" (at head, never replayed)")
			case !data.RowsEqual(r, h):
				diffs = append(diffs, fmt.Sprintf("%s (replayed %v, head %v)", id, r.Props, h.Props))
			}
		}
		if len(diffs) > 0 {
			out = append(out, Violation{Check: "feed-replay", Detail: fmt.Sprintf(
				"%s: replaying %s's feed differs from its head in %s at %d ids: %v", consumer, branch, typ, len(diffs), diffs[:min(len(diffs), 4)])})
		}
	}
	return out
}

func typeNames(a, b Rows) []string {
	set := map[string]bool{}
	for k := range a { //detlint:ordered collected into a set, sorted next
		set[k] = true
	}
	for k := range b { //detlint:ordered collected into a set, sorted next
		set[k] = true
	}
	return sortedSet(set)
}

func idsOf(a, b map[string]data.Row) []string {
	set := map[string]bool{}
	for k := range a { //detlint:ordered collected into a set, sorted next
		set[k] = true
	}
	for k := range b { //detlint:ordered collected into a set, sorted next
		set[k] = true
	}
	return sortedSet(set)
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set { //detlint:ordered sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
