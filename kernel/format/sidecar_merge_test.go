package format

import (
	"bytes"
	"testing"
)

// TestSidecarMergedParent pins a merge sidecar's merged parent: it
// round-trips, and a sidecar without one has no "merged_parent" key
// (byte-identical to sidecars written before merges).
func TestSidecarMergedParent(t *testing.T) {
	s := readsSidecar()
	mp := idN(9)
	s.MergedParent = &mp
	b, err := EncodeSidecar(&s, Token{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := DecodeSidecar(b)
	if err != nil || got.MergedParent == nil || *got.MergedParent != mp {
		t.Fatalf("round trip: %+v %v", got.MergedParent, err)
	}
	none := readsSidecar()
	b, err = EncodeSidecar(&none, Token{})
	if err != nil {
		t.Fatal(err)
	}
	if env, _ := DecodeEnvelope(b); bytes.Contains(env.Payload, []byte(`"merged_parent"`)) {
		t.Fatalf("a sidecar without a merged parent names one: %s", env.Payload)
	}
}
