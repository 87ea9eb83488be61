package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// goldenPeople is a fixed batch covering every kind, nulls and non-ASCII.
func goldenPeople() []Row {
	born := time.Date(1990, 5, 17, 12, 30, 0, 123456789, time.UTC)
	return []Row{
		{ID: "a", Props: map[string]any{"name": "Ann", "age": int64(34), "score": 1.5, "active": true, "born": born, "avatar": []byte{0, 1, 2}}},
		{ID: "b", Props: map[string]any{"name": "Bø", "age": -7, "active": false}},
		{ID: "c", Props: map[string]any{"name": ""}},
	}
}

func encodeRows(t *testing.T, tb *Table, rows []Row) ([]byte, FragmentInfo) {
	t.Helper()
	for i := range rows {
		if _, err := checkRowShape(tb, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	rec := buildRecord(tb, rows)
	defer rec.Release()
	b, info, err := EncodeFragmentWith(tb, rec, CodecPlain) // the plain layout, whatever the build's default
	if err != nil {
		t.Fatal(err)
	}
	info.Name = "golden"
	return b, info
}

// TestFragmentRoundTrip pins that every kind and null survives encode and
// decode, and that the info describes the file.
func TestFragmentRoundTrip(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	rows := goldenPeople()
	b, info := encodeRows(t, tb, rows)
	if info.Rows != 3 || info.Bytes != uint64(len(b)) || info.MinID != "a" || info.MaxID != "c" {
		t.Fatalf("info = %+v", info)
	}
	rec, err := DecodeFragment(tb, info, b)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for i, want := range rows {
		got := rowAt(tb, rec, i)
		if int64v, ok := want.Props["age"].(int); ok {
			want.Props["age"] = int64(int64v)
		}
		if !rowsEqual(got, want) {
			t.Fatalf("row %d = %+v, want %+v", i, got, want)
		}
	}
}

func rowsEqual(a, b Row) bool {
	if a.ID != b.ID || a.From != b.From || a.To != b.To || len(a.Props) != len(b.Props) {
		return false
	}
	for k, av := range a.Props {
		bv, ok := b.Props[k]
		if !ok {
			return false
		}
		switch x := av.(type) {
		case []byte:
			if !bytes.Equal(x, bv.([]byte)) {
				return false
			}
		case time.Time:
			if !x.Equal(bv.(time.Time)) {
				return false
			}
		default:
			if av != bv {
				return false
			}
		}
	}
	return true
}

// TestFragmentDeterministic pins that the same rows always encode to the
// same bytes, across runs and processes (the golden sha256 in testdata).
func TestFragmentDeterministic(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	b1, _ := encodeRows(t, tb, goldenPeople())
	b2, _ := encodeRows(t, tb, goldenPeople())
	if !bytes.Equal(b1, b2) {
		t.Fatal("two encodings of the same rows differ")
	}
	sum := sha256.Sum256(b1)
	got := hex.EncodeToString(sum[:]) + "\n"
	const golden = "testdata/fragment-person.sha256"
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
		t.Fatalf("fragment sha256 %s, golden %s (the encoding changed: a format change needs a new fragment version)", got, want)
	}
}

// TestFragmentEncodeRejects pins the fragment rules on the write side.
func TestFragmentEncodeRejects(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Company")
	cases := []struct {
		name string
		rows []Row
		want string
	}{
		{"unsorted", []Row{company("b"), company("a")}, "not strictly ascending"},
		{"duplicate", []Row{company("a"), company("a")}, "not strictly ascending"},
		{"empty", nil, "empty record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := buildRecord(tb, tc.rows)
			defer rec.Release()
			if _, _, err := EncodeFragment(tb, rec); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EncodeFragment = %v, want %q", err, tc.want)
			}
		})
	}
	other, _ := cat.table("Person")
	rec := buildRecord(other, []Row{person("a", "x")})
	defer rec.Release()
	if _, _, err := EncodeFragment(tb, rec); err == nil || !strings.Contains(err.Error(), "not the schema") {
		t.Fatalf("EncodeFragment of another table's record = %v", err)
	}
}

// TestFragmentDecodeRejects pins that corrupt, truncated or foreign bytes
// are a typed corruption error, never a panic or wrong data.
func TestFragmentDecodeRejects(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	b, info := encodeRows(t, tb, goldenPeople())
	comp, _ := cat.table("Company")
	cb, cinfo := encodeRows(t, comp, []Row{company("a")})
	flip := append([]byte(nil), b...)
	flip[len(flip)/2] ^= 1
	withCRC := func(b []byte, rows uint64) FragmentInfo {
		return FragmentInfo{Name: "x", Rows: rows, Bytes: uint64(len(b)), CRC32C: crcOf(b)}
	}
	cases := []struct {
		name string
		b    []byte
		info FragmentInfo
	}{
		{"bit flip", flip, info},
		{"truncated", b[:len(b)-9], info},
		{"wrong size", b, FragmentInfo{Name: "x", Rows: 3, Bytes: 1, CRC32C: info.CRC32C}},
		{"garbage with good crc", []byte("ARROW1 not really"), withCRC([]byte("ARROW1 not really"), 1)},
		{"truncated with good crc", b[:len(b)/2], withCRC(b[:len(b)/2], 3)},
		{"other table", cb, cinfo},
		{"wrong row count", b, withCRC(b, 4)},
		{"empty", nil, withCRC(nil, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := DecodeFragment(tb, tc.info, tc.b)
			if err == nil {
				rec.Release()
				t.Fatal("DecodeFragment accepted bad bytes")
			}
			if !errors.Is(err, ErrCorruptFragment) || !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("DecodeFragment = %v, want ErrCorruptFragment and format.ErrCorrupt", err)
			}
		})
	}
}

// FuzzDecodeFragment checks the read path's trust boundary: whatever bytes
// arrive for a fragment, decoding never panics and accepts only the exact
// bytes its (checksummed) table version describes. Arrow's IPC reader is
// not hardened against forged metadata (a crafted schema can request a
// multi-GiB allocation), so no unverified byte reaches it: the CRC32C gate
// runs first.
func FuzzDecodeFragment(f *testing.F) {
	cat := catalogOf(f, testSchemaText)
	tb, _ := cat.table("Person")
	rows := goldenPeople()
	for i := range rows {
		if _, err := checkRowShape(tb, &rows[i]); err != nil {
			f.Fatal(err)
		}
	}
	rec := buildRecord(tb, rows)
	good, info, err := EncodeFragment(tb, rec)
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := DecodeFragment(tb, info, b)
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("DecodeFragment = %v, want ErrCorruptFragment", err)
			}
			return
		}
		defer rec.Release()
		if !bytes.Equal(b, good) {
			t.Fatal("DecodeFragment accepted bytes other than the ones its info describes")
		}
	})
}

// TestFragmentEveryBitFlip flips each bit of a fragment in turn: every
// flip must be rejected as corrupt.
func TestFragmentEveryBitFlip(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Person")
	b, info := encodeRows(t, tb, goldenPeople())
	for i, m := range bitFlips(b) {
		if rec, err := DecodeFragment(tb, info, m); !errors.Is(err, ErrCorruptFragment) {
			if rec != nil {
				rec.Release()
			}
			t.Fatalf("bit %d flipped: DecodeFragment = %v, want ErrCorruptFragment", i, err)
		}
	}
}

// TestCheckRecordHostileBuffers pins that the deep column check rejects,
// without panicking, a record whose offsets point outside its data.
func TestCheckRecordHostileBuffers(t *testing.T) {
	cat := testCatalog(t)
	tb, _ := cat.table("Company")
	rec := buildRecord(tb, []Row{company("a"), company("b")})
	defer rec.Release()
	offs := rec.Column(colID).Data().Buffers()[1].Bytes()
	offs[4] = 0xff // second offset far past the data
	if err := checkRecord(tb, rec); err == nil {
		t.Fatal("checkRecord accepted out-of-bounds offsets")
	}
}
