package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonHostile are strings needing every escape encoding/json makes.
var jsonHostile = []string{"", "p1", "bench-000001276", "a<b>&c", "q\"uote\\", "\x00\x1f\x7f", "tab\t\n", "é日本", "\u2028", "\xff\xfe", "a\xc3"}

func jsonStr(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		b := make([]byte, r.IntN(16))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		return string(b)
	}
	return jsonHostile[r.IntN(len(jsonHostile))]
}

func jsonU64(r *rand.Rand) uint64 {
	switch r.IntN(3) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	}
	return r.Uint64() >> r.IntN(64)
}

// TestMetadataEncodersMatchEncodingJSON: the hand-written encoders of a
// fragment info and of an id delta (jsonenc.go) emit byte for byte what
// json.Marshal emits, on random values with hostile strings, counters 0
// and MaxUint64, stats with and without bounds, and none.
func TestMetadataEncodersMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		f := FragmentInfo{Name: jsonStr(r), Rows: jsonU64(r), Bytes: jsonU64(r), CRC32C: r.Uint32(), MinID: jsonStr(r), MaxID: jsonStr(r), embed: []byte{1}}
		switch n := r.IntN(4); n {
		case 0:
		case 1:
			f.Stats = []ColumnStats{}
		default:
			for range n {
				cs := ColumnStats{Column: jsonStr(r), Nulls: jsonU64(r)}
				if r.IntN(2) == 0 {
					lo := jsonStr(r)
					cs.Lo = &lo
				}
				if r.IntN(2) == 0 {
					hi := jsonStr(r)
					cs.Hi = &hi
				}
				f.Stats = append(f.Stats, cs)
			}
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFragmentInfo(nil, &f); !bytes.Equal(got, want) {
			t.Fatalf("info %d:\n got %s\nwant %s", i, got, want)
		}
		ids := []string{jsonStr(r)}
		for range r.IntN(4) {
			ids = append(ids, jsonStr(r))
		}
		if want, _ = json.Marshal(ids); !bytes.Equal(appendStrings(nil, ids), want) {
			t.Fatalf("ids %q: %s, want %s", ids, appendStrings(nil, ids), want)
		}
	}
}

// TestIDDeltaRefusesNonCanonical: an id delta that decodes to valid ids
// but is not their canonical JSON (spaces, an escaped letter, an escaped
// slash) is refused as before the hand-written re-encoding; the canonical
// one is accepted.
func TestIDDeltaRefusesNonCanonical(t *testing.T) {
	if ids, err := parseIDDelta(map[string]string{metaIDDeltaKey: `["p1","p2"]`}); err != nil || len(ids) != 2 {
		t.Fatalf("canonical delta: %v %v", ids, err)
	}
	for _, raw := range []string{`["p1", "p2"]`, ` ["p1","p2"]`, `["\u00701","p2"]`, `["p1","p\/2"]`} {
		if _, err := parseIDDelta(map[string]string{metaIDDeltaKey: raw}); err == nil {
			t.Fatalf("non-canonical delta %s accepted", raw)
		}
	}
}

// parseIDDeltaGeneral is parseIDDelta without the plain-list fast path
// (plainStrings): json.Unmarshal and the canonical re-encoding, always.
func parseIDDeltaGeneral(raw string) ([]string, error) {
	var ids []string
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, err
	}
	if len(ids) == 0 || len(ids) > MaxIDDelta || deltaBytes(ids) > MaxIDDeltaBytes {
		return nil, errors.New("bounds")
	}
	for i, id := range ids {
		if idProblem(id) != "" || (i > 0 && id <= ids[i-1]) {
			return nil, errors.New("ids")
		}
	}
	if b, _ := json.Marshal(ids); string(b) != raw {
		return nil, errors.New("not canonical")
	}
	return ids, nil
}

// TestIDDeltaPlainPathIsTheGeneralOne: parseIDDelta's fast path for a
// plain canonical list accepts exactly what json.Unmarshal plus the
// canonical check accept, with the same ids, on canonical lists of
// random (plain and escaped) ids and on mutations of them (a byte
// dropped, doubled or replaced by a quote, comma, backslash, space,
// bracket, HTML character or non-ASCII byte).
func TestIDDeltaPlainPathIsTheGeneralOne(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	plainSeen := 0
	check := func(raw string) {
		t.Helper()
		got, gerr := parseIDDelta(map[string]string{metaIDDeltaKey: raw})
		want, werr := parseIDDeltaGeneral(raw)
		if (gerr == nil) != (werr == nil) || cmp.Diff(want, got) != "" {
			t.Fatalf("delta %q: fast %q %v, general %q %v", raw, got, gerr, want, werr)
		}
		if _, plain := plainStrings(raw); plain && gerr == nil {
			plainSeen++
		}
	}
	for range 20000 {
		n := 1 + r.IntN(5)
		var ids []string
		for range n {
			ids = append(ids, jsonStr(r))
		}
		slices.Sort(ids)
		raw, _ := json.Marshal(ids)
		check(string(raw))
		for range 3 {
			b := []byte(string(raw))
			i := r.IntN(len(b))
			switch r.IntN(3) {
			case 0:
				b = append(b[:i], b[i+1:]...)
			case 1:
				b = append(b[:i+1], b[i:]...)
			default:
				b[i] = `",\ []{}<>&`[r.IntN(11)]
				if r.IntN(4) == 0 {
					b[i] = 0x80 + byte(r.IntN(0x80))
				}
			}
			check(string(b))
		}
	}
	if plainSeen < 1000 {
		t.Fatalf("only %d accepted plain lists: the fast path is not exercised", plainSeen)
	}
}

// TestPlainInfoParseIsUnmarshal: parsePlainInfo returns, whenever it
// accepts, exactly what json.Unmarshal decodes, and accepts the canonical
// encoding of every info whose strings are ASCII needing no escape; on
// random infos
// and on mutations of their encodings (a byte dropped, doubled or
// replaced), and on json.Marshal's own output for hostile strings (which
// it must leave to json.Unmarshal when escaped).
func TestPlainInfoParseIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	str := func() string { // mostly plain: ids, column names, stat bounds
		if r.IntN(5) == 0 {
			return jsonStr(r)
		}
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x60))
		}
		return string(b)
	}
	accepted := 0
	check := func(raw string, mustAccept bool) {
		t.Helper()
		got, ok := parsePlainInfo(raw)
		if !ok {
			if mustAccept {
				t.Fatalf("plain canonical info %s refused", raw)
			}
			return
		}
		accepted++
		var want FragmentInfo
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s accepted, json.Unmarshal: %v", raw, err)
		}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(FragmentInfo{})); d != "" {
			t.Fatalf("%s (-Unmarshal +plain):\n%s", raw, d)
		}
	}
	for range 20000 {
		f := FragmentInfo{Rows: jsonU64(r), Bytes: jsonU64(r), CRC32C: r.Uint32(), MinID: str(), MaxID: str()}
		for range r.IntN(4) {
			cs := ColumnStats{Column: str(), Nulls: jsonU64(r)}
			if r.IntN(2) == 0 {
				lo := str()
				cs.Lo = &lo
			}
			if r.IntN(2) == 0 {
				hi := str()
				cs.Hi = &hi
			}
			f.Stats = append(f.Stats, cs)
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		plain := !bytes.ContainsRune(b, '\\')
		for _, c := range b {
			plain = plain && c >= 0x20 && c < 0x80
		}
		check(string(b), plain)
		for range 3 {
			m := []byte(string(b))
			i := r.IntN(len(m))
			switch r.IntN(3) {
			case 0:
				m = append(m[:i], m[i+1:]...)
			case 1:
				m = append(m[:i+1], m[i:]...)
			default:
				m[i] = `",\ []{}:0-9a<>&`[r.IntN(16)]
				if r.IntN(4) == 0 {
					m[i] = 0x80 + byte(r.IntN(0x80))
				}
			}
			check(string(m), false)
		}
	}
	for _, raw := range []string{`{"rows":1,"bytes":2,"crc32c":3,"min":"a","max":"b","stats":[]}`, `{"rows":01,"bytes":2,"crc32c":3,"min":"a","max":"b"}`,
		`{"rows":1,"bytes":2,"crc32c":4294967296,"min":"a","max":"b"}`, `{"rows":18446744073709551616,"bytes":2,"crc32c":3,"min":"a","max":"b"}`,
		`{"rows":1,"bytes":2,"crc32c":3,"min":"a","max":"b"} `, `{"bytes":2,"rows":1,"crc32c":3,"min":"a","max":"b"}`} {
		if _, ok := parsePlainInfo(raw); ok {
			t.Fatalf("non-canonical %s accepted", raw)
		}
	}
	if accepted < 2000 {
		t.Fatalf("only %d infos accepted: the plain path is not exercised", accepted)
	}
}
