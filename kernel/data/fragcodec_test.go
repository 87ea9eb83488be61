package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// manyPeople is n realistic Person rows, ids ascending; their name and
// avatar buffers exceed zstd's 128 KB block at n = 8192, which is what
// makes a streaming zstd encoder go concurrent.
func manyPeople(n int) []Row {
	born := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]Row, n)
	for i := range rows {
		avatar := make([]byte, 32)
		binary.BigEndian.PutUint64(avatar, uint64(i)*0x9e3779b97f4a7c15)
		rows[i] = Row{ID: fmt.Sprintf("person-%07d", i), Props: map[string]any{
			"name": fmt.Sprintf("Name %d of city %d", i*7919%100003, i%97), "age": int64(18 + i%60),
			"score": float64(i%1000) / 8, "active": i%3 == 0, "born": born.Add(time.Duration(i) * time.Hour),
			"avatar": avatar}}
	}
	return rows
}

// recordOf is rows as a checked record of tb.
func recordOf(t testing.TB, tb *Table, rows []Row) arrow.Record {
	t.Helper()
	for i := range rows {
		if _, err := checkRowShape(tb, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	return buildRecord(tb, rows)
}

func encodeWith(t testing.TB, tb *Table, rows []Row, c Codec) ([]byte, FragmentInfo) {
	t.Helper()
	rec := recordOf(t, tb, rows)
	defer rec.Release()
	b, info, err := EncodeFragmentWith(tb, rec, c)
	if err != nil {
		t.Fatal(err)
	}
	info.Name = "z"
	return b, info
}

// TestZstdFragmentRoundTrip: a zstd fragment decodes to the same rows as
// the plain one, is a zstd frame holding exactly the plain file, and is
// smaller; the plain codec still writes bare Arrow IPC.
func TestZstdFragmentRoundTrip(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	for _, tc := range []struct {
		name string
		rows []Row
	}{{"golden", goldenPeople()}, {"8192 rows", manyPeople(MaxFragmentRows)}} {
		t.Run(tc.name, func(t *testing.T) {
			plain, pinfo := encodeWith(t, tb, tc.rows, CodecPlain)
			z, zinfo := encodeWith(t, tb, tc.rows, CodecZstd)
			if !bytes.HasPrefix(plain, []byte("ARROW1")) || !bytes.HasPrefix(z, zstdMagic) {
				t.Fatalf("plain starts %q, zstd starts %x", plain[:6], z[:4])
			}
			if len(z) >= len(plain) || zinfo.Bytes != uint64(len(z)) || zinfo.CRC32C != crcOf(z) {
				t.Fatalf("zstd %d bytes (info %+v), plain %d", len(z), zinfo, len(plain))
			}
			raw, err := storedIPC(z)
			if err != nil || !bytes.Equal(raw, plain) {
				t.Fatalf("the zstd frame does not hold the plain file: %v", err)
			}
			if !cmp.Equal(pinfo.Stats, zinfo.Stats) || pinfo.MinID != zinfo.MinID || pinfo.MaxID != zinfo.MaxID {
				t.Fatalf("infos differ beyond size and crc: %+v vs %+v", pinfo, zinfo)
			}
			recP, err := DecodeFragment(tb, pinfo, plain)
			if err != nil {
				t.Fatal(err)
			}
			defer recP.Release()
			recZ, err := DecodeFragment(tb, zinfo, z)
			if err != nil {
				t.Fatal(err)
			}
			defer recZ.Release()
			for i := range tc.rows {
				if got, want := rowAt(tb, recZ, i), rowAt(tb, recP, i); !cmp.Equal(got, want) || got.ID != tc.rows[i].ID {
					t.Fatalf("row %d: %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestZstdFragmentDeterministic pins that a zstd fragment is a pure
// function of its rows: two encodings are equal, and equal to the golden
// sha256 (a change of the zstd library's output shows up here).
func TestZstdFragmentDeterministic(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	b1, _ := encodeWith(t, tb, manyPeople(1000), CodecZstd)
	b2, _ := encodeWith(t, tb, manyPeople(1000), CodecZstd)
	if !bytes.Equal(b1, b2) || !bytes.HasPrefix(b1, zstdMagic) {
		t.Fatal("two zstd encodings of the same rows differ (or are not zstd)")
	}
	sum := sha256.Sum256(b1)
	got := hex.EncodeToString(sum[:]) + "\n"
	const golden = "testdata/fragment-person-zstd.sha256"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("zstd fragment sha256 %s, golden %s (the encoding changed: old fragments still read, but determinism across builds is lost)", got, want)
	}
}

// goroutinesCreated is the runtime's count of goroutines ever created.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestZstdFragmentsStartNoGoroutines: encoding and decoding a zstd
// fragment whose buffers exceed zstd's block size, with GOMAXPROCS 4,
// creates no goroutine. The control subtest shows the counter sees the
// goroutines arrow's own zstd body compression starts on the same record
// (why the kernel does not use it).
func TestZstdFragmentsStartNoGoroutines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	runtime.GC() // the garbage collector starts its mark workers for new Ps lazily, at its next cycle
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	rec := recordOf(t, tb, manyPeople(MaxFragmentRows))
	defer rec.Release()
	t.Run("kernel codec", func(t *testing.T) {
		before := goroutinesCreated()
		for range 3 {
			b, info, err := EncodeFragmentWith(tb, rec, CodecZstd)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeFragment(tb, info, b)
			if err != nil {
				t.Fatal(err)
			}
			got.Release()
		}
		if n := goroutinesCreated() - before; n != 0 {
			t.Fatalf("encoding and decoding zstd fragments created %d goroutines", n)
		}
	})
	t.Run("control: arrow's zstd body compression", func(t *testing.T) {
		before := goroutinesCreated()
		var w seekBuffer
		fw, err := ipc.NewFileWriter(&w, ipc.WithSchema(tb.arrow), ipc.WithAllocator(goAlloc), ipc.WithZstd())
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		if goroutinesCreated() == before {
			t.Fatal("the goroutine counter saw nothing: the kernel subtest would prove nothing")
		}
	})
}

// forgeContentSize rewrites zstd frame z to declare size as its content
// size (an 8-byte field), keeping its blocks.
func forgeContentSize(t *testing.T, z []byte, size uint64) []byte {
	t.Helper()
	fhd := z[4]
	if fhd&0x20 == 0 || fhd&0x03 != 0 {
		t.Fatalf("frame header descriptor %08b: want single segment, no dictionary", fhd)
	}
	fcsBytes := [...]int{1, 2, 4, 8}[fhd>>6]
	out := append([]byte(nil), z[:4]...)
	out = append(out, 0xc0|0x20|(fhd&0x1c)) // 8-byte FCS, single segment, same checksum flag
	out = binary.LittleEndian.AppendUint64(out, size)
	return append(out, z[5+fcsBytes:]...)
}

// TestZstdForgedContentSize: a zstd fragment whose CRC matches but whose
// frame declares another content size is ErrCorruptFragment, and a
// declared size past the bounds allocates nothing like it.
func TestZstdForgedContentSize(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	z, info := encodeWith(t, tb, manyPeople(1000), CodecZstd)
	raw, err := storedIPC(z)
	if err != nil {
		t.Fatal(err)
	}
	if same := forgeContentSize(t, z, uint64(len(raw))); true {
		// The forging itself keeps a good frame good.
		if got, err := storedIPC(same); err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("re-encoded header: %v", err)
		}
	}
	for _, tc := range forgedContentSizes(len(z), len(raw)) {
		t.Run(tc.name, func(t *testing.T) {
			b := forgeContentSize(t, z, tc.size)
			forged := FragmentInfo{Name: "forged", Rows: info.Rows, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
			refusesCorrupt(t, "DecodeFragment of a forged content size", forgedSizeAllocBound(tc.size, len(raw)),
				[]error{ErrCorruptFragment, format.ErrCorrupt}, func() error {
					rec, err := DecodeFragment(tb, forged, b)
					if err == nil {
						rec.Release()
					}
					return err
				})
		})
	}
}

// TestZstdWriterFallsBackToPlain: a file zstd cannot shrink is stored
// plain, so the reader's bounds never refuse what a writer stored.
func TestZstdWriterFallsBackToPlain(t *testing.T) {
	cases := []struct {
		name string
		raw  []byte
		zstd bool
	}{
		{"compressible", []byte(fmt.Sprint(manyPeople(100))), true},
		{"incompressible", func() []byte {
			b := make([]byte, 4096)
			_, _ = rand.NewChaCha8([32]byte{7}).Read(b)
			return b
		}(), false},
		{"past the ratio", make([]byte, 1<<20), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := compressIPC(CodecZstd, tc.raw)
			if isZ := bytes.HasPrefix(got, zstdMagic); isZ != tc.zstd {
				t.Fatalf("stored as zstd = %v, want %v (%d -> %d bytes)", isZ, tc.zstd, len(tc.raw), len(got))
			}
			back, err := storedIPC(got)
			if err != nil || !bytes.Equal(back, tc.raw) {
				t.Fatalf("stored bytes do not read back: %v", err)
			}
			if plain := compressIPC(CodecPlain, tc.raw); !bytes.Equal(plain, tc.raw) {
				t.Fatal("the plain codec changed the bytes")
			}
		})
	}
}

// FuzzDecodeZstdFragment: whatever a (CRC-valid) zstd fragment holds —
// a forged content size, damaged blocks, a truncated or concatenated
// frame — decoding never panics, returns ErrCorruptFragment or a record of
// the described rows, and its allocation is bounded by the header checks
// (MaxZstdRatio times the stored bytes, at most MaxRawFragmentBytes).
func FuzzDecodeZstdFragment(f *testing.F) {
	cat := catalogOf(f, testSchemaText)
	tb, _ := cat.table("Person")
	rec := recordOf(f, tb, manyPeople(30))
	good, info, err := EncodeFragmentWith(tb, rec, CodecZstd)
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(append(append([]byte(nil), good...), good...))
	forged := append([]byte(nil), good[:4]...)
	forged = append(forged, 0xe0)
	forged = binary.LittleEndian.AppendUint64(forged, 1<<40)
	f.Add(append(forged, good[5+[...]int{1, 2, 4, 8}[good[4]>>6]:]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := FragmentInfo{Name: "fuzz", Rows: info.Rows, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
		rec, err := DecodeFragment(tb, in, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("DecodeFragment = %v, want ErrCorruptFragment", err)
			}
			return
		}
		defer rec.Release()
		if uint64(rec.NumRows()) != info.Rows {
			t.Fatalf("%d rows, want %d", rec.NumRows(), info.Rows)
		}
	})
}

// storedKinds counts the fragment and adjacency-page objects under the
// graph's data and adj prefixes by how they are stored (zstd or plain).
func storedKinds(t *testing.T, st *sim.Store) (zstdN, plainN int) {
	t.Helper()
	for _, prefix := range []string{testRoot + "/data/", testRoot + "/adj/"} {
		page, err := st.List(ctx, prefix, "", 0)
		must(t, err)
		for _, k := range page.Keys {
			obj, err := st.Get(ctx, k)
			must(t, err)
			switch {
			case bytes.HasPrefix(obj.Data, zstdMagic):
				zstdN++
			case bytes.HasPrefix(obj.Data, []byte("ARROW1")):
				plainN++
			}
		}
	}
	return zstdN, plainN
}

// TestMixedCodecsRead: a graph written plain (as by every earlier build)
// and then by a zstd handle reads back whole — scans, Get, Out — through
// either handle, the zstd handle's copy-on-write rewriting plain fragments
// as zstd and keeping untouched ones plain.
func TestMixedCodecsRead(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	plainG, err := Init(ctx, st, testRoot, testSchema(t), Options{Codec: CodecPlain, Kernel: kernel.Options{Env: testEnv(1)}})
	must(t, err)
	seedGraph(t, plainG)
	if z, p := storedKinds(t, st); z != 0 || p == 0 {
		t.Fatalf("plain handle stored %d zstd and %d plain objects", z, p)
	}
	zG, err := Open(ctx, st, testRoot, Options{Codec: CodecZstd, Kernel: kernel.Options{Env: testEnv(2)}})
	must(t, err)
	people := manyPeople(3000)
	commitTx(t, zG, func(tx *Txn) error { return tx.Insert("Person", people...) })
	commitTx(t, zG, func(tx *Txn) error {
		return tx.Insert("Knows", edge("k-new", people[0].ID, people[1].ID))
	})
	z, p := storedKinds(t, st)
	if z == 0 || p == 0 {
		t.Fatalf("after the zstd handle: %d zstd and %d plain objects, want both", z, p)
	}
	want := len(baseGraph()["Person"]) + len(people)
	for _, g := range []*Graph{plainG, zG, openGraph(t, st, 3)} {
		s := snap(t, g)
		if got := allRows(t, s, "Person"); len(got) != want {
			t.Fatalf("scan: %d persons, want %d", len(got), want)
		}
		rows, err := s.GetMany(ctx, "Person", []string{people[2999].ID, baseGraph()["Person"][0].ID})
		must(t, err)
		if len(rows) != 2 {
			t.Fatalf("GetMany: %d rows", len(rows))
		}
		out, err := s.Out(ctx, "Knows", people[0].ID)
		must(t, err)
		if len(out) != 1 || out[0].ID != "k-new" {
			t.Fatalf("Out = %v", out)
		}
	}
}

// TestZstdFragmentEveryBitFlip flips each bit of a zstd fragment in turn:
// every flip is refused by the CRC, before the frame is looked at (the
// error is the checksum's, also for flips in the declared content size).
func TestZstdFragmentEveryBitFlip(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	b, info := encodeWith(t, tb, goldenPeople(), CodecZstd)
	if !bytes.HasPrefix(b, zstdMagic) {
		t.Fatal("not a zstd fragment")
	}
	for i, m := range bitFlips(b) {
		rec, err := DecodeFragment(tb, info, m)
		if rec != nil {
			rec.Release()
		}
		if !errors.Is(err, ErrCorruptFragment) || !strings.Contains(err.Error(), "crc32c") {
			t.Fatalf("bit %d flipped: DecodeFragment = %v, want the CRC's ErrCorruptFragment", i, err)
		}
	}
}

// TestUnknownCodecRefused: a codec this build does not know is refused by
// Init and Open (ErrInvalidArgument), never written as something else.
func TestUnknownCodecRefused(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	if _, err := Init(ctx, st, testRoot, testSchema(t), Options{Codec: CodecZstd + 1, Kernel: kernel.Options{Env: testEnv(1)}}); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("Init = %v, want ErrInvalidArgument", err)
	}
	initGraph(t, st, Limits{})
	if _, err := Open(ctx, st, testRoot, Options{Codec: 200, Kernel: kernel.Options{Env: testEnv(2)}}); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("Open = %v, want ErrInvalidArgument", err)
	}
	for _, c := range []Codec{CodecDefault, CodecPlain, CodecZstd} {
		if _, err := Open(ctx, st, testRoot, Options{Codec: c, Kernel: kernel.Options{Env: testEnv(3)}}); err != nil {
			t.Fatalf("Open with %v: %v", c, err)
		}
	}
}
