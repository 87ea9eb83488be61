package fuzz

import (
	"bytes"
	"errors"
	"github.com/google/go-cmp/cmp"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// mustBeTyped fails unless err is one of the decoders' typed errors.
func mustBeTyped(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, format.ErrUnsupportedFormat) {
		t.Fatalf("untyped decode error: %v", err)
	}
}

// FuzzDecodeEnvelope: any bytes decode or fail with ErrCorrupt; what decodes
// re-encodes to the same bytes.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, m := range sampleManifests() {
		f.Add(mustManifest(m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := format.DecodeEnvelope(data)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		if !bytes.Equal(format.EncodeEnvelope(e), data) {
			t.Fatal("envelope does not round-trip")
		}
	})
}

// FuzzDecodeManifest: no panic, typed errors, canonical round trip.
func FuzzDecodeManifest(f *testing.F) {
	for _, m := range sampleManifests() {
		f.Add(mustManifest(m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, tok, err := format.DecodeManifest(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		again, err := format.EncodeManifest(&m, tok)
		if err != nil || !bytes.Equal(again, atCurrentStamp(data)) {
			t.Fatalf("decoded manifest does not re-encode to the input: %v", err)
		}
	})
}

// FuzzDecodeTableVersion: no panic, typed errors, canonical round trip.
func FuzzDecodeTableVersion(f *testing.F) {
	for _, tv := range sampleTableVersions() {
		f.Add(mustTableVersion(tv))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tv, tok, err := format.DecodeTableVersion(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		again, err := format.EncodeTableVersion(&tv, tok)
		if err != nil || !bytes.Equal(again, atCurrentStamp(data)) {
			t.Fatalf("decoded table version does not re-encode to the input: %v", err)
		}
	})
}

// FuzzDecodeCommitIndex: no panic, typed errors, canonical round trip.
func FuzzDecodeCommitIndex(f *testing.F) {
	at := format.ManifestRef{Branch: "x", Incarnation: 1, Version: 3}
	for _, x := range []format.CommitIndex{
		{ID: format.ID{1}, At: at},
		{ID: format.ID{2}, At: at, Complete: true, Reach: []format.ReachEntry{{ManifestRef: format.ManifestRef{Branch: "main", Incarnation: 1, Version: 7}}, {ManifestRef: at}}},
		{ID: format.ID{3}, At: at, Complete: true, Gen: 9, Reach: []format.ReachEntry{{ManifestRef: format.ManifestRef{Branch: "main", Incarnation: 1, Version: 7}, Gen: 8}, {ManifestRef: at, Gen: 9}},
			Folds: []format.ReachEntry{{ManifestRef: format.ManifestRef{Branch: "main", Incarnation: 1, Version: 5}, Gen: 6}}},
	} {
		b, err := format.EncodeCommitIndex(&x, format.Token{9})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, tok, err := format.DecodeCommitIndex(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		again, err := format.EncodeCommitIndex(&x, tok)
		if err != nil || !bytes.Equal(again, atCurrentStamp(data)) {
			t.Fatalf("decoded commit index does not re-encode to the input: %v", err)
		}
	})
}

// FuzzDecodeForkIndex: fork markers and the fork-index flag (kind 11)
// never panic, fail typed, and decode only what re-encodes to the input.
func FuzzDecodeForkIndex(f *testing.F) {
	x := format.ForkMarker{Source: format.ID{1}, Child: "feature", ChildIncarnationID: format.ID{2}}
	b, err := format.EncodeForkMarker(&x, format.Token{9})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(format.EncodeForkIndexFlag(&format.ForkIndexFlag{Backfilled: 3, TimeUnixNano: 5}, format.Token{9}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if x, tok, err := format.DecodeForkMarker(data); err != nil {
			mustBeTyped(t, err)
		} else if again, err := format.EncodeForkMarker(&x, tok); err != nil || !bytes.Equal(again, atCurrentStamp(data)) {
			t.Fatalf("decoded fork marker does not re-encode to the input: %v", err)
		}
		if fl, tok, err := format.DecodeForkIndexFlag(data); err != nil {
			mustBeTyped(t, err)
		} else if !bytes.Equal(format.EncodeForkIndexFlag(&fl, tok), atCurrentStamp(data)) {
			t.Fatal("decoded fork-index flag does not re-encode to the input")
		}
	})
}

// FuzzDecodeSchema: no panic, typed errors, round trip.
func FuzzDecodeSchema(f *testing.F) {
	f.Add(format.EncodeSchema([]byte(`{"tables":["a"]}`), token))
	f.Fuzz(func(t *testing.T, data []byte) {
		contract, tok, err := format.DecodeSchema(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		if !bytes.Equal(format.EncodeSchema(contract, tok), atCurrentStamp(data)) {
			t.Fatal("schema does not round-trip")
		}
	})
}

// FuzzManifestRoundTrip builds manifests from fuzzed fields: every one that
// validates must satisfy decode(encode(x)) == x.
func FuzzManifestRoundTrip(f *testing.F) {
	f.Add("main", uint64(1), uint64(0), "actor", "message", "t", uint64(1), byte(0), []byte("0123456789abcdef"), []byte("fedcba9876543210"))
	f.Add("feature.x", uint64(3), uint64(9), "", "multi\nline \u2028", "nodes", uint64(77), byte(1), []byte("aaaaaaaaaaaaaaaa"), []byte("bbbbbbbbbbbbbbbb"))
	f.Add("b", uint64(2), uint64(5), "a", "m", "t", uint64(5), byte(2), []byte("cccccccccccccccc"), []byte("dddddddddddddddd"))
	f.Fuzz(func(t *testing.T, name string, inc, version uint64, actor, message, table string, tv uint64, shape byte, a, b []byte) {
		var ida, idb format.ID
		copy(ida[:], a)
		copy(idb[:], b)
		m := format.Manifest{Version: version, Branch: format.BranchIdentity{Name: name, Incarnation: inc, IncarnationID: idb},
			Tables: []format.TablePin{{Name: table, Fork: idb, Version: tv}}, Schema: schemaSum, FormatStamp: format.CurrentFormat}
		c := &format.Commit{ID: ida, Actor: actor, Message: message, Kind: format.KindCommit, Parents: []format.ID{idb}}
		switch shape % 3 {
		case 0:
			c.Kind, c.Parents = format.KindGenesis, nil
		case 1:
			m.ForkOf = &format.ForkPoint{Branch: table, Incarnation: inc, IncarnationID: ida, ManifestVersion: tv, CommitID: idb}
		}
		m.Commit, m.Head = c, c.ID
		data, err := format.EncodeManifest(&m, token)
		if err != nil {
			if format.ValidateManifest(&m) == nil {
				t.Fatalf("valid manifest failed to encode: %v", err)
			}
			return
		}
		got, tok, err := format.DecodeManifest(data)
		if err != nil || tok != token || !cmp.Equal(got, m) {
			t.Fatalf("round trip: %+v, %v\nwant %+v\ndiff (-got +m):\n%s", got, err, m, cmp.Diff(got, m))
		}
	})
}

// FuzzValidateName: a valid name is one clean key segment, and keys built
// from it parse back.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"main", "feature-1.x_y", ".hidden", "a/b", "", "é", "-x"} {
		f.Add(s, uint64(3), uint64(42))
	}
	f.Fuzz(func(t *testing.T, name string, inc, v uint64) {
		if err := format.ValidateName(name); err != nil {
			if !errors.Is(err, format.ErrInvalidName) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		keys := format.NewKeys("root")
		key := keys.Manifest(name, inc, v)
		if err := objstore.ValidateKey(objstore.OpPut, key); err != nil {
			t.Fatalf("valid name %q makes an invalid key: %v", name, err)
		}
		gi, gv, err := keys.ParseManifestKey(name, key)
		if err != nil || gi != inc || gv != v {
			t.Fatalf("key %q parses to %d %d %v", key, gi, gv, err)
		}
	})
}

// FuzzParseInverted: whatever parses re-renders identically.
func FuzzParseInverted(f *testing.F) {
	f.Add(format.Invert(0))
	f.Add(format.Invert(12345))
	f.Add("99999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := format.ParseInverted(s)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		if format.Invert(v) != s {
			t.Fatalf("ParseInverted(%q) = %d, which renders as %q", s, v, format.Invert(v))
		}
	})
}

// payloadOf returns the payload of an enveloped object.
func payloadOf(b []byte) []byte {
	e, err := format.DecodeEnvelope(b)
	if err != nil {
		panic(err)
	}
	return e.Payload
}

// FuzzManifestPayload fuzzes behind the checksum: the payload is framed in a
// valid envelope, so the JSON decoder and validation rules are what is
// explored.
func FuzzManifestPayload(f *testing.F) {
	for _, m := range sampleManifests() {
		f.Add(payloadOf(mustManifest(m)))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > format.MaxPayloadBytes {
			return
		}
		data := format.EncodeEnvelope(format.Envelope{Stamp: format.CurrentFormat, Kind: format.KindManifest, Token: token, Payload: payload})
		m, tok, err := format.DecodeManifest(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		again, err := format.EncodeManifest(&m, tok)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted payload is not canonical: %q (%v)", payload, err)
		}
	})
}

// FuzzTableVersionPayload is FuzzManifestPayload for table versions.
func FuzzTableVersionPayload(f *testing.F) {
	for _, tv := range sampleTableVersions() {
		f.Add(payloadOf(mustTableVersion(tv)))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > format.MaxPayloadBytes {
			return
		}
		data := format.EncodeEnvelope(format.Envelope{Stamp: format.CurrentFormat, Kind: format.KindTableVersion, Token: token, Payload: payload})
		tv, tok, err := format.DecodeTableVersion(data)
		if err != nil {
			mustBeTyped(t, err)
			return
		}
		again, err := format.EncodeTableVersion(&tv, tok)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted payload is not canonical: %q (%v)", payload, err)
		}
	})
}

// FuzzHandDecoders is the differential property of the hand decoders of
// canonical payloads (kernel/format/jsondecode.go, K11b): read as a
// manifest, a commit index and a table version (a riding payload), any
// payload the hand decoder accepts is accepted by the general path
// (strict encoding/json decode and canonical re-encode) with a deep-equal
// value; on anything else the kernel runs the general path itself.
func FuzzHandDecoders(f *testing.F) {
	for _, b := range handDecoderSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > format.MaxPayloadBytes {
			return
		}
		if _, err := format.CheckHandDecoders(payload); err != nil {
			t.Fatal(err)
		}
	})
}

// handDecoderSeeds are the payloads of the sample manifests, table
// versions (riding ones too) and commit indexes, by name.
func handDecoderSeeds() map[string][]byte {
	out := map[string][]byte{"riding-payload": []byte(ridingPin().Riding)}
	for name, m := range sampleManifests() {
		out["manifest-"+name] = payloadOf(mustManifest(m))
	}
	for name, tv := range sampleTableVersions() {
		out["table-version-"+name] = payloadOf(mustTableVersion(tv))
	}
	for name, x := range sampleCommitIndexes() {
		out["commit-index-"+name] = payloadOf(mustCommitIndex(x))
	}
	return out
}

// atCurrentStamp is data re-enveloped at format.CurrentFormat: decoders
// read every stamp in [OldestSupportedFormat, CurrentFormat] and encoders
// write CurrentFormat, so an object of an older readable stamp round-trips
// to the same kind, token and payload at the current stamp (a stamp-4
// schema object, say, once the current stamp is 5). Bytes that are no
// envelope, or already current, are returned as they are.
func atCurrentStamp(data []byte) []byte {
	e, err := format.DecodeEnvelope(data)
	if err != nil || e.Stamp == format.CurrentFormat {
		return data
	}
	e.Stamp = format.CurrentFormat
	return format.EncodeEnvelope(e)
}
