package format

import (
	"bytes"
	"testing"
)

// TestLegacyCommitIndexStillDecodes: a flat complete index written before
// gens and folds (no "gen" anywhere) decodes, validates and re-encodes byte
// for byte; a hierarchical one round-trips with fixed-width gens.
func TestLegacyCommitIndexStillDecodes(t *testing.T) {
	legacy := []byte(`{"id":"01000000000000000000000000","at":{"branch":"x","incarnation":"00000000000000000001","version":"00000000000000000003"},"complete":true,` +
		`"reach":[{"branch":"main","incarnation":"00000000000000000001","version":"00000000000000000007"},{"branch":"x","incarnation":"00000000000000000001","version":"00000000000000000003"}]}`)
	b := EncodeEnvelope(Envelope{Stamp: CurrentFormat, Kind: KindCommitIndex, Token: Token{1}, Payload: legacy})
	x, _, err := DecodeCommitIndex(b)
	if err != nil {
		t.Fatalf("legacy index: %v", err)
	}
	if x.Gen != 0 || len(x.Folds) != 0 || len(x.Reach) != 2 || x.Reach[0].Version != 7 {
		t.Fatalf("legacy index decoded as %+v", x)
	}
	again, err := EncodeCommitIndex(&x, Token{1})
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("legacy index re-encodes differently: %v", err)
	}
	at := ManifestRef{Branch: "x", Incarnation: 1, Version: 3}
	h := CommitIndex{ID: ID{2}, At: at, Complete: true, Gen: 9,
		Reach: []ReachEntry{{ManifestRef{"main", 1, 7}, 8}, {at, 9}}, Folds: []ReachEntry{{ManifestRef{"main", 1, 5}, 6}}}
	b, err = EncodeCommitIndex(&h, Token{1})
	if err != nil {
		t.Fatal(err)
	}
	y, _, err := DecodeCommitIndex(b)
	if err != nil || y.Gen != 9 || y.Folds[0].Gen != 6 || y.Reach[1].Gen != 9 {
		t.Fatalf("hierarchical index round trip: %+v %v", y, err)
	}
	for _, bad := range []CommitIndex{
		{ID: ID{2}, At: at, Complete: true, Reach: []ReachEntry{{at, 0}}, Folds: []ReachEntry{{ManifestRef{"main", 1, 5}, 6}}},         // folds in a legacy index
		{ID: ID{2}, At: at, Complete: true, Gen: 9, Reach: []ReachEntry{{at, 9}}, Folds: []ReachEntry{{ManifestRef{"main", 1, 5}, 9}}}, // fold gen not below
		{ID: ID{2}, At: at, Complete: true, Gen: 9, Reach: []ReachEntry{{at, 8}}},                                                      // own gen differs
	} {
		if _, err := EncodeCommitIndex(&bad, Token{1}); err == nil {
			t.Errorf("invalid index %+v encoded", bad)
		}
	}
}
