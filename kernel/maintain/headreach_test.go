package maintain

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestHeadReach: a live head's reach is taken from its head commit's index
// only when the index is complete and the manifest it names carries that
// commit (indexes are never authoritative); a commit-less head (a new
// branch's version 0) adds itself to its fork commit's reach.
func TestHeadReach(t *testing.T) {
	id := func(b byte) format.ID { return format.ID{b} }
	ref := func(b string, v uint64) format.ManifestRef {
		return format.ManifestRef{Branch: b, Incarnation: 1, Version: v}
	}
	withCommit := func(c byte) *format.Manifest { return &format.Manifest{Commit: &format.Commit{ID: id(c)}, Head: id(c)} }
	e := func(r format.ManifestRef, gen uint64) format.ReachEntry {
		return format.ReachEntry{ManifestRef: r, Gen: gen}
	}
	reach := []format.ReachEntry{e(ref("f", 2), 9), e(ref("main", 7), 8)}
	head := format.Manifest{Version: 2, Commit: &format.Commit{ID: id(1)}, Head: id(1)}
	fresh := format.Manifest{Version: 0, Head: id(9)}
	for _, tc := range []struct {
		name  string
		at    format.ManifestRef
		head  format.Manifest
		x     format.CommitIndex
		shown *format.Manifest
		want  []format.ReachEntry
		ok    bool
	}{
		{"head's own index", ref("f", 2), head, format.CommitIndex{ID: id(1), At: ref("f", 2), Complete: true, Reach: reach, Gen: 9}, &head, reach, true},
		{"incomplete", ref("f", 2), head, format.CommitIndex{ID: id(1), At: ref("f", 2), Reach: reach}, &head, nil, false},
		{"absent", ref("f", 2), head, format.CommitIndex{}, nil, nil, false},
		{"names another commit", ref("f", 2), head, format.CommitIndex{ID: id(2), At: ref("f", 2), Complete: true, Reach: reach, Gen: 9}, &head, nil, false},
		{"stale: slot holds another commit", ref("f", 2), head, format.CommitIndex{ID: id(1), At: ref("f", 3), Complete: true, Reach: reach, Gen: 9}, withCommit(5), nil, false},
		{"commit-less head", ref("g", 0), fresh, format.CommitIndex{ID: id(9), At: ref("main", 7), Complete: true, Reach: []format.ReachEntry{e(ref("main", 7), 8)}, Gen: 8},
			withCommit(9), []format.ReachEntry{e(ref("g", 0), 8), e(ref("main", 7), 8)}, true},
		{"commit-less head, fork commit not shown", ref("g", 0), fresh, format.CommitIndex{ID: id(9), At: ref("main", 7), Complete: true}, withCommit(8), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := headReach(tc.at, tc.head, tc.x, tc.shown)
			if ok != tc.ok || (ok && (!cmp.Equal(got.Explicit, tc.want) || got.At != tc.at)) {
				t.Fatalf("headReach = %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
