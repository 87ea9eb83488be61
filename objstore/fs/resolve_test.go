package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// dirOpens counts a test's directory opens: one component at a time
// (walk, and every other openDir) and one-shot (openBeneath's openat2),
// with the one-shot opens that succeeded.
type dirOpens struct {
	walk, oneShot, oneShotOK atomic.Int64
}

// countDirOpens counts directory opens until the test ends; with a
// refusal, openat2 reports it instead of opening (ENOSYS as a kernel
// before 5.6 does, EPERM as a seccomp filter may), so every resolve falls
// back to the walk.
func countDirOpens(t *testing.T, refusal error) *dirOpens {
	t.Helper()
	c := &dirOpens{}
	oldAt, old2 := openatDir, openat2
	openatDir = func(dir int, path string, flags int, mode uint32) (int, error) {
		c.walk.Add(1)
		return oldAt(dir, path, flags, mode)
	}
	openat2 = func(dir int, path string, how *unix.OpenHow) (int, error) {
		c.oneShot.Add(1)
		if refusal != nil {
			return -1, refusal
		}
		fd, err := old2(dir, path, how)
		if err == nil {
			c.oneShotOK.Add(1)
		}
		return fd, err
	}
	noOpenat2.Store(false)
	t.Cleanup(func() {
		openatDir, openat2 = oldAt, old2
		noOpenat2.Store(false)
	})
	return c
}

// hexETag matches an ETag in an error's text.
var hexETag = regexp.MustCompile(`[0-9a-f]{32}`)

// outcome is an error's kind and text (or "ok"), for comparing two runs.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	kind := "other"
	for _, k := range []error{objstore.ErrNotFound, objstore.ErrInvalidKey, objstore.ErrPreconditionFailed,
		objstore.ErrRejected, objstore.ErrTransient} {
		if errors.Is(err, k) {
			kind = k.Error()
			break
		}
	}
	return kind + ": " + err.Error()
}

// A symlink planted inside the root that points inside the root too (so
// RESOLVE_BENEATH alone would let the kernel follow it), at a key
// segment's directory, at a deeper one, at a final segment's trie chunk
// (each above the leaf directory) and at the leaf directory, and a foreign file where a directory belongs (the leaf
// directory or one above it), are refused with the one-shot open exactly
// as the walk refuses them: every operation fails with ErrInvalidKey and
// the very error text the walk gives, and the directory the link points
// to keeps its object. Red if openBeneath drops RESOLVE_NO_SYMLINKS (Get
// then reads "real" through the link).
func TestOneShotOpenRefusesSymlinkAndForeignFile(t *testing.T) {
	type plant struct {
		name   string
		real   string // a key holding "real", reached by the link
		path   string // below the root: the link, or the foreign file
		target string // the link's target, relative; "" plants a file
		key    string // the key through the planted name
	}
	plants := []plant{
		{name: "segment", real: "b/x/y", path: "a.d", target: "b.d", key: "a/x/y"},
		{name: "deeper", real: "c/b/x/y", path: "c.d/a.d", target: "b.d", key: "c/a/x/y"},
		{name: "leaf", real: "b/x", path: "a.d", target: "b.d", key: "a/x"},
		{name: "trie-chunk", real: "q/yyabcd", path: "q.d/zz.c", target: "yy.c", key: "q/zzabcd"},
		{name: "foreign-leaf", path: "f.d", key: "f/x"},
		{name: "foreign-above", path: "g.d", key: "g/h/x"},
	}
	run := func(t *testing.T, p plant, refusal error) (map[string]string, int64) {
		s := openT(t)
		var etag string
		if p.real != "" {
			etag = mustPut(t, s, p.real, "real", objstore.CreateOnly)
		}
		at := filepath.Join(s.Root(), p.path)
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			t.Fatal(err)
		}
		if p.target != "" {
			if err := os.Symlink(p.target, at); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(at, []byte("foreign"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := countDirOpens(t, refusal)
		got := map[string]string{}
		for op, err := range attackOps(s, p.key, etag) {
			if !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("%s %q through %s: %v, want ErrInvalidKey", op, p.key, p.path, err)
			}
			got[op] = outcome(err)
		}
		if p.real != "" {
			if d := string(mustGet(t, s, p.real).Data); d != "real" {
				t.Errorf("%s = %q after the attack, want real", p.real, d)
			}
		}
		return got, c.oneShot.Load()
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			oneShot, tries := run(t, p, nil)
			if tries == 0 {
				t.Fatal("the one-shot open was never tried")
			}
			walked, _ := run(t, p, unix.ENOSYS)
			for op, o := range walked {
				if oneShot[op] != o {
					t.Errorf("%s: one-shot %q, walk %q", op, oneShot[op], o)
				}
			}
		})
	}
}

// With openat2 reporting ENOSYS every resolve walks, and a store behaves
// exactly as with the one-shot open: the same results and error texts,
// the same fsyncs, rounds and mkdirs (SyncStats) after every operation
// of a script that makes directories, writes into present ones under
// every condition, reads present and missing keys, syncs deferred keys,
// lists (with no held directories, so List resolves from the root),
// deletes and meets a symlink and a foreign file; and likewise with
// openat2 reporting EPERM (a seccomp filter). The ENOSYS is remembered
// (openat2 is tried once). The directories opened are
// counted: a Put into present directories opens the temp directory and
// its leaf in one call, not one per level; a Get, the leaf alone.
func TestOneShotFallbackIdentical(t *testing.T) {
	const deep = "a/b/c/d/k1"
	script := func(t *testing.T, refusal error) ([]string, *dirOpens, [2]int64) {
		defer func(n int) { maxHeldDirs = n }(maxHeldDirs)
		maxHeldDirs = 0
		ctx := context.Background()
		s := openT(t)
		c := countDirOpens(t, refusal)
		var log []string
		etags := map[string]string{}
		step := func(name string, f func() (string, error)) {
			before := s.SyncStats()
			res, err := f()
			// ETags are random: the log keeps where they were.
			line := hexETag.ReplaceAllString(fmt.Sprintf("%s: %s %q", name, outcome(err), res), "<etag>")
			log = append(log, fmt.Sprintf("%s %+v", line, s.SyncStats().Sub(before)))
		}
		put := func(key string, cond objstore.Condition) func() (string, error) {
			return func() (string, error) {
				e, err := s.Put(ctx, key, []byte("v:"+key), cond)
				if err == nil {
					etags[key] = e
				}
				return "", err
			}
		}
		get := func(key string) func() (string, error) {
			return func() (string, error) {
				o, err := s.Get(ctx, key)
				return string(o.Data), err
			}
		}
		step("put new dirs", put(deep, objstore.CreateOnly))
		// One Put and one Get into present directories, counted.
		var perPut, perGet [2]int64
		w, o := c.walk.Load(), c.oneShot.Load()
		step("put present dirs", put("a/b/c/d/k2", objstore.CreateOnly))
		perPut = [2]int64{c.walk.Load() - w, c.oneShot.Load() - o}
		w, o = c.walk.Load(), c.oneShot.Load()
		step("get", get("a/b/c/d/k2"))
		perGet = [2]int64{c.walk.Load() - w, c.oneShot.Load() - o}
		step("put taken", put(deep, objstore.CreateOnly))
		step("head", func() (string, error) {
			a, err := s.Head(ctx, deep)
			return fmt.Sprint(a.Size), err
		})
		step("get missing file", get("a/b/c/d/nope"))
		step("get missing dir", get("a/zz/nope"))
		step("put if-match", func() (string, error) { return put(deep, objstore.IfMatch(etags[deep]))() })
		step("put if-match stale", put(deep, objstore.IfMatch("00000000000000000000000000000000")))
		step("put if-match missing", put("a/b/c/d/nope", objstore.IfMatch(etags[deep])))
		step("put unconditional", put("a/b/u", objstore.Unconditional))
		const ulid = "w/01JGJFGR48VKRYADDJY7NRAJWJ"
		step("put deferred", func() (string, error) { _, err := s.PutDeferred(ctx, ulid, []byte("d")); return "", err })
		step("put deferred intact", func() (string, error) {
			_, _, err := s.PutDeferredIntact(ctx, "v/1", []byte("i"), objstore.CreateOnly)
			return "", err
		})
		step("put after deferred", func() (string, error) {
			_, err := s.PutAfterDeferred(ctx, "m/1", []byte("m"), objstore.CreateOnly, []string{ulid, "v/1"})
			return "", err
		})
		step("sync deferred", func() (string, error) { return "", s.SyncDeferred(ctx, []string{ulid}) })
		list := func(prefix string) func() (string, error) {
			return func() (string, error) {
				p, err := s.List(ctx, prefix, "", 100)
				return fmt.Sprint(p.Keys, p.Truncated), err
			}
		}
		step("list", list(""))
		step("list prefix", list("a/b/c/"))
		step("delete", func() (string, error) { return "", s.Delete(ctx, deep) })
		step("delete last", func() (string, error) { return "", s.Delete(ctx, "a/b/c/d/k2") })
		step("list after delete", list("a/"))
		step("put after prune", put(deep, objstore.CreateOnly))
		if err := os.Symlink("d.d", filepath.Join(s.Root(), "a.d/b.d/c.d/e.d")); err != nil {
			t.Fatal(err)
		}
		step("get through symlink", get("a/b/c/e/k1"))
		step("put through symlink", put("a/b/c/e/k3", objstore.CreateOnly))
		if err := os.WriteFile(filepath.Join(s.Root(), "a.d/b.d/f.d"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		step("get through file", get("a/b/f/x"))
		step("put through file", put("a/b/f/g/x", objstore.CreateOnly))
		step("list with planted", list("a/"))
		return log, c, [2]int64{perPut[0]*10 + perPut[1], perGet[0]*10 + perGet[1]}
	}
	var oneShot []string
	var c1 *dirOpens
	var n1 [2]int64
	// Subtests, so that each one's counting hooks are gone when it ends.
	t.Run("one-shot", func(t *testing.T) { oneShot, c1, n1 = script(t, nil) })
	if c1.oneShotOK.Load() == 0 {
		t.Fatal("the one-shot open never succeeded")
	}
	// walk opens*10 + openat2 calls: a Put opens .tmp then its leaf in one
	// call (1*10+1), or .tmp and 4 levels; a Get its leaf in one call or 4.
	if n1 != [2]int64{11, 1} {
		t.Errorf("one-shot: put into present dirs %d, get %d (walk opens*10 + openat2 calls), want 11, 1", n1[0], n1[1])
	}
	for _, tc := range []struct {
		refusal error
		// tries is how often openat2 is tried: once after ENOSYS (it is
		// remembered), per resolve after EPERM (which a permission check
		// may also answer, so each resolve asks and walks).
		tries  func(oneShotTries int64) int64
		putGet [2]int64
	}{
		{unix.ENOSYS, func(int64) int64 { return 1 }, [2]int64{50, 40}},
		{unix.EPERM, func(n int64) int64 { return n }, [2]int64{51, 41}},
	} {
		t.Run(tc.refusal.Error(), func(t *testing.T) {
			walked, c2, n2 := script(t, tc.refusal)
			if !slices.Equal(oneShot, walked) {
				for i := range max(len(oneShot), len(walked)) {
					var a, b string
					if i < len(oneShot) {
						a = oneShot[i]
					}
					if i < len(walked) {
						b = walked[i]
					}
					if a != b {
						t.Errorf("step %d:\none-shot %s\nwalk     %s", i, a, b)
					}
				}
			}
			if got, want := c2.oneShot.Load(), tc.tries(c1.oneShot.Load()); got != want {
				t.Errorf("openat2 tried %d times, want %d", got, want)
			}
			if n2 != tc.putGet {
				t.Errorf("fallback: put into present dirs %d, get %d (walk opens*10 + openat2 calls), want %d, %d", n2[0], n2[1], tc.putGet[0], tc.putGet[1])
			}
			t.Logf("directory opens over the script: one-shot %d walk + %d openat2, fallback %d walk + %d openat2",
				c1.walk.Load(), c1.oneShot.Load(), c2.walk.Load(), c2.oneShot.Load())
		})
	}
}
