package sim_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCloneIsIndependent: a clone copies contents deeply, starts fresh
// counters and streams, and never reissues an ETag the original issued.
func TestCloneIsIndependent(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 4})
	e1 := mustPut(t, s, "a", "1")
	e2 := mustPut(t, s, "b/x", "2")
	c := s.Clone()
	mustPut(t, s, "c", "3")
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := c.Keys(""); !slices.Equal(got, []string{"a", "b/x"}) {
		t.Fatalf("clone keys %q changed with the original", got)
	}
	if _, err := c.Put(ctx, "a", []byte("changed"), objstore.IfMatch(e1)); err != nil {
		t.Fatalf("clone IfMatch with the original's ETag: %v", err)
	}
	if data, ok := s.Peek("a"); ok {
		t.Fatalf("writing the clone changed the original: %q", data)
	}
	if c.Counters().Put.Requests != 1 {
		t.Fatalf("clone counters not fresh: %+v", c.Counters())
	}
	// Every ETag issued before the clone stays unique within the clone.
	seen := map[string]bool{e1: true, e2: true}
	if etag, _ := c.PeekETag("a"); seen[etag] {
		t.Fatalf("clone reissued ETag %q", etag)
	}
	if etag := mustPut(t, c, "d", "4"); seen[etag] {
		t.Fatalf("clone reissued ETag %q", etag)
	}
}

// TestCloneRestartsStreams: a clone draws latencies from the seed again,
// exactly like a fresh store with the same configuration.
func TestCloneRestartsStreams(t *testing.T) {
	lat := func(s *sim.Store) []string {
		var out []string
		s.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
			out = append(out, fmt.Sprint(c.Latency))
			return nil
		}})
		for range 20 {
			_, _ = s.Head(t.Context(), "k")
		}
		return out
	}
	cfg := sim.Config{Seed: 8, Faults: noisy}
	s := sim.New(cfg)
	lat(s) // advance the original's streams
	if a, b := lat(s.Clone()), lat(sim.New(cfg)); !slices.Equal(a, b) {
		t.Fatalf("clone latencies %v, fresh store %v", a, b)
	}
}

// TestInspectBypassesAccounting: Peek, PeekETag, Keys and Len touch no
// counter and no hook; Peek returns a private copy.
func TestInspectBypassesAccounting(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	mustPut(t, s, "p/b", "x")
	mustPut(t, s, "p/a", "y")
	mustPut(t, s, "q", "z")
	before := s.Counters()
	s.SetHook(sim.HookFuncs{Before: func(context.Context, *sim.Call) error {
		t.Fatal("inspection reached the hook")
		return nil
	}})
	data, _ := s.Peek("p/a")
	data[0] = 'X'
	if again, _ := s.Peek("p/a"); string(again) != "y" {
		t.Fatalf("Peek aliased store memory: %q", again)
	}
	if got := s.Keys("p/"); !slices.Equal(got, []string{"p/a", "p/b"}) {
		t.Fatalf("Keys(p/) = %q", got)
	}
	if _, ok := s.Peek("missing"); ok || s.Len() != 3 {
		t.Fatal("Peek of a missing key or Len wrong")
	}
	if s.Counters() != before {
		t.Fatalf("inspection changed counters: %+v -> %+v", before, s.Counters())
	}
}

// TestCountersPerOp: requests, errors and bytes are counted per operation.
func TestCountersPerOp(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 1})
	mustPut(t, s, "k", "hello")
	_, _ = s.Put(ctx, "k", []byte("xy"), objstore.CreateOnly) // fails, bytes still sent
	_, _ = s.Get(ctx, "k")
	_, _ = s.Get(ctx, "missing")
	_, _ = s.Head(ctx, "k")
	_, _ = s.List(ctx, "", "", 0)
	_ = s.Delete(ctx, "k")
	want := sim.Counters{RequestCounts: objstore.RequestCounts{
		Get: sim.OpCounts{Requests: 2, Errors: 1}, Head: sim.OpCounts{Requests: 1},
		List: sim.OpCounts{Requests: 1}, Put: sim.OpCounts{Requests: 2, Errors: 1},
		Delete:    sim.OpCounts{Requests: 1},
		BytesRead: 5, BytesWritten: 7,
	}}
	if got := s.Counters(); got != want {
		t.Fatalf("counters\n%+v\nwant\n%+v", got, want)
	}
	if got := s.Counters(); got.Op(objstore.OpGet) != want.Get || got.Requests() != 7 || got.Writes() != 3 {
		t.Fatalf("derived counts wrong: %+v", got)
	}
}

// TestListAtScale: with 100k keys, single-key pages agree with the sorted
// key set at seeded probe points.
func TestListAtScale(t *testing.T) {
	s := bigStore(t, 100_000)
	keys := s.Keys("")
	for i := 0; i < len(keys); i += 997 {
		p, err := s.List(t.Context(), "n/", keys[i], 1)
		if err != nil {
			t.Fatal(err)
		}
		if i+1 < len(keys) && (len(p.Keys) != 1 || p.Keys[0] != keys[i+1] || !p.Truncated) {
			t.Fatalf("List after %q = %q (truncated %v), want %q", keys[i], p.Keys, p.Truncated, keys[i+1])
		}
	}
	p, _ := s.List(t.Context(), "n/", keys[len(keys)-1], 1)
	if len(p.Keys) != 0 || p.Truncated {
		t.Fatalf("List after the last key = %q, %v", p.Keys, p.Truncated)
	}
}

func bigStore(tb testing.TB, n int) *sim.Store {
	tb.Helper()
	s := sim.New(sim.Config{Seed: 1})
	for i := range n {
		// Spread inserts over the key space rather than appending.
		key := fmt.Sprintf("n/%08d", (i*7919)%n)
		if _, err := s.Put(tb.Context(), key, nil, objstore.CreateOnly); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// BenchmarkListLimit1 measures List(prefix, startAfter, 1) on 100k keys, the
// simulator's most frequent query; it must stay O(log n).
func BenchmarkListLimit1(b *testing.B) {
	s := bigStore(b, 100_000)
	keys := s.Keys("")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.List(b.Context(), "n/", keys[(i*31)%len(keys)], 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(keys)), "keys")
}

// BenchmarkPutNewKey measures creating keys in a 100k-key store.
func BenchmarkPutNewKey(b *testing.B) {
	s := bigStore(b, 100_000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Put(b.Context(), fmt.Sprintf("m/%09d", (i*7919)%1_000_000_007), nil, objstore.Unconditional); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.Len()), "keys")
}
