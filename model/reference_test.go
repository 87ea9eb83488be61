package model

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"testing"
)

// The reference model follows the documented rules on a hand-checked story.
func TestReferenceStory(t *testing.T) {
	r := NewReference("0g")
	if err := r.CommitOn("main", "1a", map[string]string{"t": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := r.CreateBranch("f", "main"); err != nil {
		t.Fatal(err)
	}
	if err := r.CreateBranch("f", "main"); !errors.Is(err, ErrRefExists) {
		t.Fatalf("re-create: %v", err)
	}
	for _, bad := range []string{"", ".x", "-x", "a/b"} {
		if err := r.CreateBranch(bad, "main"); !errors.Is(err, ErrRefInvalidName) {
			t.Fatalf("create %q: %v", bad, err)
		}
	}
	if err := r.CreateBranch("main", "f"); !errors.Is(err, ErrRefExists) {
		t.Fatalf("create main: %v", err)
	}
	if _, err := r.DeleteBranch("main"); !errors.Is(err, ErrRefProtected) {
		t.Fatalf("delete main: %v", err)
	}
	_ = r.CommitOn("f", "2f", map[string]string{"u": "y"})
	_ = r.CommitOn("main", "3m", map[string]string{"t": "z"})
	if base, _ := r.MergeBase("main", "f"); base != "1a" {
		t.Fatalf("base %s", base)
	}
	if err := r.Merge("main", "4m", "2f"); err != nil {
		t.Fatal(err)
	}
	if base, _ := r.MergeBase("main", "f"); base != "2f" {
		t.Fatalf("base after merge %s", base)
	}
	if base, _ := r.MergeBase("f", "f"); base != "2f" {
		t.Fatalf("self base %s", base)
	}
	if tabs, _ := r.Tables("4m"); !cmp.Equal(tabs, map[string]string{"t": "z"}) {
		t.Fatalf("merge tables %v\ndiff (-tabs +map[string]string{'t': 'z'}):\n%s", tabs, cmp.Diff(tabs, map[string]string{"t": "z"}))
	}
	if log, _ := r.Log("f"); !cmp.Equal(log, []string{"2f", "1a", "0g"}) {
		t.Fatalf("log %v\ndiff (-log +[]string{'2f', '1a', '0g'}):\n%s", log, cmp.Diff(log, []string{"2f", "1a", "0g"}))
	}
	_ = r.CreateBranch("g", "f")
	if deps, err := r.DeleteBranch("f"); !errors.Is(err, ErrRefHasDependents) || !cmp.Equal(deps, []string{"g"}) {
		t.Fatalf("delete with dependents: %v %v\ndiff (-deps +[]string{'g'}):\n%s", deps, err, cmp.Diff(deps, []string{"g"}))
	}
	_ = r.CreateBranchAt("h", "0g") // forked from main's incarnation, not f's
	if _, err := r.DeleteBranch("g"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeleteBranch("f"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head("f"); !errors.Is(err, ErrRefNoBranch) {
		t.Fatalf("deleted head: %v", err)
	}
	_ = r.CreateBranch("f", "main")
	if inc, _ := r.IncarnationOf("f"); inc.N != 2 {
		t.Fatalf("incarnation %v", inc)
	}
	if tabs, err := r.Tables("2f"); err != nil || tabs["u"] != "y" {
		t.Fatalf("deleted branch's commit: %v %v", tabs, err)
	}
	if !cmp.Equal(r.Branches(), []string{"f", "h", "main"}) {
		t.Fatalf("branches %v\ndiff (-r.Branches() +[]string{'f', 'h', 'main'}):\n%s", r.Branches(), cmp.Diff(r.Branches(), []string{"f", "h", "main"}))
	}
}
