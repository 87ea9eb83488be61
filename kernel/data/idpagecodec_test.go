package data

import (
	"bytes"
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// idPageKinds counts the id pages of table typ on st by how they are
// stored: a zstd frame or a plain front-coded page ("gkid"). A node
// table's adjacency prefix holds only id pages and chunks.
func idPageKinds(t *testing.T, st *sim.Store, typ string) (zstdN, plainN int) {
	t.Helper()
	page, err := st.List(ctx, testRoot+"/adj/"+typ+"/", "", 0)
	must(t, err)
	for _, k := range page.Keys {
		obj, err := st.Get(ctx, k)
		must(t, err)
		switch {
		case bytes.HasPrefix(obj.Data, zstdMagic):
			zstdN++
		case bytes.HasPrefix(obj.Data, []byte(idPageMagic)):
			plainN++
		}
	}
	return zstdN, plainN
}

// TestZstdIDPagesMixedRead: a zstd handle stores id pages as zstd frames
// (red without compressIDPage) and a plain handle as front-coded pages;
// a graph written plain and then by a zstd handle answers every existence
// check through either kind of page (red without storedIDPage: a zstd
// page would be "not an id page").
func TestZstdIDPagesMixedRead(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	plainG, err := Init(ctx, st, testRoot, testSchema(t), Options{Codec: CodecPlain, Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	people := manyPeople(3000)
	commitTx(t, plainG, func(tx *Txn) error { return tx.Insert("Person", people[:2000]...) })
	if z, p := idPageKinds(t, st, "Person"); z != 0 || p == 0 {
		t.Fatalf("plain handle stored %d zstd and %d plain id pages", z, p)
	}
	zG, err := Open(ctx, st, testRoot, Options{Codec: CodecZstd, Kernel: kernel.Options{Env: testEnv(2)}})
	must(t, err)
	commitTx(t, zG, func(tx *Txn) error { return tx.Insert("Person", people[2000:]...) })
	if z, p := idPageKinds(t, st, "Person"); z == 0 || p == 0 {
		t.Fatalf("after the zstd handle: %d zstd and %d plain id pages, want both", z, p)
	}
	s := snap(t, openGraph(t, st, 3))
	v, err := s.view(ctx, "Person")
	if err != nil || !v.hasIDs {
		t.Fatalf("Person view: %v, id index %v", err, v != nil && v.hasIDs)
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{{people[0].ID, true}, {people[1999].ID, true}, {people[2000].ID, true}, {people[2999].ID, true}, {"person-9999999", false}, {"person-00000005", false}} {
		if got, err := s.r.idExists(ctx, v, tc.id); err != nil || got != tc.want {
			t.Fatalf("idExists(%s) = %v, %v; want %v", tc.id, got, err, tc.want)
		}
	}
	if err := commitErr(t, st, 4, func(tx *Txn) error { return tx.Insert("Person", people[2500]) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an id held by a zstd page: %v, want ErrIDExists", err)
	}
	if err := commitErr(t, st, 5, func(tx *Txn) error { return tx.Insert("Person", people[5]) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an id held by a plain page: %v, want ErrIDExists", err)
	}
}

// TestZstdIDPageSmaller: under the zstd codec an id page of sequential
// ids is stored several times smaller than its front-coded form, and the
// stored bytes are deterministic.
func TestZstdIDPageSmaller(t *testing.T) {
	var ids []string
	for _, r := range manyPeople(EdgeIDPageRows) {
		ids = append(ids, r.ID)
	}
	raw := encodeIDPage(ids)
	z := compressIDPage(CodecZstd, raw)
	if !bytes.HasPrefix(z, zstdMagic) || len(z)*4 > len(raw) {
		t.Fatalf("zstd id page: %d stored bytes for %d front-coded", len(z), len(raw))
	}
	if again := compressIDPage(CodecZstd, encodeIDPage(ids)); !bytes.Equal(again, z) {
		t.Fatal("the same ids stored two different zstd pages")
	}
	if plain := compressIDPage(CodecPlain, raw); !bytes.Equal(plain, raw) {
		t.Fatal("the plain codec changed the id page")
	}
	got, err := decodeIDPage(adjRef{Name: "z", LoKey: ids[0], LoID: ids[0], HiKey: ids[len(ids)-1], Rows: uint64(len(ids)),
		Bytes: uint64(len(z)), CRC32C: crcOf(z)}, z)
	if err != nil || len(got) != len(ids) || got[len(got)-1] != ids[len(ids)-1] {
		t.Fatalf("zstd id page decodes to %d ids: %v", len(got), err)
	}
}

// TestZstdIDPageForgedContentSize: a CRC-valid zstd id page whose frame
// declares another content size is ErrCorruptFragment, and a declared
// size past the bounds allocates nothing like it.
func TestZstdIDPageForgedContentSize(t *testing.T) {
	var ids []string
	for _, r := range manyPeople(IDPageRows) {
		ids = append(ids, r.ID)
	}
	raw := encodeIDPage(ids)
	z := compressIDPage(CodecZstd, raw)
	for _, tc := range forgedContentSizes(len(z), len(raw)) {
		t.Run(tc.name, func(t *testing.T) {
			b := forgeContentSize(t, z, tc.size)
			ref := adjRef{Name: "forged", LoKey: ids[0], LoID: ids[0], HiKey: ids[len(ids)-1], Rows: uint64(len(ids)),
				Bytes: uint64(len(b)), CRC32C: crcOf(b)}
			refusesCorrupt(t, "decodeIDPage of a forged content size", forgedSizeAllocBound(tc.size, len(raw)),
				[]error{ErrCorruptFragment, format.ErrCorrupt}, func() error {
					_, err := decodeIDPage(ref, b)
					return err
				})
		})
	}
}

// FuzzDecodeZstdIDPage: whatever a (CRC-valid) zstd id page holds — a
// forged content size, damaged blocks, a truncated or concatenated frame,
// a frame of something that is not an id page — decoding never panics,
// returns ErrCorruptFragment or ids obeying the page rules, and its
// allocation is bounded by the header checks.
func FuzzDecodeZstdIDPage(f *testing.F) {
	var ids []string
	for _, r := range manyPeople(300) {
		ids = append(ids, r.ID)
	}
	good := compressIDPage(CodecZstd, encodeIDPage(ids))
	f.Add(good, uint64(len(ids)), ids[0], ids[len(ids)-1])
	f.Add(good[:len(good)/2], uint64(len(ids)), ids[0], ids[len(ids)-1])
	f.Add(append(append([]byte(nil), good...), good...), uint64(len(ids)), ids[0], ids[len(ids)-1])
	f.Add(compressIPC(CodecZstd, bytes.Repeat([]byte("not an id page "), 40)), uint64(3), "a", "b")
	fhd := good[4]
	forged := append(append([]byte(nil), good[:4]...), 0xe0|(fhd&0x1c))
	forged = append(forged, 0, 0, 0, 0, 0, 1, 0, 0) // 2^40
	f.Add(append(forged, good[5+[...]int{1, 2, 4, 8}[fhd>>6]:]...), uint64(len(ids)), ids[0], ids[len(ids)-1])
	f.Fuzz(func(t *testing.T, b []byte, n uint64, lo, hi string) {
		ref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: lo, LoID: lo, HiKey: hi, Rows: n, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
		got, err := decodeIDPage(ref, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		raw, err := storedIDPage(b)
		if err != nil || uint64(len(got)) != n || got[0] != lo || got[len(got)-1] != hi || !bytes.Equal(encodeIDPage(got), raw) {
			t.Fatal("decoded id page breaks the page rules")
		}
		for i, id := range got {
			if idProblem(id) != "" || (i > 0 && got[i-1] >= id) {
				t.Fatalf("decoded id page holds a bad or unordered id %q", id)
			}
		}
	})
}

// chunkKinds counts the kind-14 chunks on st under adj/ by how their
// payload is stored: a zstd frame (format 7) or the JSON of earlier
// builds.
func chunkKinds(t *testing.T, st *sim.Store) (zstdN, jsonN int) {
	t.Helper()
	for _, k := range st.Keys(testRoot + "/adj/") {
		obj, err := st.Get(ctx, k)
		must(t, err)
		e, err := format.DecodeEnvelope(obj.Data)
		if err != nil || e.Kind != format.KindAdjacencyChunk {
			continue // an id or adjacency page
		}
		if bytes.HasPrefix(e.Payload, zstdMagic) {
			zstdN++
		} else {
			jsonN++
		}
	}
	return zstdN, jsonN
}

// TestFormat6GraphOpensAndWritesCompactPages: a graph in the format-6
// layout (plain front-coded id pages, Arrow IPC adjacency pages, JSON
// chunks, every object stamped 6) opens read-write without any rewrite
// and answers existence checks and Out/In; its next commits are stamped 7
// and the id pages, adjacency pages and chunks they rewrite take the
// compact encodings (D23), while the untouched old ones keep reading.
func TestFormat6GraphOpensAndWritesCompactPages(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g, err := Init(ctx, st, testRoot, testSchema(t), Options{Codec: CodecPlain, Kernel: kernel.Options{Env: testEnv(1), CounterWrites: true}})
	must(t, err)
	people := manyPeople(3000)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", people[:2000]...) })
	var knows []Row
	for i := range 3000 {
		knows = append(knows, edge(edgeID(i), people[i%1500].ID, people[(i*7+1)%1500].ID))
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", knows[:2000]...) })
	restampTo(t, st, format.FormatV6)
	if z, j := chunkKinds(t, st); z != 0 || j == 0 {
		t.Fatalf("format-6 layout: %d zstd and %d JSON chunks, want JSON only", z, j)
	}
	headKey := func() string { return st.Keys(testRoot + "/branches/main/")[0] } // the newest first
	before := headKey()
	p, err := Open(ctx, st, testRoot, Options{Codec: CodecZstd, Kernel: kernel.Options{Env: testEnv(2)}})
	must(t, err)
	if headKey() != before {
		t.Fatalf("a read-write open of a format-6 graph wrote manifest %s", headKey())
	}
	if _, ok, err := snap(t, p).Get(ctx, "Person", people[7].ID); err != nil || !ok {
		t.Fatalf("Get on the format-6 graph: %v %v", ok, err)
	}
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Person", people[2000:]...) })
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Knows", knows[2000:]...) })
	obj, err := st.Get(ctx, headKey())
	must(t, err)
	m, _, err := format.DecodeManifest(obj.Data)
	must(t, err)
	if m.FormatStamp != format.CurrentFormat || format.CurrentFormat <= format.FormatV6 || format.CurrentFormat < FormatCompressedIDPages ||
		format.CurrentFormat < FormatColumnPages || format.CurrentFormat < format.FormatCompressedChunks {
		t.Fatalf("publish after the open stamped %d, want %d", m.FormatStamp, format.CurrentFormat)
	}
	if z, pl := idPageKinds(t, st, "Person"); z == 0 || pl == 0 {
		t.Fatalf("after the format-7 commit: %d zstd and %d plain id pages, want both", z, pl)
	}
	if c, a := adjPageKinds(t, st, "Knows"); c == 0 || a == 0 {
		t.Fatalf("after the format-7 commit: %d column and %d Arrow pages, want both", c, a)
	}
	if z, j := chunkKinds(t, st); z == 0 || j == 0 {
		t.Fatalf("after the format-7 commit: %d zstd and %d JSON chunks, want both", z, j)
	}
	if err := commitErr(t, st, 4, func(tx *Txn) error { return tx.Insert("Person", people[3]) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an id held by a format-6 page: %v, want ErrIDExists", err)
	}
	if err := commitErr(t, st, 5, func(tx *Txn) error { return tx.Insert("Person", people[2999]) }); !errors.Is(err, ErrIDExists) {
		t.Fatalf("insert of an id held by a format-7 page: %v, want ErrIDExists", err)
	}
	wantOut, wantIn := map[string]int{}, map[string]int{}
	for _, e := range knows {
		wantOut[e.From]++
		wantIn[e.To]++
	}
	s := snap(t, openGraph(t, st, 6))
	for _, q := range []Row{people[0], people[1], people[700], people[1499]} {
		out, err := s.Out(ctx, "Knows", q.ID)
		must(t, err)
		in, err := s.In(ctx, "Knows", q.ID)
		must(t, err)
		if len(out) != wantOut[q.ID] || len(in) != wantIn[q.ID] {
			t.Fatalf("%s: %d out, %d in; want %d, %d", q.ID, len(out), len(in), wantOut[q.ID], wantIn[q.ID])
		}
	}
}
