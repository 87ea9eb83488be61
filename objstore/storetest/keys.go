package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphkernel/graphkernel/objstore"
)

// invalidKeys break the key rules of objstore.ValidateKey.
var invalidKeys = []string{
	"", "/a", "a//b", "a/", "a/./b", "a/../b", "..", ".", "./a", "a/..", "../a",
	"a\x00b", "a\nb", "a\tb", "\x7f", "a\u0085b", "a\xffb", "\xc3",
	strings.Repeat("k", objstore.MaxKeyBytes+1),
	strings.Repeat("é", objstore.MaxKeyBytes/2) + "x",
	strings.Repeat("s/", objstore.MaxKeyBytes/2) + "x",
}

// keyOps calls each key-taking operation and returns its error.
var keyOps = []struct {
	op   objstore.Op
	name string
	call func(ctx context.Context, s objstore.Store, key string) error
}{
	{objstore.OpGet, "Get", func(ctx context.Context, s objstore.Store, key string) error {
		_, err := s.Get(ctx, key)
		return err
	}},
	{objstore.OpHead, "Head", func(ctx context.Context, s objstore.Store, key string) error {
		_, err := s.Head(ctx, key)
		return err
	}},
	{objstore.OpPut, "Put", func(ctx context.Context, s objstore.Store, key string) error {
		_, err := s.Put(ctx, key, []byte("x"), objstore.Unconditional)
		return err
	}},
	{objstore.OpPut, "PutCreateOnly", func(ctx context.Context, s objstore.Store, key string) error {
		_, err := s.Put(ctx, key, []byte("x"), objstore.CreateOnly)
		return err
	}},
	{objstore.OpPut, "PutIfMatch", func(ctx context.Context, s objstore.Store, key string) error {
		_, err := s.Put(ctx, key, []byte("x"), objstore.IfMatch("e1"))
		return err
	}},
	{objstore.OpDelete, "Delete", func(ctx context.Context, s objstore.Store, key string) error {
		return s.Delete(ctx, key)
	}},
}

// nestedSurvivors is one phase holding every near-miss key at once.
var nestedSurvivors = [][]string{{"a", "a/b", "b", "k"}}

// flatSurvivors splits the near-miss keys into phases a flat backend can
// hold ("a" and "a/b" cannot coexist there); every invalid key meets each
// near-miss key in some phase.
var flatSurvivors = [][]string{{"a", "b", "k"}, {"a/b", "b", "k"}}

// testInvalidKeys: every operation rejects every invalid key with
// ErrInvalidKey and leaves the store untouched. The near-miss keys one
// would write without the rules ("a" for "a/", "a/b" for "a//b") exist
// beforehand and must survive Delete. Each phase of survivors is written,
// checked against every invalid key and operation, then deleted before the
// next phase.
func testInvalidKeys(t *testing.T, s objstore.Store, phases [][]string) {
	for i, survivors := range phases {
		if i > 0 {
			deleteAll(t, s, phases[i-1])
		}
		putAll(t, s, survivors)
		for _, key := range invalidKeys {
			for _, op := range keyOps {
				err := op.call(t.Context(), s, key)
				if cerr := checkErr(err, objstore.ErrInvalidKey, op.op, key); cerr != nil {
					t.Errorf("%s: %v", op.name, cerr)
				}
			}
		}
		wantKeys(t, fmt.Sprintf("keys after invalid calls (phase %d)", i), listAll(t, s, "", "", 0, 10), survivors)
		for _, k := range survivors {
			wantObject(t, s, k, []byte(k), "")
		}
	}
}

// testInvalidPrefixes: List rejects prefixes no valid key could start with,
// and accepts partial segments that a valid key could still complete.
func testInvalidPrefixes(t *testing.T, s objstore.Store) {
	mustPut(t, s, "x", []byte("x"), objstore.CreateOnly)
	bad := []string{"/a", "a//", "a\x00", "\xff", "a/./", "a/../", "../", "./", "/", "a\n",
		strings.Repeat("p", objstore.MaxKeyBytes+1)}
	for _, prefix := range bad {
		_, err := s.List(t.Context(), prefix, "", 0)
		wantErr(t, err, objstore.ErrInvalidKey, objstore.OpList, prefix)
	}
	for _, prefix := range []string{"", "a/", "a/.", "a/..", ".", "..", "a/b/.."} {
		if _, err := s.List(t.Context(), prefix, "", 0); err != nil {
			t.Errorf("List(%q): %v, want a valid prefix", prefix, err)
		}
	}
}

// maxKeys are valid keys of exactly MaxKeyBytes bytes, with many segments
// or one long (possibly multi-byte) segment.
func maxKeys() []string {
	segs := strings.Repeat(strings.Repeat("s", 99)+"/", 10) // 1000 bytes
	return []string{
		segs + strings.Repeat("e", objstore.MaxKeyBytes-len(segs)),
		strings.Repeat("k", objstore.MaxKeyBytes),
		strings.Repeat("é", objstore.MaxKeyBytes/2),
	}
}

// flatMaxKeys are valid keys of exactly MaxKeyBytes bytes whose segments
// are at most MaxFlatSegmentBytes long: many short segments, segments of
// exactly the limit, and multi-byte segments at or just under it.
func flatMaxKeys() []string {
	segs := strings.Repeat(strings.Repeat("s", 99)+"/", 10)     // 1000 bytes
	full := strings.Repeat(strings.Repeat("k", 255)+"/", 3)     // 768 bytes
	twoByte := strings.Repeat(strings.Repeat("é", 127)+"/", 4)  // 1020 bytes
	threeByte := strings.Repeat(strings.Repeat("日", 85)+"/", 3) // 768 bytes
	return []string{
		segs + strings.Repeat("e", objstore.MaxKeyBytes-len(segs)),
		full + strings.Repeat("k", 254) + "/k",
		twoByte + "éé",
		threeByte + strings.Repeat("日", 84) + "/abc",
	}
}

// testMaxLengthKeys: a 1024-byte key works in every operation, for each of
// keys (maxKeys or flatMaxKeys).
func testMaxLengthKeys(t *testing.T, s objstore.Store, keys []string) {
	for _, key := range keys {
		if len(key) != objstore.MaxKeyBytes {
			t.Fatalf("test bug: key of %d bytes", len(key))
		}
		etag := mustPut(t, s, key, []byte("long"), objstore.CreateOnly)
		wantObject(t, s, key, []byte("long"), etag)
		etag = mustPut(t, s, key, []byte("longer"), objstore.IfMatch(etag))
		wantObject(t, s, key, []byte("longer"), etag)
		wantKeys(t, "List(key)", listAll(t, s, key, "", 0, 4), []string{key})
		head := runePrefix(key, 10)
		wantKeys(t, fmt.Sprintf("List(key[:%d])", len(head)), listAll(t, s, head, "", 0, 4), []string{key})
		if err := s.Delete(t.Context(), key); err != nil {
			t.Fatalf("Delete(%s): %v", short(key), err)
		}
		wantMissing(t, s, key)
	}
}

// runePrefix returns the longest prefix of s of at most n bytes that ends on
// a rune boundary, so it is still valid UTF-8.
func runePrefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
