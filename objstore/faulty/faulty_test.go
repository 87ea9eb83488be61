package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/faulty"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

var ctx = context.Background()

// With every rate at zero the wrapper is the store it wraps: the whole
// conformance suite passes through it.
func TestConformanceWithoutFaults(t *testing.T) {
	storetest.RunWith(t, storetest.RunOptions{UniqueETags: true}, func(t *testing.T) objstore.Store {
		return faulty.New(sim.New(sim.Config{Seed: 1}), faulty.Config{Seed: 1})
	})
}

// Each injected fault keeps the contract: a transient fault applies
// nothing and is retryable; a lost acknowledgement applies the write and
// is ambiguous; the read outage after it fails reads transiently, then
// ends; switched off, the wrapper passes through.
func TestInjectedFaultsAreContractLegal(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  faulty.Config
		// want* describe one Put of "k" followed by reads.
		wantApplied, wantAmbiguous, wantRetryable bool
		outageReads                               int
	}{
		{"transient", faulty.Config{TransientRate: 1}, false, false, true, 0},
		{"lost ack", faulty.Config{LostAckRate: 1}, true, true, true, 0},
		{"lost ack then a read outage", faulty.Config{LostAckRate: 1, ReadOutageAfterLostAck: 3}, true, true, true, 3},
		{"no faults", faulty.Config{}, true, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := sim.New(sim.Config{Seed: 2})
			s := faulty.New(inner, tc.cfg)
			_, err := s.Put(ctx, "k", []byte("v"), objstore.CreateOnly)
			if got := objstore.IsAmbiguous(err); got != tc.wantAmbiguous {
				t.Fatalf("Put: %v, ambiguous %v, want %v", err, got, tc.wantAmbiguous)
			}
			if got := objstore.IsRetryable(err); got != tc.wantRetryable {
				t.Fatalf("Put: %v, retryable %v, want %v", err, got, tc.wantRetryable)
			}
			if _, gerr := inner.Get(ctx, "k"); (gerr == nil) != tc.wantApplied {
				t.Fatalf("inner Get after the Put: %v, want applied=%v", gerr, tc.wantApplied)
			}
			s.SetEnabled(tc.outageReads > 0) // only the outage is under test below
			for i := 0; i < tc.outageReads; i++ {
				if _, err := s.Get(ctx, "k"); !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) {
					t.Fatalf("outage read %d: %v, want a transient, unambiguous failure", i, err)
				}
			}
			s.SetEnabled(false)
			if _, err := s.Get(ctx, "k"); (err == nil) != tc.wantApplied {
				t.Fatalf("Get after the outage: %v", err)
			}
			st := s.Stats()
			if st.OutageReads != int64(tc.outageReads) || (st.LostAcks == 1) != tc.wantAmbiguous {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// A write the inner store refuses is never reported as applied: its error
// comes back as it was, not as a lost acknowledgement.
func TestRefusedWriteIsNotALostAck(t *testing.T) {
	inner := sim.New(sim.Config{Seed: 3})
	if _, err := inner.Put(ctx, "k", []byte("v"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := faulty.New(inner, faulty.Config{LostAckRate: 1})
	_, err := s.Put(ctx, "k", []byte("w"), objstore.CreateOnly)
	if !errors.Is(err, objstore.ErrPreconditionFailed) || objstore.IsAmbiguous(err) {
		t.Fatalf("create-only over an existing key: %v, want the plain precondition failure", err)
	}
	if s.Stats().LostAcks != 0 {
		t.Fatal("counted a lost acknowledgement for a refused write")
	}
	// An invalid key is refused before any fault, as the contract says.
	s2 := faulty.New(sim.New(sim.Config{Seed: 3}), faulty.Config{TransientRate: 1})
	if _, err := s2.Get(ctx, "/bad//key"); !errors.Is(err, objstore.ErrInvalidKey) {
		t.Fatalf("invalid key under faults: %v, want ErrInvalidKey", err)
	}
}

// The same seed gives the same fault sequence on one goroutine; another
// seed a different one.
func TestFaultSequenceIsSeeded(t *testing.T) {
	seq := func(seed uint64) []bool {
		s := faulty.New(sim.New(sim.Config{Seed: 4}), faulty.Config{Seed: seed, TransientRate: 0.5})
		var out []bool
		for i := 0; i < 64; i++ {
			_, err := s.Get(ctx, "k")
			out = append(out, errors.Is(err, objstore.ErrTransient))
		}
		return out
	}
	a, b, c := seq(7), seq(7), seq(8)
	same := func(x, y []bool) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("seed 7 gave two different fault sequences")
	}
	if same(a, c) {
		t.Fatal("seeds 7 and 8 gave the same 64-call fault sequence")
	}
}

// List is faulted for every valid prefix, including the empty prefix and
// one ending in '/' (which are not valid keys), and an invalid prefix is
// still refused before any fault.
func TestListFaultsEveryValidPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   error
	}{
		{"", objstore.ErrTransient},
		{"a/", objstore.ErrTransient},
		{"a/b", objstore.ErrTransient},
		{"a//", objstore.ErrInvalidKey},
		{"/a", objstore.ErrInvalidKey},
	} {
		s := faulty.New(sim.New(sim.Config{Seed: 5}), faulty.Config{TransientRate: 1})
		if _, err := s.List(ctx, tc.prefix, "", 0); !errors.Is(err, tc.want) {
			t.Errorf("List(%q) under TransientRate 1: %v, want %v", tc.prefix, err, tc.want)
		}
	}
}

// A call whose context is already cancelled gets the inner store's own
// answer (which wraps the context error), never an injected fault, on
// every method, and applies nothing.
func TestCancelledContextIsTheInnerStoresAnswer(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cfg := range []faulty.Config{
		{TransientRate: 1},
		{LostAckRate: 1, ReadOutageAfterLostAck: 5},
	} {
		inner := sim.New(sim.Config{Seed: 6})
		s := faulty.New(inner, cfg)
		calls := map[string]func() error{
			"get":    func() error { _, err := s.Get(cancelled, "k"); return err },
			"head":   func() error { _, err := s.Head(cancelled, "k"); return err },
			"list":   func() error { _, err := s.List(cancelled, "", "", 0); return err },
			"put":    func() error { _, err := s.Put(cancelled, "k", []byte("v"), objstore.Unconditional); return err },
			"delete": func() error { return s.Delete(cancelled, "k") },
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, context.Canceled) || objstore.IsAmbiguous(err) {
				t.Errorf("%+v: cancelled %s: %v, want the inner store's unambiguous context.Canceled", cfg, name, err)
			}
		}
		if _, err := inner.Head(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("%+v: a cancelled Put was applied: %v", cfg, err)
		}
		if st := s.Stats(); st.Calls != 5 || st.Transient+st.LostAcks+st.OutageReads != 0 {
			t.Errorf("%+v: stats %+v, want 5 calls and no faults", cfg, st)
		}
	}
}

// op is one call through the wrapper, named for the tables below.
type op struct {
	name string
	call func(s objstore.Store) error
}

// allOps calls each of the five methods once. The writes touch "k" (a
// Put of "new", then a Delete); the reads read "k".
var allOps = []op{
	{"get", func(s objstore.Store) error { _, err := s.Get(ctx, "k"); return err }},
	{"head", func(s objstore.Store) error { _, err := s.Head(ctx, "k"); return err }},
	{"list", func(s objstore.Store) error { _, err := s.List(ctx, "", "", 0); return err }},
	{"put", func(s objstore.Store) error {
		_, err := s.Put(ctx, "k", []byte("new"), objstore.Unconditional)
		return err
	}},
	{"delete", func(s objstore.Store) error { return s.Delete(ctx, "k") }},
}

// seeded returns a sim store holding k = "old", and its ETag.
func seeded(t *testing.T) (*sim.Store, string) {
	t.Helper()
	inner := sim.New(sim.Config{Seed: 9})
	etag, err := inner.Put(ctx, "k", []byte("old"), objstore.CreateOnly)
	if err != nil {
		t.Fatal(err)
	}
	return inner, etag
}

// With TransientRate 1 every method fails retryably, unambiguously, and
// applies nothing; with LostAckRate 1 both writes are applied and reported
// ambiguous, and reads are untouched.
func TestEveryMethodUnderEachFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  faulty.Config
		op   op
		// wantErr: the call fails (retryable); ambiguous: and says so.
		wantErr, ambiguous bool
		// after: what the inner store holds under "k" afterwards
		// ("" for absent).
		after string
	}{
		{"transient get", faulty.Config{TransientRate: 1}, allOps[0], true, false, "old"},
		{"transient head", faulty.Config{TransientRate: 1}, allOps[1], true, false, "old"},
		{"transient list", faulty.Config{TransientRate: 1}, allOps[2], true, false, "old"},
		{"transient put", faulty.Config{TransientRate: 1}, allOps[3], true, false, "old"},
		{"transient delete", faulty.Config{TransientRate: 1}, allOps[4], true, false, "old"},
		{"lost-ack get", faulty.Config{LostAckRate: 1}, allOps[0], false, false, "old"},
		{"lost-ack head", faulty.Config{LostAckRate: 1}, allOps[1], false, false, "old"},
		{"lost-ack list", faulty.Config{LostAckRate: 1}, allOps[2], false, false, "old"},
		{"lost-ack put", faulty.Config{LostAckRate: 1}, allOps[3], true, true, "new"},
		{"lost-ack delete", faulty.Config{LostAckRate: 1}, allOps[4], true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, etag := seeded(t)
			s := faulty.New(inner, tc.cfg)
			err := tc.op.call(s)
			if (err != nil) != tc.wantErr || (err != nil && !objstore.IsRetryable(err)) {
				t.Fatalf("%v, want error=%v and retryable", err, tc.wantErr)
			}
			if objstore.IsAmbiguous(err) != tc.ambiguous {
				t.Fatalf("%v: ambiguous %v, want %v", err, objstore.IsAmbiguous(err), tc.ambiguous)
			}
			for _, kind := range []error{objstore.ErrNotFound, objstore.ErrPreconditionFailed, objstore.ErrInvalidKey, objstore.ErrRejected} {
				if errors.Is(err, kind) {
					t.Fatalf("%v: an injected fault must never be %v", err, kind)
				}
			}
			obj, gerr := inner.Get(ctx, "k")
			switch {
			case tc.after == "" && !errors.Is(gerr, objstore.ErrNotFound):
				t.Fatalf("inner Get: %v, want not found", gerr)
			case tc.after != "" && (gerr != nil || string(obj.Data) != tc.after):
				t.Fatalf("inner Get: %q, %v, want %q", obj.Data, gerr, tc.after)
			case tc.after == "old" && obj.ETag != etag:
				t.Fatalf("inner ETag %q, want the untouched %q", obj.ETag, etag)
			}
		})
	}
}

// Stats counts every call (enabled or not) and each fault by kind, exactly.
func TestStatsCounts(t *testing.T) {
	inner, _ := seeded(t)
	s := faulty.New(inner, faulty.Config{LostAckRate: 1, ReadOutageAfterLostAck: 2})
	steps := []struct {
		op   op
		want faulty.Stats
	}{
		{allOps[0], faulty.Stats{Calls: 1}},                              // get: no fault
		{allOps[3], faulty.Stats{Calls: 2, LostAcks: 1}},                 // put: lost ack, outage of 2
		{allOps[1], faulty.Stats{Calls: 3, LostAcks: 1, OutageReads: 1}}, // head: outage
		{allOps[2], faulty.Stats{Calls: 4, LostAcks: 1, OutageReads: 2}}, // list: outage
		{allOps[0], faulty.Stats{Calls: 5, LostAcks: 1, OutageReads: 2}}, // get: outage over
		{allOps[4], faulty.Stats{Calls: 6, LostAcks: 2, OutageReads: 2}}, // delete: lost ack
		{allOps[0], faulty.Stats{Calls: 7, LostAcks: 2, OutageReads: 3}}, // get: outage
	}
	for i, st := range steps {
		st.op.call(s)
		if got := s.Stats(); got != st.want {
			t.Fatalf("step %d (%s): stats %+v, want %+v", i, st.op.name, got, st.want)
		}
	}
	s2 := faulty.New(sim.New(sim.Config{Seed: 9}), faulty.Config{TransientRate: 1})
	for _, o := range allOps {
		o.call(s2)
	}
	s2.SetEnabled(false)
	allOps[0].call(s2)
	if got, want := s2.Stats(), (faulty.Stats{Calls: 6, Transient: 5}); got != want {
		t.Fatalf("transient stats %+v, want %+v", got, want)
	}
	if got := s2.Stats().Faults(); got != 5 {
		t.Fatalf("Faults() = %d, want 5", got)
	}
}

// Switched off, the wrapper passes every call through even at rate 1,
// injects nothing and draws nothing; switched on again, faults resume.
func TestSetEnabledFalsePassesThrough(t *testing.T) {
	for _, cfg := range []faulty.Config{
		{TransientRate: 1},
		{LostAckRate: 1, ReadOutageAfterLostAck: 3},
	} {
		inner, _ := seeded(t)
		s := faulty.New(inner, cfg)
		s.SetEnabled(false)
		for _, o := range allOps {
			if err := o.call(s); err != nil {
				t.Fatalf("%+v: disabled %s: %v", cfg, o.name, err)
			}
		}
		if _, err := inner.Head(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("%+v: the disabled put and delete did not pass through: %v", cfg, err)
		}
		if st := s.Stats(); st.Faults() != 0 || st.Calls != 5 {
			t.Fatalf("%+v: disabled stats %+v", cfg, st)
		}
		s.SetEnabled(true)
		if err := allOps[3].call(s); err == nil {
			t.Fatalf("%+v: re-enabled put did not fault", cfg)
		}
	}
}

// The same seed gives the same fault sequence over a mixed workload of all
// five methods and all three fault kinds, and the sequence is a property
// of the wrapper, not of the inner store's seed.
func TestMixedFaultSequenceIsSeeded(t *testing.T) {
	trace := func(seed, innerSeed uint64) []string {
		inner := sim.New(sim.Config{Seed: innerSeed})
		s := faulty.New(inner, faulty.Config{Seed: seed, TransientRate: 0.3, LostAckRate: 0.3, ReadOutageAfterLostAck: 2})
		var out []string
		for i := 0; i < 200; i++ {
			err := allOps[i%len(allOps)].call(s)
			switch {
			case err == nil, errors.Is(err, objstore.ErrNotFound):
				out = append(out, "ok")
			case objstore.IsAmbiguous(err):
				out = append(out, "ambiguous")
			case objstore.IsRetryable(err):
				out = append(out, "transient")
			default:
				t.Fatalf("call %d: unexpected %v", i, err)
			}
		}
		st := s.Stats()
		if st.Transient == 0 || st.LostAcks == 0 || st.OutageReads == 0 {
			t.Fatalf("seed %d: not every fault kind was exercised: %+v", seed, st)
		}
		return out
	}
	a, b, c := trace(11, 1), trace(11, 2), trace(12, 1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 11: call %d was %s, then %s", i, a[i], b[i])
		}
	}
	differ := false
	for i := range a {
		differ = differ || a[i] != c[i]
	}
	if !differ {
		t.Fatal("seeds 11 and 12 gave the same 200-call fault sequence")
	}
}

// Concurrent use is safe (run under -race): every call gets a
// contract-legal answer and Stats adds up.
func TestConcurrentUse(t *testing.T) {
	s := faulty.New(sim.New(sim.Config{Seed: 13}), faulty.Config{Seed: 13, TransientRate: 0.2, LostAckRate: 0.2, ReadOutageAfterLostAck: 1})
	const workers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if i%10 == 0 {
					s.SetEnabled(i%20 == 0)
				}
				_ = s.Stats()
				err := allOps[(w+i)%len(allOps)].call(s)
				if err != nil && !errors.Is(err, objstore.ErrNotFound) && !objstore.IsRetryable(err) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("contract-illegal answer: %v", err)
	}
	if st := s.Stats(); st.Calls != workers*each {
		t.Fatalf("stats %+v, want %d calls", st, workers*each)
	}
}

// TestGetManyDrawsAsGetsWould: a GetMany draws a fault a key in key order,
// so a seed faults the same keys as one Get a key would; a faulted key is
// ErrTransient, the others are the inner store's answers from one batched
// call, and an invalid key is the inner store's refusal.
func TestGetManyDrawsAsGetsWould(t *testing.T) {
	keys := []string{"k", "missing", "bad//key", "k", "k", "k", "k", "k"}
	cfg := faulty.Config{Seed: 11, TransientRate: 0.5}
	inner, _ := seeded(t)
	one := faulty.New(inner, cfg)
	var want []bool
	for _, k := range keys {
		_, err := one.Get(ctx, k)
		want = append(want, errors.Is(err, objstore.ErrTransient))
	}
	before := inner.Counters().Get.Requests
	s := faulty.New(inner, cfg)
	res := objstore.GetMany(ctx, s, keys)
	if n := inner.Counters().Get.Requests - before; n != 1 {
		t.Errorf("the inner store saw %d Get requests, want one batched call", n)
	}
	faults := 0
	for i, r := range res {
		if got := errors.Is(r.Err, objstore.ErrTransient); got != want[i] {
			t.Fatalf("key %d (%q): transient %v, one Get a key %v (%v)", i, keys[i], got, want[i], r.Err)
		}
		switch {
		case want[i]:
			faults++
			if objstore.IsAmbiguous(r.Err) {
				t.Errorf("key %d: an injected read fault is ambiguous: %v", i, r.Err)
			}
		case keys[i] == "missing" && !errors.Is(r.Err, objstore.ErrNotFound),
			keys[i] == "bad//key" && !errors.Is(r.Err, objstore.ErrInvalidKey),
			keys[i] == "k" && (r.Err != nil || string(r.Object.Data) != "old"):
			t.Errorf("key %d (%q): %q %v", i, keys[i], r.Object.Data, r.Err)
		}
	}
	if faults == 0 || faults == len(keys)-1 {
		t.Fatalf("%d of %d keys faulted: pick a seed that faults some", faults, len(keys))
	}
	if st := s.Stats(); st.Calls != int64(len(keys)) || st.Transient != int64(faults) {
		t.Errorf("stats %+v, want %d calls, %d transient", st, len(keys), faults)
	}
}

// TestDeleteManyDrawsAsDeletesWould: a DeleteMany draws a fault a key in
// key order, so a seed faults the same keys, the same way, as one Delete a
// key would: a transient key is ErrTransient, unambiguous and not deleted;
// a lost acknowledgement is deleted and ambiguous; the rest reach the
// inner store in one batched call.
func TestDeleteManyDrawsAsDeletesWould(t *testing.T) {
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("d/%02d", i))
	}
	keys = append(keys, "d/missing", "bad//key")
	cfg := faulty.Config{Seed: 5, TransientRate: 0.3, LostAckRate: 0.3}
	run := func(batched bool) ([]string, []string, faulty.Stats, uint64) {
		inner := sim.New(sim.Config{Seed: 9})
		for _, k := range keys[:12] {
			if _, err := inner.Put(ctx, k, []byte("x"), objstore.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
		s := faulty.New(inner, cfg)
		var through objstore.Store = s
		if !batched {
			through = struct{ objstore.Store }{s} // one Delete a key
		}
		before := inner.Counters().Delete.Requests
		var outcome []string
		for i, err := range objstore.DeleteMany(ctx, through, keys) {
			switch {
			case err == nil:
				outcome = append(outcome, "ok")
			case objstore.IsAmbiguous(err) && errors.Is(err, objstore.ErrTransient):
				outcome = append(outcome, "ambiguous")
			case errors.Is(err, objstore.ErrTransient):
				outcome = append(outcome, "transient")
			case keys[i] == "bad//key" && errors.Is(err, objstore.ErrInvalidKey):
				outcome = append(outcome, "invalid")
			default:
				t.Fatalf("key %q: %v", keys[i], err)
			}
		}
		page, err := inner.List(ctx, "d/", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		return outcome, page.Keys, s.Stats(), inner.Counters().Delete.Requests - before
	}
	got, left, st, requests := run(true)
	want, wantLeft, wantSt, _ := run(false)
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(left) != fmt.Sprint(wantLeft) || st != wantSt {
		t.Fatalf("batched: %v, left %v, %+v; one Delete a key: %v, left %v, %+v", got, left, st, want, wantLeft, wantSt)
	}
	if requests != 1 {
		t.Errorf("the inner store saw %d Delete requests, want one batched call", requests)
	}
	if st.Transient == 0 || st.LostAcks == 0 || int(st.Transient) != len(left) || st.Calls != int64(len(keys)) {
		t.Fatalf("stats %+v, %d keys left: pick a seed with both faults (each transient key left, nothing else)", st, len(left))
	}
}
