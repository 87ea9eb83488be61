package format

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// ridingPin is a pin of table a whose version rides it.
func ridingPin(t *testing.T) (TablePin, TableVersion) {
	t.Helper()
	tv := TableVersion{Table: "a", Fork: ID{1}, Version: 3, Rows: 7, Attempt: ID{2}, Fragments: []string{"f1", "f2"},
		Metadata: []KV{{"k", "<v>"}}, BasedOn: &TableRef{Fork: ID{1}, Version: 2, Attempt: ID{3}, Rides: true}}
	payload, err := RidingPayload(&tv)
	if err != nil {
		t.Fatal(err)
	}
	return TablePin{Name: "a", Fork: ID{1}, Version: 3, Rows: 7, Attempt: ID{2}, Riding: payload}, tv
}

// TestRidingPinRoundTrips: a manifest whose pins carry riding versions
// (format 11) decodes to the same pins, each payload reading back as the
// version it was made from, with Rides set on the version and the pin's
// reference; rapid manifests (genPins rides some) round-trip whole.
func TestRidingPinRoundTrips(t *testing.T) {
	pin, tv := ridingPin(t)
	m := Manifest{Version: 4, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}}, Tables: []TablePin{pin},
		Commit: &Commit{ID: ID{5}, Parents: []ID{{6}}, Actor: "x", Kind: KindCommit}, Head: ID{5},
		Schema: strings.Repeat("a", 64), FormatStamp: CurrentFormat}
	b, err := EncodeManifest(&m, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := DecodeManifest(b)
	if err != nil || got.Tables[0] != pin {
		t.Fatalf("decode: %+v %v, want the pin back", got.Tables, err)
	}
	back, err := RidingVersion(got.Tables[0])
	tv.Rides = true
	if err != nil || back.Ref() != tv.Ref() || back.Rows != tv.Rows || len(back.Fragments) != 2 || *back.BasedOn != *tv.BasedOn || !back.Rides {
		t.Fatalf("riding version %+v %v, want %+v", back, err, tv)
	}
	if !got.Tables[0].Ref().Rides || back.Ref() != got.Tables[0].Ref() {
		t.Fatalf("refs: pin %+v, version %+v: both must say it rides", got.Tables[0].Ref(), back.Ref())
	}
	rapid.Check(t, func(rt *rapid.T) {
		m := genManifest(rt)
		b, err := EncodeManifest(&m, Token{})
		if err != nil {
			rt.Fatalf("encode: %v", err)
		}
		got, _, err := DecodeManifest(b)
		if err != nil || len(got.Tables) != len(m.Tables) {
			rt.Fatalf("decode: %v", err)
		}
		for i := range m.Tables {
			if got.Tables[i] != m.Tables[i] {
				rt.Fatalf("pin %d: %+v, want %+v", i, got.Tables[i], m.Tables[i])
			}
		}
	})
}

// TestRidingPayloadMustMatchItsPin: a riding payload that names another
// version, another row count, a counter-named or content-preserving
// version, that is not canonical or is too large, is corrupt — in
// RidingVersion, in ValidatePins (so EncodeManifest refuses to write it)
// and in DecodeManifest.
func TestRidingPayloadMustMatchItsPin(t *testing.T) {
	pin, tv := ridingPin(t)
	other := func(f func(*TableVersion)) string {
		v := tv
		f(&v)
		return string(appendTableVersion(nil, &v))
	}
	for _, tc := range []struct {
		name   string
		riding string
	}{
		{"another table", other(func(v *TableVersion) { v.Table = "b" })},
		{"another version", other(func(v *TableVersion) { v.Version = 4 })},
		{"another attempt", other(func(v *TableVersion) { v.Attempt = ID{8} })},
		{"another fork", other(func(v *TableVersion) { v.Fork = ID{8} })},
		{"other rows", other(func(v *TableVersion) { v.Rows = 8 })},
		{"counter-named", other(func(v *TableVersion) { v.Attempt = ID{} })},
		{"content-preserving", other(func(v *TableVersion) { v.ContentPreserving = true })},
		{"not canonical", " " + pin.Riding},
		{"not json", "{"},
		{"too large", other(func(v *TableVersion) { v.Fragments = []string{strings.Repeat("f", MaxRidingVersionBytes)} })},
	} {
		bad := pin
		bad.Riding = tc.riding
		if tc.name == "counter-named" {
			bad.Attempt = ID{}
		}
		if _, err := RidingVersion(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: RidingVersion = %v, want ErrCorrupt", tc.name, err)
		}
		if err := ValidatePins([]TablePin{bad}); err == nil {
			t.Errorf("%s: ValidatePins passed", tc.name)
		}
	}
	if _, err := RidingPayload(&TableVersion{Table: "a", Fork: ID{1}, Version: 1}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a counter-named version's riding payload: %v, want ErrCorrupt", err)
	}
	fits := func(carried, add int) bool {
		return RidingFitsWithin(MaxRidingVersionBytes, MaxRidingManifestBytes, carried, add)
	}
	if fits(0, MaxRidingVersionBytes+1) || fits(MaxRidingManifestBytes-10, 11) || !fits(MaxRidingManifestBytes-10, 10) || fits(0, 0) {
		t.Error("RidingFitsWithin the format's maxima: wrong bounds")
	}
	if RidingFitsWithin(100, 300, 0, 101) || !RidingFitsWithin(100, 300, 200, 100) || RidingFitsWithin(100, 300, 201, 100) ||
		RidingFitsWithin(2*MaxRidingVersionBytes, 2*MaxRidingManifestBytes, 0, MaxRidingVersionBytes+1) ||
		RidingFitsWithin(2*MaxRidingVersionBytes, 2*MaxRidingManifestBytes, MaxRidingManifestBytes, 1) {
		t.Error("RidingFitsWithin: wrong bounds (a writer's budget lowers the format's maxima, never raises them)")
	}
}

// TestRidingPayloadIsDecodedWhenRead: the check on encode and decode is
// the cheap frame (checkRidingFrame: the payload names its pin); a payload
// whose body breaks a table version's rules (an empty fragment name) is
// corrupt when the version is read (RidingVersion), as an object's bytes
// are.
func TestRidingPayloadIsDecodedWhenRead(t *testing.T) {
	pin, _ := ridingPin(t)
	pin.Riding = strings.Replace(pin.Riding, `"fragments":["f1","f2"]`, `"fragments":["","f2"]`, 1)
	m := Manifest{Version: 4, Branch: BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: ID{9}}, Tables: []TablePin{pin},
		Commit: &Commit{ID: ID{5}, Parents: []ID{{6}}, Actor: "x", Kind: KindCommit}, Head: ID{5},
		Schema: strings.Repeat("a", 64), FormatStamp: CurrentFormat}
	b, err := EncodeManifest(&m, Token{1})
	if err != nil {
		t.Fatalf("encode (the frame names the pin): %v", err)
	}
	got, _, err := DecodeManifest(b)
	if err != nil {
		t.Fatalf("decode (the frame names the pin): %v", err)
	}
	if _, err := RidingVersion(got.Tables[0]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading a riding payload that breaks the rules: %v, want ErrCorrupt", err)
	}
}
