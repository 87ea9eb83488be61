package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

func openT(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPut(t *testing.T, s *Store, key, data string, cond objstore.Condition) string {
	t.Helper()
	etag, err := s.Put(context.Background(), key, []byte(data), cond)
	if err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
	return etag
}

func mustGet(t *testing.T, s *Store, key string) objstore.Object {
	t.Helper()
	obj, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return obj
}

// A key and its extensions coexist, each with its own bytes, as on S3.
func TestPrefixKeysCoexist(t *testing.T) {
	s := openT(t)
	keys := []string{"a", "a/b", "a/b/c", "a/bc", strings.Repeat("l", 300), strings.Repeat("l", 300) + "/x"}
	for _, k := range keys {
		mustPut(t, s, k, "v:"+k, objstore.CreateOnly)
	}
	for _, k := range keys {
		if got := string(mustGet(t, s, k).Data); got != "v:"+k {
			t.Errorf("get %q = %q", k, got)
		}
	}
	if err := s.Delete(context.Background(), "a/b"); err != nil {
		t.Fatal(err)
	}
	if got := string(mustGet(t, s, "a/b/c").Data); got != "v:a/b/c" {
		t.Errorf("after deleting a/b: a/b/c = %q", got)
	}
}

// The conditions, ETags and Head, including the ETag changing on a
// rewrite of identical bytes.
func TestConditionsAndETags(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	e1 := mustPut(t, s, "k", "same", objstore.CreateOnly)
	if _, err := s.Put(ctx, "k", []byte("x"), objstore.CreateOnly); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("second create-only: %v", err)
	}
	e2 := mustPut(t, s, "k", "same", objstore.IfMatch(e1))
	if e2 == e1 {
		t.Fatalf("etag unchanged on rewrite of identical bytes: %s", e1)
	}
	if _, err := s.Put(ctx, "k", []byte("x"), objstore.IfMatch(e1)); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("stale if-match: %v", err)
	}
	if _, err := s.Put(ctx, "missing", []byte("x"), objstore.IfMatch(e1)); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("if-match on missing key: %v", err)
	}
	e3 := mustPut(t, s, "k", "twelve bytes", objstore.Unconditional)
	obj := mustGet(t, s, "k")
	attrs, err := s.Head(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if obj.ETag != e3 || attrs.ETag != e3 || attrs.Size != 12 || string(obj.Data) != "twelve bytes" {
		t.Fatalf("get %+v head %+v, want etag %s", obj, attrs, e3)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
	for _, op := range []func() error{
		func() error { _, err := s.Get(ctx, "k"); return err },
		func() error { _, err := s.Head(ctx, "k"); return err },
	} {
		if err := op(); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("after delete: %v, want ErrNotFound", err)
		}
	}
}

// Errors are *objstore.Error with Op and Key; invalid keys and cancelled
// contexts fail before I/O.
func TestErrorShape(t *testing.T) {
	s := openT(t)
	_, err := s.Get(context.Background(), "nope/x")
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Op != objstore.OpGet || oe.Key != "nope/x" || !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get missing: %#v", err)
	}
	for _, k := range []string{"", "/a", "a//b", "a/../b", "..", "a/"} {
		if _, err := s.Put(context.Background(), k, nil, objstore.Unconditional); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("put %q: %v, want ErrInvalidKey", k, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "k", nil, objstore.CreateOnly); !errors.Is(err, context.Canceled) || !errors.As(err, &oe) {
		t.Fatalf("put with cancelled ctx: %v", err)
	}
	if _, err := s.Get(context.Background(), "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("cancelled put wrote: %v", err)
	}
}

// listKeys are chosen so that file-name order differs from key order: the
// chunk directory of a 200-byte segment holds keys that sort both before
// ("!" < "/") and after ("0" > "/") the keys of the same segment's ".d"
// directory.
func listKeys() []string {
	x := strings.Repeat("x", 200)
	return []string{
		"a", "a!", "a/b", "a/b/c", "a/b!", "a/bc", "a0", "ab", "a.d", "a.o", "b",
		x, x + "!", x + "/y", x + "/y/z", x + "0", x + "0/q", x + "~",
		"é", "é/ü", "z/z/z/z", "~",
	}
}

// List returns keys in byte-wise key order for every prefix, startAfter
// and page size, compared with a sorted reference.
func TestListOrderAndPagination(t *testing.T) {
	s := openT(t)
	keys := listKeys()
	for _, k := range keys {
		mustPut(t, s, k, k, objstore.CreateOnly)
	}
	sort.Strings(keys)
	prefixes := []string{""}
	for _, k := range keys {
		for i := 1; i <= len(k); i++ {
			prefixes = append(prefixes, k[:i])
		}
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	for _, p := range prefixes {
		if objstore.ValidatePrefix(objstore.OpList, p) != nil {
			continue
		}
		want := filterPrefix(keys, p)
		for _, limit := range []int{1, 2, 3, 1000} {
			if got := listAll(t, s, p, limit); !slices.Equal(got, want) {
				t.Fatalf("list(%.30q, limit %d)\n got %.200q\nwant %.200q", p, limit, got, want)
			}
		}
	}
}

// listAll pages through List until it is not truncated.
func listAll(t *testing.T, s *Store, prefix string, limit int) []string {
	t.Helper()
	var out []string
	after := ""
	for page := 0; page < 1000; page++ {
		p, err := s.List(context.Background(), prefix, after, limit)
		if err != nil {
			t.Fatalf("list %q after %q: %v", prefix, after, err)
		}
		if len(p.Keys) > limit {
			t.Fatalf("page of %d keys, limit %d", len(p.Keys), limit)
		}
		out = append(out, p.Keys...)
		if !p.Truncated {
			return out
		}
		after = p.Keys[len(p.Keys)-1]
	}
	t.Fatal("list did not terminate")
	return nil
}

func filterPrefix(keys []string, p string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, p) {
			out = append(out, k)
		}
	}
	return out
}

// startAfter values that are not keys (between keys, before all, after
// all, with a different prefix) are honored.
func TestListStartAfterArbitrary(t *testing.T) {
	s := openT(t)
	keys := listKeys()
	for _, k := range keys {
		mustPut(t, s, k, k, objstore.CreateOnly)
	}
	sort.Strings(keys)
	for _, after := range []string{"", "\x00", "a/", "a/b/", "a/b0", "a1", strings.Repeat("x", 200) + "/", strings.Repeat("x", 201), "é0", "\xff"} {
		var want []string
		for _, k := range keys {
			if k > after {
				want = append(want, k)
			}
		}
		page, err := s.List(context.Background(), "", after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(page.Keys, want) || page.Truncated {
			t.Errorf("after %.30q: got %.120q, want %.120q", after, page.Keys, want)
		}
	}
}

// Deleting the last key under a directory prunes the directory, so List
// does not wander through empty trees, and a Put recreates it.
func TestDeletePrunesEmptyDirs(t *testing.T) {
	s := openT(t)
	mustPut(t, s, "p/q/r", "1", objstore.CreateOnly)
	if err := s.Delete(context.Background(), "p/q/r"); err != nil {
		t.Fatal(err)
	}
	if ents := readRootNames(t, s); slices.Contains(ents, "p.d") {
		t.Fatalf("p.d not pruned: %v", ents)
	}
	mustPut(t, s, "p/q/r", "2", objstore.CreateOnly)
	if got := string(mustGet(t, s, "p/q/r").Data); got != "2" {
		t.Fatalf("got %q", got)
	}
}

// In-process CAS counter across goroutines (run it under -race): flock
// belongs to the open file, so goroutines exclude each other too.
func TestGoroutineCASCounter(t *testing.T) {
	s := openT(t)
	mustPut(t, s, "ctr", "0", objstore.CreateOnly)
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := increment(context.Background(), s, "ctr"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := string(mustGet(t, s, "ctr").Data); got != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %s, want %d", got, workers*each)
	}
}

// increment adds one to the decimal counter at key with a CAS loop and
// returns the value it wrote.
func increment(ctx context.Context, s *Store, key string) (int, error) {
	for attempt := 0; attempt < 100000; attempt++ {
		obj, err := s.Get(ctx, key)
		if err != nil {
			return 0, err
		}
		var n int
		if _, err := fmt.Sscan(string(obj.Data), &n); err != nil {
			return 0, fmt.Errorf("counter %q: %w", obj.Data, err)
		}
		_, err = s.Put(ctx, key, []byte(fmt.Sprint(n+1)), objstore.IfMatch(obj.ETag))
		if err == nil {
			return n + 1, nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) {
			return 0, err
		}
	}
	return 0, errors.New("increment: retry budget exhausted")
}

func readRootNames(t *testing.T, s *Store) []string {
	t.Helper()
	ents, err := osReadDirNames(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// A stored object's bytes are exactly the bytes put, for empty and
// binary data.
func TestBinaryAndEmptyData(t *testing.T) {
	s := openT(t)
	bin := bytes.Repeat([]byte{0, 1, 0xff, '\n'}, 1000)
	for key, data := range map[string][]byte{"empty": {}, "bin": bin} {
		mustPut(t, s, key, string(data), objstore.Unconditional)
		if got := mustGet(t, s, key).Data; !bytes.Equal(got, data) {
			t.Errorf("%s: got %d bytes, want %d", key, len(got), len(data))
		}
	}
}

// A Delete that prunes the parent directories a concurrent Put has just
// walked makes the Put's link or rename fail with ENOENT; the Put walks
// again and succeeds. The hook runs the Delete at exactly that point.
func TestPutSurvivesConcurrentPrune(t *testing.T) {
	for name, cond := range map[string]objstore.Condition{"create-only": objstore.CreateOnly, "unconditional": objstore.Unconditional} {
		t.Run(name, func(t *testing.T) {
			writer := openT(t)
			deleter := newStoreAt(t, writer.Root())
			if stripeName("p/q/a") == stripeName("p/q/b") {
				t.Fatal("test keys share a lock stripe; the hook would self-deadlock")
			}
			mustPut(t, writer, "p/q/a", "a", objstore.CreateOnly)
			pruned := 0
			writer.hook = func(p string) {
				if p != pointWalked || pruned > 0 {
					return
				}
				pruned++
				if err := deleter.Delete(context.Background(), "p/q/a"); err != nil {
					t.Errorf("delete: %v", err)
				}
				if names := readRootNames(t, writer); slices.Contains(names, "p.d") {
					t.Errorf("delete did not prune p.d: %v", names)
				}
			}
			mustPut(t, writer, "p/q/b", "b", cond)
			if pruned != 1 {
				t.Fatalf("hook ran %d times", pruned)
			}
			requireKeys(t, writer, "p/q/b")
		})
	}
}

// List opens only directories whose key range can match: a prefix under
// one of many top-level directories, or a startAfter past most of them,
// reads a handful of directories, not all of them.
func TestListPrunesDirectories(t *testing.T) {
	s := openT(t)
	for i := 0; i < 20; i++ {
		mustPut(t, s, fmt.Sprintf("d%02d/x/y", i), "v", objstore.CreateOnly)
	}
	root, err := s.openRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	tests := []struct {
		prefix, after string
		keys, maxDirs int
	}{
		{"", "", 20, 1 + 20*2},
		{"d07/", "", 1, 3},            // root, d07.d, x.d
		{"d07/x/y", "", 1, 3},         // same dirs; prefix ends inside a file name
		{"d1", "d17/x/y", 2, 1 + 3*2}, // root; d17 (startAfter is inside it), d18, d19
		{"e", "", 0, 1},
	}
	for _, tc := range tests {
		w := lister{store: s, root: root, prefix: tc.prefix, startAfter: tc.after}
		keys, err := w.run(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != tc.keys || w.expanded > tc.maxDirs {
			t.Errorf("list(%q after %q): %d keys, read %d dirs; want %d keys, <= %d dirs",
				tc.prefix, tc.after, len(keys), w.expanded, tc.keys, tc.maxDirs)
		}
	}
}
