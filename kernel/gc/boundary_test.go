package gc_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
)

// TestReachBoundary: a kept manifest holding its commit is on the
// boundary when a manifest its reach is rebuilt from is not kept: the
// one before it, its merged-from one, or (the one before it a branch's
// commit-less version 0) its fork source.
func TestReachBoundary(t *testing.T) {
	ref := func(b string, v uint64) format.ManifestRef {
		return format.ManifestRef{Branch: b, Incarnation: 1, Version: v}
	}
	id := format.ID{1}
	commit := func(v uint64, merged *format.ManifestRef) *format.Manifest {
		kind := format.KindCommit
		if merged != nil {
			kind = format.KindMerge
		}
		return &format.Manifest{Version: v, Head: id, Commit: &format.Commit{ID: id, Kind: kind, MergedFrom: merged}}
	}
	fromCh := ref("ch", 1)
	createB := &format.Manifest{Version: 0, Head: format.ID{2}, ForkOf: &format.ForkPoint{Branch: "main", Incarnation: 1, ManifestVersion: 3}}
	forkOf := func(at format.ManifestRef) (format.ManifestRef, bool) {
		if at == ref("b", 0) {
			return ref("main", 3), true
		}
		return format.ManifestRef{}, false
	}
	for _, tc := range []struct {
		name string
		at   format.ManifestRef
		m    *format.Manifest
		kept []format.ManifestRef
		want bool
	}{
		{"previous kept", ref("main", 5), commit(5, nil), []format.ManifestRef{ref("main", 4)}, false},
		{"previous deleted", ref("main", 5), commit(5, nil), nil, true},
		{"merged-from deleted", ref("main", 5), commit(5, &fromCh), []format.ManifestRef{ref("main", 4)}, true},
		{"merge inputs kept", ref("main", 5), commit(5, &fromCh), []format.ManifestRef{ref("main", 4), fromCh}, false},
		{"creation kept, fork source deleted", ref("b", 1), commit(1, nil), []format.ManifestRef{ref("b", 0)}, true},
		{"creation and fork source kept", ref("b", 1), commit(1, nil), []format.ManifestRef{ref("b", 0), ref("main", 3)}, false},
		{"genesis", ref("main", 0), commit(0, nil), nil, false},
		{"a commit-less creation itself", ref("b", 0), createB, nil, false},
	} {
		kept := func(at format.ManifestRef) bool {
			for _, k := range tc.kept {
				if k == at {
					return true
				}
			}
			return false
		}
		if got := gc.ReachBoundary(tc.at, tc.m, kept, forkOf); got != tc.want {
			t.Errorf("%s: ReachBoundary = %v, want %v", tc.name, got, tc.want)
		}
	}
}
