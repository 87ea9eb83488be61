package kernel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Helpers of the v3 / migration tests (issue 6).

var mctx = context.Background()

// v3Root is the root the migration tests write their v3 fixtures at.
const v3Root = "graphs/v3"

var v3Keys = format.NewKeys(v3Root)

var v3Start = time.Date(2023, 3, 4, 5, 6, 7, 0, time.UTC)

// migEnv is a deterministic Env for one kernel handle.
func migEnv(seed uint64) kernel.Env {
	return kernel.Env{Clock: kernel.NewManualClock(v3Start.Add(time.Hour)), Entropy: migEntropy(seed)}
}

func migEntropy(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
		s[8+i] = 0x5a
	}
	return rand.NewChaCha8(s)
}

// migStores are the backends the migration tests run on.
var migStores = []struct {
	name string
	new  func(t testing.TB) objstore.Store
}{
	{"sim", func(t testing.TB) objstore.Store { return sim.New(sim.Config{Seed: 7}) }},
	{"fs", func(t testing.TB) objstore.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// v3Spec is the standard v3 history: main with a lost second write and a
// merge, feature forked from main with a stray commit (a head tie), idle
// forked from feature with no commit of its own, and enough main history
// after the forks that reads across a fork search for main's migration
// manifest.
func v3Spec(seed uint64) migrate.FixtureSpec {
	c := func(b, actor, msg string, tables ...string) migrate.FixtureOp {
		return migrate.FixtureOp{Kind: migrate.OpCommit, Branch: b, Actor: actor, Message: msg, Tables: tables}
	}
	ops := []migrate.FixtureOp{
		c("main", "ann", "a1", "a"),
		c("main", "bob", "b1", "b"),
		{Kind: migrate.OpFork, Branch: "feature", From: "main"},
		c("feature", "cat", "fa1", "a"),
		{Kind: migrate.OpCommit, Branch: "main", Actor: "ann", Message: "lost", Tables: []string{"a"}, LoseCommit: true},
		c("main", "dan", "b2", "b"),
		c("feature", "eve", "fb1", "b"),
		{Kind: migrate.OpMerge, Branch: "main", From: "feature", Actor: "ann", Message: "merge feature"},
		{Kind: migrate.OpStray, Branch: "feature", Actor: "zed", Message: "stray"},
		{Kind: migrate.OpFork, Branch: "idle", From: "feature"},
		c("feature", "cat", "fa2", "a"),
	}
	for i := range 11 {
		ops = append(ops, c("main", fmt.Sprintf("w%d", i), fmt.Sprintf("main %d", i), "b"))
	}
	return migrate.FixtureSpec{Schema: []byte(`{"tables":["a","b"]}`), Entropy: migEntropy(seed), Start: v3Start, Ops: ops}
}

func writeV3(t testing.TB, store objstore.Store, seed uint64) migrate.Fixture {
	t.Helper()
	fx, err := migrate.WriteV3Fixture(mctx, store, v3Root, v3Spec(seed))
	if err != nil {
		t.Fatalf("WriteV3Fixture: %v", err)
	}
	return fx
}

func fxBranch(t testing.TB, fx migrate.Fixture, name string) migrate.FixtureBranch {
	t.Helper()
	b, ok := fx.Branch(name)
	if !ok {
		t.Fatalf("fixture has no branch %q", name)
	}
	return b
}

// expectedLog is the history of branch name, newest first: its own legacy
// segment, then its source's at the fork (migrate.Fixture.History).
func expectedLog(t testing.TB, fx migrate.Fixture, name string) []kernel.CommitID {
	t.Helper()
	h, err := fx.History(name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// expectedMergeBase computes the merge base of two fixture heads from the
// fixture's own parents.
func expectedMergeBase(fx migrate.Fixture, a, b kernel.CommitID) kernel.CommitID {
	parents := map[format.ID][]format.ID{}
	for _, br := range fx.Branches {
		for _, c := range br.Commits {
			parents[c.ID] = c.Parents
		}
	}
	base, _ := lineage.MergeBase(parents, a, b)
	return base
}

func logIDs(t testing.TB, g *kernel.Graph, b kernel.BranchRef, pageSize int) []kernel.CommitID {
	t.Helper()
	return pageIDs(t, func(cur kernel.LogCursor) (kernel.LogPage, error) { return g.Log(mctx, b, cur, pageSize) })
}

// logFromIDs pages through LogFrom(id) with pages of pageSize.
func logFromIDs(t testing.TB, g *kernel.Graph, id kernel.CommitID, pageSize int) []kernel.CommitID {
	t.Helper()
	return pageIDs(t, func(cur kernel.LogCursor) (kernel.LogPage, error) { return g.LogFrom(mctx, id, cur, pageSize) })
}

// pageIDs follows a log's cursors to the end, collecting the commit ids.
func pageIDs(t testing.TB, page func(kernel.LogCursor) (kernel.LogPage, error)) []kernel.CommitID {
	t.Helper()
	var out []kernel.CommitID
	cur := kernel.LogCursor("")
	for i := 0; ; i++ {
		p, err := page(cur)
		if err != nil {
			t.Fatalf("log page at %q: %v", cur, err)
		}
		for _, c := range p.Commits {
			out = append(out, c.ID)
		}
		if p.Next == "" {
			return out
		}
		if i > 10000 {
			t.Fatal("log does not end")
		}
		cur = p.Next
	}
}

func sameIDs(a, b []kernel.CommitID) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// checkCommit compares a kernel commit with the legacy commit it projects.
func checkCommit(t testing.TB, got kernel.Commit, branch string, c format.LegacyCommit) {
	t.Helper()
	want := kernel.Commit{ID: c.ID, Parents: c.Parents, Kind: c.Kind(), Actor: c.Actor, Message: c.Message,
		Time: time.Unix(0, c.TimeUnixNano).UTC(), Branch: branch, Incarnation: 1, ManifestVersion: c.ManifestVersion}
	if len(want.Parents) == 0 {
		want.Parents = nil
	}
	if len(got.Parents) == 0 {
		got.Parents = nil
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("commit %s:\n got %+v\nwant %+v", c.ID, got, want)
	}
}

// checkLegacyHistory asserts that g reads exactly the fixture's lineage:
// every branch head, every log (paged, so legacy cursors are exercised),
// every commit with its ids, parents, actors and head, and the merge base.
func checkLegacyHistory(t testing.TB, g *kernel.Graph, fx migrate.Fixture) {
	t.Helper()
	for _, br := range fx.Branches {
		b, err := g.Branch(mctx, br.Name)
		if err != nil {
			t.Fatalf("Branch(%s): %v", br.Name, err)
		}
		head, err := g.Head(mctx, b)
		if err != nil || head.ID != br.Head {
			t.Fatalf("Head(%s) = %v, %v; want %s", br.Name, head.ID, err, br.Head)
		}
		want := expectedLog(t, fx, br.Name)
		for _, size := range []int{1, 3, 100} {
			if got := logIDs(t, g, b, size); !sameIDs(got, want) {
				t.Fatalf("Log(%s, page %d):\n got %v\nwant %v", br.Name, size, got, want)
			}
		}
		for k, id := range want { // the log from any of its commits is its tail
			if got := logFromIDs(t, g, id, 2); !sameIDs(got, want[k:]) {
				t.Fatalf("LogFrom(%s) on %s:\n got %v\nwant %v", id, br.Name, got, want[k:])
			}
		}
		for _, c := range br.Commits {
			got, err := g.Commit(mctx, c.ID)
			if err != nil {
				t.Fatalf("Commit(%s): %v", c.ID, err)
			}
			checkCommit(t, got, br.Name, c)
		}
	}
	main, feature := fxBranch(t, fx, "main"), fxBranch(t, fx, "feature")
	mb, err := g.MergeBase(mctx, mustRef(t, g, "main"), mustRef(t, g, "feature"))
	if want := expectedMergeBase(fx, main.Head, feature.Head); err != nil || mb.ID != want {
		t.Fatalf("MergeBase(main, feature) = %v, %v; want %s", mb.ID, err, want)
	}
}

func mustRef(t testing.TB, g *kernel.Graph, name string) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(mctx, name)
	if err != nil {
		t.Fatalf("Branch(%q): %v", name, err)
	}
	return b
}

// dumpHistory renders everything a reader can ask about the fixture's
// history, for comparing two handles (v3 as is vs. migrated).
func dumpHistory(t testing.TB, g *kernel.Graph, fx migrate.Fixture) string {
	t.Helper()
	var sb strings.Builder
	for _, br := range fx.Branches {
		b := mustRef(t, g, br.Name)
		page, err := g.Log(mctx, b, "", kernel.MaxLogLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Commits {
			fmt.Fprintf(&sb, "log %s %+v\n", br.Name, c)
		}
		s, err := g.SnapshotAt(mctx, b)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "snap %s head=%s tables=%+v\n", br.Name, s.Head(), s.Tables())
		for _, c := range br.Commits {
			s, err := g.SnapshotAtCommit(mctx, c.ID)
			if err != nil {
				t.Fatalf("SnapshotAtCommit(%s): %v", c.ID, err)
			}
			fmt.Fprintf(&sb, "snap@%s %s#%d v%d head=%s tables=%+v\n", c.ID, s.Branch(), s.Incarnation(), s.ManifestVersion(), s.Head(), s.Tables())
		}
	}
	names := []string{}
	for _, br := range fx.Branches {
		names = append(names, br.Name)
	}
	sort.Strings(names)
	for _, a := range names {
		for _, b := range names {
			mb, err := g.MergeBase(mctx, mustRef(t, g, a), mustRef(t, g, b))
			fmt.Fprintf(&sb, "mb %s %s %s %v\n", a, b, mb.ID, err)
		}
	}
	return sb.String()
}

// storeImage returns every key under prefix with its bytes.
func storeImage(t testing.TB, store objstore.Store, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	after := ""
	for {
		page, err := store.List(mctx, prefix, after, objstore.MaxListLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page.Keys {
			obj, err := store.Get(mctx, k)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = string(obj.Data)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return out
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

// imageDiff lists the keys added, removed or changed from a to b, sorted.
func imageDiff(a, b map[string]string) []string {
	var out []string
	for k, v := range b { //detlint:ordered sorted below
		if w, ok := a[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range a { //detlint:ordered sorted below
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// splitForkIndex separates the fork-index keys (flag and markers) from keys.
func splitForkIndex(keys []string) (rest, aids []string) {
	for _, k := range keys {
		if k == v3Keys.ForkIndexFlagKey() || strings.HasPrefix(k, v3Root+"/forks/") {
			aids = append(aids, k)
		} else {
			rest = append(rest, k)
		}
	}
	return rest, aids
}

// readManifest decodes the manifest stored at name's incarnation 1, version v.
func readManifest(t testing.TB, store objstore.Store, name string, v uint64) (format.Manifest, bool) {
	t.Helper()
	obj, err := store.Get(mctx, v3Keys.Manifest(name, 1, v))
	if err != nil {
		return format.Manifest{}, false
	}
	m, _, err := format.DecodeManifestAnyStamp(obj.Data)
	if err != nil {
		t.Fatalf("manifest %s v%d: %v", name, v, err)
	}
	return m, true
}

// newestVersion returns the newest manifest version of name#1.
func newestVersion(t testing.TB, store objstore.Store, name string) uint64 {
	t.Helper()
	page, err := store.List(mctx, v3Keys.IncarnationPrefix(name, 1), "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("list %s: %v", name, err)
	}
	_, v, err := v3Keys.ParseManifestKey(name, page.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// writeOn commits one new version of table a on branch name.
func writeOn(g *kernel.Graph, name, msg string) (kernel.Commit, error) {
	b, err := g.Branch(mctx, name)
	if err != nil {
		return kernel.Commit{}, err
	}
	return g.Write(mctx, b, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), msg), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "v4", Message: msg})
}
