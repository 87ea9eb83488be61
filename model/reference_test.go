package model

import (
	"errors"
	"reflect"
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
	if tabs, _ := r.Tables("4m"); !reflect.DeepEqual(tabs, map[string]string{"t": "z"}) {
		t.Fatalf("merge tables %v", tabs)
	}
	if log, _ := r.Log("f"); !reflect.DeepEqual(log, []string{"2f", "1a", "0g"}) {
		t.Fatalf("log %v", log)
	}
	_ = r.CreateBranch("g", "f")
	if deps, err := r.DeleteBranch("f"); !errors.Is(err, ErrRefHasDependents) || !reflect.DeepEqual(deps, []string{"g"}) {
		t.Fatalf("delete with dependents: %v %v", deps, err)
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
	if !reflect.DeepEqual(r.Branches(), []string{"f", "h", "main"}) {
		t.Fatalf("branches %v", r.Branches())
	}
}
