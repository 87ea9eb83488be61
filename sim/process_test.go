package sim

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/objstore"
)

// TestProcessDiesWhole pins the shared-handle process: a crash fired by a
// shared failpoint set crashes the actor that was running (not the one
// that made the set), and the crash callback's Kill stops its sibling,
// parked mid-sleep, for good: it writes nothing after, counts no crash of
// its own, and Stop releases it.
func TestProcessDiesWhole(t *testing.T) {
	base := runtime.NumGoroutine()
	w := New(Config{Seed: 2, Buggify: BuggifyConfig{SiteProb: 1, FireProb: 1, CrashShare: 1}, Crash: CrashConfig{Max: 1}})
	fps := w.SharedFailpoints()
	var sibling *Actor
	var crashed []*Actor
	w.OnCrash(func(a *Actor) {
		crashed = append(crashed, a)
		w.Kill(sibling)
	})
	sibling = w.Spawn("sibling", func(a *Actor) error {
		for i := 0; ; i++ {
			if err := a.Sleep(time.Second); err != nil {
				return err
			}
			if _, err := w.Store().Put(a.Context(), fmt.Sprintf("s/%d", i), []byte("x"), objstore.CreateOnly); err != nil {
				return err
			}
		}
	})
	victim := w.SpawnAfter(1500*time.Millisecond, "victim", func(a *Actor) error {
		if err := fps.Hit(a.Context(), failpoint.BeforePublish); !errors.Is(err, failpoint.ErrCrashed) {
			return fmt.Errorf("hit: %v", err)
		}
		return a.Sleep(time.Second)
	})
	w.RunUntil(time.Hour)
	if len(crashed) != 1 || crashed[0] != victim || !victim.Crashed() || !sibling.Crashed() || w.Stats().Crashes != 1 {
		t.Fatalf("crashed %v, victim %v, sibling %v, crashes %d", crashed, victim.Crashed(), sibling.Crashed(), w.Stats().Crashes)
	}
	if keys := w.Store().Keys("s/"); len(keys) != 1 {
		t.Fatalf("sibling wrote %v, want only its write before the crash", keys)
	}
	w.Stop()
	if keys := w.Store().Keys("s/"); len(keys) != 1 {
		t.Fatalf("a killed actor wrote after Stop: %v", keys)
	}
	waitGoroutines(t, base)
}
