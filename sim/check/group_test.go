package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/model"
)

// groupMessage is a group commit's message as kernel/data writes it.
func groupMessage(tags ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "group commit of %d transactions", len(tags))
	for i, t := range tags {
		fmt.Fprintf(&b, "\n%d\tw\t%s", i, MessageFor(t))
	}
	return b.String()
}

// TestTagsOf pins how tags are read from commit messages: one for a plain
// commit, each member's in position order for a group commit, none for a
// message that is not the simulator's or a group message that does not
// match its header.
func TestTagsOf(t *testing.T) {
	cases := []struct {
		name, msg string
		want      []string
	}{
		{"plain", MessageFor("a.1"), []string{"a.1"}},
		{"group", groupMessage("a.1", "b.2", "c.3"), []string{"a.1", "b.2", "c.3"}},
		{"someone else's", "fix typo", nil},
		{"count mismatch", strings.Replace(groupMessage("a.1", "b.2"), "of 2", "of 3", 1), nil},
		{"position out of order", strings.Replace(groupMessage("a.1", "b.2"), "\n1\t", "\n0\t", 1), nil},
		{"member not ours", "group commit of 2 transactions\n0\tw\tsim:a.1\n1\tx\tfix typo", nil},
		{"a group of one", "group commit of 1 transactions\n0\tw\tsim:a.1", []string{"a.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TagsOf(tc.msg)
			if ok != (tc.want != nil) || strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("TagsOf = %v, %t; want %v", got, ok, tc.want)
			}
		})
	}
}

// TestCheckGroups pins each rule of CheckGroups with one observation
// that breaks it, and a clean set that breaks none.
func TestCheckGroups(t *testing.T) {
	idG, idP := format.ID{1}, format.ID{2}
	g := Graph{Incarnations: []Incarnation{{Key: "main#1", Manifests: []format.Manifest{
		{Version: 0, Commit: &format.Commit{Kind: format.KindGenesis}},
		{Version: 1, Commit: &format.Commit{ID: idG, Kind: format.KindCommit, Message: groupMessage("w.0", "w.1", "w.2")}},
		{Version: 2, Commit: &format.Commit{ID: idP, Kind: format.KindCommit, Message: MessageFor("w.3")}},
	}}}}
	ok := func(tag string, id format.ID, pos, size int) GroupObs {
		return GroupObs{Tag: tag, Class: Sound, Outcome: model.OK, Commit: id.String(), Position: pos, Size: size}
	}
	clean := []GroupObs{
		ok("w.0", idG, 0, 3), ok("w.1", idG, 1, 3),
		{Tag: "w.2", Class: Either, Outcome: model.Ambiguous, Unknown: true, Elapsed: 30 * time.Millisecond, FollowerLimit: 33 * time.Millisecond}, // stopped waiting: may be in the group
		ok("w.3", idP, 0, 1),
		{Tag: "w.4", Class: Unsound, Outcome: model.Failed, OwnFailure: true},
		{Tag: "w.5", Class: Either, Outcome: model.Failed, OwnFailure: true},
		{Tag: "w.6", Class: Sound, Outcome: model.Failed},                                                                                     // contention: not its own failure
		{Tag: "w.7", Class: Sound, Outcome: model.Failed, Waited: true, Elapsed: 33 * time.Millisecond, FollowerLimit: 33 * time.Millisecond}, // never taken
	}
	with := func(i int, f func(*GroupObs)) []GroupObs {
		out := append([]GroupObs(nil), clean...)
		f(&out[i])
		return out
	}
	cases := []struct {
		name string
		obs  []GroupObs
		want string // the check violated ("" none)
	}{
		{"clean", clean, ""},
		{"a sound member failed as its own", with(6, func(o *GroupObs) { o.OwnFailure = true }), "group-isolation"},
		{"an unsound member acknowledged", with(4, func(o *GroupObs) { *o = ok("w.4", idP, 0, 1); o.Class = Unsound }), "group-isolation"},
		{"wrong position", with(1, func(o *GroupObs) { o.Position = 2 }), "group-position"},
		{"wrong size", with(0, func(o *GroupObs) { o.Size = 2 }), "group-position"},
		{"wrong commit", with(3, func(o *GroupObs) { o.Commit = idG.String() }), "group-position"},
		{"ambiguity not shared", with(2, func(o *GroupObs) { o.Unknown, o.Shared = false, true }), "group-shared-ambiguity"},
		{"a taken follower waited too long", with(2, func(o *GroupObs) { o.Elapsed = 34 * time.Millisecond }), "group-follower-wait"},
		{"an untaken follower waited too long", with(7, func(o *GroupObs) { o.Elapsed = time.Second }), "group-follower-wait"},
		{"an untaken follower told ambiguous", with(7, func(o *GroupObs) { o.Outcome = model.Ambiguous }), "group-follower-wait"},
		{"a taken follower told definite", with(2, func(o *GroupObs) { o.Outcome = model.Failed }), "group-follower-wait"},
		{"unchecked bound", with(7, func(o *GroupObs) { o.Elapsed, o.FollowerLimit = time.Hour, 0 }), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs, cov := CheckGroups(g, tc.obs)
			if cov.Groups != 1 || cov.MaxSize != 3 {
				t.Fatalf("coverage %+v, want one group of 3", cov)
			}
			if tc.want == "" && len(vs) > 0 || tc.want != "" && (len(vs) != 1 || vs[0].Check != tc.want) {
				t.Fatalf("violations %v, want %q", vs, tc.want)
			}
		})
	}
}

// TestCheckCommitsReadsGroups pins that CheckCommits reads every member
// of a group commit: an acknowledged member is present, and a member that
// failed definitely but is listed is "failed-commit-visible".
func TestCheckCommitsReadsGroups(t *testing.T) {
	h := NewHistory(func() func() int64 { var n int64; return func() int64 { n++; return n } }())
	h.BeginCommit(1, "main#1", "w.0", nil).End(model.OK)
	h.BeginCommit(2, "main#1", "w.1", nil).End(model.Failed)
	g := Graph{Incarnations: []Incarnation{{Key: "main#1", Manifests: []format.Manifest{
		{Version: 0, Commit: &format.Commit{Kind: format.KindGenesis}},
		{Version: 1, Commit: &format.Commit{Kind: format.KindCommit, Message: groupMessage("w.0", "w.1")}},
	}}}}
	vs := CheckCommits(g, h)
	if len(vs) != 1 || vs[0].Check != "failed-commit-visible" || !strings.Contains(vs[0].Detail, "w.1") {
		t.Fatalf("violations %v, want w.1 failed-commit-visible only", vs)
	}
}
