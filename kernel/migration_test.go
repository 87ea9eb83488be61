package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// A read-only open of a v3 graph reads its whole history correctly (heads,
// paged logs across forks, every commit, merge bases, snapshots at legacy
// commits) without a single write; after a read-write open migrates main,
// every read answers the same, through the folded legacy block.
func TestV3ReadOnlyOpenReadsHistoryWithZeroWrites(t *testing.T) {
	for _, st := range migStores {
		t.Run(st.name, func(t *testing.T) {
			inner := st.new(t)
			fx := writeV3(t, inner, 1)
			cs := counting.New(inner)
			ro, err := kernel.Open(mctx, cs, v3Root, kernel.Options{ReadOnly: true, Env: migEnv(2)})
			if err != nil {
				t.Fatalf("read-only Open of v3: %v", err)
			}
			checkLegacyHistory(t, ro, fx)
			checkLegacySnapshots(t, ro, inner, fx)
			checkLegacyTables(t, ro, fx)
			before := dumpHistory(t, ro, fx)
			if _, err := writeOn(ro, "main", "nope"); !errors.Is(err, kernel.ErrReadOnly) {
				t.Fatalf("write on a read-only handle: %v", err)
			}
			if w := cs.Writes(); w != 0 {
				t.Fatalf("read-only reads of a v3 graph made %d writes", w)
			}
			if _, err := kernel.Open(mctx, inner, v3Root, kernel.Options{Env: migEnv(3)}); err != nil {
				t.Fatalf("read-write Open: %v", err)
			}
			for _, seed := range []uint64{4, 5} { // a fresh handle, then a read-write one
				g, err := kernel.Open(mctx, inner, v3Root, kernel.Options{ReadOnly: seed == 4, Env: migEnv(seed)})
				if err != nil {
					t.Fatal(err)
				}
				checkLegacyHistory(t, g, fx)
				if after := dumpHistory(t, g, fx); after != before {
					t.Fatalf("history differs after the migration of main:\n%s", lineDiff(before, after))
				}
			}
		})
	}
}

// checkLegacySnapshots: the snapshot at a legacy commit is the v3 manifest
// at that commit's manifest version; the branch snapshot is the newest.
func checkLegacySnapshots(t *testing.T, g *kernel.Graph, store objstore.Store, fx migrate.Fixture) {
	t.Helper()
	for _, br := range fx.Branches {
		s, err := g.SnapshotAt(mctx, mustRef(t, g, br.Name))
		if err != nil || s.Head() != br.Head || !cmp.Equal(s.Tables(), br.Tables) && len(br.Tables) > 0 {
			t.Fatalf("SnapshotAt(%s) = %+v, %v\ndiff (-s.Tables() +br.Tables):\n%s", br.Name, s, err, cmp.Diff(s.Tables(), br.Tables))
		}
		lin, _ := br.Lineage()
		for _, c := range br.Commits {
			s, err := g.SnapshotAtCommit(mctx, c.ID)
			if err != nil {
				t.Fatalf("SnapshotAtCommit(%s): %v", c.ID, err)
			}
			m, ok := readManifest(t, store, br.Name, c.ManifestVersion)
			head, _ := lin.HeadAt(c.ManifestVersion)
			if !ok || s.Branch() != br.Name || s.ManifestVersion() != c.ManifestVersion || s.Head() != head ||
				fmt.Sprint(s.Tables()) != fmt.Sprint(m.Tables) {
				t.Fatalf("SnapshotAtCommit(%s) = %s v%d head %s %v; want v%d head %s %v", c.ID, s.Branch(),
					s.ManifestVersion(), s.Head(), s.Tables(), c.ManifestVersion, head, m.Tables)
			}
		}
	}
}

// checkLegacyTables: the schema and the v3 table versions a v3 graph pins
// read through the ordinary table API.
func checkLegacyTables(t *testing.T, g *kernel.Graph, fx migrate.Fixture) {
	t.Helper()
	if s, err := g.Schema(mctx); err != nil || string(s) != string(v3Spec(1).Schema) {
		t.Fatalf("Schema of a v3 graph = %q, %v", s, err)
	}
	for _, br := range fx.Branches {
		b := mustRef(t, g, br.Name)
		for _, p := range br.Tables {
			tv, err := g.ReadPinned(mctx, p)
			if err != nil || tv.Rows != p.Rows || len(tv.Fragments) != 1 {
				t.Fatalf("ReadTable(%s %s v%d) = %+v, %v", br.Name, p.Name, p.Version, tv, err)
			}
			h, err := g.TableHead(mctx, b, p.Name)
			if err != nil || h.Version != p.Version {
				t.Fatalf("TableHead(%s, %s) = %+v, %v", br.Name, p.Name, h, err)
			}
		}
	}
}

func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(al), len(bl))
}

// The backfill preserves every id, parent, actor, message, time and the
// head; the table pins are unchanged; only main is touched by the open, and
// a feature branch is migrated by its first write without touching others.
func TestV3BackfillPreservesLineage(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, store, 1)
	main, feature := fxBranch(t, fx, "main"), fxBranch(t, fx, "feature")
	before := storeImage(t, store, v3Root+"/")
	g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2)})
	if err != nil {
		t.Fatalf("read-write Open of v3: %v", err)
	}
	checkFold(t, store, main)
	// Besides main's migration manifest, the open writes only the fork
	// index a pre-marker graph lacks (kernel/forkindex.go): the flag and the
	// markers of the two live forks, feature and idle.
	d, aids := splitForkIndex(imageDiff(before, storeImage(t, store, v3Root+"/")))
	if len(d) != 1 || d[0] != v3Keys.Manifest("main", 1, main.Version+1) || len(aids) != 3 {
		t.Fatalf("the open wrote more than main's migration manifest and the fork index: %v, %v", d, aids)
	}
	if m, _ := readManifest(t, store, "feature", feature.Version); m.FormatStamp != format.FormatV3 {
		t.Fatal("feature migrated by the open of main")
	}
	checkLegacyHistory(t, g, fx)

	before = storeImage(t, store, v3Root+"/")
	c, err := writeOn(g, "feature", "first v4 write")
	if err != nil {
		t.Fatalf("first write on v3 feature: %v", err)
	}
	if len(c.Parents) != 1 || c.Parents[0] != feature.Head || c.ManifestVersion != feature.Version+2 {
		t.Fatalf("first v4 commit on feature %+v, want parent %s at v%d", c, feature.Head, feature.Version+2)
	}
	checkFold(t, store, feature)
	for _, k := range imageDiff(before, storeImage(t, store, v3Root+"/")) {
		if !strings.HasPrefix(k, v3Keys.BranchPrefix("feature")) && !strings.HasPrefix(k, v3Keys.TableForkPrefix("a", feature.IncarnationID)) &&
			k != v3Keys.CommitIndex(c.ID) {
			t.Fatalf("migrating feature touched %s", k)
		}
	}
	if got, want := logIDs(t, g, mustRef(t, g, "feature"), 2), append([]kernel.CommitID{c.ID}, expectedLog(t, fx, "feature")...); !sameIDs(got, want) {
		t.Fatalf("feature log after its migration:\n got %v\nwant %v", got, want)
	}
	// idle (no commit of its own: no legacy data) folds onto its fork commit.
	idle := fxBranch(t, fx, "idle")
	c, err = writeOn(g, "idle", "idle")
	if err != nil || c.Parents[0] != idle.Head {
		t.Fatalf("first write on idle: %+v, %v (want parent %s)", c, err, idle.Head)
	}
	checkFold(t, store, idle)
	// A v4 commit on main merging a legacy feature commit: merge base and
	// history follow it into the legacy lineage.
	mc, err := g.Publish(mctx, mustRef(t, g, "main"), nil, kernel.LineageIntent{Actor: "v4", Message: "merge legacy", MergedParent: &feature.Commits[0].ID}, nil)
	if err != nil || mc.Parents[0] != main.Head {
		t.Fatalf("merge on migrated main: %+v, %v", mc, err)
	}
	mb, err := g.MergeBaseOf(mctx, mc.ID, feature.Commits[0].ID)
	if err != nil || mb.ID != feature.Commits[0].ID {
		t.Fatalf("MergeBaseOf(merge, its legacy parent) = %v, %v", mb.ID, err)
	}
}

// checkFold asserts that br's migration manifest holds exactly br's legacy
// commits in id order, br's head and br's pins, and adds no commit.
func checkFold(t *testing.T, store objstore.Store, br migrate.FixtureBranch) {
	t.Helper()
	m, ok := readManifest(t, store, br.Name, br.Version+1)
	if !ok || m.FormatStamp != format.CurrentFormat || m.Legacy == nil || m.Commit != nil {
		t.Fatalf("%s v%d is not a migration manifest: %+v", br.Name, br.Version+1, m)
	}
	want := br.Commits
	if len(want) == 0 {
		want = nil
	}
	if !cmp.Equal(m.Legacy.Commits, want) || m.Head != br.Head || m.Legacy.Head != br.Head {
		t.Fatalf("%s fold:\n got %+v head %s\nwant %+v head %s\ndiff (-m.Legacy.Commits +want):\n%s", br.Name, m.Legacy.Commits, m.Head, want, br.Head, cmp.Diff(m.Legacy.Commits, want))
	}
	if fmt.Sprint(m.Tables) != fmt.Sprint(br.Tables) {
		t.Fatalf("%s fold changed pins: %v, want %v", br.Name, m.Tables, br.Tables)
	}
}

// Running the migration again changes nothing: a second read-write open
// writes nothing, and a branch migrates once however many writes follow.
func TestMigrationIdempotent(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, store, 1)
	if _, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2)}); err != nil {
		t.Fatal(err)
	}
	image := storeImage(t, store, v3Root+"/")
	cs := counting.New(store)
	g, err := kernel.Open(mctx, cs, v3Root, kernel.Options{Env: migEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Writes() != 0 || len(imageDiff(image, storeImage(t, store, v3Root+"/"))) != 0 {
		t.Fatalf("second open wrote %d times", cs.Writes())
	}
	feature := fxBranch(t, fx, "feature")
	for i := range 3 {
		if _, err := writeOn(g, "feature", fmt.Sprint("w", i)); err != nil {
			t.Fatal(err)
		}
	}
	if v := newestVersion(t, store, "feature"); v != feature.Version+4 {
		t.Fatalf("feature at v%d after a migration and 3 writes, want v%d", v, feature.Version+4)
	}
	for v := feature.Version + 2; v <= feature.Version+4; v++ {
		if m, _ := readManifest(t, store, "feature", v); m.Legacy != nil || m.Commit == nil {
			t.Fatalf("feature v%d is not an ordinary commit manifest", v)
		}
	}
	checkLegacyHistoryAfterWrites(t, g, fx)
}

// checkLegacyHistoryAfterWrites checks every legacy commit is still readable.
func checkLegacyHistoryAfterWrites(t *testing.T, g *kernel.Graph, fx migrate.Fixture) {
	t.Helper()
	for _, br := range fx.Branches {
		for _, c := range br.Commits {
			got, err := g.Commit(mctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			checkCommit(t, got, br.Name, c)
		}
	}
}

// An absent (zero) stamp reads as the oldest supported format: an
// unstamped v3 graph reads and migrates like a stamped one.
func TestUnstampedGraphReadsAsOldest(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	spec := v3Spec(1)
	spec.Unstamped = true
	fx, err := migrate.WriteV3Fixture(mctx, store, v3Root, spec)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := kernel.Open(mctx, store, v3Root, kernel.Options{ReadOnly: true, Env: migEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	checkLegacyHistory(t, ro, fx)
	g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	checkFold(t, store, fxBranch(t, fx, "main"))
	checkLegacyHistory(t, g, fx)
}

// restampHead stores a copy of name's newest manifest, restamped, as its
// next version.
func restampHead(t *testing.T, store objstore.Store, keys format.Keys, name string, stamp uint16) {
	t.Helper()
	page, err := store.List(mctx, keys.BranchPrefix(name), "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("list %s: %v", name, err)
	}
	inc, v, _ := keys.ParseManifestKey(name, page.Keys[0])
	obj, err := store.Get(mctx, page.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	e, err := format.DecodeEnvelope(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	e.Stamp = stamp
	if _, err := store.Put(mctx, keys.Manifest(name, inc, v+1), format.EncodeEnvelope(e), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
}

func wantUnsupported(t *testing.T, what string, err error, tooNew bool) {
	t.Helper()
	var u *kernel.UnsupportedFormatError
	if !errors.As(err, &u) || !errors.Is(err, kernel.ErrUnsupportedFormat) || u.TooNew() != tooNew || u.TooOld() == tooNew {
		t.Fatalf("%s: %v, want *UnsupportedFormatError (too new: %v)", what, err, tooNew)
	}
	remedy := format.ReasonTooOld
	if tooNew {
		remedy = format.ReasonTooNew
	}
	if u.Reason != remedy {
		t.Fatalf("%s: reason %q, want %q", what, u.Reason, remedy)
	}
}

// Too-new and too-old stamps are refused, typed and with zero writes, by a
// read-write open, a read-only open, and every read of a non-main branch,
// on v4 and on v3 graphs.
func TestStampGuardRefusesEveryPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stamp  uint16
		tooNew bool
	}{
		{"too new", format.CurrentFormat + 1, true},
		{"far too new", 0xffff, true},
		{"too old", format.OldestSupportedFormat - 1, false},
		{"ancient", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, legacy := range []bool{false, true} {
				store, keys := guardGraph(t, legacy)
				restampHead(t, store, keys, "main", tc.stamp)
				cs := counting.New(store)
				for _, ro := range []bool{false, true} {
					_, err := kernel.Open(mctx, cs, keys.Root(), kernel.Options{ReadOnly: ro, Env: migEnv(9)})
					wantUnsupported(t, fmt.Sprintf("Open(v3=%v, readOnly=%v)", legacy, ro), err, tc.tooNew)
				}
				if cs.Writes() != 0 {
					t.Fatal("a refused open wrote")
				}
				store, keys = guardGraph(t, legacy)
				g, err := kernel.Open(mctx, store, keys.Root(), kernel.Options{Env: migEnv(9)})
				if err != nil {
					t.Fatal(err)
				}
				b := mustRef(t, g, "feature")
				restampHead(t, store, keys, "feature", tc.stamp)
				cs = counting.New(store)
				g, _ = kernel.Open(mctx, cs, keys.Root(), kernel.Options{Env: migEnv(10)})
				checkBranchReadsRefused(t, g, b, tc.tooNew)
				if cs.Writes() != 0 {
					t.Fatal("a refused branch read wrote")
				}
			}
		})
	}
}

// guardGraph returns a graph with main and a feature branch: a fresh v4
// graph, or the v3 fixture.
func guardGraph(t *testing.T, legacy bool) (objstore.Store, format.Keys) {
	t.Helper()
	store := sim.New(sim.Config{Seed: 1})
	if legacy {
		writeV3(t, store, 1)
		return store, v3Keys
	}
	g, err := kernel.Init(mctx, store, "graphs/v4", []byte("s"), kernel.Options{Env: migEnv(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.CreateBranch(mctx, "feature", mustRef(t, g, "main")); err != nil {
		t.Fatal(err)
	}
	if _, err := writeOn(g, "feature", "f"); err != nil {
		t.Fatal(err)
	}
	return store, format.NewKeys("graphs/v4")
}

func checkBranchReadsRefused(t *testing.T, g *kernel.Graph, b kernel.BranchRef, tooNew bool) {
	t.Helper()
	_, err := g.Branch(mctx, "feature")
	wantUnsupported(t, "Branch", err, tooNew)
	_, err = g.Head(mctx, b)
	wantUnsupported(t, "Head", err, tooNew)
	_, err = g.Log(mctx, b, "", 10)
	wantUnsupported(t, "Log", err, tooNew)
	_, err = g.SnapshotAt(mctx, b)
	wantUnsupported(t, "SnapshotAt", err, tooNew)
	_, err = g.TableHead(mctx, b, "a")
	wantUnsupported(t, "TableHead", err, tooNew)
	_, err = g.ListBranches(mctx)
	wantUnsupported(t, "ListBranches", err, tooNew)
	_, err = g.MergeBase(mctx, mustRef(t, g, "main"), b)
	wantUnsupported(t, "MergeBase", err, tooNew)
	_, err = g.Publish(mctx, b, nil, kernel.LineageIntent{Actor: "x"}, nil)
	wantUnsupported(t, "Publish", err, tooNew)
}

// A crash before the stamp leaves the graph v3; the next read-write open
// completes the migration, once, with no duplicates. A lost acknowledgement
// of the stamp write is resolved by reading back.
func TestCrashBeforeStampCompletesOnNextOpen(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, store, 1)
	main := fxBranch(t, fx, "main")
	fp := failpoint.NewSet()
	crashed := false
	fp.OnCrash(func() { crashed = true })
	fp.Arm(failpoint.MigrationBeforeStamp, failpoint.Action{Kind: failpoint.Crash})
	env := migEnv(2)
	env.Failpoints = fp
	cs := counting.New(store)
	if _, err := kernel.Open(mctx, cs, v3Root, kernel.Options{Env: env}); !errors.Is(err, failpoint.ErrCrashed) || !crashed {
		t.Fatalf("Open with a crash before the stamp = %v", err)
	}
	if cs.Writes() != 0 || newestVersion(t, store, "main") != main.Version {
		t.Fatalf("a crash before the stamp left %d writes", cs.Writes())
	}
	// The next open stamps; the ack of that write is lost once.
	key := v3Keys.Manifest("main", 1, main.Version+1)
	lost := 0
	store.SetHook(sim.HookFuncs{After: func(_ context.Context, c *sim.Call, applied bool, res error) error {
		if c.Op == objstore.OpPut && c.Key == key && applied && lost == 0 {
			lost++
			return objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errors.New("ack lost"))
		}
		return res
	}})
	g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(3)})
	if err != nil || lost != 1 {
		t.Fatalf("reopen after the crash = %v (acks lost: %d)", err, lost)
	}
	store.SetHook(nil)
	if v := newestVersion(t, store, "main"); v != main.Version+1 {
		t.Fatalf("main at v%d after completing the migration, want exactly one fold at v%d", v, main.Version+1)
	}
	checkFold(t, store, main)
	ids := logIDs(t, g, mustRef(t, g, "main"), 5)
	seen := map[kernel.CommitID]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate commit %s in main's log", id)
		}
		seen[id] = true
	}
	checkLegacyHistory(t, g, fx)
}

// Only an empty legacy prefix means "no legacy data": a transient or
// permanent failure reading the legacy lineage, a corrupt legacy object or
// one listed and then gone aborts the migration without writing the stamp.
func TestLegacyReadErrorAbortsWithoutStamp(t *testing.T) {
	transient := objstore.NewError(objstore.OpGet, "legacy", objstore.ErrTransient, errors.New("timeout"))
	for _, tc := range []struct {
		name  string
		fp    error                                              // injected at MigrationLegacyRead
		hook  func(store *sim.Store, main migrate.FixtureBranch) // damages the store
		match error
	}{
		{name: "transient read error", fp: transient, match: objstore.ErrTransient},
		{name: "permanent read error", fp: errors.New("permission denied"), match: failpoint.ErrInjected},
		{name: "corrupt legacy commit", hook: func(store *sim.Store, main migrate.FixtureBranch) {
			key := v3Keys.LegacyCommit("main", 1, main.Commits[0].ID)
			if _, err := store.Put(mctx, key, []byte("garbage"), objstore.Unconditional); err != nil {
				panic(err)
			}
		}, match: kernel.ErrCorrupt},
		{name: "legacy commit naming another id", hook: func(store *sim.Store, main migrate.FixtureBranch) {
			other, _ := store.Peek(v3Keys.LegacyCommit("main", 1, main.Commits[1].ID))
			if _, err := store.Put(mctx, v3Keys.LegacyCommit("main", 1, main.Commits[0].ID), other, objstore.Unconditional); err != nil {
				panic(err)
			}
		}, match: kernel.ErrCorrupt},
		{name: "store fails only the migration's own read", hook: func(store *sim.Store, main migrate.FixtureBranch) {
			store.SetHook(failGetsAfterFirst(v3Keys.LegacyCommit("main", 1, main.Commits[1].ID)))
		}, match: objstore.ErrTransient},
		{name: "listed then gone", hook: func(store *sim.Store, main migrate.FixtureBranch) {
			key := v3Keys.LegacyCommit("main", 1, main.Commits[1].ID)
			store.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
				if c.Op == objstore.OpGet && c.Key == key {
					return objstore.NewError(objstore.OpGet, key, objstore.ErrNotFound, nil)
				}
				return nil
			}})
		}, match: kernel.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			fx := writeV3(t, store, 1)
			main := fxBranch(t, fx, "main")
			env := migEnv(2)
			if tc.fp != nil {
				env.Failpoints = failpoint.NewSet()
				env.Failpoints.Arm(failpoint.MigrationLegacyRead, failpoint.Action{Kind: failpoint.ReturnError, Err: tc.fp})
			}
			if tc.hook != nil {
				tc.hook(store, main)
			}
			cs := counting.New(store)
			_, err := kernel.Open(mctx, cs, v3Root, kernel.Options{Env: env, RetryBudget: 4})
			if err == nil || !errors.Is(err, tc.match) || errors.Is(err, kernel.ErrNotFound) {
				t.Fatalf("Open = %v, want an abort matching %v (and never not-found)", err, tc.match)
			}
			if cs.Writes() != 0 || newestVersion(t, store, "main") != main.Version {
				t.Fatalf("aborted migration wrote %d times", cs.Writes())
			}
		})
	}
}

// On the publisher path: a permanent legacy-read failure fails the write
// and leaves the branch v3; so does a store that cannot serve the
// migration's own read (retryably, after the publisher's budget); a
// transient one is retried by the publisher and the write lands on the
// migrated branch.
func TestLegacyReadErrorOnFirstWrite(t *testing.T) {
	transient := objstore.NewError(objstore.OpList, "legacy", objstore.ErrTransient, errors.New("timeout"))
	for _, tc := range []struct {
		name    string
		fp      failpoint.Action
		getFail bool  // the store fails the migration's own read
		match   error // nil: the write lands
	}{
		{name: "permanent", fp: failpoint.Action{Kind: failpoint.ReturnError, Err: errors.New("permission denied")}, match: failpoint.ErrInjected},
		{name: "store fails the migration's read", getFail: true, match: kernel.ErrContention},
		{name: "transient once", fp: failpoint.Action{Kind: failpoint.ReturnError, Times: 1, Err: transient}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			fx := writeV3(t, store, 1)
			feature := fxBranch(t, fx, "feature")
			if _, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2)}); err != nil {
				t.Fatal(err) // migrates main
			}
			env := migEnv(3)
			if tc.fp.Kind != 0 {
				env.Failpoints = failpoint.NewSet()
				env.Failpoints.Arm(failpoint.MigrationLegacyRead, tc.fp)
			}
			g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: env, RetryBudget: 3})
			if err != nil {
				t.Fatal(err)
			}
			if tc.getFail {
				store.SetHook(failGetsAfterFirst(v3Keys.LegacyCommit("feature", 1, feature.Commits[0].ID)))
			}
			c, err := writeOn(g, "feature", "first")
			if tc.match == nil {
				if err != nil || c.Parents[0] != feature.Head {
					t.Fatalf("write after a transient legacy-read failure = %+v, %v", c, err)
				}
				checkFold(t, store, feature)
				return
			}
			if !errors.Is(err, tc.match) {
				t.Fatalf("write with a failing legacy read = %v, want %v", err, tc.match)
			}
			if newestVersion(t, store, "feature") != feature.Version {
				t.Fatal("a failed legacy read wrote the stamp")
			}
		})
	}
}

// N=8 processes opening the same v3 graph at once all succeed and the
// result equals one migration; N=8 first writers on a v3 branch all land on
// one linear chain above a single fold.
func TestConcurrentMigratorsConverge(t *testing.T) {
	const n = 8
	ref := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, ref, 1)
	main, feature := fxBranch(t, fx, "main"), fxBranch(t, fx, "feature")
	if _, err := kernel.Open(mctx, ref, v3Root, kernel.Options{Env: migEnv(2)}); err != nil {
		t.Fatal(err)
	}
	single := payloadAt(t, ref, v3Keys.Manifest("main", 1, main.Version+1))
	for _, st := range migStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.new(t)
			writeV3(t, store, 1)
			// Every migrator parks just before its stamp write until all have
			// planned the fold, so all of them race the same create-only write.
			sets, all := parkAll(n, failpoint.MigrationBeforeStamp)
			errs := runN(n, func(i int) error {
				env := migEnv(100 + uint64(i))
				env.Failpoints = sets[i]
				_, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: env})
				return err
			}, all)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("migrator %d: %v", i, err)
				}
			}
			if v := newestVersion(t, store, "main"); v != main.Version+1 {
				t.Fatalf("main at v%d after %d migrators, want v%d", v, n, main.Version+1)
			}
			if got := payloadAt(t, store, v3Keys.Manifest("main", 1, main.Version+1)); got != single {
				t.Fatal("concurrent migration differs from a single migration")
			}
			commits := make([]kernel.Commit, n)
			sets, all = parkAll(n, failpoint.MigrationBeforeStamp)
			handles := make([]*kernel.Graph, n)
			for i := range handles {
				env := migEnv(200 + uint64(i))
				env.Failpoints = sets[i]
				var err error
				if handles[i], err = kernel.Open(mctx, store, v3Root, kernel.Options{Env: env}); err != nil {
					t.Fatal(err)
				}
			}
			errs = runN(n, func(i int) (err error) {
				commits[i], err = writeOn(handles[i], "feature", fmt.Sprint("writer ", i))
				return err
			}, all)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("writer %d: %v", i, err)
				}
			}
			checkFold(t, store, feature)
			if v := newestVersion(t, store, "feature"); v != feature.Version+1+n {
				t.Fatalf("feature at v%d, want one fold and %d commits above v%d", v, n, feature.Version)
			}
			g, _ := kernel.Open(mctx, store, v3Root, kernel.Options{ReadOnly: true, Env: migEnv(3)})
			ids := logIDs(t, g, mustRef(t, g, "feature"), 50)
			if !sameIDs(ids[n:], expectedLog(t, fx, "feature")) {
				t.Fatalf("feature history below the %d new commits changed", n)
			}
		})
	}
}

// parkAll returns n failpoint sets that each park once at site, and a
// coordinator that waits until each of the n goroutines has parked (or
// ended), then lets them all go.
func parkAll(n int, site failpoint.Name) ([]*failpoint.Set, func(done []chan struct{})) {
	sets := make([]*failpoint.Set, n)
	rvs := make([]*failpoint.Rendezvous, n)
	for i := range sets {
		sets[i], rvs[i] = failpoint.NewSet(), failpoint.NewRendezvous()
		sets[i].Arm(site, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rvs[i], Times: 1})
	}
	return sets, func(done []chan struct{}) {
		for i, r := range rvs {
			select {
			case <-r.Reached():
			case <-done[i]:
			}
		}
		for _, r := range rvs {
			r.Release()
		}
	}
}

// runN runs f(0..n-1) in n goroutines released together, runs coordinate
// (which may wait for them to reach a rendezvous; done[i] closes when
// goroutine i ends), and returns their errors.
func runN(n int, f func(i int) error, coordinate func(done []chan struct{})) []error {
	errs := make([]error, n)
	done := make([]chan struct{}, n)
	start := make(chan struct{})
	for i := range n {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			<-start
			errs[i] = f(i)
		}()
	}
	close(start)
	coordinate(done)
	for _, d := range done {
		<-d
	}
	return errs
}

// payloadAt returns the payload (the envelope without its writer token) at
// key.
func payloadAt(t *testing.T, store objstore.Store, key string) string {
	t.Helper()
	obj, err := store.Get(mctx, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	e, err := format.DecodeEnvelope(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d/%d/%s", e.Stamp, e.Kind, e.Payload)
}

// Exhausting the migration's budget returns the publisher's retryable
// *ContentionError (ErrContention), and the publisher's own loop retries
// it: a first write whose migration lost a whole budget still lands.
func TestMigrationBudgetExhaustedIsRetryable(t *testing.T) {
	const budget = 4
	for _, tc := range []struct {
		name string
		kind error
	}{
		{"lost without an object", objstore.ErrPreconditionFailed},
		{"conflict every time", objstore.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := sim.New(sim.Config{Seed: 1})
			fx := writeV3(t, store, 1)
			main := fxBranch(t, fx, "main")
			key := v3Keys.Manifest("main", 1, main.Version+1)
			store.SetHook(failPuts(key, tc.kind, -1, new(int)))
			_, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2), RetryBudget: budget})
			var ce *kernel.ContentionError
			if !errors.As(err, &ce) || !errors.Is(err, kernel.ErrContention) || !ce.Retryable() || !strings.Contains(ce.Op, "migrate main") {
				t.Fatalf("Open with every migration write lost = %v, want *ContentionError", err)
			}
			if _, ok := store.Peek(key); ok {
				t.Fatal("stamp written although every attempt lost")
			}
		})
	}
	t.Run("publisher retries", func(t *testing.T) {
		store := sim.New(sim.Config{Seed: 1})
		fx := writeV3(t, store, 1)
		feature := fxBranch(t, fx, "feature")
		g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2), RetryBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		key := v3Keys.Manifest("feature", 1, feature.Version+1)
		failed := 0
		store.SetHook(failPuts(key, objstore.ErrConflict, budget, &failed))
		c, err := writeOn(g, "feature", "lands anyway")
		if err != nil || failed != budget || c.Parents[0] != feature.Head {
			t.Fatalf("write after a migration lost one whole budget = %+v, %v (failed puts %d)", c, err, failed)
		}
		checkFold(t, store, feature)
		idle := fxBranch(t, fx, "idle")
		key = v3Keys.Manifest("idle", 1, idle.Version+1)
		store.SetHook(failPuts(key, objstore.ErrConflict, -1, new(int)))
		_, err = writeOn(g, "idle", "never")
		var ce *kernel.ContentionError
		if !errors.As(err, &ce) || !errors.Is(err, kernel.ErrContention) || !strings.Contains(ce.Op, "publish on idle") {
			t.Fatalf("write whose migration always loses = %v, want the publisher's *ContentionError", err)
		}
		if newestVersion(t, store, "idle") != idle.Version {
			t.Fatal("idle was stamped although every migration write lost")
		}
	})
}

// failGetsAfterFirst lets the first Get of key through and fails every
// later one with a transient error.
func failGetsAfterFirst(key string) sim.Hook {
	var mu sync.Mutex
	gets := 0
	return sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		mu.Lock()
		defer mu.Unlock()
		if c.Op != objstore.OpGet || c.Key != key {
			return nil
		}
		if gets++; gets == 1 {
			return nil
		}
		return objstore.NewError(objstore.OpGet, key, objstore.ErrTransient, errors.New("injected by the test"))
	}}
}

// failPuts fails the first n Puts at key (all if n < 0) with kind, no
// effect, counting them in *failed.
func failPuts(key string, kind error, n int, failed *int) sim.Hook {
	var mu sync.Mutex
	return sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		mu.Lock()
		defer mu.Unlock()
		if c.Op != objstore.OpPut || c.Key != key || (n >= 0 && *failed >= n) {
			return nil
		}
		*failed++
		return objstore.NewError(objstore.OpPut, key, kind, errors.New("injected by the test"))
	}}
}

// Branching from v3 history on a read-write handle: a branch created from
// an unmigrated branch (or at a legacy commit) reads the legacy history
// below its fork point without migrating its source; legacy log cursors are
// validated.
func TestV3BranchingAndCursors(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	fx := writeV3(t, store, 1)
	main, feature := fxBranch(t, fx, "main"), fxBranch(t, fx, "feature")
	g, err := kernel.Open(mctx, store, v3Root, kernel.Options{Env: migEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	topic, err := g.CreateBranch(mctx, "topic", mustRef(t, g, "feature"))
	if err != nil {
		t.Fatalf("CreateBranch from unmigrated feature: %v", err)
	}
	if newestVersion(t, store, "feature") != feature.Version {
		t.Fatal("forking from feature migrated it")
	}
	head, err := g.Head(mctx, topic)
	s, serr := g.SnapshotAt(mctx, topic)
	if err != nil || head.ID != feature.Head || serr != nil || fmt.Sprint(s.Tables()) != fmt.Sprint(feature.Tables) {
		t.Fatalf("topic head %v (%v), tables %v (%v)", head.ID, err, s.Tables(), serr)
	}
	c, err := writeOn(g, "topic", "on topic")
	if err != nil || c.Parents[0] != feature.Head {
		t.Fatalf("write on topic: %+v, %v", c, err)
	}
	if got, want := logIDs(t, g, topic, 2), append([]kernel.CommitID{c.ID}, expectedLog(t, fx, "feature")...); !sameIDs(got, want) {
		t.Fatalf("topic log\n got %v\nwant %v", got, want)
	}
	genesis := main.Commits[0]
	for _, lc := range main.Commits {
		if len(lc.Parents) == 0 {
			genesis = lc
		}
	}
	old, err := g.CreateBranchAt(mctx, "old", genesis.ID)
	if err != nil {
		t.Fatalf("CreateBranchAt a legacy commit: %v", err)
	}
	if got := logIDs(t, g, old, 10); !sameIDs(got, []kernel.CommitID{genesis.ID}) {
		t.Fatalf("log of a branch at the legacy genesis: %v", got)
	}
	if s, err := g.SnapshotAtVersion(mctx, mustRef(t, g, "feature"), 0); err != nil || s.Head() != feature.ForkOf.CommitID {
		t.Fatalf("feature at v0: head %v, %v; want the fork commit", s.Head(), err)
	}
	page, err := g.Log(mctx, mustRef(t, g, "feature"), "", 1)
	if err != nil || strings.Count(string(page.Next), ":") != 4 {
		t.Fatalf("a page ending inside a legacy segment has cursor %q, %v", page.Next, err)
	}
	base := string(page.Next[:strings.LastIndexByte(string(page.Next), ':')])
	for _, bad := range []string{base + ":9999", base + ":0", base + ":-1", base + ":x", base + ":01"} {
		if _, err := g.Log(mctx, mustRef(t, g, "feature"), kernel.LogCursor(bad), 5); !errors.Is(err, kernel.ErrInvalidArgument) {
			t.Errorf("Log with cursor %q = %v, want ErrInvalidArgument", bad, err)
		}
	}
	mc, err := writeOn(g, "main", "a v4 commit")
	if err != nil {
		t.Fatal(err)
	}
	v4 := fmt.Sprintf("v1:main:1:%d:1", mc.ManifestVersion)
	if _, err := g.Log(mctx, mustRef(t, g, "main"), kernel.LogCursor(v4), 5); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Errorf("offset cursor on a v4 manifest = %v", err)
	}
}
