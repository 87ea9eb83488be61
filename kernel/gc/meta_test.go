package gc

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/branchindex"
	"github.com/graphkernel/graphkernel/kernel/format"
)

var (
	metaNow    = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	metaPolicy = Policy{KeepLast: 1, KeepFor: time.Hour, Grace: time.Minute, SkewMargin: time.Minute}
	past       = metaNow.Add(-3 * time.Hour).UnixNano()    // past retention
	recent     = metaNow.Add(-30 * time.Minute).UnixNano() // within it
)

func TestNameDeadTable(t *testing.T) {
	three := func(kept ...bool) NameManifests {
		return NameManifests{Name: "f", Keys: []string{"t", "b", "a"}, Incs: []uint64{2, 2, 1}, Kept: kept}
	}
	dead := NameHead{Known: true, Tombstone: true, TombUnixNano: past, NewestVersion: true}
	for _, tc := range []struct {
		name string
		n    NameManifests
		h    NameHead
		want bool
	}{
		{"tombstone past retention, nothing kept", three(false, false, false), dead, true},
		{"tombstone within retention", three(false, false, false), NameHead{Known: true, Tombstone: true, TombUnixNano: recent, NewestVersion: true}, false},
		{"tombstone time unknown", three(false, false, false), NameHead{Known: true, Tombstone: true, NewestVersion: true}, false},
		{"a lower manifest kept (lease, merge base)", three(false, true, false), dead, false},
		{"an older incarnation's manifest kept", three(false, false, true), dead, false},
		{"live head", three(true, false, false), NameHead{Known: true, NewestVersion: true}, false},
		{"head not read", three(false, false, false), NameHead{}, false},
		{"a newer manifest than the head read", three(false, false, false), NameHead{Known: true, Tombstone: true, TombUnixNano: past}, false},
		{"listing order not newest incarnation first", NameManifests{Name: "f", Keys: []string{"t", "b", "a"}, Incs: []uint64{1, 2, 2}, Kept: []bool{false, false, false}}, dead, false},
		{"main", NameManifests{Name: "main", Keys: []string{"t"}, Incs: []uint64{1}, Kept: []bool{false}}, dead, false},
	} {
		if got := NameDead(tc.n, tc.h, metaPolicy, metaNow); got != tc.want {
			t.Errorf("%s: NameDead = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDeadNameOrderTombstoneLast(t *testing.T) {
	keys := []string{"f/inc2/v3 (tombstone)", "f/inc2/v2", "f/inc2/v0", "f/inc1/v1 (tombstone)", "f/inc1/v0"}
	got := DeadNameOrder(keys)
	if want := []string{"f/inc1/v0", "f/inc1/v1 (tombstone)", "f/inc2/v0", "f/inc2/v2", "f/inc2/v3 (tombstone)"}; !cmp.Equal(got, want) {
		t.Fatalf("DeadNameOrder = %v, want %v", got, want)
	}
	// every prefix of the deletes leaves a tombstone as the newest key
	for i := range got {
		left := got[i:]
		if newest := left[len(left)-1]; newest != keys[0] {
			t.Fatalf("after %d deletes the newest key is %q", i, newest)
		}
	}
}

func TestFloorForTable(t *testing.T) {
	for _, tc := range []struct {
		incs    []uint64
		current uint64
		floor   uint64
		write   bool
	}{
		{nil, 0, 0, false},
		{[]uint64{1}, 0, 2, true},
		{[]uint64{1, 5, 3}, 2, 6, true},
		{[]uint64{1, 5, 3}, 6, 6, false},
		{[]uint64{4}, 9, 5, false},
	} {
		floor, write := FloorFor(tc.incs, tc.current)
		if write != tc.write || (write && floor != tc.floor) {
			t.Errorf("FloorFor(%v, %d) = %d %v, want %d %v", tc.incs, tc.current, floor, write, tc.floor, tc.write)
		}
	}
}

func TestMetadataKeepRules(t *testing.T) {
	id := func(t time.Time) format.ID { return ulid.MustNew(ulid.Timestamp(t), nil) }
	old, young := id(metaNow.Add(-3*time.Hour)), id(metaNow.Add(-30*time.Second))
	live, deleted := id(metaNow.Add(-5*time.Hour)), id(metaNow.Add(-6*time.Hour))
	k := NewKnown()
	k.Add(IncKey{Name: "a", Inc: 1}, IncState{Fork: live})
	k.Add(IncKey{Name: "b", Inc: 1}, IncState{Fork: deleted, Deleted: true})
	checks := []struct {
		name      string
		got, want bool
	}{
		{"name marker with manifests", KeepNameMarker("f", true), true},
		{"name marker without", KeepNameMarker("f", false), false},
		{"main's marker", KeepNameMarker("main", false), true},
		{"fork marker of a live incarnation", KeepForkMarker(k, live, metaPolicy, metaNow), true},
		{"fork marker of a deleted incarnation", KeepForkMarker(k, deleted, metaPolicy, metaNow), false},
		{"fork marker, unknown, young (a create in flight)", KeepForkMarker(k, young, metaPolicy, metaNow), true},
		{"fork marker, unknown, old", KeepForkMarker(k, old, metaPolicy, metaNow), false},
		{"audit, sidecar pending", KeepAudit(true, past, metaPolicy, metaNow), true},
		{"audit within retention", KeepAudit(false, recent, metaPolicy, metaNow), true},
		{"audit past retention", KeepAudit(false, past, metaPolicy, metaNow), false},
		{"audit time unknown", KeepAudit(false, 0, metaPolicy, metaNow), true},
		{"audit of a young op read at all", AuditMayGo(young, metaPolicy, metaNow), false},
		{"audit of an old op read", AuditMayGo(old, metaPolicy, metaNow), true},
		{"plan, sidecar pending", KeepPlan(true, PlanAuditDeleted, old, metaPolicy, metaNow), true},
		{"plan with a kept audit", KeepPlan(false, PlanAuditKept, old, metaPolicy, metaNow), true},
		{"plan with a deleted audit", KeepPlan(false, PlanAuditDeleted, young, metaPolicy, metaNow), false},
		{"orphan plan, young", KeepPlan(false, PlanAuditAbsent, young, metaPolicy, metaNow), true},
		{"orphan plan, old", KeepPlan(false, PlanAuditAbsent, old, metaPolicy, metaNow), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestIncarnationNumbersNeverReused (rapid): a model of one store with a
// few names, each a list of incarnations (number, deleted, tombstone
// time), under random creates, deletes, clock steps and collections —
// creates take branchindex.NextIncarnation over what a LIST of the name
// shows and the newest floor, a collection deletes every dead name
// (NameDead) after writing the floor FloorFor asks for. Every incarnation
// number created for a name is above every earlier one of that name.
func TestIncarnationNumbersNeverReused(t *testing.T) {
	type inc struct {
		n       uint64
		deleted bool
		tomb    int64
	}
	rapid.Check(t, func(t *rapid.T) {
		names := map[string][]inc{} // newest last
		highest := map[string]uint64{}
		var floor uint64
		now := metaNow
		for step := rapid.IntRange(1, 60).Draw(t, "steps"); step > 0; step-- {
			name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "name")
			incs := names[name]
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // create, unless live
				found := len(incs) > 0
				if found && !incs[len(incs)-1].deleted {
					continue
				}
				var cur uint64
				if found {
					cur = incs[len(incs)-1].n
				}
				n := branchindex.NextIncarnation(found, cur, floor)
				if n <= highest[name] {
					t.Fatalf("%s re-created as incarnation %d, not above %d", name, n, highest[name])
				}
				highest[name] = n
				names[name] = append(incs, inc{n: n})
			case 1: // delete the live incarnation
				if len(incs) > 0 && !incs[len(incs)-1].deleted {
					incs[len(incs)-1] = inc{n: incs[len(incs)-1].n, deleted: true, tomb: now.UnixNano()}
				}
			case 2:
				now = now.Add(time.Duration(rapid.IntRange(1, 180).Draw(t, "minutes")) * time.Minute)
			case 3: // collect every name
				var dead []string
				var deadIncs []uint64
				for _, nm := range []string{"a", "b", "c"} {
					is := names[nm]
					if len(is) == 0 {
						continue
					}
					head := is[len(is)-1]
					n := NameManifests{Name: nm, Keys: []string{"head"}, Incs: []uint64{head.n}, Kept: []bool{false}}
					h := NameHead{Known: true, Tombstone: head.deleted, TombUnixNano: head.tomb, NewestVersion: true}
					if NameDead(n, h, metaPolicy, now) {
						dead, deadIncs = append(dead, nm), append(deadIncs, head.n)
					}
				}
				if f, write := FloorFor(deadIncs, floor); write {
					floor = f
				}
				for _, nm := range dead {
					delete(names, nm)
				}
			}
		}
	})
}
