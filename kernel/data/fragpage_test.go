package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// stairGraph commits n batches of people of decreasing size (each batch
// larger than the next, so no commit merges the tail: n fragments with
// disjoint, ascending id ranges) on a handle paging past inline
// fragments in chunks of at most max infos cut every cut names.
func stairGraph(t *testing.T, n, inline, max int, cut uint32) (*byteLog, *Graph) {
	t.Helper()
	cs := &byteLog{Store: sim.New(sim.Config{Seed: 1})}
	g := initGraph(t, cs, Limits{})
	g.inline, g.fragChunkMax, g.fragCutEvery = inline, max, cut
	g.fragRefInline, g.fragRefMax = 0, 0 // the defaults, whatever -data.paged says
	id := 0
	for b := 0; b < n; b++ {
		commitTx(t, g, func(tx *Txn) error {
			var rows []Row
			for k := 0; k < 2*n-b; k++ {
				rows = append(rows, person(fmt.Sprintf("p%05d", id), "x"))
				id++
			}
			return tx.Insert("Person", rows...)
		})
	}
	return cs, g
}

// fragRefsOf returns the fragment chunk refs of a table version (none
// when inline).
func fragRefsOf(t *testing.T, tv kernel.TableVersion) []fragChunkRef {
	t.Helper()
	for _, kv := range tv.Metadata {
		if kv.Key == metaFragsKey {
			var refs []fragChunkRef
			must(t, json.Unmarshal([]byte(kv.Value), &refs))
			return refs
		}
	}
	return nil
}

// TestPagedVersionListsChunksOnly: past InlineFragments a table version
// lists no fragment and no inline info, only its chunks, and every read
// (Get of the first and last id, GetMany, Scan) answers the same as an
// inline handle.
func TestPagedVersionListsChunksOnly(t *testing.T) {
	_, g := stairGraph(t, 12, 4, 3, 1<<30)
	tv := pinnedVersion(t, g, "Person")
	refs := fragRefsOf(t, tv)
	if len(tv.Fragments) != 0 || len(refs) != 4 {
		t.Fatalf("paged version: %d fragments listed, %d chunk refs; want 0 and 4 (12 fragments, 3 a chunk)", len(tv.Fragments), len(refs))
	}
	for _, kv := range tv.Metadata {
		if len(kv.Key) > len(metaFragPrefix) && kv.Key[:len(metaFragPrefix)] == metaFragPrefix {
			t.Fatalf("paged version carries inline info %s", kv.Key)
		}
	}
	cold := openGraph(t, g.store, 7)
	s := snap(t, cold)
	rows := 0
	for b := 0; b < 12; b++ {
		rows += 24 - b
	}
	if got := scanIDs(t, s, "Person"); len(splitIDs(got)) != rows {
		t.Fatalf("scan of the paged version: %d ids, want %d", len(splitIDs(got)), rows)
	}
	for _, id := range []string{"p00000", fmt.Sprintf("p%05d", rows-1)} {
		if _, ok, err := s.Get(ctx, "Person", id); err != nil || !ok {
			t.Fatalf("Get %s: %v %v", id, ok, err)
		}
	}
	got, err := s.GetMany(ctx, "Person", []string{"p00000", "p00100", fmt.Sprintf("p%05d", rows-1), "zz"})
	if err != nil || len(got) != 3 {
		t.Fatalf("GetMany: %v %v, want 3 rows", ids(got), err)
	}
}

func splitIDs(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// TestPagedGetReadsOnlyTheChunkHoldingTheID: a cold Get reads one
// fragment chunk (the one whose id range holds the id) and one fragment,
// not the other chunks; a cold Out reads no fragment chunk at all.
func TestPagedGetReadsOnlyTheChunkHoldingTheID(t *testing.T) {
	objectFragments(t)
	cs, g := stairGraph(t, 12, 4, 3, 1<<30)
	for _, id := range []string{"p00000", "p00150", "p00221"} {
		cold := openGraph(t, cs, 8)
		s := snap(t, cold)
		cs.Reset()
		if _, ok, err := s.Get(ctx, "Person", id); err != nil || !ok {
			t.Fatalf("Get %s: %v %v", id, ok, err)
		}
		chunks, _ := prefixBytes(cs, testRoot+"/adj/")
		frags, _ := prefixBytes(cs, testRoot+"/data/")
		if chunks != 1 || frags != 1 {
			t.Fatalf("cold Get %s read %d fragment chunks and %d fragments, want 1 and 1", id, chunks, frags)
		}
	}
	commitTx(t, g, func(tx *Txn) error {
		if err := tx.Insert("Company", company("c0")); err != nil {
			return err
		}
		return tx.Insert("WorksAt", edge("w0", "p00000", "c0"))
	})
	cold := openGraph(t, cs, 9)
	s := snap(t, cold)
	cs.Reset()
	out, err := s.Out(ctx, "WorksAt", "p00000")
	must(t, err)
	adj, _ := prefixBytes(cs, testRoot+"/adj/Person/")
	if len(out) != 1 || adj != 0 {
		t.Fatalf("cold Out: %v, %d Person chunk reads; want 1 edge and none", ids(out), adj)
	}
}

// TestPagedCommitRewritesOnlyNearbyChunks: an update of one row rewrites
// one fragment, and the new version keeps by ref every chunk but the few
// around it (content-defined cuts): at most 3 new chunks of 15 or so.
func TestPagedCommitRewritesOnlyNearbyChunks(t *testing.T) {
	_, g := stairGraph(t, 60, 4, 8, 4)
	before := leafFragRefs(t, g, pinnedVersion(t, g, "Person"))
	commitTx(t, g, func(tx *Txn) error { return tx.Update("Person", person("p03000", "changed")) })
	after := leafFragRefs(t, g, pinnedVersion(t, g, "Person"))
	old := map[string]bool{}
	for _, r := range before {
		old[r.Name] = true
	}
	written := 0
	for _, r := range after {
		if !old[r.Name] {
			written++
		}
	}
	if len(before) < 8 || written == 0 || written > 3 {
		t.Fatalf("one-row update: %d of %d chunks written (the version had %d); want 1..3", written, len(after), len(before))
	}
	row, ok, err := snap(t, openGraph(t, g.store, 3)).Get(ctx, "Person", "p03000")
	if err != nil || !ok || row.Props["name"] != "changed" {
		t.Fatalf("Get after the update: %+v %v %v", row, ok, err)
	}
}

// TestInlineVersionsReadAndPageOnNextCommit: versions written inline (by
// a handle with the default bound) read unchanged through a paging
// handle, whose next commit writes the table paged; compaction of a
// paged version keeps its rows and writes it paged again.
func TestInlineVersionsReadAndPageOnNextCommit(t *testing.T) {
	_, g := stairGraph(t, DefaultInlineFragments, 0, 0, 0) // default bound: inline
	if tv := pinnedVersion(t, g, "Person"); len(tv.Fragments) != DefaultInlineFragments || fragRefsOf(t, tv) != nil {
		t.Fatalf("default handle wrote %d fragments inline and %d chunk refs", len(tv.Fragments), len(fragRefsOf(t, tv)))
	}
	p := openGraph(t, g.store, 5)
	p.inline, p.fragChunkMax = 2, 3
	want := scanIDs(t, snap(t, p), "Person")
	commitTx(t, p, func(tx *Txn) error { return tx.Update("Person", person("p00003", "y")) })
	tv := pinnedVersion(t, p, "Person")
	if len(tv.Fragments) != 0 || len(fragRefsOf(t, tv)) == 0 {
		t.Fatalf("next commit: %d fragments inline, %d chunk refs; want paged", len(tv.Fragments), len(fragRefsOf(t, tv)))
	}
	if got := scanIDs(t, snap(t, p), "Person"); got != want {
		t.Fatalf("rows after paging: %s, want %s", got, want)
	}
	if _, err := p.Compact(ctx, mainRef(t, p), compact.Policy{MinFragments: 2}); err != nil {
		t.Fatal(err)
	}
	if got := scanIDs(t, snap(t, openGraph(t, g.store, 6)), "Person"); got != want {
		t.Fatalf("rows after compacting the paged version: %s, want %s", got, want)
	}
}

// TestCorruptFragmentChunkIsTyped: a fragment chunk whose bytes differ
// from its ref fails reads with ErrCorruptFragment, never a wrong answer.
func TestCorruptFragmentChunkIsTyped(t *testing.T) {
	cs, g := stairGraph(t, 8, 2, 3, 1<<30)
	refs := fragRefsOf(t, pinnedVersion(t, g, "Person"))
	if len(refs) == 0 {
		t.Fatal("not paged")
	}
	id, err := ulid.ParseStrict(refs[0].Name)
	must(t, err)
	key := g.keys.Adjacency("Person", id)
	obj, err := cs.Get(ctx, key)
	must(t, err)
	b := append([]byte(nil), obj.Data...)
	b[len(b)/2] ^= 0x20
	must(t, cs.Delete(ctx, key))
	_, err = cs.Put(ctx, key, b, objstore.Condition{})
	must(t, err)
	_, _, err = snap(t, openGraph(t, cs, 4)).Get(ctx, "Person", "p00000")
	if !errors.Is(err, ErrCorruptFragment) {
		t.Fatalf("Get through a damaged fragment chunk: %v, want ErrCorruptFragment", err)
	}
	if _, err := FragmentChunkInfos("Person", b); !errors.Is(err, format.ErrCorrupt) && err != nil {
		t.Fatalf("FragmentChunkInfos of damaged bytes: %v", err)
	}
}
