package maintain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestImmutableCacheBounds: an entry neither of the last two collections
// used is dropped at a collection's end, an insert past maxImmutableBytes
// is skipped, and bytes a decode refused are never kept (the next read
// goes to the store again).
func TestImmutableCacheBounds(t *testing.T) {
	var c immutableCache
	c.beginRun()
	c.put("a", "1", 1)
	c.put("b", "2", 1)
	c.endRun()
	c.beginRun()
	if _, ok := c.get("a"); !ok {
		t.Fatal("a, read in the last collection, was dropped")
	}
	c.endRun()
	c.beginRun()
	c.endRun() // b unused by this run and the one before: dropped
	if _, ok := c.get("b"); ok {
		t.Error("b, unused by the last two collections, was kept")
	}
	if c.bytes != 1 {
		t.Errorf("bytes = %d after dropping b, want 1", c.bytes)
	}
	c.put("big", "big", maxImmutableBytes)
	if _, ok := c.get("big"); ok || c.bytes != 1 {
		t.Errorf("an insert past the bound was kept (bytes %d)", c.bytes)
	}

	ctx := context.Background()
	st := sim.New(sim.Config{Seed: 1})
	if _, err := st.Put(ctx, "k", []byte("bad"), objstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	m := &Maintainer{store: st}
	refuse := errors.New("corrupt")
	for i := 0; i < 2; i++ {
		if _, _, err := readImmutable(ctx, m, "k", func([]byte) (string, error) { return "", refuse }); !errors.Is(err, refuse) {
			t.Fatalf("read %d: err = %v, want the decode's", i, err)
		}
		if _, ok := m.immut.get("k"); ok {
			t.Fatalf("read %d: bytes the decode refused were cached", i)
		}
	}
}

// TestCachedLoadsNeedTheRunsListing: a reach, manifest or pair's
// merge-base loads an earlier collection cached is used only when this
// run listed the manifest (every manifest on the pair's list); one the
// run did not list (collected since by another collector) is read from
// the store, where it is gone, so a merge base needing it is counted
// unknown instead of kept from memory.
func TestCachedLoadsNeedTheRunsListing(t *testing.T) {
	ctx := context.Background()
	m := &Maintainer{store: sim.New(sim.Config{Seed: 1}), keys: format.NewKeys("g"), clock: kernel.NewManualClock(time.Unix(1000, 0))}
	at := format.ManifestRef{Branch: "main", Incarnation: 1, Version: 5}
	key := m.keys.Manifest(at.Branch, at.Incarnation, at.Version)
	m.immut.beginRun()
	m.immut.putReach(lineage.Reach{At: at, HeadAt: at, Gen: 6})
	m.immut.put(key, format.Manifest{Version: 5}, 100)
	for _, listed := range []bool{false, true} {
		c := &collection{m: m, rec: format.Collection{ExpiresUnixNano: time.Unix(2000, 0).UnixNano()}, listed: map[string]bool{key: listed}, listedAt: map[format.ManifestRef]bool{at: listed},
			reachOf: map[format.ManifestRef]reachLoad{}, seen: map[format.ManifestRef]format.Manifest{}}
		_, found, err := c.reachAt(ctx, at)
		if err != nil || found != listed {
			t.Errorf("listed %v: reach found %v, err %v; want found %v", listed, found, err, listed)
		}
		_, found, err = c.manifest(ctx, key)
		if err != nil || found != listed {
			t.Errorf("listed %v: manifest found %v, err %v; want found %v", listed, found, err, listed)
		}
		head := format.ManifestRef{Branch: "f", Incarnation: 1, Version: 2}
		c.listedAt[head] = true
		pairMemo{c}.SetPair(head, head, []format.ManifestRef{head, at})
		if _, ok := (pairMemo{c}).Pair(head, head); ok != listed {
			t.Errorf("listed %v: a pair whose loads include it replayed %v", listed, ok)
		}
	}
}

// TestCachedTableVersionsLeaveTheirEmbedsOut: a table version named per
// attempt is cached for marking without the fragments it embeds (format
// 9: up to 8 KiB of base64 in its metadata, which no collection reads),
// and is charged only what it keeps. Before, a collection beside a
// long-lived branch (lifetime-10k seed 3: about 5,800 kept versions)
// filled maxImmutableBytes with embedded bytes, and each later run read
// thousands of versions again; a run with its keep set cached took 1.4 s
// of simulated time, one with the cache full over a minute.
func TestCachedTableVersionsLeaveTheirEmbedsOut(t *testing.T) {
	ctx := context.Background()
	st := sim.New(sim.Config{Seed: 1})
	m := &Maintainer{store: st, keys: format.NewKeys("g")}
	fork := format.ID{1}
	attempt := format.ID{2}
	embed := strings.Repeat("QUJD", 1500) // 6,000 bytes of base64
	tv := format.TableVersion{Table: "Person", Fork: fork, Version: 3, Attempt: attempt, Fragments: []string{"01J000000000000000000000AA"}, Rows: 1,
		Metadata: []format.KV{{Key: "data.embed.01J000000000000000000000AA", Value: embed}, {Key: "data.format", Value: "1"}}}
	b, err := format.EncodeTableVersion(&tv, format.Token{})
	if err != nil {
		t.Fatal(err)
	}
	key := m.keys.TableVersionRef("Person", tv.Ref())
	if _, err := st.Put(ctx, key, b, objstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	c := &collection{m: m}
	got, found, err := c.tableVersion(ctx, key, true)
	if err != nil || !found {
		t.Fatalf("table version: %v %v", found, err)
	}
	if len(got.Metadata) != 1 || got.Metadata[0].Key != "data.format" || got.Version != 3 || len(got.Fragments) != 1 {
		keys := make([]string, len(got.Metadata))
		for i, kv := range got.Metadata {
			keys[i] = kv.Key
		}
		t.Fatalf("the marking view has metadata %v (version %d, %d fragments), want data.format alone", keys, got.Version, len(got.Fragments))
	}
	if c.m.immut.bytes*4 > len(b) {
		t.Fatalf("the cached version is charged %d bytes of its %d", c.m.immut.bytes, len(b))
	}
}

// TestPrefetchNeedsRoom: a prefetch reads what the cache does not hold in
// one batch while the cache has room, and reads nothing once it has less
// than minPrefetchRoom left (what it could not keep, the single reads
// that follow would read again).
func TestPrefetchNeedsRoom(t *testing.T) {
	ctx := context.Background()
	st := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := st.Put(ctx, k, []byte(k), objstore.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	m := &Maintainer{store: st}
	keep := func(b []byte) (string, int, error) { return string(b), 0, nil }
	m.immut.put("c", "c", 1)
	r0 := st.Rounds()
	prefetchImmutable(ctx, m, []string{"a", "b", "c"}, keep)
	if n := st.Rounds() - r0; n != 1 {
		t.Fatalf("prefetch of 2 uncached keys took %d rounds, want 1", n)
	}
	for _, k := range []string{"a", "b"} {
		if v, ok := m.immut.get(k); !ok || v != k {
			t.Fatalf("%s after the prefetch: %v %v", k, v, ok)
		}
	}
	var full Maintainer
	full.store = st
	full.immut.put("big", "big", maxImmutableBytes-minPrefetchRoom+1)
	r0 = st.Rounds()
	prefetchImmutable(ctx, &full, []string{"a", "b"}, keep)
	if n := st.Rounds() - r0; n != 0 {
		t.Fatalf("a prefetch into a full cache took %d rounds, want none", n)
	}
}
