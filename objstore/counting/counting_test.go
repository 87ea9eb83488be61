package counting_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// TestWrapperConforms: the wrapper is transparent: a counted sim store
// still passes the whole conformance suite.
func TestWrapperConforms(t *testing.T) {
	storetest.RunWith(t, storetest.RunOptions{UniqueETags: true}, func(t *testing.T) objstore.Store {
		return counting.New(sim.New(sim.Config{Seed: 1}))
	})
}

// TestCountsPerOp: requests, errors and bytes per operation, and CountWhere
// over key prefixes.
func TestCountsPerOp(t *testing.T) {
	ctx := t.Context()
	s := counting.New(sim.New(sim.Config{Seed: 1}))
	etag, err := s.Put(ctx, "g/manifest", []byte("hello"), objstore.CreateOnly)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Put(ctx, "g/manifest", []byte("xy"), objstore.CreateOnly) // precondition fails
	_, _ = s.Put(ctx, "g/manifest", []byte("abc"), objstore.IfMatch(etag))
	_, _ = s.Put(ctx, "t/data", []byte("1234"), objstore.Unconditional)
	_, _ = s.Get(ctx, "g/manifest")
	_, _ = s.Get(ctx, "missing")
	_, _ = s.Head(ctx, "t/data")
	_, _ = s.List(ctx, "g/", "", 0)
	_ = s.Delete(ctx, "t/data")
	_, _ = s.Get(ctx, "bad//key") // counted too: it was called
	want := counting.Counts{
		Get: counting.OpCounts{Requests: 3, Errors: 2}, Head: counting.OpCounts{Requests: 1},
		List: counting.OpCounts{Requests: 1}, Put: counting.OpCounts{Requests: 4, Errors: 1},
		Delete:    counting.OpCounts{Requests: 1},
		BytesRead: 3, BytesWritten: 14,
	}
	if got := s.Counts(); got != want {
		t.Fatalf("counts\n%+v\nwant\n%+v", got, want)
	}
	if s.Writes() != 5 || s.Counts().Requests() != 10 || s.Counts().Op(objstore.OpPut) != want.Put {
		t.Fatalf("derived counts wrong: writes %d, %+v", s.Writes(), s.Counts())
	}
	cases := []struct {
		op     objstore.Op
		prefix string
		want   int
	}{
		{objstore.OpPut, "g/", 3}, {objstore.OpPut, "t/", 1}, {objstore.OpPut, "", 4},
		{objstore.OpGet, "g/", 1}, {objstore.OpList, "g", 1}, {objstore.OpDelete, "g/", 0},
	}
	for _, tc := range cases {
		if got := s.CountWhere(tc.op, tc.prefix); got != tc.want {
			t.Errorf("CountWhere(%s, %q) = %d, want %d", tc.op, tc.prefix, got, tc.want)
		}
	}
	log, complete := s.Log()
	if !complete || len(log) != 10 || log[2].Cond != objstore.IfMatch(etag) {
		t.Fatalf("log complete=%v %+v", complete, log)
	}
	s.Reset()
	if s.Counts() != (counting.Counts{}) || s.CountWhere(objstore.OpPut, "") != 0 {
		t.Fatal("Reset left counts behind")
	}
}

// TestErrorsPassThrough: the wrapper returns the inner error value itself.
func TestErrorsPassThrough(t *testing.T) {
	s := counting.New(sim.New(sim.Config{Seed: 1}))
	_, err := s.Get(t.Context(), "missing")
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Kind != objstore.ErrNotFound || oe.Op != objstore.OpGet {
		t.Fatalf("Get(missing) = %v", err)
	}
}

// TestTruncatedLogPanics: once the bounded log overflows, totals stay exact
// but CountWhere refuses to answer; Reset makes it usable again.
func TestTruncatedLogPanics(t *testing.T) {
	ctx := t.Context()
	s := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 3)
	for i := range 3 {
		_, _ = s.Head(ctx, fmt.Sprintf("k%d", i))
	}
	if s.Truncated() || s.CountWhere(objstore.OpHead, "k") != 3 {
		t.Fatal("a full but not overflowed log must answer")
	}
	_, _ = s.Head(ctx, "k3")
	if !s.Truncated() || s.Counts().Head.Requests != 4 {
		t.Fatalf("after overflow: truncated=%v, counts %+v", s.Truncated(), s.Counts())
	}
	if _, complete := s.Log(); complete {
		t.Fatal("Log claims completeness after overflow")
	}
	func() {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "truncated") {
				t.Fatalf("CountWhere on a truncated log: recover() = %v, want a clear panic", r)
			}
		}()
		s.CountWhere(objstore.OpHead, "k")
	}()
	s.Reset()
	_, _ = s.Head(ctx, "k0")
	if s.CountWhere(objstore.OpHead, "k") != 1 {
		t.Fatal("CountWhere after Reset")
	}
}

// TestNoLog: with limit 0 the totals work and CountWhere panics.
func TestNoLog(t *testing.T) {
	s := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
	_, _ = s.Head(t.Context(), "k")
	if s.Counts().Head.Requests != 1 || !s.Truncated() {
		t.Fatalf("no-log wrapper: %+v truncated=%v", s.Counts(), s.Truncated())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("CountWhere without a log did not panic")
		}
	}()
	s.CountWhere(objstore.OpHead, "")
}

// TestConcurrentCounting: counts are exact under concurrent callers (run
// with -race).
func TestConcurrentCounting(t *testing.T) {
	const workers, each = 8, 250
	s := counting.New(sim.New(sim.Config{Seed: 1}))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("w%d/%d", w, i)
				_, _ = s.Put(t.Context(), key, []byte("x"), objstore.CreateOnly)
				_, _ = s.Get(t.Context(), key)
			}
		}()
	}
	wg.Wait()
	c := s.Counts()
	if c.Put.Requests != workers*each || c.Get.Requests != workers*each || c.BytesRead != workers*each || c.Put.Errors+c.Get.Errors != 0 {
		t.Fatalf("counts %+v", c)
	}
	if s.CountWhere(objstore.OpPut, "w3/") != each {
		t.Fatalf("CountWhere(put, w3/) = %d", s.CountWhere(objstore.OpPut, "w3/"))
	}
}

// TestNewRejectsBadArguments: a nil store or negative limit is a bug.
func TestNewRejectsBadArguments(t *testing.T) {
	for name, f := range map[string]func(){
		"nil inner":      func() { counting.New(nil) },
		"negative limit": func() { counting.NewWithLogLimit(sim.New(sim.Config{}), -1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestPutManyIsOneRound: a PutMany is counted as one Put per request
// (errors included) and as one round; every other call is a round of its
// own; the log gives each call its round; Reset zeroes the rounds.
func TestPutManyIsOneRound(t *testing.T) {
	ctx := t.Context()
	s := counting.New(sim.New(sim.Config{Seed: 1}))
	if _, err := s.Put(ctx, "b/taken", []byte("x"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	res := objstore.PutMany(ctx, s, []objstore.PutRequest{
		{Key: "b/1", Data: []byte("one"), Cond: objstore.CreateOnly},
		{Key: "b/taken", Data: []byte("y"), Cond: objstore.CreateOnly, Durability: objstore.DeferName},
		{Key: "b/2", Data: []byte("two"), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
	})
	if res[0].Err != nil || !errors.Is(res[1].Err, objstore.ErrPreconditionFailed) || res[2].Err != nil {
		t.Fatalf("results %+v", res)
	}
	if _, err := s.Get(ctx, "b/2"); err != nil {
		t.Fatal(err)
	}
	c := s.Counts()
	if c.Put.Requests != 4 || c.Put.Errors != 1 || c.Get.Requests != 1 || s.Rounds() != 3 {
		t.Fatalf("puts %+v, gets %+v, rounds %d; want 4 puts (1 error), 1 get, 3 rounds", c.Put, c.Get, s.Rounds())
	}
	log, _ := s.Log()
	var rounds []uint64
	for _, r := range log {
		rounds = append(rounds, r.Round)
	}
	if fmt.Sprint(rounds) != "[1 2 2 2 3]" {
		t.Fatalf("log rounds %v, want [1 2 2 2 3]", rounds)
	}
	s.Reset()
	if s.Rounds() != 0 {
		t.Fatalf("rounds after Reset: %d", s.Rounds())
	}
}

// TestGetManyIsOneRound: a GetMany is counted as one Get per key (each
// failed key an error, the bytes read) and logged so, all in one round,
// and passes to the inner store as its batched read (one simulator call).
func TestGetManyIsOneRound(t *testing.T) {
	ctx := t.Context()
	inner := sim.New(sim.Config{Seed: 1})
	s := counting.New(inner)
	if _, err := s.Put(ctx, "g/a", []byte("abc"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	before := inner.Counters().Get.Requests
	res := objstore.GetMany(ctx, s, []string{"g/a", "g/missing", "bad//key"})
	if string(res[0].Object.Data) != "abc" || !errors.Is(res[1].Err, objstore.ErrNotFound) || !errors.Is(res[2].Err, objstore.ErrInvalidKey) {
		t.Fatalf("results %+v", res)
	}
	if n := inner.Counters().Get.Requests - before; n != 1 {
		t.Errorf("the inner store saw %d Get requests, want its one batched call", n)
	}
	c := s.Counts()
	if c.Get != (counting.OpCounts{Requests: 3, Errors: 2}) || c.BytesRead != 3 || s.Rounds() != 2 {
		t.Fatalf("gets %+v, bytes read %d, rounds %d; want 3 gets (2 errors), 3 bytes, 2 rounds", c.Get, c.BytesRead, s.Rounds())
	}
	if s.CountWhere(objstore.OpGet, "g/") != 2 {
		t.Errorf("CountWhere(get, g/) = %d, want 2", s.CountWhere(objstore.OpGet, "g/"))
	}
}

// TestDeleteManyIsOneRequest: over a store that batches deletes, a
// DeleteMany is counted as the backend bills it: one Delete request in one
// round (an error if any key failed), logged once with every key, and it
// reaches the inner store as its one batched call. Over a store that does
// not, each key is its own Delete, as objstore.DeleteMany's fallback makes
// them.
func TestDeleteManyIsOneRequest(t *testing.T) {
	ctx := t.Context()
	keys := []string{"d/a", "d/missing", "bad//key", "e/b"}
	for _, batched := range []bool{true, false} {
		t.Run(fmt.Sprintf("batched=%t", batched), func(t *testing.T) {
			inner := sim.New(sim.Config{Seed: 1})
			var through objstore.Store = inner
			if !batched {
				through = struct{ objstore.Store }{inner} // hides the sim store's DeleteMany
			}
			s := counting.New(through)
			for _, k := range []string{"d/a", "e/b"} {
				if _, err := s.Put(ctx, k, []byte("x"), objstore.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			before, r0 := inner.Counters().Delete.Requests, s.Rounds()
			errs := objstore.DeleteMany(ctx, s, keys)
			if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], objstore.ErrInvalidKey) || errs[3] != nil {
				t.Fatalf("errors %v", errs)
			}
			for _, k := range []string{"d/a", "e/b"} {
				if _, err := inner.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
					t.Fatalf("%s after the delete: %v", k, err)
				}
			}
			c, rounds, innerDeletes := s.Counts(), s.Rounds()-r0, inner.Counters().Delete.Requests-before
			want, wantRounds, wantInner, wantE := counting.OpCounts{Requests: 1, Errors: 1}, uint64(1), uint64(1), 1
			if !batched {
				// the sim store counts only the valid keys' Deletes
				want, wantRounds, wantInner, wantE = counting.OpCounts{Requests: 4, Errors: 1}, 4, 3, 1
			}
			if c.Delete != want || rounds != wantRounds || innerDeletes != wantInner {
				t.Fatalf("deletes %+v in %d rounds, inner store %d requests; want %+v in %d rounds, %d", c.Delete, rounds, innerDeletes, want, wantRounds, wantInner)
			}
			if n := s.CountWhere(objstore.OpDelete, "e/"); n != wantE {
				t.Errorf("CountWhere(delete, e/) = %d, want %d", n, wantE)
			}
		})
	}
}
