package changefeed

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

func people(n int, prefix string) []data.Row {
	var rows []data.Row
	for i := range n {
		rows = append(rows, person(fmt.Sprintf("%s%02d", prefix, i), "x"))
	}
	return rows
}

// pollAll follows pages from pos to the cut, returning every block and the
// final cursor.
func pollAll(t testing.TB, f *Feed, b string, pos Position, lim feed.Limits) ([]Block, string) {
	t.Helper()
	var blocks []Block
	for pages := 0; pages < 10000; pages++ {
		p, err := f.Poll(ctx, b, pos, feed.Filter{}, lim)
		must(t, err)
		blocks = append(blocks, p.Blocks...)
		if (p.Cursor == "") == (p.PageToken == "") {
			t.Fatalf("page with cursor %q and page token %q", p.Cursor, p.PageToken)
		}
		if p.CaughtUp {
			return blocks, p.Cursor
		}
		pos = FromToken(p.Cursor + p.PageToken)
	}
	t.Fatal("no end of pages")
	return nil, ""
}

func blockIDs(blocks []Block) []string {
	var out []string
	for _, b := range blocks {
		var ids []string
		for _, c := range b.Changes {
			ids = append(ids, c.ID)
		}
		flag := ""
		if b.Continued {
			flag += "+"
		}
		if !b.Complete {
			flag += "..."
		}
		out = append(out, fmt.Sprintf("%s%s[%s]", b.Commit.Message, flag, strings.Join(ids, ",")))
	}
	return out
}

// TestPollSplitsACommitAcrossPages: a commit larger than a page is split,
// the pages in between carry page tokens (never a cursor), and the cursor
// moves only once the whole commit is delivered.
func TestPollSplitsACommitAcrossPages(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", people(7, "p")...) })
	p1, err := f.Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{MaxChanges: 3})
	must(t, err)
	if p1.Cursor != "" || p1.PageToken == "" || len(p1.Blocks) != 2 || p1.Blocks[1].Complete || len(p1.Blocks[1].Changes) != 3 {
		t.Fatalf("first page %v cursor=%q", blockIDs(p1.Blocks), p1.Cursor)
	}
	tok, err := feed.Decode(p1.PageToken)
	must(t, err)
	if tok.Last.Commit != feed.ID(firstCommit(t, g)) {
		t.Fatal("the page token's cursor moved past the genesis only")
	}
	rest, _ := pollAll(t, f, "main", FromToken(p1.PageToken), feed.Limits{MaxChanges: 3})
	want := []string{"commit on main+...[p03,p04,p05]", "commit on main+[p06]"}
	if d := cmp.Diff(want, blockIDs(rest)); d != "" {
		t.Fatalf("rest (-want +got):\n%s", d)
	}
}

// TestOversizeChangeGoesAlone: a change larger than the byte limit goes out
// alone on its own page, and the feed moves on.
func TestOversizeChangeGoesAlone(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	big := data.Row{ID: "p01", Props: map[string]any{"name": strings.Repeat("n", 4000)}}
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("p00", "a"), big, person("p02", "b")) })
	blocks, _ := pollAll(t, f, "main", Beginning(), feed.Limits{MaxBytes: 200})
	want := []string{"genesis[]", "commit on main...[p00]", "commit on main+...[p01]", "commit on main+[p02]"}
	if d := cmp.Diff(want, blockIDs(blocks)); d != "" {
		t.Fatalf("blocks (-want +got):\n%s", d)
	}
}

// TestResumeInANewProcess: a page token taken mid-commit and a cursor
// taken at a boundary both resume on a fresh handle of the graph (a new
// process) with exactly the rest of the feed.
func TestResumeInANewProcess(t *testing.T) {
	store := newStore()
	g := initGraph(t, store, "g")
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", people(5, "a")...) })
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", people(2, "b")...) })
	lim := feed.Limits{MaxChanges: 2}
	all, _ := pollAll(t, New(g), "main", Beginning(), lim)
	p, err := New(g).Poll(ctx, "main", Beginning(), feed.Filter{}, lim)
	must(t, err)
	if p.PageToken == "" {
		t.Fatal("expected a page ending mid-commit")
	}
	g2 := openGraph(t, store, "g", 2)
	rest, cursor := pollAll(t, New(g2), "main", FromToken(p.PageToken), lim)
	if d := cmp.Diff(blockIDs(all), append(blockIDs(p.Blocks), blockIDs(rest)...)); d != "" {
		t.Fatalf("resumed feed (-whole +resumed):\n%s", d)
	}
	c := commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Delete("Person", "a00") })
	g3 := openGraph(t, store, "g", 3)
	more, _ := pollAll(t, New(g3), "main", FromToken(cursor), lim)
	if len(more) != 1 || more[0].Commit.ID != c.ID || more[0].Changes[0].Op != feed.OpDelete {
		t.Fatalf("after the cursor: %v", blockIDs(more))
	}
	now, err := New(g3).Poll(ctx, "main", Now(), feed.Filter{}, lim)
	must(t, err)
	if len(now.Blocks) != 0 || !now.CaughtUp {
		t.Fatalf("now: %+v", now)
	}
	if empty, _ := pollAll(t, New(g3), "main", FromToken(now.Cursor), lim); len(empty) != 0 {
		t.Fatalf("after now: %v", blockIDs(empty))
	}
}

// TestForkedBranchChain: a branch's feed from the beginning runs through
// the history it was forked from (up to the fork point only), then its own
// commits; a branch created from a branch that has no commits of its own
// forks at the first branch's source commit.
func TestForkedBranchChain(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	k := g.Kernel()
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("m1", "x")) })
	_, err := k.CreateBranch(ctx, "a", branch(t, g, "main"))
	must(t, err)
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("m2", "x")) })
	_, err = k.CreateBranch(ctx, "b", branch(t, g, "a"))
	must(t, err)
	commitOn(t, g, "b", func(tx *data.Txn) error { return tx.Insert("Person", person("b1", "x")) })
	blocks, _ := pollAll(t, New(g), "b", Beginning(), feed.Limits{})
	want := []string{"genesis[]", "commit on main[m1]", "commit on b[b1]"}
	if d := cmp.Diff(want, blockIDs(blocks)); d != "" {
		t.Fatalf("b's chain (-want +got):\n%s", d)
	}
}

// TestCursorsAreRefusedTyped: a token of another graph, another branch,
// another filter, or forged, is *feed.CursorError; one of a deleted or
// re-created branch is feed.ErrBranchChanged.
func TestCursorsAreRefusedTyped(t *testing.T) {
	store := newStore()
	g := initGraph(t, store, "g")
	other := initGraphSeed(t, store, "other", 99)
	k := g.Kernel()
	f := New(g)
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("m1", "x")) })
	_, err := k.CreateBranch(ctx, "dev", branch(t, g, "main"))
	must(t, err)
	commitOn(t, g, "dev", func(tx *data.Txn) error { return tx.Insert("Person", person("d1", "x")) })
	_, mainCur := pollAll(t, f, "main", Beginning(), feed.Limits{})
	_, devCur := pollAll(t, f, "dev", Beginning(), feed.Limits{})
	_, otherCur := pollAll(t, New(other), "main", Beginning(), feed.Limits{})
	forged := forge(t, mainCur, func(tok *feed.Token) { tok.Last.Version++ })
	// A forged commit id with a matching position: the commit is not there.
	forgedID := forge(t, mainCur, func(tok *feed.Token) { tok.Last.Commit[15]++ })

	bad := []struct {
		name   string
		branch string
		tok    string
		filter feed.Filter
		want   feed.CursorProblem
	}{
		{"another graph", "main", otherCur, feed.Filter{}, feed.ForeignGraph},
		{"another branch", "main", devCur, feed.Filter{}, feed.ForeignBranch},
		{"another filter", "main", mainCur, feed.Filter{Types: []string{"Person"}}, feed.ForeignFilter},
		{"forged position", "main", forged, feed.Filter{}, feed.NotOnChain},
		{"forged commit", "main", forgedID, feed.Filter{}, feed.NotOnChain},
		{"malformed", "main", "x" + mainCur, feed.Filter{}, feed.Malformed},
	}
	for _, c := range bad {
		_, err := f.Poll(ctx, c.branch, FromToken(c.tok), c.filter, feed.Limits{})
		var ce *feed.CursorError
		if !errors.As(err, &ce) || ce.Problem != c.want || !errors.Is(err, feed.ErrBadCursor) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	devHead, err := k.Head(ctx, branch(t, g, "dev"))
	must(t, err)
	if _, err := f.Poll(ctx, "main", AfterCommit(devHead.ID), feed.Filter{}, feed.Limits{}); !errors.Is(err, feed.ErrBadCursor) {
		t.Errorf("after a commit of another branch: %v", err)
	}
	must(t, k.DeleteBranch(ctx, "dev"))
	if _, err := f.Poll(ctx, "dev", FromToken(devCur), feed.Filter{}, feed.Limits{}); !errors.Is(err, feed.ErrBranchChanged) {
		t.Errorf("deleted branch: %v", err)
	}
	_, err = k.CreateBranch(ctx, "dev", branch(t, g, "main"))
	must(t, err)
	if _, err := f.Poll(ctx, "dev", FromToken(devCur), feed.Filter{}, feed.Limits{}); !errors.Is(err, feed.ErrBranchChanged) || errors.Is(err, feed.ErrBadCursor) {
		t.Errorf("re-created branch: %v", err)
	}
}

// forge edits a token and re-signs it (the checksum is not a secret).
func forge(t *testing.T, s string, edit func(*feed.Token)) string {
	t.Helper()
	tok, err := feed.Decode(s)
	must(t, err)
	edit(&tok)
	return tok.Encode()
}

// TestPollCommitLimitAndCaughtUp: a page holds at most MaxCommits blocks
// and ends at a boundary; CaughtUp is set only once the head (as of the
// poll's start) is delivered; a zero Position and out-of-range limits are
// refused.
func TestPollCommitLimitAndCaughtUp(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	f := New(g)
	for i := range 4 {
		commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("p%d", i), "x")) })
	}
	p, err := f.Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{MaxCommits: 2})
	must(t, err)
	if len(p.Blocks) != 2 || p.CaughtUp || p.Cursor == "" {
		t.Fatalf("first page: %v caught-up=%v", blockIDs(p.Blocks), p.CaughtUp)
	}
	p, err = f.Poll(ctx, "main", FromToken(p.Cursor), feed.Filter{}, feed.Limits{MaxCommits: 3})
	must(t, err)
	if len(p.Blocks) != 3 || !p.CaughtUp || p.Blocks[2].Changes[0].ID != "p3" {
		t.Fatalf("second page: %v caught-up=%v", blockIDs(p.Blocks), p.CaughtUp)
	}
	if _, err := f.Poll(ctx, "main", Position{}, feed.Filter{}, feed.Limits{}); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("zero position: %v", err)
	}
	if _, err := f.Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{MaxChanges: feed.HardMaxChanges + 1}); err == nil {
		t.Fatal("limit above the hard maximum accepted")
	}
	if _, err := f.Poll(ctx, "nope", Beginning(), feed.Filter{}, feed.Limits{}); !errors.Is(err, kernel.ErrBranchNotFound) {
		t.Fatalf("missing branch: %v", err)
	}
}

// TestPageEndsAtBoundaryWhenNextCommitDoesNotFit: when not one change of
// the next commit fits after the commits already on the page, the page
// ends at their boundary with a cursor, not with an empty partial block.
func TestPageEndsAtBoundaryWhenNextCommitDoesNotFit(t *testing.T) {
	g := initGraph(t, newStore(), "g")
	commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("a", "x")) })
	commitOn(t, g, "main", func(tx *data.Txn) error {
		return tx.Insert("Person", data.Row{ID: "b", Props: map[string]any{"name": strings.Repeat("y", 300)}})
	})
	p, err := New(g).Poll(ctx, "main", Beginning(), feed.Filter{}, feed.Limits{MaxBytes: 200})
	must(t, err)
	if d := cmp.Diff([]string{"genesis[]", "commit on main[a]"}, blockIDs(p.Blocks)); d != "" || p.Cursor == "" {
		t.Fatalf("page (-want +got):\n%s cursor=%q", d, p.Cursor)
	}
	rest, _ := pollAll(t, New(g), "main", FromToken(p.Cursor), feed.Limits{MaxBytes: 200})
	if d := cmp.Diff([]string{"commit on main[b]"}, blockIDs(rest)); d != "" {
		t.Fatalf("rest (-want +got):\n%s", d)
	}
}

// TestFollowsOnChain: a block is delivered only if its commit's first
// parent is the commit delivered before it (none for the genesis).
func TestFollowsOnChain(t *testing.T) {
	a, b := kernel.CommitID{1}, kernel.CommitID{2}
	at := func(id kernel.CommitID) feed.Point {
		return feed.Point{Commit: feed.ID(id), Branch: "main", Incarnation: 1}
	}
	cases := []struct {
		name string
		c    kernel.Commit
		last feed.Point
		ok   bool
	}{
		{"genesis first", kernel.Commit{ID: a}, feed.Point{}, true},
		{"child of last", kernel.Commit{ID: b, Parents: []kernel.CommitID{a}}, at(a), true},
		{"merge, first parent last", kernel.Commit{ID: b, Parents: []kernel.CommitID{a, {9}}}, at(a), true},
		{"merged parent is not first", kernel.Commit{ID: b, Parents: []kernel.CommitID{{9}, a}}, at(a), false},
		{"parentless after a commit", kernel.Commit{ID: b}, at(a), false},
		{"a child first", kernel.Commit{ID: b, Parents: []kernel.CommitID{a}}, feed.Point{}, false},
	}
	for _, c := range cases {
		err := followsOnChain(c.c, c.last)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, kernel.ErrCorrupt)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
