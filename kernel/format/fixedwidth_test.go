package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestFixedU64Codec(t *testing.T) {
	for _, v := range []uint64{0, 1, 9, 10, 12345, math.MaxUint64} {
		b, err := json.Marshal(fixedU64(v))
		if err != nil || len(b) != CounterDigits+2 {
			t.Fatalf("marshal %d = %q, %v; want %d bytes", v, b, err, CounterDigits+2)
		}
		var got fixedU64
		if err := json.Unmarshal(b, &got); err != nil || uint64(got) != v {
			t.Fatalf("unmarshal %q = %d, %v; want %d", b, got, err, v)
		}
	}
	for _, bad := range []string{`0`, `42`, `"42"`, `null`, `""`, `"0000000000000000004"`, `"000000000000000000042"`,
		`"0000000000000000004a"`, `"-0000000000000000004"`, `"18446744073709551616"`, `"99999999999999999999"`,
		`00000000000000000042`, `"00000000000000000042`, `'00000000000000000042'`} {
		var got fixedU64
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("unmarshal %s = %d, want an error", bad, got)
		}
	}
}

// Every shadow struct mirrors its Go struct: same fields, same order, same
// JSON tags, and the same types except uint64 counters as fixedU64. A field
// added to one and not the other fails here (and the positional literals in
// fixedwidth.go fail to compile).
func TestShadowStructsMirror(t *testing.T) {
	u64, fixed := reflect.TypeFor[uint64](), reflect.TypeFor[fixedU64]()
	for _, pair := range [][2]any{
		{BranchIdentity{}, branchIdentityJSON{}}, {ForkPoint{}, forkPointJSON{}}, {TablePin{}, tablePinJSON{}},
		{ManifestRef{}, manifestRefJSON{}}, {Manifest{}, manifestJSON{}}, {TableRef{}, tableRefJSON{}},
		{TableVersion{}, tableVersionJSON{}}, {Sidecar{}, sidecarJSON{}}, {SidecarRead{}, sidecarReadJSON{}},
		{SidecarTable{}, sidecarTableJSON{}}, {AuditTable{}, auditTableJSON{}}, {LegacyCommit{}, legacyCommitJSON{}},
		{V3Manifest{}, v3ManifestJSON{}},
	} {
		a, b := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		var encoded []reflect.StructField // a's fields but the in-memory ones (json:"-")
		for i := range a.NumField() {
			if a.Field(i).Tag.Get("json") != "-" {
				encoded = append(encoded, a.Field(i))
			}
		}
		if len(encoded) != b.NumField() {
			t.Fatalf("%s has %d encoded fields, %s has %d", a, len(encoded), b, b.NumField())
		}
		for i, fa := range encoded {
			fb := b.Field(i)
			// A pin's riding payload is a string in Go (pins stay
			// comparable) and raw JSON on the store.
			raw := fa.Type == reflect.TypeFor[string]() && fb.Type == reflect.TypeFor[json.RawMessage]() && fa.Name == "Riding"
			typeOK := fa.Type == fb.Type || fa.Type == u64 && fb.Type == fixed || raw
			if fa.Name != fb.Name || fa.Tag != fb.Tag || !typeOK || fa.Type == u64 && fb.Type != fixed {
				t.Errorf("%s.%s (%s %s) does not mirror %s.%s (%s %s)", a, fa.Name, fa.Type, fa.Tag, b, fb.Name, fb.Type, fb.Tag)
			}
		}
	}
}

// noBareCounters fails if any JSON number other than format_stamp or a
// *_unix_nano time appears in an encoded payload: all counters must be
// fixed-width strings.
func noBareCounters(t *rapid.T, payload []byte) {
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case json.Number:
			if key != "format_stamp" && !strings.HasSuffix(key, "_unix_nano") {
				t.Fatalf("field %q is a bare JSON number %s in %s", key, x, payload)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	walk("", v)
}

// The size of an encoded object does not depend on its counter values: a
// manifest or table version re-encoded with every counter changed (to 1 or
// to MaxUint64) has exactly the same length, and no counter is a bare JSON
// number.
func TestEncodedSizeIndependentOfCounters(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genManifest(t)
		// A riding payload must name its pin's counters, which this test
		// rewrites; its own counters are a table version's, fixed-width
		// too (TestTableVersionRoundTrip, noBareCounters below).
		for i := range m.Tables {
			if m.Tables[i].Riding != "" {
				noBareCounters(t, []byte(m.Tables[i].Riding))
				m.Tables[i].Riding = ""
			}
		}
		b, err := EncodeManifest(&m, Token{})
		if err != nil {
			t.Fatal(err)
		}
		noBareCounters(t, b[headerBytes:len(b)-checksumBytes])
		for _, v := range []uint64{1, math.MaxUint64} {
			m2 := m
			if m2.Version != 0 {
				m2.Version = v
			}
			m2.Branch.Incarnation = v
			m2.Tables = append([]TablePin(nil), m.Tables...)
			for i := range m2.Tables {
				m2.Tables[i].Version, m2.Tables[i].Rows = v, v
			}
			b2, err := EncodeManifest(&m2, Token{})
			if err != nil {
				t.Fatal(err)
			}
			if len(b2) != len(b) {
				t.Fatalf("manifest with counters %d is %d bytes, original %d", v, len(b2), len(b))
			}
		}
		tv := genTableVersion(t)
		tb, err := EncodeTableVersion(&tv, Token{})
		if err != nil {
			t.Fatal(err)
		}
		noBareCounters(t, tb[headerBytes:len(tb)-checksumBytes])
		tv2 := tv
		tv2.Version, tv2.Rows = math.MaxUint64, 0
		if tv2.BasedOn != nil {
			tv2.BasedOn = &TableRef{Fork: tv.BasedOn.Fork, Version: 1}
		}
		tb2, err := EncodeTableVersion(&tv2, Token{})
		if err != nil {
			t.Fatal(err)
		}
		if len(tb2) != len(tb) {
			t.Fatalf("table version with other counters is %d bytes, original %d", len(tb2), len(tb))
		}
	})
}

// A payload whose counters are bare or unpadded numbers, or that carries an
// unknown field inside a nested struct, is corrupt.
func TestDecodeRejectsVariableWidthCounters(t *testing.T) {
	m := Manifest{Version: 1, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: idN(1)},
		Tables: []TablePin{{Name: "a", Fork: idN(1), Version: 7, Rows: 3}}, Schema: strings.Repeat("ab", 32), FormatStamp: CurrentFormat,
		Commit: &Commit{ID: idN(3), Parents: []ID{idN(2)}, Actor: "x", Kind: KindCommit}, Head: idN(3)}
	b, err := EncodeManifest(&m, Token{})
	if err != nil {
		t.Fatal(err)
	}
	good := string(b[headerBytes : len(b)-checksumBytes])
	if _, _, err := DecodeManifest(reframe(CurrentFormat, KindManifest, good)); err != nil {
		t.Fatalf("valid manifest rejected: %v", err)
	}
	for name, mutate := range map[string]func(string) string{
		"bare version": func(s string) string { return strings.Replace(s, `"version":"00000000000000000001"`, `"version":1`, 1) },
		"short incarnation": func(s string) string {
			return strings.Replace(s, `"incarnation":"00000000000000000001"`, `"incarnation":"1"`, 1)
		},
		"unknown nested": func(s string) string { return strings.Replace(s, `"incarnation":`, `"x":1,"incarnation":`, 1) },
		"padded with spaces": func(s string) string {
			return strings.Replace(s, `"00000000000000000001"`, `" 0000000000000000001"`, 1)
		},
		"duplicate known key": func(s string) string { return strings.Replace(s, `"incarnation":`, `"name":"main","incarnation":`, 1) },
	} {
		bad := mutate(good)
		if bad == good {
			t.Fatalf("%s: mutation did not apply to %s", name, good)
		}
		if _, _, err := DecodeManifest(reframe(CurrentFormat, KindManifest, bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: DecodeManifest = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestEncodeTableVersionIsMarshalOfTheVersion: EncodeTableVersion takes
// the payload from TableVersion.MarshalJSON directly (no second
// compaction pass by json.Marshal); the bytes must be exactly what
// json.Marshal of the version gives, HTML-escaped characters, non-ASCII
// text and long embedded values included, so no stored version changes.
func TestEncodeTableVersionIsMarshalOfTheVersion(t *testing.T) {
	long := strings.Repeat("QUJD", 3000) // base64-like, as an embedded fragment
	cases := []TableVersion{
		{Table: "Person", Fork: ID{1}, Version: 1, Rows: 0},
		{Table: "Person", Fork: ID{1}, Version: 7, Rows: 3, Fragments: []string{"f1", "f2"},
			Metadata: []KV{{Key: "a<b>&c", Value: "<script>&amp;\u2028é"}, {Key: "data.embed.X", Value: long}},
			BasedOn:  &TableRef{Fork: ID{1}, Version: 6}, ContentPreserving: true, Attempt: ID{9}},
	}
	for i, tv := range cases {
		want, err := json.Marshal(tv)
		if err != nil {
			t.Fatal(err)
		}
		b, err := EncodeTableVersion(&tv, Token{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := DecodeEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Payload, want) {
			t.Fatalf("case %d: payload\n%s\nwant\n%s", i, e.Payload, want)
		}
		if _, _, err := DecodeTableVersion(b); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
}
