package data

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// genChunk draws a chunk whose refs a writer could list: ULID names,
// keys of 1..MaxIDBytes bytes of UTF-8 sharing prefixes often (a small
// alphabet), each ref's level the chunk's less one.
func genChunk(rt *rapid.T) adjChunk {
	key := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', 'n', '0', '1', '9', 'é', '世'}), 1, 90, MaxIDBytes)
	c := adjChunk{
		Table: rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_]{0,20}`).Draw(rt, "table"),
		Dir:   rapid.SampledFrom([]string{"out", "in", "id"}).Draw(rt, "dir"),
		Level: rapid.IntRange(0, maxIndexLevels).Draw(rt, "level"),
	}
	n := rapid.IntRange(1, 70).Draw(rt, "refs")
	for i := range n {
		var id ulid.ULID
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, fmt.Sprint("name", i)))
		c.Pages = append(c.Pages, adjRef{
			Name: id.String(), LoKey: key.Draw(rt, "lo"), LoID: key.Draw(rt, "lo_id"), HiKey: key.Draw(rt, "hi"),
			Rows: rapid.Uint64().Draw(rt, "rows"), Bytes: rapid.Uint64().Draw(rt, "bytes"), CRC32C: rapid.Uint32().Draw(rt, "crc"),
			Level: max(c.Level-1, 0),
		})
	}
	return c
}

// TestBinaryChunkRoundTrip: every chunk a writer could list decodes from
// its binary form and from its JSON form to itself, and the binary form is
// the smaller.
func TestBinaryChunkRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := genChunk(rt)
		bin := encodeChunkPayload(c, false)
		if !bytes.HasPrefix(bin, chunkBinaryMagic) {
			rt.Fatalf("format %d writes %q, not the binary form", format.CurrentFormat, bin[:min(8, len(bin))])
		}
		js := encodeChunkPayload(c, true)
		for form, p := range map[string][]byte{"binary": bin, "json": js} {
			got, err := decodeChunkPayload(p)
			if err != nil {
				rt.Fatalf("%s: %v", form, err)
			}
			if d := cmp.Diff(c, got); d != "" {
				rt.Fatalf("%s round trip (-want +got):\n%s", form, d)
			}
		}
		if len(bin) >= len(js) {
			rt.Fatalf("binary %d bytes, JSON %d", len(bin), len(js))
		}
	})
}

// binaryChunkOf returns the binary payload of a small valid chunk.
func binaryChunkOf(t *testing.T) (adjChunk, []byte) {
	t.Helper()
	c := adjChunk{Table: "Knows", Dir: "out", Level: 1, Pages: []adjRef{
		{Name: "01HZZZZZZZZZZZZZZZZZZZZZZA", LoKey: "n0001", LoID: "k0001", HiKey: "n0004", Rows: 7, Bytes: 300, CRC32C: 1, Level: 0},
		{Name: "01HZZZZZZZZZZZZZZZZZZZZZZB", LoKey: "n0005", LoID: "k0007", HiKey: "n0009", Rows: 9, Bytes: 310, CRC32C: 2, Level: 0},
	}}
	return c, encodeChunkPayload(c, false)
}

// TestBinaryChunkRefusals: a binary payload that breaks the layout is
// refused with errChunkBinary (a decodeChunk of it with
// ErrCorruptFragment) and never panics or allocates past its size: every
// truncation, a byte after the last ref, a count of none or of more refs
// than the bytes can hold, a front-coded key sharing more than its
// neighbour has or longer than MaxIDBytes, a key that is not UTF-8, a
// level above the bound, an overlong varint.
func TestBinaryChunkRefusals(t *testing.T) {
	c, valid := binaryChunkOf(t)
	if got, err := decodeChunkPayload(valid); err != nil || !cmp.Equal(got, c) {
		t.Fatalf("the valid payload: %+v, %v", got, err)
	}
	head := func(level, count uint64) []byte {
		b := append([]byte{}, chunkBinaryMagic...)
		b = appendLenString(appendLenString(b, "Knows"), "out")
		return binary.AppendUvarint(binary.AppendUvarint(b, level), count)
	}
	ref := func(b []byte, loShared uint64, lo string) []byte {
		b = append(b, make([]byte, 16)...)
		b = appendLenString(binary.AppendUvarint(b, loShared), lo)
		b = appendLenString(binary.AppendUvarint(b, 0), "k")
		b = appendLenString(binary.AppendUvarint(b, 0), "z")
		b = binary.AppendUvarint(binary.AppendUvarint(b, 1), 1)
		return append(b, 0, 0, 0, 0)
	}
	cases := []struct {
		name string
		p    []byte
	}{
		{"a byte after the last ref", append(append([]byte{}, valid...), 0)},
		{"no refs", head(0, 0)},
		{"more refs than bytes", ref(head(0, 2), 0, "a")},
		{"a count past the bound", ref(head(0, maxChunkRefs+1), 0, "a")},
		{"level past the bound", ref(head(maxIndexLevels+1, 1), 0, "a")},
		{"shares more than the key before it", ref(head(0, 1), 1, "a")},
		{"a key longer than MaxIDBytes", ref(head(0, 1), 0, strings.Repeat("a", MaxIDBytes+1))},
		{"a key that is not UTF-8", ref(head(0, 1), 0, "\xff")},
		{"an overlong varint", append(append(append([]byte{}, chunkBinaryMagic...), bytes.Repeat([]byte{0x80}, 10)...), 1)},
		{"a string past the end", appendLenString(append([]byte{}, chunkBinaryMagic...), "Knows")[:len(chunkBinaryMagic)+3]},
	}
	for i := len(chunkBinaryMagic); i < len(valid); i++ {
		cases = append(cases, struct {
			name string
			p    []byte
		}{fmt.Sprintf("truncated at %d", i), valid[:i]})
	}
	tb := testCatalog(t).tables["Knows"]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeChunkPayload(tc.p); !errors.Is(err, errChunkBinary) {
				t.Fatalf("decode: %v, want errChunkBinary", err)
			}
			b := format.EncodeAdjacencyChunk(tc.p)
			ref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: "n0001", LoID: "k0001", HiKey: "n0009", Rows: 16, Level: 1, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
			if _, err := decodeChunk(tb, dirOut, ref, b); !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("decodeChunk: %v, want ErrCorruptFragment", err)
			}
		})
	}
}

// FuzzIndexChunkPayload: any payload decodes as an index chunk or a
// fragment ref chunk or fails, never panics; a binary payload that decodes
// re-encodes to one that decodes to the same chunk (the writer's maximal prefixes may differ from the
// input's).
func FuzzIndexChunkPayload(f *testing.F) {
	c := adjChunk{Table: "Knows", Dir: "out", Level: 1, Pages: []adjRef{
		{Name: "01HZZZZZZZZZZZZZZZZZZZZZZA", LoKey: "n0001", LoID: "k0001", HiKey: "n0004", Rows: 7, Bytes: 300, CRC32C: 1},
		{Name: "01HZZZZZZZZZZZZZZZZZZZZZZB", LoKey: "n0005", LoID: "k0007", HiKey: "n0009", Rows: 9, Bytes: 310, CRC32C: 2},
	}}
	f.Add(encodeChunkPayload(c, false))
	f.Add(encodeChunkPayload(c, true))
	f.Add(encodeFragRefChunkPayload(fragRefChunk{Table: "Person", Dir: dirFrag, Level: 1, Refs: []fragChunkRef{
		{Name: "01HZZZZZZZZZZZZZZZZZZZZZZA", Min: "p0001", Max: "p0009", Frags: 2, Rows: 9, Bytes: 300, CRC32C: 1},
	}}, false))
	f.Fuzz(func(t *testing.T, p []byte) {
		if fr, err := decodeFragRefChunkPayload(p); err == nil && bytes.HasPrefix(p, fragRefBinaryMagic) {
			again, err := decodeFragRefChunkPayload(encodeFragRefChunkPayload(fr, false))
			if err != nil || !cmp.Equal(fr, again) {
				t.Fatalf("re-encoded fragment ref chunk: %v (-first +again):\n%s", err, cmp.Diff(fr, again))
			}
		}
		got, err := decodeChunkPayload(p)
		if err != nil || !bytes.HasPrefix(p, chunkBinaryMagic) {
			return
		}
		again, err := decodeChunkPayload(encodeChunkPayload(got, false))
		if err != nil {
			t.Fatalf("re-encoded chunk refused: %v", err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("re-encoded chunk differs (-first +again):\n%s", d)
		}
	})
}

// TestFormat11ChunksOpenAndBinaryOnWrite: a graph whose index chunks are
// all JSON (the payload every build up to format 11 wrote), manifests and
// versions stamped 11, opens read-write without a rewrite and reads the
// same adjacency; its next commit is stamped 12 and writes the chunks on
// its paths in binary, the chunks it leaves stay JSON and keep reading,
// and garbage collection's walk (AdjacencyChunkEntries) reads both forms.
// The chunks keep their envelope stamp: a chunk's stamp does not choose
// how its payload is read, its first byte does.
func TestFormat11ChunksOpenAndBinaryOnWrite(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	versionsAsObjects(t)
	jsonChunkHandles(t)
	treeHandles(t)
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error {
		for i := range 30 {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("k%03d", i), fmt.Sprintf("p%d", 1+i%2), "p2")); err != nil {
				return err
			}
		}
		return nil
	})
	for b := range 10 { // 10 fragments of falling sizes (none merges): a paged list under fragment ref chunks
		commitTx(t, g, func(tx *Txn) error {
			var rows []Row
			for k := range 20 - b {
				rows = append(rows, person(fmt.Sprintf("q%02d%02d", b, k), "x"))
			}
			return tx.Insert("Person", rows...)
		})
	}
	forms := chunkForms(t, st)
	if forms["json"] == 0 || forms["binary"] != 0 || forms["frag-json"] == 0 || forms["frag-binary"] != 0 {
		t.Fatalf("fixture chunk forms %v, want JSON only, fragment ref chunks among them", forms)
	}
	wantPeople := scanIDs(t, snap(t, g), "Person")
	wantOut, wantIn := ids(mustRows(snap(t, g).Out(ctx, "Knows", "p1"))), ids(mustRows(snap(t, g).In(ctx, "Knows", "p2")))
	restampExcept(t, st, format.FormatV11, format.KindAdjacencyChunk)
	testJSONChunks = false
	before := st.Keys(testRoot + "/branches/main/")[0]
	p := openGraph(t, st, 3)
	if st.Keys(testRoot + "/branches/main/")[0] != before {
		t.Fatal("a read-write open of a format-11 graph wrote a manifest")
	}
	if got := ids(mustRows(snap(t, p).Out(ctx, "Knows", "p1"))); got != wantOut {
		t.Fatalf("format-11 Out(p1) = %s, want %s", got, wantOut)
	}
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Knows", edge("k999", "p1", "p2")) })
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Person", person("q9999", "new")) })
	after := chunkForms(t, st)
	if after["binary"] == 0 || after["json"] != forms["json"] || after["frag-binary"] == 0 || after["frag-json"] != forms["frag-json"] {
		t.Fatalf("after format-12 commits: chunk forms %v (before %v), want binary chunks added and every JSON chunk kept", after, forms)
	}
	if got := scanIDs(t, snap(t, openGraph(t, st, 5)), "Person"); !strings.Contains(got, "q9999") || strings.Count(got, ",") != strings.Count(wantPeople, ",")+1 {
		t.Fatalf("Person after the commit: %s, want %s and q9999", got, wantPeople)
	}
	fresh := snap(t, openGraph(t, st, 4))
	if got := ids(mustRows(fresh.Out(ctx, "Knows", "p1"))); got != wantOut+",k999" {
		t.Fatalf("Out(p1) after the commit = %s, want %s,k999", got, wantOut)
	}
	if got := ids(mustRows(fresh.In(ctx, "Knows", "p2"))); got != wantIn+",k999" {
		t.Fatalf("In(p2) after the commit = %s, want %s,k999", got, wantIn)
	}
	obj, err := st.Get(ctx, st.Keys(testRoot + "/branches/main/")[0])
	must(t, err)
	if m, _, err := format.DecodeManifest(obj.Data); err != nil || m.FormatStamp != format.CurrentFormat {
		t.Fatalf("manifest after the commit: stamp %d, %v; want %d", m.FormatStamp, err, format.CurrentFormat)
	}
}

// chunkForms counts the index chunks on st by payload form (fragment
// chunks, "dir":"frag", are not counted).
func chunkForms(t *testing.T, st *sim.Store) map[string]int {
	t.Helper()
	forms := map[string]int{}
	for _, key := range st.Keys(testRoot + "/adj/") {
		obj, err := st.Get(ctx, key)
		must(t, err)
		payload, err := format.OpenAdjacencyChunk(obj.Data)
		if err != nil {
			continue // a page
		}
		if _, err := decodeFragRefChunkPayload(payload); err == nil && bytes.HasPrefix(payload, fragRefBinaryMagic) {
			forms["frag-binary"]++
			continue
		}
		c, err := decodeChunkPayload(payload)
		must(t, err)
		if c.Dir == dirFrag {
			if c.Level > 0 {
				forms["frag-json"]++
			}
			continue
		}
		names, _, err := AdjacencyChunkEntries(obj.Data)
		if err != nil || len(names) != len(c.Pages) {
			t.Fatalf("AdjacencyChunkEntries(%s) = %d names, %v; the chunk lists %d", key, len(names), err, len(c.Pages))
		}
		form := "json"
		if bytes.HasPrefix(payload, chunkBinaryMagic) {
			form = "binary"
		} else if !json.Valid(payload) {
			t.Fatalf("chunk %s is neither form", key)
		}
		forms[form]++
	}
	return forms
}

// TestBinaryFragRefChunkRoundTrip: every fragment ref chunk a writer could
// list decodes from its binary form and from its JSON form to itself, and
// the binary form is the smaller; every truncation of a binary payload,
// a trailing byte, level 0 and a count past FragRefChunkRefs are refused
// (errChunkBinary), never a panic.
func TestBinaryFragRefChunkRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		key := rapid.StringOfN(rapid.SampledFrom([]rune{'p', '0', '1', '9', 'é'}), 1, 40, MaxIDBytes)
		c := fragRefChunk{Table: rapid.StringMatching(`[A-Za-z][A-Za-z0-9_]{0,12}`).Draw(rt, "table"), Dir: dirFrag, Level: rapid.IntRange(1, maxFragLevels).Draw(rt, "level")}
		for i := range rapid.IntRange(1, FragRefChunkRefs).Draw(rt, "refs") {
			var id ulid.ULID
			copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, fmt.Sprint("name", i)))
			c.Refs = append(c.Refs, fragChunkRef{Name: id.String(), Min: key.Draw(rt, "min"), Max: key.Draw(rt, "max"),
				Frags: rapid.Uint64().Draw(rt, "frags"), Rows: rapid.Uint64().Draw(rt, "rows"), Bytes: rapid.Uint64().Draw(rt, "bytes"),
				CRC32C: rapid.Uint32().Draw(rt, "crc"), Level: c.Level - 1})
		}
		bin, js := encodeFragRefChunkPayload(c, false), encodeFragRefChunkPayload(c, true)
		if !bytes.HasPrefix(bin, fragRefBinaryMagic) || len(bin) >= len(js) {
			rt.Fatalf("binary %d bytes (magic %v), JSON %d", len(bin), bytes.HasPrefix(bin, fragRefBinaryMagic), len(js))
		}
		for form, p := range map[string][]byte{"binary": bin, "json": js} {
			got, err := decodeFragRefChunkPayload(p)
			if err != nil {
				rt.Fatalf("%s: %v", form, err)
			}
			if d := cmp.Diff(c, got); d != "" {
				rt.Fatalf("%s round trip (-want +got):\n%s", form, d)
			}
		}
		for i := len(fragRefBinaryMagic); i < len(bin); i++ {
			if _, err := decodeFragRefChunkPayload(bin[:i]); !errors.Is(err, errChunkBinary) {
				rt.Fatalf("truncated at %d of %d: %v", i, len(bin), err)
			}
		}
		if _, err := decodeFragRefChunkPayload(append(append([]byte{}, bin...), 0)); !errors.Is(err, errChunkBinary) {
			rt.Fatalf("a trailing byte: %v", err)
		}
		if _, err := decodeChunkPayload(bin); err == nil {
			rt.Fatal("a binary fragment ref chunk decodes as an index chunk")
		}
	})
	head := func(level, count uint64) []byte {
		b := appendLenString(appendLenString(append([]byte{}, fragRefBinaryMagic...), "Person"), dirFrag)
		return append(binary.AppendUvarint(binary.AppendUvarint(b, level), count), make([]byte, 64)...)
	}
	for name, p := range map[string][]byte{"level 0": head(0, 1), "a count past FragRefChunkRefs": head(1, FragRefChunkRefs+1)} { //detlint:ordered each case checked alike
		if _, err := decodeFragRefChunkPayload(p); !errors.Is(err, errChunkBinary) {
			t.Fatalf("%s: %v, want errChunkBinary", name, err)
		}
	}
}
