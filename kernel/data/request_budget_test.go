package data

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// requestClass names what a logged request touches, by key prefix under
// testRoot: "list branch", "put manifest", "get idindex", ...
func requestClass(r counting.Record) string {
	key := strings.TrimPrefix(r.Key, testRoot+"/")
	kinds := []struct{ prefix, name string }{
		{"branches/", "manifest"}, {"sidecars/", "sidecar"}, {"tables/", "table-version"},
		{"data/", "fragment"}, {"adj/", "index-page"}, {"index/commits/", "commit-index"},
	}
	for _, k := range kinds {
		if strings.HasPrefix(key, k.prefix) {
			return fmt.Sprintf("%s %s", r.Op, k.name)
		}
	}
	return fmt.Sprintf("%s %s", r.Op, key)
}

// requestLog runs f and returns the classes of the requests it made, in order.
func requestLog(t *testing.T, cs *counting.Store, f func()) []string {
	t.Helper()
	cs.Reset()
	f()
	log, complete := cs.Log()
	if !complete {
		t.Fatal("counting log truncated")
	}
	out := make([]string, len(log))
	for i, r := range log {
		out[i] = requestClass(r)
	}
	return out
}

// controlPlane drops the data-plane requests (fragments and index pages,
// whose number follows the table's layout: merges of small fragments,
// index page splits) from a request log.
func controlPlane(log []string) []string {
	var out []string
	for _, c := range log {
		if !strings.HasSuffix(c, " fragment") && !strings.HasSuffix(c, " index-page") {
			out = append(out, c)
		}
	}
	return out
}

// TestCommitRequestBudget is the exact request gate of issue #32: a
// one-row insert (Begin, Insert, Commit) and a one-row update into a
// 1,000-row table, on a warm handle whose view of the branch is current,
// make exactly these control-plane requests, in this order, plus exactly
// one fragment PUT: one head discovery (Begin's LIST; the commit, its
// write round and its publish build on the handle's view), no sidecar
// LIST (a heal sweep runs only when a table HEAD is found above its pin)
// and no LIST before the publish; and no GET at all: what the previous
// commit wrote (the tail fragment a small insert merges with, the id page
// and chunk it rewrites) is cached as it was written (writethrough.go).
// The index-page writes around it are counted by BenchmarkInsertCost
// (docs/perf.md).
func TestCommitRequestBudget(t *testing.T) {
	want := []string{
		"list manifest",      // Begin: the one head discovery
		"list table-version", // the table HEAD
		"put sidecar",        // recovery: durable before the table HEAD moves
		"put table-version",  // HEAD+1
		"put commit-index",   // the lineage aid, before the manifest
		"put manifest",       // the publish, at view+1
		"delete sidecar",
	}
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	br := mainRef(t, g)
	commitTx(t, g, func(tx *Txn) error {
		rows := make([]Row, 1000)
		for i := range rows {
			rows[i] = person(fmt.Sprintf("bulk-%05d", i), "n")
		}
		return tx.Insert("Person", rows...)
	})
	one := func(f func(tx *Txn) error) func() {
		return func() {
			tx, err := g.Begin(ctx, br)
			must(t, err)
			must(t, f(tx))
			_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "budget"})
			must(t, err)
		}
	}
	check := func(what string, got []string) {
		t.Helper()
		t.Logf("%s: %d requests: %s", what, len(got), strings.Join(got, ", ")) // go test -v prints the sequence
		cp := controlPlane(got)
		if strings.Join(cp, ", ") != strings.Join(want, ", ") || countOf(got, "put fragment") != 1 || gets(got) != 0 {
			t.Fatalf("%s: %d requests: %s\nwant control plane: %s, one fragment PUT and no GET", what, len(got), strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
	for i := range 4 {
		check(fmt.Sprintf("one-row insert %d", i),
			requestLog(t, cs, one(func(tx *Txn) error { return tx.Insert("Person", person(fmt.Sprintf("budget-%d", i), "n")) })))
		check(fmt.Sprintf("one-row update %d", i),
			requestLog(t, cs, one(func(tx *Txn) error { return tx.Update("Person", person(fmt.Sprintf("bulk-%05d", 100*i), "u")) })))
	}
}

func countOf(log []string, class string) int {
	n := 0
	for _, c := range log {
		if c == class {
			n++
		}
	}
	return n
}

// gets counts the GETs of any class in a request log.
func gets(log []string) int {
	n := 0
	for _, c := range log {
		if strings.HasPrefix(c, "get ") {
			n++
		}
	}
	return n
}
