package format

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fork markers and the fork-index flag round-trip byte for byte, and every
// broken rule or foreign object decodes to ErrCorrupt.
func TestForkIndexObjects(t *testing.T) {
	src, child := ID{0x01}, ID{0x02}
	tok := Token{0x09}
	x := ForkMarker{Source: src, Child: "feature", ChildIncarnationID: child}
	b, err := EncodeForkMarker(&x, tok)
	if err != nil {
		t.Fatal(err)
	}
	got, gotTok, err := DecodeForkMarker(b)
	if err != nil || !cmp.Equal(got, x) || gotTok != tok {
		t.Fatalf("marker round trip: %+v %v %v", got, gotTok, err)
	}
	f := ForkIndexFlag{Backfilled: 42, TimeUnixNano: -7}
	fb := EncodeForkIndexFlag(&f, tok)
	if gotF, _, err := DecodeForkIndexFlag(fb); err != nil || gotF != f {
		t.Fatalf("flag round trip: %+v %v", gotF, err)
	}
	if !bytes.Contains(fb, []byte(`"backfilled":"00000000000000000042"`)) {
		t.Fatalf("flag counter is not fixed-width: %q", fb)
	}
	for name, bad := range map[string]ForkMarker{ //detlint:ordered
		"zero source": {Child: "c", ChildIncarnationID: child},
		"zero child":  {Source: src, Child: "c"},
		"self":        {Source: src, Child: "c", ChildIncarnationID: src},
		"bad name":    {Source: src, Child: ".c", ChildIncarnationID: child},
	} {
		if _, err := EncodeForkMarker(&bad, tok); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: encode = %v, want ErrCorrupt", name, err)
		}
	}
	if _, _, err := DecodeForkMarker(fb); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a flag decoded as a marker: %v", err)
	}
	if _, _, err := DecodeForkIndexFlag(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a marker decoded as a flag: %v", err)
	}
	other := EncodeNameMarker("x", tok)
	_, _, err1 := DecodeForkMarker(other)
	_, _, err2 := DecodeForkIndexFlag(other)
	if !errors.Is(err1, ErrCorrupt) || !errors.Is(err2, ErrCorrupt) {
		t.Errorf("a name marker decoded: %v, %v", err1, err2)
	}
}

// Marker keys parse back to their child, stay under their source's prefix
// and never collide with the flag's key.
func TestForkMarkerKeys(t *testing.T) {
	k := NewKeys("g")
	src, child := ID{0x01}, ID{0x02}
	key := k.ForkMarker(src, "feat", child)
	if key != "g/forks/"+src.String()+"/feat/"+child.String() {
		t.Fatalf("marker key %q", key)
	}
	name, inc, err := k.ParseForkMarkerKey(src, key)
	if err != nil || name != "feat" || inc != child {
		t.Fatalf("parse: %q %v %v", name, inc, err)
	}
	for _, bad := range []string{
		k.ForkMarker(child, "feat", child),
		k.ForkMarkersPrefix(src) + "feat",
		k.ForkMarkersPrefix(src) + "feat/nope",
		k.ForkMarkersPrefix(src) + ".x/" + child.String(),
	} {
		if _, _, err := k.ParseForkMarkerKey(src, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("parsed %q: %v", bad, err)
		}
	}
	if k.ForkIndexFlagKey() != "g/forks-complete" {
		t.Fatalf("flag key %q", k.ForkIndexFlagKey())
	}
}
