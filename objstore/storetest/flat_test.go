package storetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// TestCheckFlatKeys: the checker accepts flat sets and names the first
// offending key of the rest.
func TestCheckFlatKeys(t *testing.T) {
	seg255 := strings.Repeat("s", MaxFlatSegmentBytes)
	seg256 := strings.Repeat("s", MaxFlatSegmentBytes+1)
	cases := []struct {
		name    string
		keys    []string
		wantErr string // "" = flat; else a substring of the error
	}{
		{"empty", nil, ""},
		{"one key", []string{"a"}, ""},
		{"byte prefixes are fine", []string{"a", "ab", "a-b", "a.b", "a0", "b/c", "b/c-d", "b/cd"}, ""},
		{"directory without a key", []string{"a/b/c", "a/b/d", "a/bc"}, ""},
		{"duplicates", []string{"a/b", "a/b"}, ""},
		{"segments at the limit", []string{seg255, "x/" + seg255 + "/" + seg255}, ""},
		{"multi-byte segment at the limit", []string{strings.Repeat("日", 85)}, ""},
		{"key and key below", []string{"a", "a/b"}, `key "a" is a path-prefix of key "a/b"`},
		{"below listed first", []string{"a/b", "a"}, `key "a" is a path-prefix of key "a/b"`},
		{"deep below", []string{"x", "a/b/c/d", "a/b"}, `key "a/b" is a path-prefix of key "a/b/c/d"`},
		{"byte siblings sort between", []string{"a", "a-b", "a.b", "a/z"}, `key "a" is a path-prefix of key "a/z"`},
		{"least key below is named", []string{"d/y", "d/x", "d"}, `key "d" is a path-prefix of key "d/x"`},
		{"first offender in input order", []string{"p/q", "a", "p", "a/b"}, `key "a" is a path-prefix`},
		{"multi-byte key below", []string{"é/x", "é"}, `key "é" is a path-prefix of key "é/x"`},
		{"long segment", []string{"ok", seg256}, "256-byte path segment"},
		{"long inner segment", []string{"a/" + seg256 + "/b"}, "256-byte path segment"},
		{"multi-byte long segment", []string{strings.Repeat("é", 128)}, "256-byte path segment"},
		{"segment before prefix in order", []string{"x/" + seg256, "a", "a/b"}, "256-byte path segment"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.keys)
			err := CheckFlatKeys(in)
			if !slices.Equal(in, tc.keys) {
				t.Errorf("CheckFlatKeys modified its input: %q", in)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckFlatKeys(%q) = %v, want nil", tc.keys, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrNotFlat) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckFlatKeys = %v, want ErrNotFlat containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestKeySets: every key set is valid; the flat ones are flat and the
// nested ones are not (so FlatKeysOnly changes what runs); each prefix
// case's expectation is the sorted byte-prefix match of its keys; the flat
// InvalidKeys phases meet every nested near-miss key; every max-length key
// is exactly MaxKeyBytes long.
func TestKeySets(t *testing.T) {
	for _, flat := range []bool{false, true} {
		ks := keySetsFor(RunOptions{FlatKeysOnly: flat})
		sets := map[string][]string{
			"putGetHead": putKeys(ks.putGetHead),
			"order":      ks.order,
			"prefix":     ks.prefix.keys,
			"maxKeys":    ks.maxKeys,
		}
		for i, phase := range ks.survivors {
			sets[fmt.Sprintf("survivors phase %d", i)] = phase
		}
		for _, name := range slices.Sorted(maps.Keys(sets)) {
			keys := sets[name]
			for _, k := range keys {
				if err := objstore.ValidateKey(objstore.OpPut, k); err != nil {
					t.Errorf("flat=%v %s: %v", flat, name, err)
				}
			}
			if err := CheckFlatKeys(keys); (err == nil) != flat {
				t.Errorf("flat=%v %s: CheckFlatKeys = %v", flat, name, err)
			}
		}
		var met []string
		for _, phase := range ks.survivors {
			met = append(met, phase...)
		}
		for _, k := range nestedSurvivors[0] {
			if !slices.Contains(met, k) {
				t.Errorf("flat=%v: near-miss key %q in no InvalidKeys phase", flat, k)
			}
		}
		for _, tc := range ks.prefix.cases {
			if want := sortedWithPrefix(ks.prefix.keys, tc.prefix); !slices.Equal(want, tc.want) {
				t.Errorf("flat=%v: prefix %q expects %q, keys give %q", flat, tc.prefix, tc.want, want)
			}
		}
		for _, k := range ks.maxKeys {
			if len(k) != objstore.MaxKeyBytes {
				t.Errorf("flat=%v: max key of %d bytes", flat, len(k))
			}
		}
	}
}

func putKeys(cases []putCase) []string {
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.key
	}
	return out
}

// TestRunePrefix: prefixes never split a multi-byte rune.
func TestRunePrefix(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 3, "abc"},
		{"ab", 10, "ab"},
		{"日日日日", 10, "日日日"},
		{"日日日日", 9, "日日日"},
		{"ééééé", 10, "ééééé"},
		{"éééééé", 9, "éééé"},
		{"日", 1, ""},
	}
	for _, tc := range cases {
		if got := runePrefix(tc.s, tc.n); got != tc.want {
			t.Errorf("runePrefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
