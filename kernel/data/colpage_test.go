package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// sparsePeople is manyPeople with every optional property null on some
// rows (a different pattern per column), and an empty avatar on others.
func sparsePeople(n int) []Row {
	rows := manyPeople(n)
	for i := range rows {
		for j, k := range []string{"age", "score", "active", "born", "avatar"} {
			if (i+j)%(j+2) == 0 {
				delete(rows[i].Props, k)
			}
		}
		if i%11 == 0 {
			rows[i].Props["avatar"] = []byte{}
		}
	}
	return rows
}

// rowsOf reads every row of rec.
func rowsOf(t *Table, rec arrow.Record) []Row {
	out := make([]Row, rec.NumRows())
	for i := range out {
		out[i] = rowAt(t, rec, i)
	}
	return out
}

// TestColumnFileRoundTrip: a column file of every column type, nulls in
// each nullable column, decodes to the rows an Arrow IPC file of the same
// record gives; its stored form is deterministic and smaller than the
// zstd Arrow IPC file (red if the column encoding stops paying).
func TestColumnFileRoundTrip(t *testing.T) {
	tb, _ := testCatalog(t).table("Person")
	for _, n := range []int{1, 7, 1000} {
		rec := recordOf(t, tb, sparsePeople(n))
		raw, err := encodeColumns(tb, rec)
		must(t, err)
		ipcRaw, err := encodeIPC(tb, rec)
		must(t, err)
		want, err := decodeIPC(tb, ipcRaw)
		must(t, err)
		got, err := decodeColumnsSafe(tb, raw, uint64(n))
		must(t, err)
		must(t, checkColumns(tb, got))
		if !cmp.Equal(rowsOf(tb, got), rowsOf(tb, want)) {
			t.Fatalf("%d rows: the column file decodes to other rows than the Arrow file", n)
		}
		again, err := encodeColumns(tb, rec)
		must(t, err)
		if !bytes.Equal(again, raw) {
			t.Fatalf("%d rows: two encodings of one record differ", n)
		}
		if z, zi := compressIPC(CodecZstd, raw), compressIPC(CodecZstd, ipcRaw); n == 1000 && len(z) >= len(zi) {
			t.Fatalf("zstd column file %d bytes, zstd Arrow file %d", len(z), len(zi))
		}
		rec.Release()
		want.Release()
		got.Release()
	}
}

// adjPageKinds counts the adjacency pages of edge table typ on st by their
// encoding: column files and Arrow IPC files (either inside a zstd frame).
func adjPageKinds(t *testing.T, st *sim.Store, typ string) (cols, arrowN int) {
	t.Helper()
	page, err := st.List(ctx, testRoot+"/adj/"+typ+"/", "", 0)
	must(t, err)
	for _, k := range page.Keys {
		obj, err := st.Get(ctx, k)
		must(t, err)
		raw, err := storedIPC(obj.Data)
		must(t, err)
		switch {
		case isColumnFile(raw):
			cols++
		case bytes.HasPrefix(raw, []byte("ARROW1")):
			arrowN++
		}
	}
	return cols, arrowN
}

// TestColumnPagesMixedRead: a zstd handle writes adjacency pages as
// column files (red without encodePage's column branch), a plain handle
// as Arrow IPC; a graph written plain and then by a zstd handle answers
// Out and In the same through both kinds of page, on a cold handle.
func TestColumnPagesMixedRead(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	plainG, err := Init(ctx, st, testRoot, testSchema(t), Options{Codec: CodecPlain, Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	people := manyPeople(1500)
	commitTx(t, plainG, func(tx *Txn) error { return tx.Insert("Person", people...) })
	var knows []Row
	for i := range 3000 {
		knows = append(knows, edge(edgeID(i), people[i%1500].ID, people[(i*7+1)%1500].ID))
	}
	commitTx(t, plainG, func(tx *Txn) error { return tx.Insert("Knows", knows[:2000]...) })
	if c, a := adjPageKinds(t, st, "Knows"); c != 0 || a == 0 {
		t.Fatalf("plain handle: %d column and %d Arrow pages", c, a)
	}
	zG, err := Open(ctx, st, testRoot, Options{Codec: CodecZstd, Kernel: kernel.Options{Env: testEnv(2)}})
	must(t, err)
	commitTx(t, zG, func(tx *Txn) error { return tx.Insert("Knows", knows[2000:]...) })
	if c, a := adjPageKinds(t, st, "Knows"); c == 0 || a == 0 {
		t.Fatalf("after the zstd handle: %d column and %d Arrow pages, want both", c, a)
	}
	wantOut, wantIn := map[string]int{}, map[string]int{}
	for _, e := range knows {
		wantOut[e.From]++
		wantIn[e.To]++
	}
	s := snap(t, openGraph(t, st, 3))
	for _, p := range []Row{people[0], people[1], people[700], people[1499]} {
		out, err := s.Out(ctx, "Knows", p.ID)
		must(t, err)
		in, err := s.In(ctx, "Knows", p.ID)
		must(t, err)
		if len(out) != wantOut[p.ID] || len(in) != wantIn[p.ID] {
			t.Fatalf("%s: %d out, %d in; want %d, %d", p.ID, len(out), len(in), wantOut[p.ID], wantIn[p.ID])
		}
	}
}

// TestColumnFileForgedIsTyped: a CRC-valid column page whose counts or
// lengths are forged (rows, columns, a section or string length past the
// end, a null slot with a value, a bad type) is ErrCorruptFragment, with
// no allocation past a small multiple of its bytes.
func TestColumnFileForgedIsTyped(t *testing.T) {
	tb, _ := testCatalog(t).table("Person")
	rec := recordOf(t, tb, sparsePeople(50))
	raw, err := encodeColumns(tb, rec)
	rec.Release()
	must(t, err)
	huge := func(b []byte, at int) []byte { // a 10-byte uvarint 2^63 at offset at, replacing one byte
		out := append([]byte(nil), b[:at]...)
		out = append(out, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)
		return append(out, b[at+1:]...)
	}
	m := len(colPageMagic)
	cases := map[string][]byte{
		"rows":      huge(raw, m),
		"columns":   huge(raw, m+1),
		"truncated": raw[:len(raw)-3],
		"trailing":  append(append([]byte(nil), raw...), 0),
		"bad type":  bytes.Replace(raw, []byte("name\x00\x00"), []byte("name\x09\x00"), 1),
	}
	for name, b := range cases { //detlint:ordered independent subtests
		t.Run(name, func(t *testing.T) {
			ref := adjRef{Name: "forged", Rows: 50, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
			refusesCorrupt(t, "decodePageRecord of a forged column file", uint64(64*len(raw)+1<<16), []error{ErrCorruptFragment}, func() error {
				got, err := decodePageRecord(tb, ref, b)
				if err == nil {
					got.Release()
				}
				return err
			})
		})
	}
}

// FuzzDecodeColumnPage: whatever bytes a page ref names (size and CRC
// matching) decode through decodePage to a checked record of the
// referenced rows or fail with ErrCorruptFragment; never a panic.
func FuzzDecodeColumnPage(f *testing.F) {
	tb, _ := testCatalog(f).table("Knows")
	var rows []Row
	for i := range 40 {
		rows = append(rows, edge(edgeID(i), "p1", edgeID(i)))
	}
	rec := recordOf(f, tb, rows)
	raw, err := encodeColumns(tb, rec)
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw, uint64(40), "p1", edgeID(0))
	f.Add(compressIPC(CodecZstd, raw), uint64(40), "p1", edgeID(0))
	f.Add(raw[:len(raw)/2], uint64(40), "p1", edgeID(0))
	f.Fuzz(func(t *testing.T, b []byte, n uint64, lo, loID string) {
		ref := adjRef{Name: "01HZZZZZZZZZZZZZZZZZZZZZZZ", LoKey: lo, LoID: loID, HiKey: lo, Rows: n, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
		got, err := decodePage(tb, dirOut, ref, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		defer got.Release()
		if uint64(got.NumRows()) != n {
			t.Fatalf("%d rows, want %d", got.NumRows(), n)
		}
	})
}

// edgeID is the i-th test edge id, ascending with i.
func edgeID(i int) string { return fmt.Sprintf("k%06d", i) }

// TestScaledIntegers: integer and timestamp columns are stored divided by
// their scale (the gcd of their absolute values) and read back exactly,
// extremes included; seconds-truncated timestamps take under half the
// bytes of plain deltas (red without the scale); a forged scale (zero,
// past int64, not the values' own) or a scaled value that overflows is
// an error.
func TestScaledIntegers(t *testing.T) {
	read := func(b []byte, n int) ([]int64, error) {
		r := &colReader{b: b}
		v, err := readScaledDeltas(r, n)
		if err == nil && len(r.b) != 0 {
			err = fmt.Errorf("%d bytes left", len(r.b))
		}
		return v, err
	}
	for _, vals := range [][]int64{
		{0}, {0, 0, 0}, {7}, {-7, 14, 0}, {math.MinInt64}, {math.MinInt64, 0}, {math.MaxInt64, math.MinInt64},
		{math.MinInt64, 1 << 62}, {1e9, 3e9, -2e9, 0}, {math.MaxInt64, 1, -1},
	} {
		b := appendScaledDeltas(nil, len(vals), func(i int) int64 { return vals[i] })
		got, err := read(b, len(vals))
		if err != nil || !slices.Equal(got, vals) {
			t.Fatalf("%v: read %v, %v", vals, got, err)
		}
	}
	rng := rand.New(rand.NewPCG(28, 3))
	secs := make([]int64, 1024)
	for i := range secs {
		secs[i] = 1_420_070_400e9 + rng.Int64N(315_360_000)*1e9
	}
	scaled := len(compressIPC(CodecZstd, appendScaledDeltas(nil, len(secs), func(i int) int64 { return secs[i] })))
	plain := len(compressIPC(CodecZstd, appendDeltas(nil, len(secs), func(i int) int64 { return secs[i] })))
	if scaled*2 > plain {
		t.Fatalf("1,024 second timestamps: %d bytes scaled, %d as plain deltas", scaled, plain)
	}
	forged := map[string][]byte{
		"zero scale":      binary.AppendVarint(binary.AppendUvarint(nil, 0), 5),
		"scale past int":  binary.AppendVarint(binary.AppendUvarint(nil, 1<<63), 1),
		"scale not gcd":   binary.AppendVarint(binary.AppendUvarint(nil, 1), 10), // the writer says 10
		"scaled overflow": binary.AppendVarint(binary.AppendUvarint(nil, 1e9), math.MaxInt64/1_000_000_000+1),
		"no values":       binary.AppendUvarint(nil, 3),
	}
	for name, b := range forged {
		if v, err := read(b, 1); err == nil {
			t.Fatalf("%s: read %v, want an error", name, v)
		}
	}
}

// TestColumnFileInt32: an int32 column (schema evolution's int32 kind,
// S16) has a column encoding, round-trips through it with nulls and the
// extremes, and a forged section whose value leaves int32's range is an
// error, never a silently truncated value. Red before colInt32: an edge
// type with an int32 property could not write its adjacency pages.
func TestColumnFileInt32(t *testing.T) {
	tb, _ := catalogOf(t, "node M { n: int32? }\n").table("M")
	rows := []Row{
		{ID: "m1", Props: map[string]any{"n": int32(math.MaxInt32)}},
		{ID: "m2", Props: map[string]any{"n": int32(math.MinInt32)}},
		{ID: "m3"},
		{ID: "m4", Props: map[string]any{"n": int32(-7)}},
	}
	rec := recordOf(t, tb, rows)
	defer rec.Release()
	raw, err := encodeColumns(tb, rec)
	must(t, err)
	got, err := decodeColumnsSafe(tb, raw, uint64(len(rows)))
	must(t, err)
	defer got.Release()
	ipcRaw, err := encodeIPC(tb, rec)
	must(t, err)
	want, err := decodeIPC(tb, ipcRaw)
	must(t, err)
	defer want.Release()
	if diff := cmp.Diff(rowsOf(tb, want), rowsOf(tb, got)); diff != "" {
		t.Fatalf("int32 column file (-arrow +columns):\n%s", diff)
	}
	// The same column with a value past int32, as a forged file would hold
	// it: an int64 column file whose type tags are rewritten to int32.
	t64, _ := catalogOf(t, "node M { n: int64? }\n").table("M")
	rec64 := recordOf(t, t64, []Row{{ID: "m1", Props: map[string]any{"n": int64(math.MaxInt32) + 1}}})
	defer rec64.Release()
	raw64, err := encodeColumns(t64, rec64)
	must(t, err)
	if _, err := decodeColumnsSafe(tb, retagInt64AsInt32(t, raw64), 1); err == nil {
		t.Fatal("an int32 column holding 2^31 decoded")
	}
}

// retagInt64AsInt32 returns a column file with every int64 column's type
// tag changed to int32 (the header only; sections untouched).
func retagInt64AsInt32(t *testing.T, raw []byte) []byte {
	t.Helper()
	b := bytes.Clone(raw)
	at := len(colPageMagic)
	next := func() uint64 {
		v, n := binary.Uvarint(b[at:])
		if n <= 0 {
			t.Fatal("bad uvarint in a column file header")
		}
		at += n
		return v
	}
	next() // rows
	for range next() {
		at += int(next()) // name
		if b[at] == colInt64 {
			b[at] = colInt32
		}
		at += 2 // tag, nullable
	}
	return b
}
