package lineage

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"pgregory.net/rapid"
)

var tableNames = []string{"a", "b", "c", "d", "e", "f"}

func genID(t *rapid.T, label string) format.ID {
	var id format.ID
	copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, label))
	id[0] &= 0x7f
	if id == (format.ID{}) {
		id[15] = 1
	}
	return id
}

// genLive draws a valid, live (non-tombstone) manifest at version >= 1.
func genLive(t *rapid.T) format.Manifest {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(tableNames), 0, len(tableNames), rapid.ID[string]).Draw(t, "pinned")
	sort.Strings(names)
	var pins []format.TablePin
	for _, n := range names {
		pins = append(pins, format.TablePin{Name: n, Fork: genID(t, "fork"), Version: rapid.Uint64Range(1, 20).Draw(t, "v")})
	}
	c := format.Commit{ID: genID(t, "head"), Parents: []format.ID{genID(t, "parent")}, Kind: format.KindCommit}
	if c.Parents[0] == c.ID {
		t.Skip("self parent")
	}
	return format.Manifest{
		Version: rapid.Uint64Range(1, 1000).Draw(t, "version"),
		Branch:  format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: format.ID{7}},
		Tables:  pins, Commit: &c, Head: c.ID, Schema: strings.Repeat("0", 64), FormatStamp: format.CurrentFormat,
	}
}

func genUpdates(t *rapid.T) []Update {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(tableNames), 0, 3, rapid.ID[string]).Draw(t, "updated")
	var us []Update
	for _, n := range names {
		us = append(us, Update{Table: n, Fork: genID(t, "ufork"), Version: rapid.Uint64Range(1, 25).Draw(t, "uv")})
	}
	return us
}

// CheckExpectations agrees with a direct lookup and reports the first
// failure in table order whatever order the caller passed.
func TestCheckExpectationsMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genLive(t)
		var exp []Expectation
		for _, n := range rapid.SliceOfN(rapid.SampledFrom(tableNames), 0, 4).Draw(t, "exp") {
			exp = append(exp, Expectation{Table: n, Version: rapid.Uint64Range(0, 20).Draw(t, "ev")})
		}
		var want *Mismatch
		sorted := append([]Expectation(nil), exp...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Table < sorted[j].Table })
		for _, e := range sorted {
			actual := uint64(0)
			for _, p := range m.Tables {
				if p.Name == e.Table {
					actual = p.Version
				}
			}
			if actual != e.Version {
				want = &Mismatch{e.Table, e.Version, actual}
				break
			}
		}
		got, ok := CheckExpectations(&m, exp)
		if ok != (want == nil) || (want != nil && got != *want) {
			t.Fatalf("CheckExpectations = %+v,%v; want %+v", got, ok, want)
		}
		rev := append([]Expectation(nil), exp...)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		if got2, ok2 := CheckExpectations(&m, rev); ok2 != ok || (!ok && got2.Table != got.Table) {
			t.Fatalf("order dependent: %+v vs %+v", got2, got)
		}
	})
}

// A successor built by NextManifest always satisfies CheckSuccessor, pins
// exactly the updates on top of the previous pins, and parents on the
// previous head; an update that does not advance a pin is a Mismatch.
func TestNextManifestHoldsInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prev := genLive(t)
		us := genUpdates(t)
		var merged *format.ID
		kind := format.KindCommit
		if rapid.Bool().Draw(t, "merge") {
			id := genID(t, "merged")
			merged, kind = &id, format.KindMerge
		}
		parents, err := ResolveParents(&prev, merged)
		if merged != nil && *merged == prev.Head {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("self-merge: %v", err)
			}
			return
		}
		if err != nil || parents[0] != prev.Head || len(parents) != 1+btoi(merged != nil) {
			t.Fatalf("ResolveParents = %v, %v", parents, err)
		}
		c := format.Commit{ID: genID(t, "new"), Parents: parents, Kind: kind}
		if merged != nil {
			c.MergedFrom = &format.ManifestRef{Branch: "other", Incarnation: 1, Version: 3}
		}
		if rapid.Bool().Draw(t, "replayed id") {
			c.ID = c.Parents[rapid.IntRange(0, len(c.Parents)-1).Draw(t, "parent")]
		}
		next, mm, err := NextManifest(&prev, Proposal{Updates: us, Commit: c})
		if c.ID == prev.Head || (merged != nil && c.ID == *merged) {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("commit id equal to a parent: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("NextManifest: %v", err)
		}
		if wantMM := firstBackwards(&prev, us); wantMM != nil {
			if mm == nil || *mm != *wantMM {
				t.Fatalf("mismatch = %+v, want %+v", mm, wantMM)
			}
			return
		}
		if mm != nil {
			t.Fatalf("unexpected mismatch %+v", mm)
		}
		if err := CheckSuccessor(&prev, &next); err != nil {
			t.Fatalf("CheckSuccessor: %v", err)
		}
		for _, u := range us {
			if p, _ := next.Pin(u.Table); p.Version != u.Version || p.Fork != u.Fork {
				t.Fatalf("update %+v not applied: %+v", u, p)
			}
		}
		for _, p := range prev.Tables {
			if q, _ := next.Pin(p.Name); !updated(us, p.Name) && q != p {
				t.Fatalf("untouched pin %+v changed to %+v", p, q)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func updated(us []Update, table string) bool {
	for _, u := range us {
		if u.Table == table {
			return true
		}
	}
	return false
}

func firstBackwards(prev *format.Manifest, us []Update) *Mismatch {
	s := append([]Update(nil), us...)
	sort.Slice(s, func(i, j int) bool { return s[i].Table < s[j].Table })
	for _, u := range s {
		if p, ok := prev.Pin(u.Table); ok && p.Version >= u.Version {
			return &Mismatch{Table: u.Table, Expected: u.Version - 1, Actual: p.Version}
		}
	}
	return nil
}

// CheckSuccessor catches each way a successor can be broken.
func TestCheckSuccessorCatchesBrokenSuccessors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prev := genLive(t)
		c := format.Commit{ID: genID(t, "new"), Parents: []format.ID{prev.Head}, Kind: format.KindCommit}
		if c.ID == prev.Head {
			t.Skip()
		}
		next, mm, err := NextManifest(&prev, Proposal{Commit: c})
		if err != nil || mm != nil {
			t.Fatalf("%v %v", mm, err)
		}
		mutations := map[string]func(m *format.Manifest){
			"version skip": func(m *format.Manifest) { m.Version++ },
			"other branch": func(m *format.Manifest) { m.Branch.Incarnation++ },
			"wrong parent": func(m *format.Manifest) { m.Commit.Parents = []format.ID{genID(t, "x")} },
			// A schema change is an ordinary (or merge) commit's alone.
			"schema change by recovery": func(m *format.Manifest) {
				m.Schema = strings.Repeat("1", 64)
				m.Commit.Kind = format.KindRecovery
			},
			"fork change": func(m *format.Manifest) {
				m.ForkOf = &format.ForkPoint{Branch: "x", Incarnation: 1, IncarnationID: format.ID{1}, CommitID: format.ID{2}}
			},
			"pin dropped": func(m *format.Manifest) {
				if len(m.Tables) == 0 {
					m.Version = 0
				}
				m.Tables = nil
			},
			"pin backwards": func(m *format.Manifest) {
				if len(m.Tables) == 0 || m.Tables[0].Version == 1 {
					m.Version = 0
					return
				}
				m.Tables = append([]format.TablePin(nil), m.Tables...)
				m.Tables[0].Version--
			},
		}
		keys := make([]string, 0, len(mutations))
		for k := range mutations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		name := rapid.SampledFrom(keys).Draw(t, "mutation")
		broken := next
		bc := *next.Commit
		broken.Commit = &bc
		mutations[name](&broken)
		if cmp.Equal(broken, next) {
			t.Skip("mutation was a no-op")
		}
		if err := CheckSuccessor(&prev, &broken); err == nil {
			t.Fatalf("%s not caught", name)
		}
	})
}

func TestForkAndGenesisAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := genLive(t)
		id := format.BranchIdentity{Name: "feature", Incarnation: rapid.Uint64Range(1, 5).Draw(t, "inc"), IncarnationID: genID(t, "incid")}
		m, err := Fork(&src, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := format.ValidateManifest(&m); err != nil {
			t.Fatalf("fork manifest invalid: %v", err)
		}
		if m.Version != 0 || m.Commit != nil || m.Head != src.Head || !cmp.Equal(m.Tables, src.Tables) ||
			m.ForkOf.ManifestVersion != src.Version || m.ForkOf.IncarnationID != src.Branch.IncarnationID {
			t.Fatalf("fork manifest %+v from %+v", m, src)
		}
		g := Genesis(id, format.Commit{ID: genID(t, "g"), Kind: format.KindCommit}, src.Schema)
		if err := format.ValidateManifest(&g); err != nil || g.Commit.Kind != format.KindGenesis {
			t.Fatalf("genesis invalid: %v", err)
		}
		tomb := src
		tomb.Tombstone = true
		if _, err := Fork(&tomb, id); !errors.Is(err, ErrInvalid) {
			t.Fatalf("fork of tombstone: %v", err)
		}
		if _, err := ResolveParents(&tomb, nil); !errors.Is(err, ErrInvalid) {
			t.Fatalf("parents on tombstone: %v", err)
		}
	})
}

func TestValidateUpdates(t *testing.T) {
	f := format.ID{1}
	for _, tc := range []struct {
		name string
		us   []Update
		ok   bool
	}{
		{"ok", []Update{{"a", f, 1, 0, format.ID{}, ""}, {"b", f, 2, 0, format.ID{}, ""}}, true},
		{"dup", []Update{{"a", f, 1, 0, format.ID{}, ""}, {"a", f, 2, 0, format.ID{}, ""}}, false},
		{"bad name", []Update{{"a/b", f, 1, 0, format.ID{}, ""}}, false},
		{"zero version", []Update{{"a", f, 0, 0, format.ID{}, ""}}, false},
		{"zero fork", []Update{{"a", format.ID{}, 1, 0, format.ID{}, ""}}, false},
		{"counter-named rides", []Update{{"a", f, 1, 0, format.ID{}, "{}"}}, false},
	} {
		if err := ValidateUpdates(tc.us); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestSchemaChangeIsAnOrdinaryCommit pins the other side of the rule: a
// successor that is an ordinary commit may name another schema (a schema
// change publishes through the one door like any write).
func TestSchemaChangeIsAnOrdinaryCommit(t *testing.T) {
	prev := Genesis(format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: format.ID{1}},
		format.Commit{ID: format.ID{2}, Actor: "a", TimeUnixNano: 1}, strings.Repeat("a", 64))
	next, mm, err := NextManifest(&prev, Proposal{Commit: format.Commit{ID: format.ID{3}, Parents: []format.ID{prev.Head},
		Actor: "a", TimeUnixNano: 2, Kind: format.KindCommit}, Schema: strings.Repeat("b", 64)})
	if err != nil || mm != nil || next.Schema != strings.Repeat("b", 64) {
		t.Fatalf("NextManifest = %+v, %v, %v", next, mm, err)
	}
	if err := CheckSuccessor(&prev, &next); err != nil {
		t.Fatalf("schema change refused: %v", err)
	}
	next.Commit.Kind = format.KindRecovery
	if err := CheckSuccessor(&prev, &next); err == nil {
		t.Fatal("a recovery commit changed the schema unnoticed")
	}
}
