package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// putCase is one write of testPutGetHead.
type putCase struct {
	key  string
	data string
	cond objstore.Condition
}

// nestedPutCases include a key that is also a path-prefix of another key.
var nestedPutCases = []putCase{
	{"k1", "hello", objstore.Unconditional},
	{"k2", "created", objstore.CreateOnly},
	{"dir/sub/obj", "nested", objstore.Unconditional},
	{"dir/sub", "a key that is also a prefix of another key", objstore.CreateOnly},
}

// flatPutCases include a key that is a byte prefix, not a path-prefix, of
// another key.
var flatPutCases = []putCase{
	{"k1", "hello", objstore.Unconditional},
	{"k2", "created", objstore.CreateOnly},
	{"dir/sub/obj", "nested", objstore.Unconditional},
	{"dir/sub/obj-2", "a key whose byte prefix is another key", objstore.CreateOnly},
}

// testPutGetHead: a write is readable with the ETag Put returned.
func testPutGetHead(t *testing.T, s objstore.Store, cases []putCase) {
	for _, tc := range cases {
		etag := mustPut(t, s, tc.key, []byte(tc.data), tc.cond)
		wantObject(t, s, tc.key, []byte(tc.data), etag)
	}
}

// testMissingIsNotFound: absent keys, including a key under an object and a
// key that is only a prefix of others, are ErrNotFound carrying op and key.
func testMissingIsNotFound(t *testing.T, s objstore.Store) {
	mustPut(t, s, "obj", []byte("x"), objstore.CreateOnly)
	mustPut(t, s, "dir/child", []byte("y"), objstore.CreateOnly)
	for _, key := range []string{"missing", "obj/child", "dir", "dir/other", "ob", "dir/child/deeper"} {
		wantMissing(t, s, key)
	}
}

// testDeleteMissing: deleting a missing key is nil, twice; deleting a key
// that is only a prefix of others removes nothing.
func testDeleteMissing(t *testing.T, s objstore.Store) {
	mustPut(t, s, "dir/child", []byte("y"), objstore.CreateOnly)
	for _, key := range []string{"nope", "nope", "dir", "dir/child/deeper"} {
		if err := s.Delete(t.Context(), key); err != nil {
			t.Errorf("Delete(%q) of a missing key: %v, want nil", key, err)
		}
	}
	wantObject(t, s, "dir/child", []byte("y"), "")
}

// testDeleteMany: objstore.DeleteMany (the store's batched delete, or
// one Delete per key) deletes every key it names, a missing one is nil,
// and it touches nothing else; past objstore.MaxDeleteBatch keys it is
// split into several requests.
func testDeleteMany(t *testing.T, s objstore.Store) {
	var keys []string
	for i := range 5 {
		k := fmt.Sprintf("many/k%d", i)
		mustPut(t, s, k, []byte{byte(i)}, objstore.CreateOnly)
		keys = append(keys, k)
	}
	mustPut(t, s, "many/stay", []byte("s"), objstore.CreateOnly)
	errs := objstore.DeleteMany(t.Context(), s, append(keys, "many/absent"))
	if len(errs) != len(keys)+1 {
		t.Fatalf("DeleteMany returned %d results for %d keys", len(errs), len(keys)+1)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("DeleteMany key %d: %v, want nil", i, err)
		}
	}
	for _, k := range keys {
		wantMissing(t, s, k)
	}
	wantObject(t, s, "many/stay", []byte("s"), "")
	big := make([]string, objstore.MaxDeleteBatch+3)
	for i := range big {
		big[i] = fmt.Sprintf("many/big%05d", i)
	}
	mustPut(t, s, big[len(big)-1], []byte("b"), objstore.CreateOnly)
	for i, err := range objstore.DeleteMany(t.Context(), s, big) {
		if err != nil {
			t.Fatalf("DeleteMany of %d keys, key %d: %v", len(big), i, err)
		}
	}
	wantMissing(t, s, big[len(big)-1])
}

// testGetMany: objstore.GetMany (the store's batched read, or one Get per
// key) answers each key as Get does, in key order: present keys with their
// bytes and ETag, a missing key ErrNotFound, an invalid key ErrInvalidKey,
// the same key twice both times; an empty batch is empty; past
// objstore.MaxGetBatch keys it is split into several requests.
func testGetMany(t *testing.T, s objstore.Store) {
	if got := objstore.GetMany(t.Context(), s, nil); len(got) != 0 {
		t.Fatalf("GetMany of no keys returned %d results", len(got))
	}
	etags := map[string]string{}
	for i := range 4 {
		k := fmt.Sprintf("gm/k%d", i)
		etags[k] = mustPut(t, s, k, []byte(k), objstore.CreateOnly)
	}
	keys := []string{"gm/k3", "gm/absent", "gm/k0", "gm//bad", "gm/k2", "gm/k3", "gm/k1"}
	got := objstore.GetMany(t.Context(), s, keys)
	if len(got) != len(keys) {
		t.Fatalf("GetMany returned %d results for %d keys", len(got), len(keys))
	}
	for i, k := range keys {
		switch k {
		case "gm/absent":
			wantErr(t, got[i].Err, objstore.ErrNotFound, objstore.OpGet, k)
		case "gm//bad":
			wantErr(t, got[i].Err, objstore.ErrInvalidKey, objstore.OpGet, k)
		default:
			if got[i].Err != nil || !bytes.Equal(got[i].Object.Data, []byte(k)) || got[i].Object.ETag != etags[k] {
				t.Errorf("GetMany key %d (%q): %q %q %v, want its bytes and ETag %q", i, k, clip(got[i].Object.Data), got[i].Object.ETag, got[i].Err, etags[k])
			}
		}
	}
	big := make([]string, objstore.MaxGetBatch+2)
	for i := range big {
		big[i] = fmt.Sprintf("gm/big%05d", i)
	}
	big[len(big)-1] = "gm/k1"
	res := objstore.GetMany(t.Context(), s, big)
	for i, r := range res[:len(big)-1] {
		if !errors.Is(r.Err, objstore.ErrNotFound) {
			t.Fatalf("GetMany of %d keys, key %d: %v, want ErrNotFound", len(big), i, r.Err)
		}
	}
	if r := res[len(big)-1]; r.Err != nil || !bytes.Equal(r.Object.Data, []byte("gm/k1")) {
		t.Fatalf("GetMany of %d keys, the last: %q %v", len(big), clip(r.Object.Data), r.Err)
	}
}

// testDeleteThenRecreate: a deleted key is gone from Get, Head and List,
// its old ETag no longer matches, and CreateOnly may recreate it.
func testDeleteThenRecreate(t *testing.T, s objstore.Store) {
	old := mustPut(t, s, "d/k", []byte("v1"), objstore.CreateOnly)
	mustPut(t, s, "d/other", []byte("o"), objstore.CreateOnly)
	if err := s.Delete(t.Context(), "d/k"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantMissing(t, s, "d/k")
	wantKeys(t, "List after delete", listAll(t, s, "d/", "", 0, 10), []string{"d/other"})
	_, err := s.Put(t.Context(), "d/k", []byte("v2"), objstore.IfMatch(old))
	wantErr(t, err, objstore.ErrPreconditionFailed, objstore.OpPut, "d/k")
	wantMissing(t, s, "d/k")
	etag := mustPut(t, s, "d/k", []byte("v3"), objstore.CreateOnly)
	wantObject(t, s, "d/k", []byte("v3"), etag)
	if err := s.Delete(t.Context(), "d/k"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(t.Context(), "d/k"); err != nil {
		t.Fatalf("Delete of the deleted key: %v", err)
	}
}

// testCreateOnlyExisting: CreateOnly never replaces, and the loser's bytes
// never land.
func testCreateOnlyExisting(t *testing.T, s objstore.Store) {
	etag := mustPut(t, s, "k", []byte("first"), objstore.CreateOnly)
	for _, data := range []string{"second", "first", ""} {
		_, err := s.Put(t.Context(), "k", []byte(data), objstore.CreateOnly)
		wantErr(t, err, objstore.ErrPreconditionFailed, objstore.OpPut, "k")
	}
	wantObject(t, s, "k", []byte("first"), etag)
}

// testIfMatch: compare-and-swap succeeds only against the current ETag.
func testIfMatch(t *testing.T, s objstore.Store) {
	e1 := mustPut(t, s, "cas", []byte("v1"), objstore.CreateOnly)
	e2 := mustPut(t, s, "cas", []byte("v2"), objstore.IfMatch(e1))
	if e2 == e1 {
		t.Fatalf("replacing v1 by v2 kept ETag %q", e1)
	}
	wantObject(t, s, "cas", []byte("v2"), e2)
	other := mustPut(t, s, "other", []byte("v9"), objstore.CreateOnly)
	for _, stale := range []string{e1, "", "bogus", other} {
		if stale == e2 {
			continue // a content-hash ETag may coincide; not stale then
		}
		_, err := s.Put(t.Context(), "cas", []byte("v3"), objstore.IfMatch(stale))
		wantErr(t, err, objstore.ErrPreconditionFailed, objstore.OpPut, "cas")
	}
	wantObject(t, s, "cas", []byte("v2"), e2)
	e3 := mustPut(t, s, "cas", []byte("v3"), objstore.IfMatch(e2))
	wantObject(t, s, "cas", []byte("v3"), e3)
}

// testIfMatchMissing: IfMatch on a missing key fails and creates nothing.
func testIfMatchMissing(t *testing.T, s objstore.Store) {
	etag := mustPut(t, s, "exists", []byte("x"), objstore.CreateOnly)
	for _, tag := range []string{etag, "e1", "bogus"} {
		_, err := s.Put(t.Context(), "absent", []byte("y"), objstore.IfMatch(tag))
		wantErr(t, err, objstore.ErrPreconditionFailed, objstore.OpPut, "absent")
	}
	wantMissing(t, s, "absent")
}

// testETagChangesWithBytes: new bytes give a new ETag; every returned ETag,
// including one from rewriting identical bytes, works for IfMatch.
func testETagChangesWithBytes(t *testing.T, s objstore.Store) {
	e1 := mustPut(t, s, "k", []byte("alpha"), objstore.Unconditional)
	e2 := mustPut(t, s, "k", []byte("beta"), objstore.Unconditional)
	if e1 == e2 {
		t.Errorf("ETag %q unchanged after the bytes changed", e1)
	}
	wantObject(t, s, "k", []byte("beta"), e2)
	e3 := mustPut(t, s, "k", []byte("beta"), objstore.Unconditional)
	wantObject(t, s, "k", []byte("beta"), e3)
	e4 := mustPut(t, s, "k", []byte("beta"), objstore.IfMatch(e3))
	wantObject(t, s, "k", []byte("beta"), e4)
	e5 := mustPut(t, s, "k", []byte("gamma"), objstore.IfMatch(e4))
	if e5 == e4 {
		t.Errorf("ETag %q unchanged after IfMatch replaced the bytes", e4)
	}
	wantObject(t, s, "k", []byte("gamma"), e5)
}

// testUniqueETags (RunOptions.UniqueETags): rewriting identical bytes still
// yields a fresh ETag, and the previous one no longer matches.
func testUniqueETags(t *testing.T, s objstore.Store) {
	seen := map[string]bool{}
	prev := mustPut(t, s, "k", []byte("same"), objstore.CreateOnly)
	seen[prev] = true
	for i := 0; i < 4; i++ {
		cond := objstore.Unconditional
		if i%2 == 1 {
			cond = objstore.IfMatch(prev)
		}
		etag := mustPut(t, s, "k", []byte("same"), cond)
		if seen[etag] {
			t.Fatalf("rewrite %d of identical bytes reused ETag %q", i, etag)
		}
		seen[etag] = true
		_, err := s.Put(t.Context(), "k", []byte("same"), objstore.IfMatch(prev))
		wantErr(t, err, objstore.ErrPreconditionFailed, objstore.OpPut, "k")
		prev = etag
	}
	if err := s.Delete(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if etag := mustPut(t, s, "k", []byte("same"), objstore.CreateOnly); seen[etag] {
		t.Fatalf("recreating the key reused ETag %q", etag)
	}
}

// testEmptyObject: zero-length objects exist, read back empty and list.
func testEmptyObject(t *testing.T, s objstore.Store) {
	e1 := mustPut(t, s, "empty/a", []byte{}, objstore.CreateOnly)
	wantObject(t, s, "empty/a", nil, e1)
	e2 := mustPut(t, s, "empty/b", nil, objstore.Unconditional)
	wantObject(t, s, "empty/b", nil, e2)
	e3 := mustPut(t, s, "empty/c", []byte("not empty"), objstore.CreateOnly)
	e3 = mustPut(t, s, "empty/c", nil, objstore.IfMatch(e3))
	wantObject(t, s, "empty/c", nil, e3)
	wantKeys(t, "List of empty objects", listAll(t, s, "empty/", "", 0, 10), []string{"empty/a", "empty/b", "empty/c"})
}

// testBinaryBytes: every byte value round-trips, including NUL at either end,
// and a 1 MiB pseudo-random payload.
func testBinaryBytes(t *testing.T, s objstore.Store) {
	all := make([]byte, 0, 512)
	for i := 0; i < 512; i++ {
		all = append(all, byte(i))
	}
	big := make([]byte, 1<<20)
	x := uint32(2463534242)
	for i := range big { // xorshift: deterministic, incompressible enough
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		big[i] = byte(x)
	}
	cases := map[string][]byte{
		"bin/all":   all,
		"bin/nul":   {0},
		"bin/nuls":  {0, 0, 0, 'a', 0, 0},
		"bin/crlf":  []byte("a\r\nb\n\x00\xff\xfe"),
		"bin/utf8":  []byte("日本語 é \xf0\x9f\x98\x80"),
		"bin/1MiB":  big,
		"bin/0xff":  bytes.Repeat([]byte{0xff}, 4096),
		"bin/trail": append([]byte("trailing"), 0),
	}
	for _, key := range []string{"bin/all", "bin/nul", "bin/nuls", "bin/crlf", "bin/utf8", "bin/1MiB", "bin/0xff", "bin/trail"} {
		etag := mustPut(t, s, key, cases[key], objstore.CreateOnly)
		wantObject(t, s, key, cases[key], etag)
	}
}

// testNoAliasing: the store neither keeps the caller's Put buffer nor hands
// out its own memory from Get.
func testNoAliasing(t *testing.T, s objstore.Store) {
	buf := []byte("original")
	mustPut(t, s, "alias", buf, objstore.CreateOnly)
	copy(buf, "MUTATED!")
	got := mustGet(t, s, "alias")
	if string(got.Data) != "original" {
		t.Fatalf("store aliased the Put buffer: read %q", got.Data)
	}
	copy(got.Data, "CHANGED!")
	if again := mustGet(t, s, "alias"); string(again.Data) != "original" {
		t.Fatalf("Get handed out store memory: read %q", again.Data)
	}
}
