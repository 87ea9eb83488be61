package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
)

// deferringActor writes deferred objects under its own prefix, syncing
// every other one, until the world stops or it crashes.
func deferringActor(a *Actor) error {
	ctx, st := a.Context(), a.World().Client()
	for i := 0; ; i++ {
		key := fmt.Sprintf("%s/%03d", a.Name(), i)
		_, _, err := objstore.PutDeferred(ctx, st, key, []byte(key))
		if err != nil && !objstore.IsRetryable(err) {
			return err
		}
		if err == nil && i%2 == 0 {
			if err := objstore.SyncDeferred(ctx, st, []string{key}); err != nil {
				return err
			}
		}
		if err := a.Sleep(10 * time.Millisecond); err != nil {
			return err
		}
	}
}

// TestMachineCrashCrashesEveryActor: with machine crashes on, the actors'
// store defers durability, and a machine crash crashes every started
// actor at once and loses the deferred objects no sync made durable,
// keeping the synced ones; a run replays to the same hash. With the rate
// zero the actors' store is the plain store (no deferral) and the run
// draws nothing for machine crashes.
func TestMachineCrashCrashesEveryActor(t *testing.T) {
	run := func(m MachineCrashConfig) (*World, []*Actor) {
		w := New(Config{Seed: 5, Machine: m})
		var restarts []*Actor
		w.OnCrash(func(a *Actor) { restarts = append(restarts, a) })
		for i := range 3 {
			w.Spawn(fmt.Sprintf("w%d", i), deferringActor)
		}
		w.RunUntil(2 * time.Second)
		w.Stop()
		return w, restarts
	}
	m := MachineCrashConfig{Rate: 0.05, Max: 1}
	w, crashed := run(m)
	st := w.Stats()
	if st.MachineCrashes != 1 || len(crashed) != 3 || st.Crashes != 3 {
		t.Fatalf("machine crashes %d, actors crashed %d (stats %d), want 1 crash of all 3", st.MachineCrashes, len(crashed), st.Crashes)
	}
	if st.Lost == 0 {
		t.Fatalf("the crash lost nothing: %+v", st)
	}
	s := w.Store()
	for _, k := range s.Keys("") {
		var i int
		fmt.Sscanf(k[len(k)-3:], "%d", &i)
		if i%2 == 1 {
			t.Fatalf("unsynced %s survived a crash that keeps nothing", k)
		}
	}
	if len(s.Keys("")) == 0 {
		t.Fatal("no synced object survived")
	}
	if w2, _ := run(m); w2.TraceHash() != w.TraceHash() {
		t.Fatal("a machine-crash run does not replay to its hash")
	}
	if _, ok := New(Config{}).Client().(objstore.DeferredPutter); ok {
		t.Fatal("without machine crashes the actors' store defers durability")
	}
	off, crashed := run(MachineCrashConfig{})
	if off.Stats().MachineCrashes != 0 || len(crashed) != 0 || off.Store().Volatile() != 0 {
		t.Fatalf("machine crashes off: %+v", off.Stats())
	}
}
