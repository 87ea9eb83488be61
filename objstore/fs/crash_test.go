package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// tmpNames lists root/.tmp.
func tmpNames(t *testing.T, s *Store) []string {
	t.Helper()
	names, err := osReadDirNames(filepath.Join(s.Root(), tmpDirName))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// requireKeys asserts that List("") returns exactly want.
func requireKeys(t *testing.T, s *Store, want ...string) {
	t.Helper()
	page, err := s.List(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Keys) != len(want) {
		t.Fatalf("list = %q, want %q", page.Keys, want)
	}
	for i := range want {
		if page.Keys[i] != want[i] {
			t.Fatalf("list = %q, want %q", page.Keys, want)
		}
	}
}

// startVictim runs a child that Puts "victim" ("from the victim";
// create-only, or if-match etag when etag != "") and is SIGKILLed once it
// reaches point.
func startVictim(t *testing.T, s *Store, point, etag string) *child {
	c := startChild(t, "die-at", envRoot+"="+s.Root(), envKey+"=victim", envETag+"="+etag, envPoint+"="+point)
	c.waitReady(t)
	return c
}

// A writer killed after its temp file is durable but before the link:
// nothing is visible, the leftover temp is never listed or read, the key
// can still be created, and SweepTemp reclaims the temp.
func TestKilledBeforePublish(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	c := startVictim(t, s, pointTempWritten, "")
	c.kill(t)
	if n := len(tmpNames(t, s)); n != 1 {
		t.Fatalf("%d temp files, want the victim's 1", n)
	}
	if _, err := s.Get(ctx, "victim"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get after killed create: %v, want ErrNotFound", err)
	}
	requireKeys(t, s)
	mustPut(t, s, "victim", "survivor", objstore.CreateOnly)
	requireKeys(t, s, "victim")
	if n, err := s.SweepTemp(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("sweep of young temps removed %d: %v", n, err)
	}
	if n, err := s.SweepTemp(ctx, 0); err != nil || n != 1 {
		t.Fatalf("sweep removed %d: %v, want 1", n, err)
	}
	if got := string(mustGet(t, s, "victim").Data); got != "survivor" {
		t.Fatalf("victim = %q", got)
	}
}

// A writer killed while holding the key's lock, before its rename: the old
// object is intact, the kernel releases the dead process's flock, and the
// next CAS against the old ETag succeeds.
func TestKilledHoldingLock(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	old := mustPut(t, s, "victim", "old", objstore.CreateOnly)
	c := startVictim(t, s, pointLocked, old)
	if !stripeLocked(t, s, "victim") {
		t.Fatal("victim reached its locked point without holding the stripe lock")
	}
	if obj := mustGet(t, s, "victim"); string(obj.Data) != "old" || obj.ETag != old {
		t.Fatalf("readers blocked or saw a torn write: %q %s", obj.Data, obj.ETag)
	}
	c.kill(t)
	if stripeLocked(t, s, "victim") {
		t.Fatal("lock still held after its holder died")
	}
	if obj := mustGet(t, s, "victim"); string(obj.Data) != "old" || obj.ETag != old {
		t.Fatalf("after kill: %q %s, want old", obj.Data, obj.ETag)
	}
	if _, err := s.Put(ctx, "victim", []byte("next"), objstore.IfMatch(old)); err != nil {
		t.Fatalf("CAS after the holder died: %v", err)
	}
	requireKeys(t, s, "victim")
}

// A writer killed after link(2) placed the object but before it removed
// its temp name: the object is complete and visible, the temp name is an
// invisible second link, and sweeping it leaves the object readable.
func TestKilledAfterPlace(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	c := startVictim(t, s, pointPlaced, "")
	c.kill(t)
	obj := mustGet(t, s, "victim")
	if string(obj.Data) != "from the victim" {
		t.Fatalf("victim = %q", obj.Data)
	}
	requireKeys(t, s, "victim")
	if n, err := s.SweepTemp(ctx, 0); err != nil || n != 1 {
		t.Fatalf("sweep removed %d: %v, want the 1 leftover link", n, err)
	}
	if again := mustGet(t, s, "victim"); string(again.Data) != "from the victim" || again.ETag != obj.ETag {
		t.Fatalf("after sweep: %q %s", again.Data, again.ETag)
	}
}

// stripeLocked reports whether some open file holds key's stripe lock,
// probing with a non-blocking flock of a fresh open file.
func stripeLocked(t *testing.T, s *Store, key string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.Root(), lockDirName, stripeName(key)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// Temp files and torn leftovers in .tmp, including ones that look like
// valid objects, are never listed or read.
func TestTempFilesInvisible(t *testing.T) {
	s := openT(t)
	mustPut(t, s, "real", "r", objstore.CreateOnly)
	tmp := filepath.Join(s.Root(), tmpDirName)
	valid := append(encodeHeader([tokenLen]byte{1}, []byte("ghost")), "ghost"...)
	for name, body := range map[string][]byte{
		"ghost.tmp": valid, "torn.tmp": valid[:10], "ghost.o": valid, "ghost.d": nil,
	} {
		if err := os.WriteFile(filepath.Join(tmp, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	requireKeys(t, s, "real")
	for _, k := range []string{"ghost", ".tmp/ghost", "torn"} {
		if _, err := s.Get(context.Background(), k); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", k, err)
		}
	}
}

// A damaged object file is reported as an error, never returned as data.
func TestCorruptObjectDetected(t *testing.T) {
	s := openT(t)
	path := filepath.Join(s.Root(), "k.o")
	tests := []struct {
		name   string
		damage func(b []byte) []byte
		// header: the damage shows in the header, which a compare-and-swap
		// reads (the data checksum is checked by Get only).
		header bool
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }, true},
		{"flipped data byte", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, false},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, true},
		{"shorter than header", func(b []byte) []byte { return b[:5] }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustPut(t, s, "k", "payload", objstore.Unconditional)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tc.damage(b)
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			obj, err := s.Get(context.Background(), "k")
			if !errors.Is(err, objstore.ErrCorruptObject) || !errors.Is(err, objstore.ErrRejected) || objstore.IsRetryable(err) {
				t.Fatalf("get = %q, %v; want a final corrupt-object error (ErrRejected, cause ErrCorruptObject)", obj.Data, err)
			}
			if !tc.header {
				return
			}
			// A compare-and-swap over a damaged header is refused the same
			// way, and leaves the file as it was.
			_, err = s.Put(context.Background(), "k", []byte("next"), objstore.IfMatch("whatever"))
			if !errors.Is(err, errCorrupt) || !errors.Is(err, objstore.ErrRejected) || objstore.IsAmbiguous(err) {
				t.Fatalf("if-match put over a corrupt object = %v; want an unambiguous ErrRejected", err)
			}
			if after, err := os.ReadFile(path); err != nil || string(after) != string(damaged) {
				t.Fatalf("refused put changed the object file (%v)", err)
			}
		})
	}
}
