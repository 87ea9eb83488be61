package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// wantErr fails t unless err is an *objstore.Error of kind carrying op and
// key, and, for kinds other than ErrTransient, not marked ambiguous.
func wantErr(t *testing.T, err error, kind error, op objstore.Op, key string) {
	t.Helper()
	if err := checkErr(err, kind, op, key); err != nil {
		t.Error(err)
	}
}

// checkErr is wantErr as a value, usable from goroutines.
func checkErr(err error, kind error, op objstore.Op, key string) error {
	if err == nil {
		return fmt.Errorf("%s %q: got nil error, want %v", op, short(key), kind)
	}
	if !errors.Is(err, kind) {
		return fmt.Errorf("%s %q: got %v, want kind %v", op, short(key), err, kind)
	}
	var oe *objstore.Error
	if !errors.As(err, &oe) {
		return fmt.Errorf("%s %q: error %v (%T) is not an *objstore.Error", op, short(key), err, err)
	}
	if oe.Op != op || oe.Key != key || oe.Kind != kind {
		return fmt.Errorf("%s %q: error carries op %q key %q kind %v, want op %q key %q kind %v",
			op, short(key), oe.Op, short(oe.Key), oe.Kind, op, short(key), kind)
	}
	if kind != objstore.ErrTransient && oe.Ambiguous {
		return fmt.Errorf("%s %q: %v must not be ambiguous", op, short(key), err)
	}
	return nil
}

// short abbreviates long keys in messages.
func short(key string) string {
	if len(key) <= 64 {
		return key
	}
	return fmt.Sprintf("%s...(%d bytes)", key[:48], len(key))
}

func mustPut(t *testing.T, s objstore.Store, key string, data []byte, cond objstore.Condition) string {
	t.Helper()
	etag, err := s.Put(t.Context(), key, data, cond)
	if err != nil {
		t.Fatalf("Put(%q, cond %v): %v", short(key), cond, err)
	}
	if etag == "" {
		t.Fatalf("Put(%q): empty ETag", short(key))
	}
	return etag
}

func mustGet(t *testing.T, s objstore.Store, key string) objstore.Object {
	t.Helper()
	obj, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", short(key), err)
	}
	return obj
}

// wantObject checks Get and Head of key against data and etag ("" = any
// non-empty ETag, the same from both).
func wantObject(t *testing.T, s objstore.Store, key string, data []byte, etag string) {
	t.Helper()
	obj := mustGet(t, s, key)
	if !bytes.Equal(obj.Data, data) {
		t.Errorf("Get(%q) = %d bytes %q, want %d bytes %q", short(key), len(obj.Data), clip(obj.Data), len(data), clip(data))
	}
	attrs, err := s.Head(t.Context(), key)
	if err != nil {
		t.Fatalf("Head(%q): %v", short(key), err)
	}
	if attrs.Size != int64(len(data)) {
		t.Errorf("Head(%q).Size = %d, want %d", short(key), attrs.Size, len(data))
	}
	if attrs.ETag != obj.ETag {
		t.Errorf("Head(%q).ETag = %q, Get ETag %q", short(key), attrs.ETag, obj.ETag)
	}
	if etag != "" && obj.ETag != etag {
		t.Errorf("Get(%q).ETag = %q, want %q (from Put)", short(key), obj.ETag, etag)
	}
}

func clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

// wantMissing checks that Get and Head of key report ErrNotFound.
func wantMissing(t *testing.T, s objstore.Store, key string) {
	t.Helper()
	_, err := s.Get(t.Context(), key)
	wantErr(t, err, objstore.ErrNotFound, objstore.OpGet, key)
	_, err = s.Head(t.Context(), key)
	wantErr(t, err, objstore.ErrNotFound, objstore.OpHead, key)
}

// listAll walks every page of List(prefix, startAfter, limit), checking each
// page's invariants, and returns the keys. The walk is bounded by maxKeys+2
// pages.
func listAll(t *testing.T, s objstore.Store, prefix, startAfter string, limit, maxKeys int) []string {
	t.Helper()
	var all []string
	after := startAfter
	for page := 0; page < maxKeys+2; page++ {
		p, err := s.List(t.Context(), prefix, after, limit)
		if err != nil {
			t.Fatalf("List(%q, %q, %d): %v", prefix, after, limit, err)
		}
		checkPage(t, p, prefix, after, limit)
		all = append(all, p.Keys...)
		if !p.Truncated {
			return all
		}
		after = p.Keys[len(p.Keys)-1]
	}
	t.Fatalf("List(%q, %q, %d) did not finish within %d pages", prefix, startAfter, limit, maxKeys+2)
	return nil
}

// checkPage asserts one page's invariants.
func checkPage(t *testing.T, p objstore.ListPage, prefix, startAfter string, limit int) {
	t.Helper()
	if len(p.Keys) > objstore.ClampLimit(limit) {
		t.Fatalf("List(%q, %q, %d) returned %d keys, over the limit", prefix, startAfter, limit, len(p.Keys))
	}
	if p.Truncated && len(p.Keys) == 0 {
		t.Fatalf("List(%q, %q, %d): empty page marked truncated (a walk could not progress)", prefix, startAfter, limit)
	}
	for i, k := range p.Keys {
		if !strings.HasPrefix(k, prefix) {
			t.Fatalf("List(%q, ...) returned %q without the prefix", prefix, k)
		}
		if k <= startAfter {
			t.Fatalf("List(%q, %q, ...) returned %q, not after startAfter", prefix, startAfter, k)
		}
		if i > 0 && k <= p.Keys[i-1] {
			t.Fatalf("List(%q, %q, ...) out of byte-wise order: %q after %q", prefix, startAfter, k, p.Keys[i-1])
		}
	}
}

// wantKeys compares got with want, reporting the first difference.
func wantKeys(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: %d keys, want %d; first difference at %d: got %q, want %q", what, len(got), len(want), i, g, w)
			return
		}
	}
}

// sortedWithPrefix returns the keys of all that start with prefix, sorted.
func sortedWithPrefix(all []string, prefix string) []string {
	var out []string
	for _, k := range all {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// putAll creates every key with CreateOnly, its own name as content.
func putAll(t *testing.T, s objstore.Store, keys []string) {
	t.Helper()
	for _, k := range keys {
		mustPut(t, s, k, []byte(k), objstore.CreateOnly)
	}
}

// deleteAll deletes every key and checks each is gone.
func deleteAll(t *testing.T, s objstore.Store, keys []string) {
	t.Helper()
	for _, k := range keys {
		if err := s.Delete(t.Context(), k); err != nil {
			t.Fatalf("Delete(%q): %v", short(k), err)
		}
		wantMissing(t, s, k)
	}
}
