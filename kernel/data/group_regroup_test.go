package data

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestGroupRegroupWait pins GroupOptions.RegroupWait on the manual clock
// (a sleep advances it; nothing else here does): a lone writer never
// waits; after a group of three, a leader finding fewer queued waits
// RegroupWait (no longer) and its group of one resets the expectation, so
// the next lone writer does not wait; a leader finding the expected
// members queued takes them at once.
func TestGroupRegroupWait(t *testing.T) {
	const regroup = 20 * time.Millisecond
	g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{RegroupWait: regroup, Poll: time.Millisecond})
	clock := g.clock
	n := 0
	next := func(k int) []*Txn {
		var txns []*Txn
		for range k {
			n++
			txns = append(txns, beginWith(t, g, insertPerson(fmt.Sprintf("r%d", n))))
		}
		return txns
	}
	steps := []struct {
		name     string
		members  int
		wantWait time.Duration
		wantSize int
	}{
		{"a lone first writer", 1, 0, 1},
		{"a lone writer after a lone one", 1, 0, 1},
		{"three queued expect nothing more", 3, 0, 3},
		{"one after a group of three", 1, regroup, 1},
		{"one after a group of one", 1, 0, 1},
		{"three after a group of one", 3, 0, 3},
		{"three after a group of three", 3, 0, 3},
	}
	for _, st := range steps {
		t0 := clock.Now()
		out := runQueue(t, g, next(st.members))
		if waited := clock.Now().Sub(t0); waited != st.wantWait {
			t.Fatalf("%s: the leader waited %v, want %v", st.name, waited, st.wantWait)
		}
		for i, o := range out {
			must(t, o.err)
			if o.info.Size != st.wantSize {
				t.Fatalf("%s: member %d in a group of %d, want %d", st.name, i, o.info.Size, st.wantSize)
			}
		}
	}
	// Off by default: a lone writer after a group never waits.
	off := groupGraph(t, sim.New(sim.Config{Seed: 2}), GroupOptions{Poll: time.Millisecond})
	runQueue(t, off, []*Txn{beginWith(t, off, insertPerson("x1")), beginWith(t, off, insertPerson("x2"))})
	t0 := off.clock.Now()
	runQueue(t, off, []*Txn{beginWith(t, off, insertPerson("x3"))})
	if waited := off.clock.Now().Sub(t0); waited != 0 {
		t.Fatalf("RegroupWait 0: the leader waited %v", waited)
	}
}
