package fuzz

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz seed corpora from valid encodings")

// marshalSeed renders one corpus file in the "go test fuzz v1" format.
func marshalSeed(vals ...any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range vals {
		switch t := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", t)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", t)
		default:
			panic(fmt.Sprintf("unsupported seed type %T", v))
		}
	}
	return []byte(b.String())
}

// seeds returns the checked-in corpus: name -> file name -> contents.
func seeds() map[string]map[string][]byte {
	out := map[string]map[string][]byte{"FuzzDecodeManifest": {}, "FuzzDecodeTableVersion": {}, "FuzzDecodeEnvelope": {},
		"FuzzManifestPayload": {}, "FuzzTableVersionPayload": {}, "FuzzDecodeSchema": {}, "FuzzHandDecoders": {}}
	for name, m := range sampleManifests() {
		out["FuzzDecodeManifest"][name] = marshalSeed(mustManifest(m))
		out["FuzzDecodeEnvelope"][name] = marshalSeed(mustManifest(m))
		out["FuzzManifestPayload"][name] = marshalSeed(payloadOf(mustManifest(m)))
	}
	for name, tv := range sampleTableVersions() {
		out["FuzzDecodeTableVersion"][name] = marshalSeed(mustTableVersion(tv))
		out["FuzzTableVersionPayload"][name] = marshalSeed(payloadOf(mustTableVersion(tv)))
	}
	for name, b := range handDecoderSeeds() {
		out["FuzzHandDecoders"][name] = marshalSeed(b)
	}
	out["FuzzDecodeSchema"]["contract"] = marshalSeed(format.EncodeSchema([]byte(`{"tables":["a"]}`), token))
	out["FuzzDecodeSchema"]["empty"] = marshalSeed(format.EncodeSchema(nil, token))
	return out
}

// TestSeedCorpus keeps the checked-in seeds equal to freshly generated
// valid encodings (so a format change cannot silently leave stale seeds),
// and checks that every seed decodes. Regenerate with -update-corpus.
func TestSeedCorpus(t *testing.T) {
	all := seeds()
	targets := make([]string, 0, len(all))
	for k := range all {
		targets = append(targets, k)
	}
	sort.Strings(targets)
	for _, target := range targets {
		dir := filepath.Join("testdata", "fuzz", target)
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, want := range all[target] {
			path := filepath.Join(dir, name)
			if *updateCorpus {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s is missing or stale (run with -update-corpus): %v", path, err)
			}
		}
	}
	for name, m := range sampleManifests() {
		if _, _, err := format.DecodeManifest(mustManifest(m)); err != nil {
			t.Errorf("sample manifest %s does not decode: %v", name, err)
		}
	}
}
