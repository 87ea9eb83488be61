package recovery

import (
	"testing"

	"pgregory.net/rapid"
)

// TestClassifyTable pins the classification table of the issue, row by row.
func TestClassifyTable(t *testing.T) {
	cases := []struct {
		name string
		o    Observation
		want Class
	}{
		{"head equals pin, nothing moved", Observation{Expected: 3, Commit: 4, Pin: 3, Head: 3}, NoMovement},
		{"unpinned table, no version yet", Observation{Expected: 0, Commit: 1, Pin: 0, Head: 0}, NoMovement},
		{"head is our commit", Observation{Expected: 3, Commit: 4, Pin: 3, Head: 4, HeadOurs: true}, RolledPast},
		{"new table, head is our commit", Observation{Expected: 0, Commit: 1, Pin: 0, Head: 1, HeadOurs: true}, RolledPast},
		{"head at commit but someone else's token", Observation{Expected: 3, Commit: 4, Pin: 3, Head: 4}, Unexpected},
		{"head past our commit", Observation{Expected: 3, Commit: 4, Pin: 3, Head: 5}, Unexpected},
		{"our commit but the pin moved under it", Observation{Expected: 3, Commit: 5, Pin: 4, Head: 5, HeadOurs: true}, Unexpected},
		{"pin moved past, head equals it", Observation{Expected: 3, Commit: 4, Pin: 6, Head: 6}, NoMovement},
		{"head behind the manifest", Observation{Expected: 3, Commit: 4, Pin: 3, Head: 2}, Violation},
		{"head behind even if published", Observation{Expected: 3, Commit: 4, Pin: 4, Head: 3, Published: true}, Violation},
		{"our version pinned", Observation{Expected: 3, Commit: 4, Pin: 4, Head: 4, HeadOurs: true, Published: true}, Published},
		{"our version pinned then superseded", Observation{Expected: 3, Commit: 4, Pin: 7, Head: 7, Published: true}, Published},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.o); got != tc.want {
				t.Fatalf("Classify(%+v) = %v, want %v", tc.o, got, tc.want)
			}
		})
	}
}

// TestDecideTable pins the sidecar-level decisions.
func TestDecideTable(t *testing.T) {
	cases := []struct {
		name    string
		classes []Class
		abandon bool
		want    Decision
	}{
		{"all rolled past", []Class{RolledPast, RolledPast}, false, RollForward},
		{"all rolled past, writer abandons", []Class{RolledPast, RolledPast}, true, RollBack},
		{"one no movement", []Class{RolledPast, NoMovement}, false, RollBack},
		{"one unexpected", []Class{Unexpected, RolledPast}, false, RollBack},
		{"nothing moved", []Class{NoMovement}, false, RollBack},
		{"a violation wins over everything", []Class{RolledPast, Violation, Published}, false, Fail},
		{"all published", []Class{Published, Published}, false, Finish},
		{"all published, writer abandons", []Class{Published}, true, Finish},
		{"partly published", []Class{Published, NoMovement}, false, Defer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.classes, tc.abandon); got != tc.want {
				t.Fatalf("Decide(%v, %v) = %v, want %v", tc.classes, tc.abandon, got, tc.want)
			}
		})
	}
}

func TestDecidePanicsOnEmpty(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Decide(nil) did not panic")
		}
	}()
	Decide(nil, false)
}

// genObservation draws an observation reachable or not: the properties
// below must hold for every input, not just the reachable ones.
func genObservation(t *rapid.T, label string) Observation {
	exp := rapid.Uint64Range(0, 6).Draw(t, label+".expected")
	return Observation{
		Expected:  exp,
		Commit:    exp + rapid.Uint64Range(1, 3).Draw(t, label+".commitDelta"),
		Pin:       rapid.Uint64Range(0, 10).Draw(t, label+".pin"),
		Head:      rapid.Uint64Range(0, 10).Draw(t, label+".head"),
		HeadOurs:  rapid.Bool().Draw(t, label+".ours"),
		Published: rapid.Bool().Draw(t, label+".published"),
	}
}

// TestClassifyProperties: exactly one class; a violation exactly when HEAD
// is behind the pin; RolledPast only when HEAD is our commit on an
// unmoved pin; NoMovement only when nothing dangles.
func TestClassifyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := genObservation(t, "o")
		c := Classify(o)
		if c < NoMovement || c > Published {
			t.Fatalf("Classify(%+v) = %d, not a class", o, c)
		}
		if (c == Violation) != (o.Head < o.Pin) {
			t.Fatalf("Classify(%+v) = %v: violation must be exactly head < pin", o, c)
		}
		if c == RolledPast && !(o.Head == o.Commit && o.HeadOurs && o.Pin == o.Expected && !o.Published) {
			t.Fatalf("Classify(%+v) = RolledPast without our commit on the planned pin", o)
		}
		if c == NoMovement && o.Head != o.Pin {
			t.Fatalf("Classify(%+v) = NoMovement with HEAD off the pin", o)
		}
		if c == Published && !o.Published {
			t.Fatalf("Classify(%+v) = Published without evidence", o)
		}
	})
}

// TestDecideProperties: the decision is a function of the classes alone
// (order does not matter), and the safety conditions of each decision hold
// for the observations behind it.
func TestDecideProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "n")
		obs := make([]Observation, n)
		classes := make([]Class, n)
		for i := range obs {
			obs[i] = genObservation(t, "o")
			classes[i] = Classify(obs[i])
		}
		abandon := rapid.Bool().Draw(t, "abandon")
		d := Decide(classes, abandon)
		rev := make([]Class, n)
		for i := range classes {
			rev[n-1-i] = classes[i]
		}
		if Decide(rev, abandon) != d {
			t.Fatalf("Decide depends on order: %v", classes)
		}
		count := map[Class]int{}
		for _, c := range classes {
			count[c]++
		}
		switch d {
		case Fail:
			if count[Violation] == 0 {
				t.Fatalf("Fail without a violation: %v", classes)
			}
		case Finish:
			if count[Published] != n {
				t.Fatalf("Finish with unpublished tables: %v", classes)
			}
		case Defer:
			if count[Published] == 0 || count[Published] == n || count[Violation] > 0 {
				t.Fatalf("Defer but not partly published: %v", classes)
			}
		case RollForward:
			if abandon {
				t.Fatalf("RollForward for an abandoned write: %v", classes)
			}
			for _, o := range obs {
				// The roll-forward publish expects every pin at Expected
				// and pins every Commit: both must hold right now.
				if o.Pin != o.Expected || o.Head != o.Commit || !o.HeadOurs {
					t.Fatalf("RollForward on %+v", o)
				}
			}
		case RollBack:
			if count[Violation] > 0 || count[Published] > 0 {
				t.Fatalf("RollBack over %v", classes)
			}
			if count[RolledPast] == n && !abandon {
				t.Fatalf("RollBack although every table rolled past: %v", classes)
			}
		default:
			t.Fatalf("Decide(%v) = %d, not a decision", classes, d)
		}
	})
}

// TestNeedsRestoreProperties: skipping a restore is allowed only when
// nothing dangles (HEAD == pin) and the sidecar's commit version is already
// taken (HEAD >= commit), so a live writer is fenced either way.
func TestNeedsRestoreProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := genObservation(t, "o")
		if o.Head < o.Pin {
			return // a violation never reaches the roll-back
		}
		if !NeedsRestore(o) && (o.Head != o.Pin || o.Head < o.Commit) {
			t.Fatalf("NeedsRestore(%+v) = false, but something dangles or the commit version is free", o)
		}
		if NeedsRestore(o) && o.Head == o.Pin && o.Head >= o.Commit {
			t.Fatalf("NeedsRestore(%+v) = true with nothing to restore or fence", o)
		}
	})
}
