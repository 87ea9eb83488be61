package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// diffDoc is the --json document of diff and changes.
type diffDoc struct {
	From      snapJSON     `json:"from"`
	To        snapJSON     `json:"to"`
	Commit    commitJSON   `json:"commit"`
	Changes   []changeJSON `json:"changes"`
	Count     int64        `json:"count"`
	Truncated bool         `json:"truncated"`
}

// editGraph adds to buildGraph's history two commits on main: "edit"
// (main@4) updates a node, inserts an edge and moves an edge's endpoint;
// "prune" (main@5) deletes a node and an edge.
func (f *fixture) editGraph(g *data.Graph) {
	f.t.Helper()
	f.commit(g, "main", "edit", func(tx *data.Txn) error {
		if err := tx.Upsert("Person", person("p1", "Anne")); err != nil {
			return err
		}
		if err := tx.Insert("Knows", edgeRow("k3", "p4", "p1")); err != nil {
			return err
		}
		return tx.Upsert("WorksAt", edgeRow("w1", "p2", "c1"))
	})
	f.commit(g, "main", "prune", func(tx *data.Txn) error {
		if err := tx.Delete("Knows", "k2"); err != nil {
			return err
		}
		return tx.Delete("Person", "p3")
	})
}

// summary renders changes as "op type id" lines, for comparisons.
func summary(cs []changeJSON) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Op + " " + c.Type + " " + c.ID + "\n")
	}
	return b.String()
}

func (f *fixture) diffJSON(args ...string) diffDoc {
	f.t.Helper()
	var d diffDoc
	decodeJSON(f.t, f.mustRun(0, append(args, "--json")...), &d)
	if d.Count != int64(len(d.Changes)) {
		f.t.Fatalf("%q: count %d, %d changes", args, d.Count, len(d.Changes))
	}
	return d
}

// TestDiff: diff prints every change between two refs (any branches) in
// the feed's order, with edge endpoints and an update's changed properties
// (endpoint moves too), honours --type, --op and --limit (saying whether
// it cut), and writes nothing.
func TestDiff(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph()
			f.editGraph(g)
			before := f.store.Writes()

			d := f.diffJSON("diff", f.spec, testRoot, "main@3", "main")
			want := "update Person p1\ndelete Person p3\ndelete Knows k2\ninsert Knows k3\nupdate WorksAt w1\n"
			if got := summary(d.Changes); got != want || d.Truncated || d.From.ManifestVersion != 3 || d.To.ManifestVersion != 5 {
				t.Fatalf("diff main@3 main:\n%s\nwant:\n%s(%+v)", got, want, d)
			}
			p1, p3, k2, k3, w1 := d.Changes[0], d.Changes[1], d.Changes[2], d.Changes[3], d.Changes[4]
			if len(p1.Changed) != 1 || p1.Changed[0] != (propChange{"name", "Ann", "Anne"}) || p1.Props != nil {
				t.Errorf("update p1: %+v", p1)
			}
			if p3.Props["name"] != "Cy" || p3.Edge {
				t.Errorf("delete p3 carries the deleted row: %+v", p3)
			}
			if !k2.Edge || k2.From != "p2" || k2.To != "p3" || k3.From != "p4" || k3.To != "p1" {
				t.Errorf("edge endpoints: %+v %+v", k2, k3)
			}
			if len(w1.Changed) != 1 || w1.Changed[0] != (propChange{"from", "p1", "p2"}) || w1.From != "p2" {
				t.Errorf("endpoint move: %+v", w1)
			}

			text := f.mustRun(0, "diff", f.spec, testRoot, "main@3", "main")
			for _, line := range []string{
				`update Person p1 name: "Ann" -> "Anne"`, `delete Person p3 name="Cy"`,
				"delete Knows k2 (p2 -> p3)", "insert Knows k3 (p4 -> p1)",
				`update WorksAt w1 (p2 -> c1) from: "p1" -> "p2"`, "5 change(s)",
			} {
				if !strings.Contains(text, line+"\n") {
					t.Errorf("diff text lacks %q:\n%s", line, text)
				}
			}

			for _, tc := range []struct {
				args      []string
				want      string
				truncated bool
			}{
				{[]string{"--type", "Knows", "--op", "delete"}, "delete Knows k2\n", false},
				{[]string{"--op", "insert,update"}, "update Person p1\ninsert Knows k3\nupdate WorksAt w1\n", false},
				{[]string{"--type", "Person", "--type", "WorksAt", "--op", "update"}, "update Person p1\nupdate WorksAt w1\n", false},
				{[]string{"--limit", "2"}, "update Person p1\ndelete Person p3\n", true},
				{[]string{"--limit", "5"}, want, false},
				{[]string{"--type", "Company"}, "", false},
			} {
				d := f.diffJSON(append([]string{"diff", f.spec, testRoot, "main@3", "main"}, tc.args...)...)
				if got := summary(d.Changes); got != tc.want || d.Truncated != tc.truncated {
					t.Errorf("%q: truncated %t\n%s\nwant truncated %t\n%s", tc.args, d.Truncated, got, tc.truncated, tc.want)
				}
			}
			if out := f.mustRun(0, "diff", f.spec, testRoot, "main@3", "main", "--limit", "1"); !strings.Contains(out, "cut at --limit 1, more follow") {
				t.Errorf("text does not say the limit cut it:\n%s", out)
			}

			// Across branches, by commit id and by branch name.
			fd := f.diffJSON("diff", f.spec, testRoot, "feature", "main@2")
			if got := summary(fd.Changes); got != "insert Person p4\ndelete Person p9\n" {
				t.Errorf("diff feature main@2:\n%s", got)
			}
			if got := summary(f.diffJSON("diff", f.spec, testRoot, fd.To.Commit, fd.From.Commit).Changes); got != "delete Person p4\ninsert Person p9\n" {
				t.Errorf("diff by commit ids (reversed):\n%s", got)
			}
			if d := f.diffJSON("diff", f.spec, testRoot, "main", "main"); len(d.Changes) != 0 {
				t.Errorf("diff of a ref with itself: %+v", d.Changes)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("diff wrote %d objects", w-before)
			}
		})
	}
}

// TestChanges: changes prints a commit's changes relative to its first
// parent with the commit as cause; a merge commit that moved no data and
// the genesis have none; it writes nothing.
func TestChanges(t *testing.T) {
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			f := newFixture(t, be)
			g := f.buildGraph()
			f.editGraph(g)
			before := f.store.Writes()

			d := f.diffJSON("changes", f.spec, testRoot, "main@4")
			if d.Commit.Message != "edit" || len(d.Commit.Parents) != 1 || d.Commit.Version != 4 ||
				summary(d.Changes) != "update Person p1\ninsert Knows k3\nupdate WorksAt w1\n" ||
				summary(d.Changes) != summary(f.diffJSON("diff", f.spec, testRoot, "main@3", "main@4").Changes) {
				t.Fatalf("changes main@4: %+v", d)
			}
			if p := f.diffJSON("changes", f.spec, testRoot, "main"); p.Commit.Message != "prune" || summary(p.Changes) != "delete Person p3\ndelete Knows k2\n" {
				t.Errorf("changes main: %+v", p)
			}
			merge := f.diffJSON("changes", f.spec, testRoot, "main@3")
			if len(merge.Commit.Parents) != 2 || len(merge.Changes) != 0 || merge.Commit.Marks[0] != "merge" {
				t.Errorf("changes of the merge commit: %+v", merge)
			}
			if fc := f.diffJSON("changes", f.spec, testRoot, "feature", "--op", "insert"); summary(fc.Changes) != "insert Person p9\n" {
				t.Errorf("changes feature: %+v", fc)
			}
			genesis := f.diffJSON("changes", f.spec, testRoot, "main@0")
			if genesis.Commit.Kind != "genesis" || len(genesis.Changes) != 0 {
				t.Errorf("changes of the genesis: %+v", genesis)
			}
			byID := f.diffJSON("changes", f.spec, testRoot, d.Commit.Parents[0], "--type", "Person")
			if byID.Commit.Message != "merge feature" {
				t.Errorf("changes by commit id: %+v", byID.Commit)
			}
			text := f.mustRun(0, "changes", f.spec, testRoot, "main@4", "--limit", "1")
			if !strings.Contains(text, "commit "+d.Commit.ID) || !strings.Contains(text, "    edit\n") ||
				!strings.Contains(text, `update Person p1 name: "Ann" -> "Anne"`) || !strings.Contains(text, "cut at --limit 1") {
				t.Errorf("changes text:\n%s", text)
			}
			if w := f.store.Writes(); w != before {
				t.Fatalf("changes wrote %d objects", w-before)
			}
		})
	}
}

// getProbe is a stdout that records how many Gets the store had served
// when the first byte of output arrived.
type getProbe struct {
	bytes.Buffer
	f         *fixture
	firstGets int64
}

func (p *getProbe) Write(b []byte) (int, error) {
	if p.Len() == 0 {
		p.firstGets = int64(p.f.store.Counts().Get.Requests)
	}
	return p.Buffer.Write(b)
}

// TestDiffStreamsPages: with one change a page, diff and changes print the
// same as with the default pages, and the first page is written before the
// later pages are read (the command never holds the whole diff). The later
// reads are the table versions and fragments a page needs: objects when
// versions are (kernel.Options.NoRiding), and when fragments are while
// the versions ride their manifests. (With both riding, the manifests the
// diff resolves first hold every row: nothing is left to stream.)
func TestDiffStreamsPages(t *testing.T) {
	for _, tc := range []struct {
		name              string
		versions, objects bool
	}{
		{"versions-as-objects", true, false},
		{"riding-versions-fragment-objects", false, true},
		{"riding", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "sim")
			f.versions, f.objects = tc.versions, tc.objects
			g := f.buildGraph()
			f.editGraph(g)
			diffStreams(t, f, tc.versions || tc.objects)
		})
	}
}

// diffStreams runs TestDiffStreamsPages' commands on f; streams says the
// store holds reads to stream (versions or fragments as objects).
func diffStreams(t *testing.T, f *fixture, streams bool) {
	for _, args := range [][]string{
		{"diff", f.spec, testRoot, "main@3", "main", "--json"},
		{"diff", f.spec, testRoot, "main@0", "main", "--op", "insert,delete"},
		{"diff", f.spec, testRoot, "main@0", "main", "--limit", "4"},
		{"changes", f.spec, testRoot, "main@4"},
	} {
		whole := f.mustRun(0, args...)
		p := &getProbe{f: f}
		var errb bytes.Buffer
		a := f.app(&bytes.Buffer{}, &errb)
		a.stdout, a.feedLimits = p, feed.Limits{MaxChanges: 1}
		gets := int64(f.store.Counts().Get.Requests)
		if code := a.run(context.Background(), args); code != 0 {
			t.Fatalf("%q with one change a page: exit %d\n%s", args, code, errb.String())
		}
		if p.String() != whole {
			t.Errorf("%q: one change a page prints\n%s\nthe default pages print\n%s", args, p.String(), whole)
		}
		if total := int64(f.store.Counts().Get.Requests); streams && p.firstGets >= total {
			t.Errorf("%q: nothing was printed before the last read (gets: %d before, %d at first output, %d at the end)", args, gets, p.firstGets, total)
		}
	}
}

// TestDiffUsage: bad filters and limits are usage errors (2); a ref that
// names nothing is a failure (1).
func TestDiffUsage(t *testing.T) {
	f := newFixture(t, "sim")
	f.buildGraph()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"diff", f.spec, testRoot, "main"}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "main", "--type", "Nope"}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "main", "--type", ""}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "main", "--op", "frob"}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "main", "--limit", "-1"}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "main@x"}, 2},
		{[]string{"changes", f.spec, testRoot, "main", "--op", "insert,"}, 2},
		{[]string{"diff", f.spec, testRoot, "main@1", "nosuch"}, 1},
		{[]string{"changes", f.spec, testRoot, "main@99"}, 1},
	} {
		if code, _, errs := f.run(tc.args...); code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, code, tc.code, errs)
		}
	}
}
