package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// leafFragRefs returns the fragment chunk refs (level 0) of a paged table
// version in order, reading its fragment ref chunks from g's store.
func leafFragRefs(t *testing.T, g *Graph, tv kernel.TableVersion) []fragChunkRef {
	t.Helper()
	var out []fragChunkRef
	var walk func(refs []fragChunkRef)
	walk = func(refs []fragChunkRef) {
		for _, r := range refs {
			if r.Level == 0 {
				out = append(out, r)
				continue
			}
			b, err := g.get(ctx, g.keys.Adjacency(tv.Table, mustULID(t, r.Name)))
			must(t, err)
			kids, err := checkFragRefChunk(tv.Table, r, b)
			must(t, err)
			walk(kids)
		}
	}
	walk(fragRefsOf(t, tv))
	return out
}

// TestFragRefLevelsKeepTheVersionSmall: past InlineFragRefs fragment
// chunks a version lists fragment ref chunks (one level per 64-fold, cut
// by content), every read answers as on an inline handle, and a cold Get
// reads only the ref chunks and the chunk on its id's path.
func TestFragRefLevelsKeepTheVersionSmall(t *testing.T) {
	cs, g := stairGraph(t, 40, 1, 2, 1<<30) // 40 fragments, 2 infos a chunk: 20 leaf chunks
	tv := pinnedVersion(t, g, "Person")
	top, leaves := fragRefsOf(t, tv), leafFragRefs(t, g, tv)
	if len(leaves) != 20 || len(top) > InlineFragRefs || top[0].Level == 0 {
		t.Fatalf("version lists %d refs of level %d over %d leaf chunks; want at most %d above level 0 over 20", len(top), top[0].Level, len(leaves), InlineFragRefs)
	}
	inline := initGraph(t, sim.New(sim.Config{Seed: 2}), Limits{})
	id := 0
	for b := 0; b < 40; b++ {
		commitTx(t, inline, func(tx *Txn) error {
			var rows []Row
			for k := 0; k < 80-b; k++ {
				rows = append(rows, person(fmt.Sprintf("p%05d", id), "x"))
				id++
			}
			return tx.Insert("Person", rows...)
		})
	}
	for _, pid := range []string{"p00000", "p01234", fmt.Sprintf("p%05d", id-1), "p99999"} {
		cold := openGraph(t, cs, 8)
		cs.Reset()
		got, ok, err := snap(t, cold).Get(ctx, "Person", pid)
		must(t, err)
		want, wok, err := snap(t, inline).Get(ctx, "Person", pid)
		must(t, err)
		if ok != wok || got.Props["name"] != want.Props["name"] {
			t.Fatalf("Get %s: %v %v, inline handle %v %v", pid, got, ok, want, wok)
		}
		if chunks, _ := prefixBytes(cs, testRoot+"/adj/"); ok && chunks > 1+top[0].Level+1 {
			t.Fatalf("cold Get %s read %d chunks; want its path: %d ref chunks and one fragment chunk", pid, chunks, top[0].Level)
		}
	}
	n, err := snap(t, openGraph(t, cs, 9)).Count(ctx, "Person")
	must(t, err)
	if n != uint64(id) {
		t.Fatalf("Count %d, want %d", n, id)
	}
}

// TestFragRefLevelsRewriteOnePath: a one-row update rewrites one fragment
// chunk and the fragment ref chunks above it, keeping every other ref
// chunk by ref.
func TestFragRefLevelsRewriteOnePath(t *testing.T) {
	_, g := stairGraph(t, 60, 1, 2, 1<<30)
	g.fragRefMax = 4
	commitTx(t, g, func(tx *Txn) error { return tx.Update("Person", person("p00001", "warm")) })
	before := pinnedVersion(t, g, "Person")
	old := map[string]bool{}
	for _, r := range fragRefsOf(t, before) {
		old[r.Name] = true
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Update("Person", person("p03000", "changed")) })
	after := pinnedVersion(t, g, "Person")
	top := fragRefsOf(t, after)
	kept := 0
	for _, r := range top {
		if old[r.Name] {
			kept++
		}
	}
	if top[0].Level == 0 || kept == 0 || kept < len(top)-2 {
		t.Fatalf("one-row update: %d of %d top refs (level %d) kept; want all but the path's", kept, len(top), top[0].Level)
	}
	row, ok, err := snap(t, openGraph(t, g.store, 3)).Get(ctx, "Person", "p03000")
	if err != nil || !ok || row.Props["name"] != "changed" {
		t.Fatalf("Get after the update: %+v %v %v", row, ok, err)
	}
}

// TestFragRefChunkChecked: a fragment ref chunk whose level, counts or
// envelope disagree with its ref is corrupt, never read as infos.
func TestFragRefChunkChecked(t *testing.T) {
	_, g := stairGraph(t, 20, 1, 2, 1<<30)
	tv := pinnedVersion(t, g, "Person")
	top := fragRefsOf(t, tv)
	if top[0].Level == 0 {
		t.Fatal("no fragment ref chunk")
	}
	b, err := g.get(ctx, g.keys.Adjacency(tv.Table, mustULID(t, top[0].Name)))
	must(t, err)
	for name, mutate := range map[string]func(*fragChunkRef){
		"level": func(r *fragChunkRef) { r.Level++ },
		"frags": func(r *fragChunkRef) { r.Frags++ },
		"rows":  func(r *fragChunkRef) { r.Rows++ },
		"min":   func(r *fragChunkRef) { r.Min = "a" },
		"bytes": func(r *fragChunkRef) { r.Bytes-- },
	} {
		r := top[0]
		mutate(&r)
		if _, err := checkFragRefChunk(tv.Table, r, b); err == nil {
			t.Errorf("%s: a ref chunk under a forged ref passed", name)
		}
	}
	if _, err := FragmentChunkInfos(tv.Table, b); err == nil {
		t.Error("a fragment ref chunk read as a fragment chunk")
	}
	infos, chunks, err := FragmentChunkEntries(tv.Table, b)
	if err != nil || infos != nil || len(chunks) == 0 {
		t.Fatalf("FragmentChunkEntries of a ref chunk: %d infos, %d chunks, %v", len(infos), len(chunks), err)
	}
	var forged []fragChunkRef
	must(t, json.Unmarshal([]byte(`[{"name":"`+top[0].Name+`","frags":1,"rows":1,"min":"a","max":"b","bytes":1,"crc32c":0,"level":17}]`), &forged))
	if err := checkFragRef(forged[0]); err == nil {
		t.Fatal("a ref past maxFragLevels passed")
	}
}

// TestOneRowCommitReadsItsFragmentPathOnly: a one-row insert and a
// one-row update on a cold handle over a paged version of 20 fragment
// chunks read only the fragment chunks (and ref chunks) on the paths of
// the tail and of the updated id, not the whole list — red with the whole
// list read before every build — and every read after them answers as on
// an inline handle.
func TestOneRowCommitReadsItsFragmentPathOnly(t *testing.T) {
	cs, g := stairGraph(t, 40, 1, 2, 1<<30)
	leaves := len(leafFragRefs(t, g, pinnedVersion(t, g, "Person")))
	levels := fragRefsOf(t, pinnedVersion(t, g, "Person"))[0].Level
	for i, tc := range []struct {
		name  string
		write func(tx *Txn) error
		paths int
	}{
		{"insert", func(tx *Txn) error { return tx.Insert("Person", person("p99999", "new")) }, 1},
		{"update", func(tx *Txn) error { return tx.Update("Person", person("p00100", "changed")) }, 2},
	} {
		cold := openGraph(t, cs, uint64(20+i))
		cs.Reset()
		commitTx(t, cold, tc.write)
		if chunks, _ := prefixBytes(cs, testRoot+"/adj/Person/"); chunks > tc.paths*(levels+1)+2 {
			t.Fatalf("%s: read %d fragment and index chunks of a list of %d chunks under %d levels; want its paths (%d) and the id index", tc.name, chunks, leaves, levels, tc.paths)
		}
	}
	s := snap(t, openGraph(t, cs, 31))
	for id, want := range map[string]string{"p99999": "new", "p00100": "changed", "p00000": "x", "p00500": "x"} {
		row, ok, err := s.Get(ctx, "Person", id)
		if err != nil || !ok || row.Props["name"] != want {
			t.Fatalf("Get %s = %v %v %v, want %s", id, row.Props["name"], ok, err, want)
		}
	}
	n, err := s.Count(ctx, "Person")
	must(t, err)
	if got := len(leafFragRefs(t, g, pinnedVersion(t, openGraph(t, cs, 32), "Person"))); n != 40*81-40*41/2+1 || got < leaves {
		t.Fatalf("after the commits: %d rows over %d fragment chunks", n, got)
	}
}

// fanoutOptions are the options of a handle shaped as the simulator's
// (IndexFanout n, every version paged) whose fragments are objects, so
// that a read of a fragment a version lists answers its rows whether or
// not the version embeds it.
func fanoutOptions(seed uint64, n int) Options {
	return Options{Kernel: kernel.Options{Env: testEnv(seed)}, InlineFragments: -1, IndexFanout: n, EmbedFragments: -1}
}

// updateBesideUnreadSubtrees builds a Person table of 12 fragments
// (commits of 24 down to 13 rows, none merging) on IndexFanout 2
// handles — fragment chunks of at most 2 infos under fragment ref chunks
// of at most 2 refs, one ref in the version — then updates p00000, in the
// first fragment, on a cold handle: the commit reads only that
// fragment's path and keeps every other subtree by ref
// (fragContentTree). It returns the leaf chunk refs before and after,
// the name a fresh handle reads for p00000 and that handle's Count.
func updateBesideUnreadSubtrees(t *testing.T) (before, after []fragChunkRef, name any, count uint64) {
	t.Helper()
	store := sim.New(sim.Config{Seed: 1})
	g, err := Init(ctx, store, testRoot, testSchema(t), fanoutOptions(1, 2))
	must(t, err)
	id := 0
	for b := range 12 {
		commitTx(t, g, func(tx *Txn) error {
			var rows []Row
			for range 24 - b {
				rows = append(rows, person(fmt.Sprintf("p%05d", id), "x"))
				id++
			}
			return tx.Insert("Person", rows...)
		})
	}
	tv := pinnedVersion(t, g, "Person")
	if top := fragRefsOf(t, tv); len(top) != 1 || top[0].Level < 2 {
		t.Fatalf("setup: the version lists %d fragment refs of level %d; want one of level 2 or more", len(top), top[0].Level)
	}
	before = leafFragRefs(t, g, tv)
	cold, err := Open(ctx, store, testRoot, fanoutOptions(2, 2))
	must(t, err)
	commitTx(t, cold, func(tx *Txn) error { return tx.Update("Person", person("p00000", "changed")) })
	after = leafFragRefs(t, g, pinnedVersion(t, g, "Person"))
	fresh, err := Open(ctx, store, testRoot, fanoutOptions(3, 2))
	must(t, err)
	row, ok, err := snap(t, fresh).Get(ctx, "Person", "p00000")
	if err != nil || !ok {
		t.Fatalf("Get p00000 after the update: %v %v", ok, err)
	}
	count, err = snap(t, fresh).Count(ctx, "Person")
	must(t, err)
	if count != uint64(id) {
		t.Fatalf("Count after the update: %d, want %d", count, id)
	}
	return before, after, row.Props["name"], count
}

// TestFragEditUpdateLandsBesideUnreadSubtrees: a one-row update on a cold
// handle over a fragment tree of 3+ levels rewrites the leaf chunk
// holding the row (and the ref chunks above it), keeps every other leaf
// chunk by ref, and the update reads back. The control of the planted
// bug frag-edit-drops-subtree (TestPlantedFragEditDropsSubtreeLosesAnUpdate).
func TestFragEditUpdateLandsBesideUnreadSubtrees(t *testing.T) {
	before, after, name, _ := updateBesideUnreadSubtrees(t)
	old := map[string]bool{}
	for _, r := range before {
		old[r.Name] = true
	}
	kept := 0
	for _, r := range after {
		if old[r.Name] {
			kept++
		}
	}
	if len(after) != len(before) || kept != len(before)-1 || old[after[0].Name] {
		t.Fatalf("one-row update of the first fragment: %d of %d leaf chunks kept (first rewritten: %t); want all but the first", kept, len(after), !old[after[0].Name])
	}
	if name != "changed" {
		t.Fatalf("Get p00000 after the update: name %v, want changed", name)
	}
}

// fragObjectsRead counts the fragment chunks and fragment ref chunks of
// Person cs logged reads of (index chunks and pages are not counted).
func fragObjectsRead(t *testing.T, cs *byteLog) int {
	t.Helper()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for i, k := range cs.keys {
		if !strings.HasPrefix(k, testRoot+"/adj/Person/") {
			continue
		}
		payload, err := format.OpenAdjacencyChunk(cs.gets[i].Data)
		if err != nil {
			continue // a page
		}
		if c, err := decodeChunkPayload(payload); err == nil && c.Dir == dirFrag {
			n++ // a fragment chunk, or a JSON fragment ref chunk
		} else if _, err := decodeFragRefChunkPayload(payload); err == nil && bytes.HasPrefix(payload, fragRefBinaryMagic) {
			n++ // a binary fragment ref chunk
		}
	}
	return n
}

// TestPointPathsReadNoSiblingLeaf: a one-row insert (the list's tail) and
// a cold Get of the last fragment's id read exactly the fragment objects
// on that fragment's path: one per level and its leaf chunk. Red when
// expanding a fragment ref chunk also reads its first child's leaf (the
// full-list order): the path to the tail then read the first leaf under
// every ref chunk it expanded (a one-node commit into 10^7 rows read
// three leaves and two ref chunks where the tail's path is two objects).
func TestPointPathsReadNoSiblingLeaf(t *testing.T) {
	cs, g := stairGraph(t, 40, 1, 2, 1<<30)
	g.fragRefMax = 2 // ref chunks of two refs: several levels, the tail far from every first child
	// two rows, so the next one-row insert merges with nothing (mergeCount):
	// its build needs only the tail fragment's info
	commitTx(t, g, func(tx *Txn) error {
		return tx.Insert("Person", person("p90000", "grow"), person("p90001", "grow"))
	})
	top := fragRefsOf(t, pinnedVersion(t, g, "Person"))
	levels := top[0].Level
	if levels < 2 {
		t.Fatalf("fixture: %d fragment ref levels, want at least 2", levels)
	}
	cold := openGraph(t, cs, 40)
	cs.Reset()
	commitTx(t, cold, func(tx *Txn) error { return tx.Insert("Person", person("p99999", "new")) })
	if got := fragObjectsRead(t, cs); got != levels+1 {
		t.Fatalf("a one-row insert read %d fragment objects; want its tail's path, %d (%d levels and the leaf)", got, levels+1, levels)
	}
	fresh := openGraph(t, cs, 41)
	levels = fragRefsOf(t, pinnedVersion(t, fresh, "Person"))[0].Level // the insert's handle may have cut another level
	s := snap(t, fresh)
	cs.Reset()
	row, ok, err := s.Get(ctx, "Person", "p99999")
	if err != nil || !ok || row.Props["name"] != "new" {
		t.Fatalf("Get p99999 = %v %v %v", row.Props["name"], ok, err)
	}
	if got := fragObjectsRead(t, cs); got != levels+1 {
		t.Fatalf("a cold Get of the last id read %d fragment objects; want its path, %d", got, levels+1)
	}
}
