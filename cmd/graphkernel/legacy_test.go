package main

import (
	"context"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// TestVerifyLegacyHistory: a format-3 history (manifests without lineage,
// lost second writes, a fork and a merge), then migrated by a read-write
// open and committed on, verifies clean: the successor rules apply from
// format 4 on, and log reads the folded lineage.
func TestVerifyLegacyHistory(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "sim")
	s, err := schema.Parse([]byte("node Person {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	contract, _ := s.Contract()
	spec := migrate.FixtureSpec{Schema: contract, Entropy: f.env.Entropy, Start: time.Unix(1_700_000_000, 0), Ops: []migrate.FixtureOp{
		{Kind: migrate.OpCommit, Branch: "main", Actor: "ann", Message: "a1", Tables: []string{"a"}},
		{Kind: migrate.OpFork, Branch: "feature", From: "main"},
		{Kind: migrate.OpCommit, Branch: "feature", Actor: "cat", Message: "f1", Tables: []string{"a", "b"}},
		{Kind: migrate.OpCommit, Branch: "main", Actor: "bob", Message: "lost", Tables: []string{"a"}, LoseCommit: true},
		{Kind: migrate.OpMerge, Branch: "main", From: "feature", Actor: "ann", Message: "merge"},
	}}
	if _, err := migrate.WriteV3Fixture(ctx, f.store, testRoot, spec); err != nil {
		t.Fatal(err)
	}
	if code, r := f.verify(); code != 0 {
		t.Fatalf("v3 graph: exit %d, %+v", code, r.Problems)
	}
	g, err := kernel.Open(ctx, f.store, testRoot, kernel.Options{Env: f.env}) // migrates main
	if err != nil {
		t.Fatal(err)
	}
	main, _ := g.Branch(ctx, "main")
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "v4", Message: "after the fold"}, nil); err != nil {
		t.Fatal(err)
	}
	if code, r := f.verify(); code != 0 {
		t.Fatalf("migrated graph: exit %d, %+v", code, r.Problems)
	}
	var log []commitJSON
	decodeJSON(t, f.mustRun(0, "log", f.spec, testRoot, "--json"), &log)
	if len(log) < 3 || log[0].Message != "after the fold" || log[1].Message != "merge" {
		t.Fatalf("log: %+v", log)
	}
}
