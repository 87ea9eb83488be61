package storetest

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestRacesTolerateFaults: the race subtests' retry paths (conflict and
// transient retries, read-back of ambiguous create-only writes) are right,
// checked against the sim store with faults on. No real backend injects
// these often enough to exercise them.
func TestRacesTolerateFaults(t *testing.T) {
	t.Run("CreateOnlyRace", func(t *testing.T) {
		s := sim.New(sim.Config{Seed: 3, Faults: sim.Faults{TransientRate: 0.1, ConflictRate: 0.1, LostAckRate: 0.1}})
		testCreateOnlyRace(t, s)
		c := s.Counters()
		if c.Faults.TransientAmbiguous == 0 || c.Faults.Conflict == 0 || c.Faults.LostAck == 0 {
			t.Fatalf("faults not exercised: %+v", c.Faults)
		}
	})
	t.Run("IfMatchCounter", func(t *testing.T) {
		// Only unambiguous faults: a bare counter cannot resolve a lost ack.
		s := sim.New(sim.Config{Seed: 3, Faults: sim.Faults{ConflictRate: 0.2}})
		testIfMatchCounter(t, s)
		if s.Counters().Faults.Conflict == 0 {
			t.Fatal("conflicts not exercised")
		}
	})
}

// TestCheckErr: the error matcher every subtest relies on rejects each way
// an error can miss the contract.
func TestCheckErr(t *testing.T) {
	good := objstore.NewError(objstore.OpGet, "k", objstore.ErrNotFound, nil)
	if err := checkErr(good, objstore.ErrNotFound, objstore.OpGet, "k"); err != nil {
		t.Fatalf("a conforming error was rejected: %v", err)
	}
	bad := map[string]error{
		"nil":        nil,
		"wrong kind": objstore.NewError(objstore.OpGet, "k", objstore.ErrTransient, nil),
		"bare":       objstore.ErrNotFound,
		"wrong op":   objstore.NewError(objstore.OpHead, "k", objstore.ErrNotFound, nil),
		"wrong key":  objstore.NewError(objstore.OpGet, "j", objstore.ErrNotFound, nil),
		"ambiguous":  objstore.NewAmbiguousError(objstore.OpGet, "k", objstore.ErrNotFound, nil),
	}
	for name, err := range bad {
		if checkErr(err, objstore.ErrNotFound, objstore.OpGet, "k") == nil {
			t.Errorf("%s: accepted %v", name, err)
		}
	}
}
