package main

import (
	"runtime/debug"
	"testing"
)

// TestLoadSetsAndRestoresSoftMemoryLimit: a load runs under a soft memory
// limit of loadSoftLimitHalves/2 times its byte budget, never raises a lower
// limit already set, and restores the previous one.
func TestLoadSetsAndRestoresSoftMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	for _, c := range []struct {
		name          string
		before, bytes int64
		want          int64
	}{
		{"lowers the default", 1 << 62, 64 << 20, loadSoftLimitHalves * 32 << 20},
		{"keeps a lower limit", 100 << 20, 64 << 20, 100 << 20},
		{"no budget, no change", 1 << 40, 0, 1 << 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(c.before)
			restore := softMemoryLimit(c.bytes)
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("during the load: limit %d, want %d", got, c.want)
			}
			restore()
			if got := debug.SetMemoryLimit(-1); got != c.before {
				t.Errorf("after the load: limit %d, want %d restored", got, c.before)
			}
		})
	}
}
