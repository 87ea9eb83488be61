package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// restampV4 turns a graph this build wrote with inline fragment infos into
// the format-4 layout it is apart from the stamp: every enveloped object
// stamped 4 (a manifest's format_stamp too), and the index chunk refs of
// every table version given the restamped chunks' CRC-32C. Raw data
// objects (fragments, index pages) carry no stamp.
func restampV4(t *testing.T, st *sim.Store) { t.Helper(); restampTo(t, st, format.FormatV4) }

// restampTo is restampV4 to any stamp of the current layout; below
// format.FormatCompressedChunks it also stores adjacency chunk payloads as
// the JSON those builds wrote.
func restampTo(t *testing.T, st *sim.Store, stamp uint16) {
	t.Helper()
	restampExcept(t, st, stamp, 0)
}

// restampExcept is restampTo leaving every object of kind keep (not 0) as
// it is.
func restampExcept(t *testing.T, st *sim.Store, stamp uint16, keep format.Kind) {
	t.Helper()
	crcs, sizes := map[string]uint32{}, map[string]uint64{}
	var versions []string
	for _, key := range st.Keys(testRoot + "/") {
		obj, err := st.Get(ctx, key)
		must(t, err)
		e, err := format.DecodeEnvelope(obj.Data)
		if err != nil {
			continue // not enveloped: a fragment or an index page
		}
		switch e.Kind {
		case keep: // unchanged: the versions keep its size and CRC-32C
			crcs[key[strings.LastIndex(key, "/")+1:]] = crc32.Checksum(obj.Data, castagnoli)
			sizes[key[strings.LastIndex(key, "/")+1:]] = uint64(len(obj.Data))
			continue
		case format.KindTableVersion:
			versions = append(versions, key)
			continue
		case format.KindManifest:
			if stamp < format.CurrentFormat && bytes.Contains(e.Payload, []byte(`"riding":`)) {
				t.Fatalf("restamp to %d: manifest %s carries a riding version (format 11); build the fixture with versionsAsObjects", stamp, key)
			}
			e.Payload = bytes.Replace(e.Payload, fmt.Appendf(nil, `"format_stamp":%d}`, format.CurrentFormat), fmt.Appendf(nil, `"format_stamp":%d}`, stamp), 1)
		case format.KindAdjacencyChunk:
			if stamp < format.FormatCompressedChunks { // the JSON payload those builds wrote
				e.Payload, err = format.OpenAdjacencyChunk(obj.Data)
				must(t, err)
			}
		}
		e.Stamp = stamp
		b := format.EncodeEnvelope(e)
		crcs[key[strings.LastIndex(key, "/")+1:]] = crc32.Checksum(b, castagnoli)
		sizes[key[strings.LastIndex(key, "/")+1:]] = uint64(len(b))
		_, err = st.Put(ctx, key, b, objstore.Unconditional)
		must(t, err)
	}
	for _, key := range versions {
		obj, err := st.Get(ctx, key)
		must(t, err)
		tv, tok, err := format.DecodeTableVersion(obj.Data)
		must(t, err)
		for i, kv := range tv.Metadata {
			if !strings.HasPrefix(kv.Key, metaAdjPrefix) {
				continue
			}
			var refs []adjRef
			must(t, json.Unmarshal([]byte(kv.Value), &refs))
			for j := range refs {
				refs[j].CRC32C, refs[j].Bytes = crcs[refs[j].Name], sizes[refs[j].Name]
			}
			b, err := json.Marshal(refs)
			must(t, err)
			if len(refs) == 0 {
				b = []byte("[]")
			}
			tv.Metadata[i].Value = string(b)
		}
		b, err := format.EncodeTableVersion(&tv, tok)
		must(t, err)
		e, err := format.DecodeEnvelope(b)
		must(t, err)
		e.Stamp = stamp
		_, err = st.Put(ctx, key, format.EncodeEnvelope(e), objstore.Unconditional)
		must(t, err)
	}
}

// initCounterGraph is initGraph writing as builds before format 8 did
// (counter-named table versions behind recovery sidecars), for fixtures
// restamped to an older format.
func initCounterGraph(t testing.TB, store objstore.Store) *Graph {
	t.Helper()
	g, err := Init(ctx, store, testRoot, testSchema(t), Options{Kernel: kernel.Options{Env: testEnv(1), CounterWrites: true, NoRiding: true}})
	if err != nil {
		t.Fatal(err)
	}
	return paging(g)
}

// TestFormat4GraphOpensAndPagesOnWrite: a graph in today's format-4
// layout (inline infos, every object stamped 4) opens read-write without
// any rewrite, reads whole, and its next commit is stamped 5 and pages the
// table it writes; the untouched format-4 versions keep reading.
func TestFormat4GraphOpensAndPagesOnWrite(t *testing.T) {
	versionsAsObjects(t) // a fixture of a format before 11: no version rides
	st := sim.New(sim.Config{Seed: 1})
	g := initCounterGraph(t, st)
	seedGraph(t, g)
	insertPeople(t, g, 0, 12)
	want := scanIDs(t, snap(t, g), "Person")
	restampV4(t, st)
	headKey := func() string {
		keys := st.Keys(testRoot + "/branches/main/")
		return keys[0] // inverted versions: the newest first
	}
	before := headKey()
	p := openGraph(t, st, 3)
	p.inline, p.fragChunkMax = 1, 2
	if headKey() != before {
		t.Fatalf("a read-write open of a format-4 graph wrote manifest %s", headKey())
	}
	if got := scanIDs(t, snap(t, p), "Person"); got != want {
		t.Fatalf("format-4 rows: %s, want %s", got, want)
	}
	if _, ok, err := snap(t, p).Get(ctx, "Person", "p0003"); err != nil || !ok {
		t.Fatalf("Get on the format-4 graph: %v %v", ok, err)
	}
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Person", person("p9999", "new")) })
	obj, err := st.Get(ctx, headKey())
	must(t, err)
	m, _, err := format.DecodeManifest(obj.Data)
	must(t, err)
	if m.FormatStamp != format.CurrentFormat {
		t.Fatalf("first publish after the open stamped %d, want %d", m.FormatStamp, format.CurrentFormat)
	}
	tv := pinnedVersion(t, p, "Person")
	if len(fragRefsOf(t, tv)) == 0 {
		t.Fatalf("the commit's Person version is not paged")
	}
	pin := pinRef(snap(t, p).ks, "Person")
	raw, err := st.Get(ctx, p.keys.TableVersionRef("Person", pin.Ref()))
	must(t, err)
	if e, err := format.DecodeEnvelope(raw.Data); err != nil || e.Stamp != format.CurrentFormat {
		t.Fatalf("paged table version stamped %d (%v), want %d: a format-4 binary must refuse it", e.Stamp, err, format.CurrentFormat)
	}
	if got, w := scanIDs(t, snap(t, openGraph(t, st, 4)), "Person"), want+",p9999"; got != w {
		t.Fatalf("rows after the paged commit: %s, want %s", got, w)
	}
	if got := scanIDs(t, snap(t, openGraph(t, st, 5)), "Company"); got == "" {
		t.Fatalf("format-4 Company version unreadable: %q", got)
	}
}
