package sim_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// noisy is a fault mix that exercises every fault kind.
var noisy = sim.Faults{
	TransientRate: 0.1, ConflictRate: 0.1, LostAckRate: 0.1,
	LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond,
	SpikeRate: 0.05, SpikeLatency: time.Second,
}

// latencyLog is a hook that records each call's number and latency.
type latencyLog struct{ lines map[uint64]string }

func (l *latencyLog) BeforeCall(_ context.Context, c *sim.Call) error {
	l.lines[c.Seq] = fmt.Sprintf("#%d lat=%v", c.Seq, c.Latency)
	return nil
}

func (l *latencyLog) AfterCall(_ context.Context, c *sim.Call, applied bool, _ error) error {
	l.lines[c.Seq] += fmt.Sprintf(" applied=%v", applied)
	return nil
}

// transcript runs a fixed pseudo-random script of n calls (the script does
// not depend on the store's seed) and returns one line per call plus the
// final counters and contents.
func transcript(t *testing.T, storeSeed uint64, n int) []string {
	t.Helper()
	log := &latencyLog{lines: map[uint64]string{}}
	s := sim.New(sim.Config{Seed: storeSeed, Faults: noisy, Hook: log})
	script := rand.New(rand.NewPCG(1, 2))
	etags := map[string]string{}
	out := make([]string, 0, n+2)
	for i := 1; i <= n; i++ {
		line := step(t.Context(), s, script, etags)
		out = append(out, log.lines[uint64(i)]+" "+line)
	}
	out = append(out, fmt.Sprintf("counters %+v", s.Counters()))
	for _, k := range s.Keys("") {
		data, _ := s.Peek(k)
		etag, _ := s.PeekETag(k)
		out = append(out, fmt.Sprintf("final %s=%q %s", k, data, etag))
	}
	return out
}

// step performs one scripted call and describes it and its result.
func step(ctx context.Context, s *sim.Store, script *rand.Rand, etags map[string]string) string {
	key := fmt.Sprintf("%s%d", []string{"", "d/"}[script.IntN(2)], script.IntN(5))
	switch script.IntN(6) {
	case 0:
		obj, err := s.Get(ctx, key)
		return fmt.Sprintf("get %s -> %q %s %v", key, obj.Data, obj.ETag, err)
	case 1:
		a, err := s.Head(ctx, key)
		return fmt.Sprintf("head %s -> %d %s %v", key, a.Size, a.ETag, err)
	case 2:
		prefix, after, limit := []string{"", "d/", "d"}[script.IntN(3)], key, 1+script.IntN(3)
		p, err := s.List(ctx, prefix, after, limit)
		return fmt.Sprintf("list %q after %q limit %d -> %q %v %v", prefix, after, limit, p.Keys, p.Truncated, err)
	case 3:
		return fmt.Sprintf("delete %s -> %v", key, s.Delete(ctx, key))
	}
	cond := []objstore.Condition{objstore.Unconditional, objstore.CreateOnly, objstore.IfMatch(etags[key])}[script.IntN(3)]
	data := []byte(fmt.Sprintf("v%d", script.IntN(3))) // repeats bytes on purpose
	etag, err := s.Put(ctx, key, data, cond)
	if err == nil {
		etags[key] = etag
	}
	return fmt.Sprintf("put %s %q %s -> %s %v", key, data, condString(cond), etag, err)
}

func condString(c objstore.Condition) string {
	switch c.Kind {
	case objstore.CondCreateOnly:
		return "create-only"
	case objstore.CondIfMatch:
		return fmt.Sprintf("if-match(%q)", c.ETag)
	}
	return "unconditional"
}

// TestDeterminism: the same seed and calls give an identical transcript
// (results, ETags, faults, latencies, counters); another seed differs; and
// the transcript matches the golden file, which pins it across processes
// and Go versions.
func TestDeterminism(t *testing.T) {
	a, b := transcript(t, 42, 400), transcript(t, 42, 400)
	if diff := firstDiff(a, b); diff != "" {
		t.Fatalf("same seed, different transcripts: %s", diff)
	}
	if firstDiff(a, transcript(t, 43, 400)) == "" {
		t.Fatal("seeds 42 and 43 gave identical transcripts")
	}
	golden := filepath.Join("testdata", "transcript_seed42.txt")
	got := strings.Join(a, "\n") + "\n"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := firstDiff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Fatalf("transcript differs from %s: %s", golden, diff)
	}
	for _, kind := range []string{"transient failure", "conflict", "lost acknowledgement", "precondition failed", "lat=1.0"} {
		if !strings.Contains(got, kind) {
			t.Errorf("transcript never shows %q: the script does not exercise it", kind)
		}
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, x, y)
		}
	}
	return ""
}
