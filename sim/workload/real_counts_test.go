package workload

import (
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/fs"
)

// TestRealRunReportsItsCounts runs one lifetime scenario on the
// filesystem store and requires its Result to carry what the run did, as
// a simulated run's does: the cycles, collections and feature branch,
// the riding budget's coverage and the index chunks' forms. ExecuteReal
// once built its own Result and left all of these zero, so a real run
// could not tell a soak that ran the lifetime's cycles from one that ran
// none (simrun -store fs printed no lifetime or riding lines).
func TestRealRunReportsItsCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, _ := Lookup("lifetime")
	s := w.Generate(1, "none")
	r := ExecuteReal(s, RealEnv{Store: st, Root: "t/g", Clock: kernel.SystemEnv().Clock, Scale: 0.01, QuietBound: time.Minute}, testOpts)
	if r.Failed() {
		t.Fatalf("violations %v", r.Violations)
	}
	t.Logf("cycles %d merged %d deleted %d collections %d feature %+v riding %+v chunks %+v",
		r.Cycles, r.CyclesMerged, r.CyclesDeleted, r.Collections, r.Feature, r.Riding, r.ChunkForms)
	if r.Cycles == 0 || r.CyclesMerged == 0 || r.CyclesDeleted == 0 || r.Collections == 0 {
		t.Errorf("lifetime counts missing: cycles %d merged %d deleted %d collections %d", r.Cycles, r.CyclesMerged, r.CyclesDeleted, r.Collections)
	}
	if !r.Feature.Final || r.Feature.Commits == 0 {
		t.Errorf("feature branch counts missing: %+v", r.Feature)
	}
	if r.Riding.Budgeted != (s.Riding != kernel.RidingBudget{}) || r.Riding.Rode+r.Riding.Spilled == 0 {
		t.Errorf("riding coverage missing: %+v (scenario budget %+v)", r.Riding, s.Riding)
	}
	if r.ChunkForms.JSON+r.ChunkForms.Binary == 0 {
		t.Errorf("chunk forms missing: %+v", r.ChunkForms)
	}
}
