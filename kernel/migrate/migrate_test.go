package migrate_test

import (
	"context"
	"errors"
	"github.com/google/go-cmp/cmp"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"pgregory.net/rapid"
)

var bg = context.Background()

func entropy(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(s)
}

func id(b byte) format.ID { return format.ID{b} }

func lc(i byte, mv uint64, parents ...byte) format.LegacyCommit {
	c := format.LegacyCommit{ID: id(i), ManifestVersion: mv, Actor: "a" + string('0'+rune(i%10))}
	for _, p := range parents {
		c.Parents = append(c.Parents, id(p))
	}
	return c
}

func ids(cs []format.LegacyCommit) []format.ID {
	out := make([]format.ID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestLineageOrderAndHead(t *testing.T) {
	// genesis 1@v0, 2@v1, 5@v2 with its stray twin 3@v2 (a tie), 4@v3.
	in := []format.LegacyCommit{lc(4, 3, 5), lc(2, 1, 1), lc(5, 2, 2), lc(1, 0), lc(3, 2, 2)}
	l, err := migrate.NewLineage(in, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l.Commits()); !cmp.Equal(got, []format.ID{id(1), id(2), id(3), id(4), id(5)}) {
		t.Fatalf("Commits not in id order: %v\ndiff (-got +[]format.ID{id(1), id(2), id(3), id(4), id(5)}):\n%s", got, cmp.Diff(got, []format.ID{id(1), id(2), id(3), id(4), id(5)}))
	}
	for _, tc := range []struct {
		v    uint64
		want []format.ID
	}{
		{3, []format.ID{id(4), id(5), id(3), id(2), id(1)}},
		{2, []format.ID{id(5), id(3), id(2), id(1)}},
		{0, []format.ID{id(1)}},
	} {
		if got := ids(l.UpTo(tc.v)); !cmp.Equal(got, tc.want) {
			t.Errorf("UpTo(%d) = %v, want %v\ndiff (-got +tc.want):\n%s", tc.v, got, tc.want, cmp.Diff(got, tc.want))
		}
		if h, ok := l.HeadAt(tc.v); !ok || h != tc.want[0] {
			t.Errorf("HeadAt(%d) = %v", tc.v, h)
		}
	}
	if c, ok := l.Find(id(3)); !ok || c.ManifestVersion != 2 {
		t.Fatalf("Find(3) = %+v, %v", c, ok)
	}
	if _, ok := l.Find(id(9)); ok {
		t.Fatal("Find of an absent id")
	}
	in[0].Parents[0] = id(7) // NewLineage copied its input
	if c, _ := l.Find(id(4)); c.Parents[0] != id(5) {
		t.Fatal("lineage aliases its input")
	}
}

func TestNewLineageRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []format.LegacyCommit
	}{
		{"duplicate id", []format.LegacyCommit{lc(1, 0), lc(1, 1)}},
		{"beyond newest version", []format.LegacyCommit{lc(1, 4)}},
		{"self parent", []format.LegacyCommit{lc(1, 0, 1)}},
		{"zero id", []format.LegacyCommit{{ManifestVersion: 0}}},
	} {
		if _, err := migrate.NewLineage(tc.in, 3); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

// The head rule is a total order: the head of any permutation is the same,
// and it beats every other commit.
func TestLineageHeadIsOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 30).Draw(t, "n")
		perm := rapid.Permutation(rapid.SliceOfNDistinct(rapid.Byte().Filter(func(b byte) bool { return b != 0 }), n, n, rapid.ID[byte]).Draw(t, "ids")).Draw(t, "perm")
		var cs []format.LegacyCommit
		for _, b := range perm {
			cs = append(cs, lc(b, uint64(rapid.IntRange(0, 5).Draw(t, "mv"))))
		}
		l, err := migrate.NewLineage(cs, 5)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := l.HeadAt(5)
		want, _ := format.LegacyHead(cs)
		if h != want {
			t.Fatalf("HeadAt %s, LegacyHead %s", h, want)
		}
		all := l.UpTo(5)
		if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].NewerThan(&all[j]) }) || len(all) != n {
			t.Fatalf("UpTo not newest first")
		}
	})
}

func v3Latest(version uint64, fork *format.ForkPoint) format.Manifest {
	return format.Manifest{Version: version, Branch: format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: id(99)},
		ForkOf: fork, Tables: []format.TablePin{{Name: "a", Fork: id(99), Version: 2, Rows: 2}},
		Schema: strings.Repeat("c", 64), FormatStamp: format.FormatV3}
}

func TestPlanFold(t *testing.T) {
	latest := v3Latest(3, nil)
	commits := []format.LegacyCommit{lc(4, 3, 2), lc(2, 1, 1), lc(1, 0)}
	m, err := migrate.PlanFold(&latest, commits)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 4 || m.FormatStamp != format.CurrentFormat || m.Commit != nil || m.Head != id(4) ||
		!cmp.Equal(m.Tables, latest.Tables) || m.Schema != latest.Schema || m.Branch != latest.Branch {
		t.Fatalf("plan %+v\ndiff (-m.Tables +latest.Tables):\n%s", m, cmp.Diff(m.Tables, latest.Tables))
	}
	if got := ids(m.Legacy.Commits); !cmp.Equal(got, []format.ID{id(1), id(2), id(4)}) || m.Legacy.Head != id(4) {
		t.Fatalf("legacy block %v head %s\ndiff (-got +[]format.ID{id(1), id(2), id(4)}):\n%s", got, m.Legacy.Head, cmp.Diff(got, []format.ID{id(1), id(2), id(4)}))
	}
	if err := migrate.CheckFold(&latest, &m); err != nil {
		t.Fatalf("CheckFold: %v", err)
	}
	// Deterministic: any input order gives the same plan.
	again, _ := migrate.PlanFold(&latest, []format.LegacyCommit{lc(1, 0), lc(4, 3, 2), lc(2, 1, 1)})
	if !cmp.Equal(again, m) {
		t.Fatalf("plan depends on input order\ndiff (-again +m):\n%s", cmp.Diff(again, m))
	}
	if _, err := format.EncodeManifest(&m, format.Token{}); err != nil {
		t.Fatalf("plan does not encode: %v", err)
	}
}

func TestPlanFoldEdgeCases(t *testing.T) {
	fork := &format.ForkPoint{Branch: "main", Incarnation: 1, IncarnationID: id(98), ManifestVersion: 2, CommitID: id(50)}
	f := v3Latest(0, fork)
	f.Branch.Name = "feature"
	m, err := migrate.PlanFold(&f, nil)
	if err != nil || m.Head != id(50) || m.Legacy.Commits != nil || *m.ForkOf != *fork {
		t.Fatalf("fold of a commit-less fork = %+v, %v", m, err)
	}
	noFork := v3Latest(1, nil)
	if _, err := migrate.PlanFold(&noFork, nil); !errors.Is(err, migrate.ErrNoLineage) || !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("fold without lineage or fork = %v", err)
	}
	v4 := v3Latest(1, nil)
	v4.FormatStamp = format.CurrentFormat
	if _, err := migrate.PlanFold(&v4, []format.LegacyCommit{lc(1, 0)}); !errors.Is(err, migrate.ErrNotLegacy) {
		t.Fatalf("fold of a v4 manifest = %v", err)
	}
	big := v3Latest(1, nil)
	huge := []format.LegacyCommit{}
	msg := strings.Repeat("x", format.MaxMessageBytes)
	for i := 0; i < format.MaxPayloadBytes/format.MaxMessageBytes+2; i++ {
		huge = append(huge, format.LegacyCommit{ID: format.ID{byte(i >> 8), byte(i), 1}, Message: msg, ManifestVersion: 1})
	}
	if _, err := migrate.PlanFold(&big, huge); !errors.Is(err, migrate.ErrTooLarge) {
		t.Fatalf("oversized fold = %v", err)
	}
}

func TestPlanStampFirstSupport(t *testing.T) {
	latest := v3Latest(3, nil)
	commits := []format.LegacyCommit{lc(4, 3, 2), lc(2, 1, 1), lc(1, 0)}
	stamp, err := migrate.PlanStampOnly(&latest, commits)
	if err != nil || len(stamp.Legacy.Commits) != 1 || stamp.Legacy.Commits[0].ID != id(4) {
		t.Fatalf("stamp-only plan %+v, %v", stamp.Legacy, err)
	}
	full, err := migrate.PlanBackfillAfterStamp(&stamp, commits)
	if err != nil || full.Version != 5 || len(full.Legacy.Commits) != 3 || migrate.CheckFold(&stamp, &full) != nil {
		t.Fatalf("backfill after stamp %+v, %v", full, err)
	}
}

func TestCheckFoldRejects(t *testing.T) {
	latest := v3Latest(3, nil)
	good, _ := migrate.PlanFold(&latest, []format.LegacyCommit{lc(1, 0)})
	for _, tc := range []struct {
		name string
		mut  func(m *format.Manifest)
	}{
		{"version", func(m *format.Manifest) { m.Version = 5 }},
		{"pins", func(m *format.Manifest) { m.Tables[0].Version = 3 }},
		{"dropped pin", func(m *format.Manifest) { m.Tables = nil }},
		{"schema", func(m *format.Manifest) { m.Schema = strings.Repeat("d", 64) }},
		{"branch", func(m *format.Manifest) { m.Branch.Incarnation = 2 }},
		{"fork", func(m *format.Manifest) {
			m.ForkOf = &format.ForkPoint{Branch: "x", Incarnation: 1, IncarnationID: id(3), CommitID: id(1)}
		}},
	} {
		m := good
		m.Tables = append([]format.TablePin(nil), good.Tables...)
		tc.mut(&m)
		if migrate.CheckFold(&latest, &m) == nil {
			t.Errorf("%s: CheckFold accepted", tc.name)
		}
	}
}

var start = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func spec(seed uint64) migrate.FixtureSpec {
	return migrate.FixtureSpec{Schema: []byte("schema v3"), Entropy: entropy(seed), Start: start, Ops: []migrate.FixtureOp{
		{Kind: migrate.OpCommit, Branch: "main", Actor: "ann", Message: "a1", Tables: []string{"a"}},
		{Kind: migrate.OpFork, Branch: "feature", From: "main"},
		{Kind: migrate.OpCommit, Branch: "feature", Actor: "cat", Message: "f1", Tables: []string{"a", "b"}},
		{Kind: migrate.OpCommit, Branch: "main", Actor: "bob", Message: "lost", Tables: []string{"a"}, LoseCommit: true},
		{Kind: migrate.OpMerge, Branch: "main", From: "feature", Actor: "ann", Message: "merge"},
		{Kind: migrate.OpStray, Branch: "feature", Actor: "zed", Message: "stray"},
	}}
}

func TestWriteV3Fixture(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	fx, err := migrate.WriteV3Fixture(bg, store, "g", spec(1))
	if err != nil {
		t.Fatal(err)
	}
	keys := format.NewKeys("g")
	main, _ := fx.Branch("main")
	feat, _ := fx.Branch("feature")
	if main.Version != 3 || len(main.Commits) != 3 || feat.Version != 1 || len(feat.Commits) != 2 || feat.ForkOf.ManifestVersion != 1 {
		t.Fatalf("fixture main %+v feature %+v", main, feat)
	}
	// The lost second write left the manifest without a commit; the merge's
	// parents are the two heads.
	lin, _ := main.Lineage()
	head, _ := lin.Find(main.Head)
	if head.Kind() != format.KindMerge || head.ManifestVersion != 3 || head.Parents[1] != feat.Commits[0].ID && head.Parents[1] != feat.Commits[1].ID {
		t.Fatalf("merge head %+v", head)
	}
	for v := uint64(0); v <= main.Version; v++ {
		b, ok := store.Peek(keys.Manifest("main", 1, v))
		if !ok {
			t.Fatalf("no v3 manifest at main v%d", v)
		}
		m, _, err := format.DecodeManifestAnyStamp(b)
		if err != nil || m.FormatStamp != format.FormatV3 || m.Commit != nil {
			t.Fatalf("main v%d: %+v, %v", v, m, err)
		}
	}
	for _, br := range []migrate.FixtureBranch{main, feat} {
		for _, c := range br.Commits {
			b, ok := store.Peek(keys.LegacyCommit(br.Name, 1, c.ID))
			got, _, err := format.DecodeLegacyCommit(b)
			if !ok || err != nil || !cmp.Equal(got, c) {
				t.Fatalf("legacy commit %s of %s: %+v, %v\ndiff (-got +c):\n%s", c.ID, br.Name, got, err, cmp.Diff(got, c))
			}
		}
	}
	if len(store.Keys(keys.BranchPrefix("main"))) != 4 {
		t.Fatal("main should have exactly the 4 manifests v0..v3")
	}
	hist, err := fx.History("feature")
	if err != nil || len(hist) != 4 || hist[2] != main.Commits[0].ID && hist[2] != main.Commits[1].ID || hist[3] == hist[2] {
		t.Fatalf("History(feature) = %v, %v", hist, err)
	}
	if h, _ := fx.History("main"); len(h) != 3 || h[0] != main.Head {
		t.Fatalf("History(main) = %v", h)
	}
	if _, err := fx.History("nope"); err == nil {
		t.Fatal("History of an unknown branch")
	}
	// Same spec, same seed: byte-identical store.
	other := sim.New(sim.Config{Seed: 9})
	if _, err := migrate.WriteV3Fixture(bg, other, "g", spec(1)); err != nil {
		t.Fatal(err)
	}
	for _, k := range store.Keys("") {
		a, _ := store.Peek(k)
		b, _ := other.Peek(k)
		if string(a) != string(b) {
			t.Fatalf("fixture not deterministic at %s", k)
		}
	}
	// A root that already holds a graph is refused.
	if _, err := migrate.WriteV3Fixture(bg, store, "g", spec(2)); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("second fixture on the same root = %v", err)
	}
}

func TestWriteV3FixtureUnstampedAndFaults(t *testing.T) {
	store := sim.New(sim.Config{Seed: 3, Faults: sim.Faults{TransientRate: 0.2, LostAckRate: 0.2, ConflictRate: 0.2}})
	s := spec(4)
	s.Unstamped = true
	fx, err := migrate.WriteV3Fixture(bg, store, "u", s)
	if err != nil {
		t.Fatalf("fixture under faults: %v", err)
	}
	main, _ := fx.Branch("main")
	b, _ := store.Peek(format.NewKeys("u").Manifest("main", 1, main.Version))
	e, _ := format.DecodeEnvelope(b)
	if m, _, err := format.DecodeManifestAnyStamp(b); e.Stamp != 0 || err != nil || m.FormatStamp != format.FormatV3 {
		t.Fatalf("unstamped manifest: stamp %d, %v", e.Stamp, err)
	}
	if store.FaultsInjected() == 0 {
		t.Fatal("no fault was injected: the test proves nothing")
	}
}

func TestWriteV3FixtureRejectsBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   migrate.FixtureOp
	}{
		{"unknown branch", migrate.FixtureOp{Kind: migrate.OpCommit, Branch: "nope"}},
		{"fork onto existing", migrate.FixtureOp{Kind: migrate.OpFork, Branch: "main", From: "main"}},
		{"self merge", migrate.FixtureOp{Kind: migrate.OpMerge, Branch: "main", From: "main"}},
		{"bad table", migrate.FixtureOp{Kind: migrate.OpCommit, Branch: "main", Tables: []string{"a/b"}}},
		{"unknown kind", migrate.FixtureOp{Kind: 99, Branch: "main"}},
	} {
		s := migrate.FixtureSpec{Schema: []byte("s"), Entropy: entropy(1), Start: start, Ops: []migrate.FixtureOp{tc.op}}
		if _, err := migrate.WriteV3Fixture(bg, sim.New(sim.Config{}), "r", s); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := migrate.WriteV3Fixture(bg, sim.New(sim.Config{}), "r", migrate.FixtureSpec{}); err == nil {
		t.Error("spec without entropy accepted")
	}
}
