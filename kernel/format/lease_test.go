package format

import (
	"errors"
	"testing"
)

// TestLeaseRules: a lease round-trips byte-exactly with fixed-width
// counters, its key parses back, and a lease without a snapshot branch or
// id is corrupt.
func TestLeaseRules(t *testing.T) {
	l := Lease{ID: ID{7}, Snapshot: ManifestRef{Branch: "main", Incarnation: 1, Version: 42}, Actor: "reader", ExpiresUnixNano: 123}
	b, err := EncodeLease(&l, Token{2})
	if err != nil {
		t.Fatal(err)
	}
	got, tok, err := DecodeLease(b)
	if err != nil || got != l || tok != (Token{2}) {
		t.Fatalf("round trip %+v %v %v", got, tok, err)
	}
	e, _ := DecodeEnvelope(b)
	if e.Kind != KindLease || KindLease != 12 {
		t.Fatalf("kind %d", e.Kind)
	}
	want := `{"id":"` + l.ID.String() + `","snapshot":{"branch":"main","incarnation":"00000000000000000001","version":"00000000000000000042"},"actor":"reader","expires_unix_nano":123}`
	if string(e.Payload) != want {
		t.Fatalf("payload %s", e.Payload)
	}
	k := NewKeys("r")
	if id, err := k.ParseLeaseKey(k.Lease(l.ID)); err != nil || id != l.ID || k.Lease(l.ID) != "r/leases/"+l.ID.String() {
		t.Fatalf("key %q -> %v %v", k.Lease(l.ID), id, err)
	}
	for _, bad := range []Lease{{Snapshot: l.Snapshot}, {ID: l.ID, Snapshot: ManifestRef{Incarnation: 1}}} {
		if _, err := EncodeLease(&bad, Token{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("EncodeLease(%+v) = %v, want ErrCorrupt", bad, err)
		}
	}
}
