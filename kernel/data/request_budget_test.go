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

// requestLog runs f and returns its sequential rounds of requests, in
// order, each the classes of its requests joined by " + " (the requests
// of one objstore.PutMany batch share a round), and its request count.
func requestLog(t *testing.T, cs *counting.Store, f func()) (rounds []string, requests int) {
	t.Helper()
	cs.Reset()
	f()
	log, complete := cs.Log()
	if !complete {
		t.Fatal("counting log truncated")
	}
	for i, r := range log {
		if i > 0 && r.Round == log[i-1].Round {
			rounds[len(rounds)-1] += " + " + requestClass(r)
			continue
		}
		rounds = append(rounds, requestClass(r))
	}
	if uint64(len(rounds)) != cs.Rounds() {
		t.Fatalf("log has %d rounds, the store counted %d", len(rounds), cs.Rounds())
	}
	return rounds, len(log)
}

// TestCommitRequestBudget is the exact request gate of issue #32: a
// one-row insert (Begin, Insert, Commit) and a one-row update into a
// 1,000-row table, on a warm handle whose view of the branch is current,
// make exactly these requests, in this order: no head discovery (Begin
// floats on the handle's view, base.go; the commit, its write round and
// its publish build on it), no table-HEAD LIST and no sidecar (format 8:
// the table version is named per write attempt, so nothing before the
// publish can be mistaken for published state; kernel/write_named.go), no
// GET (what the previous commit wrote is cached as it was written,
// writethrough.go) and no index page or chunk (the inserted id rides the
// table version's id delta, iddelta.go; a fold every MaxIDDelta inserts
// is TestIDDeltaRidesTheVersion's). The insert's new fragment is small, so
// it rides its table version (format 9, embed.go): 3 requests, the
// physical floor of the issue (the data, the table version, the
// publish), the data inside the version and the commit index beside the
// manifest. The update rewrites the fragment holding the row (1,000 rows,
// past MaxEmbeddedFragmentBytes): an object, 4 requests. They go out in
// exactly these 2 sequential rounds: the fragment and the table version
// are independent (both garbage until the manifest pins them), so they
// are one batch (objstore.PutMany; kernel/write_batch.go), concurrent on
// a store that can (S3); the new commit's index, built from the handle's
// caches, rides the manifest's batch (kernel publishWrite): a deferred
// create the manifest names in After (on fs its sync rides the manifest's
// first round; on S3 the two go out at once), never a request of its own
// round.
// Format 11 (the default, case "riding"): the table version rides its
// manifest (docs/format.md "v10->v11"), so the insert is 2 requests in
// one round (the commit index and the manifest) and the update 3 (the
// rewritten fragment, then that batch). With versions as objects
// (NoRiding) the figures above hold; with embedding off too (the
// control) the insert is 4 requests again.
func TestCommitRequestBudget(t *testing.T) {
	defaultFragmentShapes(t, "it counts a one-row commit's requests with no fragment chunk written")
	// the lineage aid (stale until the manifest lands; repaired if a
	// crash or a failed write skips it) and the publish, at view+1 (no
	// head discovery: Begin floats on the view): one batch
	const publish = "put commit-index + put manifest"
	cases := []struct {
		name    string
		embed   bool
		riding  bool
		insert  []string // the row's table version named per attempt (create-only, cannot collide), then the publish
		inserts int
		update  []string
		updates int
	}{
		// format 11: the version rides the manifest, no request of its own
		{"riding", true, true, []string{publish}, 2, []string{"put fragment", publish}, 3},
		{"riding, fragments as objects", false, true, []string{"put fragment", publish}, 3, []string{"put fragment", publish}, 3},
		{"embedded", true, false, []string{"put table-version", publish}, 3, []string{"put fragment + put table-version", publish}, 4},
		{"objects", false, false, []string{"put fragment + put table-version", publish}, 4, []string{"put fragment + put table-version", publish}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.embed {
				objectFragments(t)
			}
			if !c.riding {
				versionsAsObjects(t)
			}
			commitBudget(t, c.insert, c.inserts, c.update, c.updates)
		})
	}
}

// commitBudget checks TestCommitRequestBudget's one-row inserts and
// updates against the rounds and request counts wanted.
func commitBudget(t *testing.T, insert []string, inserts int, update []string, updates int) {
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
	check := func(what string, got []string, requests int, want []string, wantRequests int) {
		t.Helper()
		t.Logf("%s: %d requests in %d rounds: %s", what, requests, len(got), strings.Join(got, ", ")) // go test -v prints the sequence
		if strings.Join(got, ", ") != strings.Join(want, ", ") || requests != wantRequests {
			t.Fatalf("%s: %d requests in %d rounds: %s\nwant %d in %d: %s", what, requests, len(got), strings.Join(got, ", "), wantRequests, len(want), strings.Join(want, ", "))
		}
	}
	for i := range 4 {
		rounds, requests := requestLog(t, cs, one(func(tx *Txn) error { return tx.Insert("Person", person(fmt.Sprintf("budget-%d", i), "n")) }))
		check(fmt.Sprintf("one-row insert %d", i), rounds, requests, insert, inserts)
		rounds, requests = requestLog(t, cs, one(func(tx *Txn) error { return tx.Update("Person", person(fmt.Sprintf("bulk-%05d", 100*i), "u")) }))
		check(fmt.Sprintf("one-row update %d", i), rounds, requests, update, updates)
		// format 13: a one-edge insert costs what a one-node insert does
		// (its rows ride the version's adjacency delta, adjdelta.go)
		rounds, requests = requestLog(t, cs, one(func(tx *Txn) error { return tx.Insert("Knows", edge(fmt.Sprintf("budget-k%d", i), "p1", "p3")) }))
		check(fmt.Sprintf("one-edge insert %d", i), rounds, requests, insert, inserts)
	}
}
