package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// commitErr stages on a cold handle of store and commits, returning the
// commit's error.
func commitErr(t *testing.T, store objstore.Store, seed uint64, stage func(*Txn) error) error {
	t.Helper()
	tx := begin(t, openGraph(t, store, seed))
	must(t, stage(tx))
	_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "t"})
	return err
}

// TestIDIndexEndpointChecks: the endpoint checks of an edge insert and the
// existence check of a node insert answer through the node table's id
// index (no node fragment read): an edge to a node a cascade deleted is
// refused with ErrDanglingEdge, a node insert of an existing id with
// ErrIDExists, an edge between existing nodes and one to a node a later
// commit inserted are accepted.
// Red without the id index (the checks load whole node fragments) and red
// when the index keeps deleted ids.
func TestIDIndexEndpointChecks(t *testing.T) {
	n := MaxFragmentRows + 100 // two Person fragments
	cs, _ := worksAtGraph(t, n)
	commitTx(t, openGraph(t, cs, 3), func(tx *Txn) error { return tx.DeleteCascade("Person", "p000007") })
	path := 2 + indexRefsOf(t, pinnedVersion(t, openGraph(t, cs, 2), "Person"), "id")[0].Level // one chunk per level and a page
	noNodeReads := func(what string) {
		t.Helper()
		if gets, b := prefixBytes(cs, testRoot+"/data/Person/"); gets != 0 {
			t.Fatalf("%s read %d Person fragments (%d bytes); want the id index only", what, gets, b)
		}
		if gets, _ := prefixBytes(cs, testRoot+"/adj/Person/"); gets == 0 || gets > 2*path {
			t.Fatalf("%s read %d id index objects; want a chunk per level and a page per endpoint (%d each)", what, gets, path)
		}
	}
	cs.Reset()
	if err := commitErr(t, cs, 4, func(tx *Txn) error { return tx.Insert("Knows", edge("k-dead", "p000001", "p000007")) }); !errors.Is(err, ErrDanglingEdge) {
		t.Fatalf("edge to a deleted node: %v, want ErrDanglingEdge", err)
	}
	noNodeReads("the refused insert")
	cs.Reset()
	must(t, commitErr(t, cs, 5, func(tx *Txn) error { return tx.Insert("Knows", edge("k-live", "p000001", "p008200")) }))
	noNodeReads("the accepted insert")
	cs.Reset()
	if err := commitErr(t, cs, 6, func(tx *Txn) error { return tx.Insert("Person", person("p000001", "dup")) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an existing node: %v, want ErrIDExists", err)
	}
	noNodeReads("the refused node insert")
	commitTx(t, openGraph(t, cs, 6), func(tx *Txn) error { return tx.Insert("Person", person("p000007", "back")) })
	cs.Reset()
	must(t, commitErr(t, cs, 7, func(tx *Txn) error { return tx.Insert("Knows", edge("k-back", "p000002", "p000007")) }))
	noNodeReads("the insert to the re-inserted node")
}

// corruptAdj flips a byte of every object read under prefix.
type corruptAdj struct {
	objstore.Store
	prefix string
}

func (c *corruptAdj) Get(ctx context.Context, key string) (objstore.Object, error) {
	o, err := c.Store.Get(ctx, key)
	if err == nil && len(key) > len(c.prefix) && key[:len(c.prefix)] == c.prefix && len(o.Data) > 0 {
		d := append([]byte(nil), o.Data...)
		d[len(d)/2] ^= 0x40
		o.Data = d
	}
	return o, err
}

// TestIDIndexCorruptIsTyped: a corrupt id index object fails the endpoint
// check with ErrCorruptFragment (and format.ErrCorrupt), never an answer.
func TestIDIndexCorruptIsTyped(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 1})
	seedGraph(t, initGraph(t, inner, Limits{}))
	err := commitErr(t, &corruptAdj{Store: inner, prefix: testRoot + "/adj/Person/"}, 2,
		func(tx *Txn) error { return tx.Insert("Knows", edge("k9", "p2", "p3")) })
	if !errors.Is(err, ErrCorruptFragment) || !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("endpoint check over a corrupt id index: %v, want ErrCorruptFragment", err)
	}
}

// TestPreIDIndexVersions: node table versions written before the id index
// existed answer the endpoint checks from their fragments; the next commit
// to the node table indexes it from scratch.
func TestPreIDIndexVersions(t *testing.T) {
	writeIDIndex = false
	inner := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, inner, Limits{})
	seedGraph(t, g)
	writeIDIndex = true
	if v, err := snap(t, openGraph(t, inner, 2)).view(ctx, "Person"); err != nil || v.hasIDs {
		t.Fatalf("pre-index Person version: %v, id index %v", err, v != nil && v.hasIDs)
	}
	if err := commitErr(t, inner, 3, func(tx *Txn) error { return tx.Insert("Knows", edge("k9", "p2", "p4")) }); !errors.Is(err, ErrDanglingEdge) {
		t.Fatalf("pre-index: edge to a missing node: %v", err)
	}
	must(t, commitErr(t, inner, 4, func(tx *Txn) error { return tx.Insert("Person", person("p4", "dee")) }))
	s := snap(t, openGraph(t, inner, 5))
	v, err := s.view(ctx, "Person")
	if err != nil || !v.hasIDs {
		t.Fatalf("after the next commit: %v, id index %v", err, v != nil && v.hasIDs)
	}
	for id, want := range map[string]bool{"p1": true, "p2": true, "p3": true, "p4": true, "p0": false, "p5": false} { //detlint:ordered independent checks
		if got, err := s.r.idExists(ctx, v, id); err != nil || got != want {
			t.Fatalf("idExists(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
}

// TestIDIndexWriteFailureIsInvisible: a node insert whose id page or id
// chunk write fails publishes nothing; the retry indexes the node. The
// insert rewrites the pages as a delta's fold does (idDeltaWrites off: a
// one-row insert would ride the delta and write no index object).
func TestIDIndexWriteFailureIsInvisible(t *testing.T) {
	idDeltaWrites = false
	defer func() { idDeltaWrites = true }()
	for n := 0; n < 2; n++ {
		fs := &failAdjPut{Store: sim.New(sim.Config{Seed: 1}), n: 1 << 30}
		g := initGraph(t, fs, Limits{})
		seedGraph(t, g)
		before := snap(t, g).Kernel().ManifestVersion()
		fs.n, fs.seen = n, 0
		if err := commitErr(t, fs, 2, func(tx *Txn) error { return tx.Insert("Person", person("p4", "dee")) }); !errors.Is(err, errInjected) {
			t.Fatalf("failing id index write %d: %v, want the injected error", n, err)
		}
		if snap(t, openGraph(t, fs, 3)).Kernel().ManifestVersion() != before {
			t.Fatalf("failing id index write %d: a publish happened", n)
		}
		must(t, commitErr(t, fs, 4, func(tx *Txn) error { return tx.Insert("Person", person("p4", "dee")) }))
		must(t, commitErr(t, fs, 5, func(tx *Txn) error { return tx.Insert("Knows", edge("k9", "p4", "p1")) }))
	}
}

// TestIDIndexCrashCuts: a commit inserting a node and an edge to it, cut
// after each of its Puts and recovered by another process, shows the node
// in the id index exactly when Get finds it.
func TestIDIndexCrashCuts(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	for cut := 0; ; cut++ {
		inner := sim.New(sim.Config{Seed: 1})
		seedGraph(t, initGraph(t, inner, Limits{}))
		err := commitErr(t, &crashAfter{Store: inner, n: cut}, 7, func(tx *Txn) error {
			if err := tx.Insert("Person", person("p4", "dee")); err != nil {
				return err
			}
			return tx.Insert("Knows", edge("k9", "p4", "p1"))
		})
		if err == nil {
			if cut < 4 {
				t.Fatalf("the commit made %d puts; the sweep cut too few", cut)
			}
			return
		}
		r := openGraph(t, inner, 8)
		if _, err := r.Kernel().Recover(ctx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
			t.Fatalf("cut %d: recover: %v", cut, err)
		}
		s := snap(t, openGraph(t, inner, 9))
		_, found, err := s.Get(ctx, "Person", "p4")
		must(t, err)
		v, err := s.view(ctx, "Person")
		must(t, err)
		indexed, err := s.r.idExists(ctx, v, "p4")
		if err != nil || indexed != found {
			t.Fatalf("cut %d: p4 in the id index %v (%v), Get finds it %v", cut, indexed, err, found)
		}
		if cut > 64 {
			t.Fatal(fmt.Sprint("the commit never completed after ", cut, " cuts"))
		}
	}
}

// FuzzDecodeIDIndex: any bytes named by a reference whose size and CRC
// match them decode as an id chunk or an id page, or fail with
// ErrCorruptFragment; never a panic. What decodes satisfies the rules a
// reader relies on (strictly ascending valid ids, the referenced range).
func FuzzDecodeIDIndex(f *testing.F) {
	tb := testCatalog(f).tables["Person"]
	page := encodeIDPage([]string{"a", "ab", "b"})
	f.Add(page, false, uint64(3), "a", "b")
	f.Add(encodeIDPage([]string{"p000001", "p000002", "p000010"}), false, uint64(3), "p000001", "p000010")
	pref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: "a", LoID: "a", HiKey: "b", Rows: 3, Bytes: uint64(len(page)), CRC32C: crcOf(page)}
	payload, _ := json.Marshal(adjChunk{Table: "Person", Dir: "id", Pages: []adjRef{pref}})
	f.Add(format.EncodeAdjacencyChunk(payload), true, uint64(3), "a", "b")
	f.Fuzz(func(t *testing.T, b []byte, chunk bool, n uint64, lo, hi string) {
		ref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: lo, LoID: lo, HiKey: hi, Rows: n,
			Bytes: uint64(len(b)), CRC32C: crc32.Checksum(b, castagnoli)}
		if chunk {
			c, err := decodeChunk(tb, dirID, ref, b)
			if err != nil {
				if !errors.Is(err, ErrCorruptFragment) {
					t.Fatalf("untyped: %v", err)
				}
				return
			}
			if checkRefs(c.Pages, IDChunkPages, int64(n)) != nil || checkIDRefs(c.Pages) != nil {
				t.Fatal("decoded id chunk breaks the ref rules")
			}
			return
		}
		ids, err := decodeIDPage(ref, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		raw, err := storedIDPage(b)
		if err != nil || uint64(len(ids)) != n || ids[0] != lo || ids[len(ids)-1] != hi || string(encodeIDPage(ids)) != string(raw) {
			t.Fatal("decoded id page breaks the page rules")
		}
		for i, id := range ids {
			if idProblem(id) != "" || (i > 0 && ids[i-1] >= id) {
				t.Fatalf("decoded id page holds a bad or unordered id %q", id)
			}
		}
	})
}

// TestParseIDIndexRejects: the table-version list of id chunks is corrupt
// when refs overlap, repeat an id across refs, name a lo_id other than lo,
// or do not add up to the version's rows.
func TestParseIDIndexRejects(t *testing.T) {
	ref := func(name, lo, hi string, rows uint64) string {
		return fmt.Sprintf(`{"name":%q,"lo":%q,"lo_id":%q,"hi":%q,"rows":%d,"bytes":10,"crc32c":1}`, name, lo, lo, hi, rows)
	}
	a, b := "01HZZZZZZZZZZZZZZZZZZZZZZA", "01HZZZZZZZZZZZZZZZZZZZZZZB"
	for _, tc := range []struct {
		name, raw string
		rows      uint64
		ok        bool
	}{
		{"sound", "[" + ref(a, "a", "c", 2) + "," + ref(b, "d", "f", 2) + "]", 4, true},
		{"empty", "[]", 0, true},
		{"overlap", "[" + ref(a, "a", "d", 2) + "," + ref(b, "c", "f", 2) + "]", 4, false},
		{"shared-id", "[" + ref(a, "a", "d", 2) + "," + ref(b, "d", "f", 2) + "]", 4, false},
		{"lo-id", `[{"name":"` + a + `","lo":"a","lo_id":"b","hi":"c","rows":2,"bytes":10,"crc32c":1}]`, 2, false},
		{"rows", "[" + ref(a, "a", "c", 2) + "]", 3, false},
	} {
		_, ok, err := parseIDIndex(map[string]string{metaIDKey: tc.raw}, tc.rows)
		if (err == nil) != tc.ok || ok != tc.ok {
			t.Errorf("%s: ok=%v err=%v, want ok=%v", tc.name, ok, err, tc.ok)
		}
	}
}

// TestEdgeIDIndexInsert: an edge insert's id-existence check goes through
// the edge table's id index: a new id inside the range of an existing
// fragment reads no edge fragment (red without the edge id index: the
// covering fragment is loaded), and an existing id is still refused with
// ErrIDExists.
func TestEdgeIDIndexInsert(t *testing.T) {
	cs, _ := worksAtGraph(t, MaxFragmentRows+100)
	commitTx(t, openGraph(t, cs, 3), func(tx *Txn) error { return tx.Insert("Person", person("zz", "new")) })
	cs.Reset()
	must(t, commitErr(t, cs, 4, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w000100x", "zz", "c0")) }))
	if gets, b := prefixBytes(cs, testRoot+"/data/WorksAt/"); gets != 0 {
		t.Fatalf("an in-range edge insert read %d WorksAt fragments (%d bytes); want its id index only", gets, b)
	}
	if err := commitErr(t, cs, 5, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w000100", "zz", "c1")) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an existing edge id: %v, want ErrIDExists", err)
	}
}
