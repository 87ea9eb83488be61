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

// TestCollectionRecordRules: a collection record round-trips byte-exactly
// with fixed-width plan counters, its key parses back, and a record with
// an unknown state, a plan while loading or an inverted range is corrupt;
// a history lease round-trips its through flag, which older leases omit.
func TestCollectionRecordRules(t *testing.T) {
	c := Collection{ID: ID{9}, State: CollectionDeleting, ExpiresUnixNano: 5, SkewMarginNanos: 7,
		Plan: []PlanRange{{Branch: "main", Incarnation: 1, From: 2, To: 3}}}
	b, err := EncodeCollection(&c, Token{3})
	if err != nil {
		t.Fatal(err)
	}
	got, tok, err := DecodeCollection(b)
	if err != nil || tok != (Token{3}) || got.ID != c.ID || got.State != c.State || len(got.Plan) != 1 || got.Plan[0] != c.Plan[0] {
		t.Fatalf("round trip %+v %v %v", got, tok, err)
	}
	e, _ := DecodeEnvelope(b)
	want := `{"id":"` + c.ID.String() + `","state":"deleting","expires_unix_nano":5,"skew_margin_nanos":7,"plan":[{"branch":"main","incarnation":"00000000000000000001","from":"00000000000000000002","to":"00000000000000000003"}]}`
	if e.Kind != KindCollection || string(e.Payload) != want {
		t.Fatalf("kind %d payload %s", e.Kind, e.Payload)
	}
	k := NewKeys("r")
	if id, err := k.ParseCollectionKey(k.Collection(c.ID)); err != nil || id != c.ID || k.Collection(c.ID) != "r/gc/"+c.ID.String() {
		t.Fatalf("key %q -> %v %v", k.Collection(c.ID), id, err)
	}
	for _, bad := range []Collection{
		{ID: c.ID, State: "done"},
		{ID: c.ID, State: CollectionLoading, Plan: c.Plan},
		{ID: c.ID, State: CollectionDeleting, Plan: []PlanRange{{Branch: "main", Incarnation: 1, From: 4, To: 3}}},
		{State: CollectionLoading},
	} {
		if _, err := EncodeCollection(&bad, Token{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("EncodeCollection(%+v) = %v, want ErrCorrupt", bad, err)
		}
	}
	l := Lease{ID: ID{7}, Snapshot: ManifestRef{Branch: "main", Incarnation: 1, Version: 4}, Actor: "feed", ExpiresUnixNano: 1, Through: true}
	lb, err := EncodeLease(&l, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	if gl, _, err := DecodeLease(lb); err != nil || gl != l {
		t.Fatalf("history lease round trip %+v %v", gl, err)
	}
}
