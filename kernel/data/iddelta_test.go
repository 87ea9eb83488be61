package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// deltaOf returns the id delta of the version g's main pins for table.
func deltaOf(t *testing.T, g *Graph, table string) []string {
	t.Helper()
	md := pinnedMetadata(t, g, table)
	d, err := parseIDDelta(md)
	must(t, err)
	return d
}

// TestIDDeltaRidesTheVersion (issue #32 d): after a version with a
// non-empty id index, MaxIDDelta one-row inserts write no index object
// (the ids ride the table version), the next one folds the delta into
// the pages; an insert of an id in the delta is refused from a warm and
// from a cold handle; a delete of a delta id folds, and the id can be
// inserted again. Red if the reader ignored the delta (the duplicate
// insert is accepted) or the writer rewrote the pages (index PUTs).
func TestIDDeltaRidesTheVersion(t *testing.T) {
	defaultFragmentShapes(t, "it counts the index objects a commit writes, and fragment chunks share their prefix")
	st := sim.New(sim.Config{Seed: 1})
	cs := counting.New(st)
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	insertPeople(t, g, 0, 1)
	n0 := len(deltaOf(t, g, "Person"))
	for i := 1; n0+i <= MaxIDDelta; i++ {
		cs.Reset()
		insertPeople(t, g, i, 1)
		if n := cs.CountWhere("put", testRoot+"/adj/"); n != 0 {
			t.Fatalf("insert %d wrote %d index objects, want 0 (the delta)", i, n)
		}
		if d := deltaOf(t, g, "Person"); len(d) != n0+i {
			t.Fatalf("after insert %d the delta holds %d ids, want %d", i, len(d), n0+i)
		}
	}
	cs.Reset()
	insertPeople(t, g, MaxIDDelta-n0+1, 1)
	if cs.CountWhere("put", testRoot+"/adj/") == 0 || len(deltaOf(t, g, "Person")) != 0 {
		t.Fatalf("the insert past the bound did not fold the delta (%d ids left)", len(deltaOf(t, g, "Person")))
	}
	insertPeople(t, g, 100, 3)
	if d := deltaOf(t, g, "Person"); strings.Join(d, ",") != "p0100,p0101,p0102" {
		t.Fatalf("delta %v, want p0100..p0102", d)
	}
	for i, h := range []*Graph{g, openGraph(t, st, 7)} {
		tx, err := h.Begin(ctx, mainRef(t, h))
		must(t, err)
		must(t, tx.Insert("Person", person("p0101", "again")))
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrIDExists) {
			t.Fatalf("handle %d: insert of delta id p0101: %v, want ErrIDExists", i, err)
		}
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Person", "p0101") })
	if d := deltaOf(t, g, "Person"); len(d) != 0 {
		t.Fatalf("a delete left the delta %v, want it folded", d)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("p0101", "back")) })
	want := []string{}
	for i := 0; i <= MaxIDDelta-n0+1; i++ {
		want = append(want, fmt.Sprintf("p%04d", i))
	}
	want = append(want, "p0100", "p0101", "p0102")
	got := scanIDs(t, snap(t, openGraph(t, st, 8)), "Person")
	if !strings.Contains(got, strings.Join(want, ",")) {
		t.Fatalf("rows %s, want them to hold %s", got, strings.Join(want, ","))
	}
	s := snap(t, openGraph(t, st, 9))
	v, err := s.view(ctx, "Person")
	must(t, err)
	for _, id := range append(want, "p0099", "p9999") {
		ok, err := s.r.idExists(ctx, v, id)
		must(t, err)
		if ok != (id != "p0099" && id != "p9999") {
			t.Fatalf("cold idExists(%s) = %v", id, ok)
		}
	}
}

// TestIDDeltaSurvivesCompaction: a compaction keeps the delta (and
// repacks the pages it counts) and the rows read the same.
func TestIDDeltaSurvivesCompaction(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	insertPeople(t, g, 0, 40)
	want := scanIDs(t, snap(t, g), "Person")
	d := deltaOf(t, g, "Person")
	if len(d) == 0 {
		t.Fatal("no delta before the compaction")
	}
	if _, err := g.Compact(ctx, mainRef(t, g), compact.Policy{}); err != nil {
		t.Fatal(err)
	}
	if got := deltaOf(t, g, "Person"); strings.Join(got, ",") != strings.Join(d, ",") {
		t.Fatalf("delta after compaction %v, want %v", got, d)
	}
	if got := scanIDs(t, snap(t, openGraph(t, st, 3)), "Person"); got != want {
		t.Fatalf("rows after compaction %s, want %s", got, want)
	}
	insertPeople(t, g, 40, 1)
	tx, err := g.Begin(ctx, mainRef(t, g))
	must(t, err)
	must(t, tx.Insert("Person", person(d[0], "dup")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of delta id %s after compaction: %v, want ErrIDExists", d[0], err)
	}
}

// TestFormat5GraphOpensAndWritesDelta: a graph in the format-5 layout
// (every id in the pages, every object stamped 5) opens read-write
// without any rewrite, refuses a duplicate of an id in its pages, and its
// next insert is stamped with the current format (6 or later) and rides a
// delta.
func TestFormat5GraphOpensAndWritesDelta(t *testing.T) {
	defaultFragmentShapes(t, "a format-5 fixture restamped (fragment chunks not re-summed)")
	defaultIndexShapes(t, "a format-5 graph has no index trees")
	st := sim.New(sim.Config{Seed: 1})
	idDeltaWrites = false
	g := initCounterGraph(t, st)
	seedGraph(t, g)
	insertPeople(t, g, 0, 5)
	idDeltaWrites = true
	if len(deltaOf(t, g, "Person")) != 0 {
		t.Fatal("a format-5 style write left a delta")
	}
	want := scanIDs(t, snap(t, g), "Person")
	restampTo(t, st, format.FormatV5)
	before := st.Keys(testRoot + "/branches/main/")[0]
	p := openGraph(t, st, 3)
	if st.Keys(testRoot + "/branches/main/")[0] != before {
		t.Fatal("a read-write open of a format-5 graph wrote a manifest")
	}
	if got := scanIDs(t, snap(t, p), "Person"); got != want {
		t.Fatalf("format-5 rows %s, want %s", got, want)
	}
	tx, err := p.Begin(ctx, mainRef(t, p))
	must(t, err)
	must(t, tx.Insert("Person", person("p0002", "dup")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrIDExists) {
		t.Fatalf("duplicate of a format-5 id: %v, want ErrIDExists", err)
	}
	insertPeople(t, p, 10, 1)
	obj, err := st.Get(ctx, st.Keys(testRoot + "/branches/main/")[0])
	must(t, err)
	m, _, err := format.DecodeManifest(obj.Data)
	must(t, err)
	if m.FormatStamp != format.CurrentFormat || format.CurrentFormat <= format.FormatV5 {
		t.Fatalf("first publish after the open stamped %d, want %d (> 5)", m.FormatStamp, format.CurrentFormat)
	}
	if d := deltaOf(t, p, "Person"); strings.Join(d, ",") != "p0010" {
		t.Fatalf("delta after the first insert past format 5: %v", d)
	}
}

// TestFoldOfADamagedDeltaIsCorrupt: an id both in an id page and in the
// version's id delta (a damaged table version: the delta lists only ids
// beyond the pages) is refused when a commit folds the delta into the
// pages, with ErrCorruptFragment (and format.ErrCorrupt), never written
// as a page holding the id twice; nothing is published. Red if
// rewriteIDPages merged the pages without checking for repeats.
func TestFoldOfADamagedDeltaIsCorrupt(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	insertPeople(t, g, 0, 1)
	delta := deltaOf(t, g, "Person")
	var pageID string
	for _, id := range strings.Split(scanIDs(t, snap(t, g), "Person"), ",") {
		if !inDelta(delta, id) {
			pageID = id
			break
		}
	}
	if pageID == "" {
		t.Fatal("no Person id in the id pages")
	}
	tv := pinnedVersion(t, g, "Person")
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	if len(delta) == 0 {
		t.Fatal("no id delta to damage")
	}
	// The delta's first id replaced by a page id: the counts still agree
	// (pages + delta = rows), so only the fold can see the repeat.
	damaged, _ := deltaFor(delta[1:], []string{pageID})
	b, err := json.Marshal(damaged)
	must(t, err)
	md[metaIDDeltaKey] = string(b)
	_, err = g.Kernel().Write(ctx, mainRef(t, g), []kernel.TableWrite{{Table: "Person", Build: func(kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: tv.Fragments, Rows: tv.Rows, Metadata: md}, nil
	}}}, kernel.LineageIntent{Actor: "damage"})
	must(t, err)
	before := snap(t, g).ks.ManifestVersion()
	tx := begin(t, g)
	var rows []Row
	for i := range MaxIDDelta + 1 { // past the delta's bound: the commit folds it into the pages
		rows = append(rows, person(fmt.Sprintf("fold-%03d", i), "n"))
	}
	must(t, tx.Insert("Person", rows...))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	if !errors.Is(err, ErrCorruptFragment) || !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("fold of a delta repeating page id %q: %v, want ErrCorruptFragment", pageID, err)
	}
	if after := snap(t, g).ks.ManifestVersion(); after != before {
		t.Fatalf("the refused fold published: head v%d -> v%d", before, after)
	}
}
