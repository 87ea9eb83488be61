package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/oklog/ulid/v2"
)

// crashPolicy is the soak's retention (issue 27 part 5): KeepLast 3, a short
// grace period.
var crashPolicy = maintain.Policy{Policy: gc.Policy{KeepLast: 3, Grace: 15 * time.Second, SkewMargin: time.Second}}

// errKilled is what a killed collector's store calls return.
var errKilled = errors.New("test: collector killed")

// killStore kills its process at the n-th Delete (0-based): that delete
// and every later call fail (nothing more reaches the store). Before that
// delete it runs before (once), so another process can act at exactly that
// point: a deterministic interleaving, not a race.
type killStore struct {
	objstore.Store
	deletes  int
	killAt   int // -1: never killed
	dead     bool
	before   func()
	beforeAt int // -1: never
}

func (s *killStore) check() error {
	if s.dead {
		return errKilled
	}
	return nil
}

func (s *killStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if err := s.check(); err != nil {
		return objstore.Object{}, err
	}
	return s.Store.Get(ctx, key)
}

func (s *killStore) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	if err := s.check(); err != nil {
		return objstore.Attrs{}, err
	}
	return s.Store.Head(ctx, key)
}

func (s *killStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if err := s.check(); err != nil {
		return objstore.ListPage{}, err
	}
	return s.Store.List(ctx, prefix, after, limit)
}

func (s *killStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.Store.Put(ctx, key, b, c)
}

func (s *killStore) Delete(ctx context.Context, key string) error {
	if err := s.check(); err != nil {
		return err
	}
	i := s.deletes
	s.deletes++
	if i == s.beforeAt && s.before != nil {
		s.before()
	}
	if i == s.killAt {
		s.dead = true
		return errKilled
	}
	return s.Store.Delete(ctx, key)
}

// branchPerChange builds, on a fresh sim store, the soak's history: a
// long-lived branch "dev", and cycles of fork feature from main, commit on
// it, commit on main, merge it into main, delete it (names reused, so
// older incarnations are re-created), with the clock moving. It returns
// the store and the clock; the graph is at testRoot. With versions, every
// table version is an object (kernel.Options.NoRiding, as format 10 wrote
// them); otherwise a named write's version rides its manifest.
func branchPerChange(t *testing.T, cycles int, versions bool) (*sim.Store, *kernel.ManualClock) {
	t.Helper()
	ctx := context.Background()
	st := sim.New(sim.Config{Seed: 1})
	clock := kernel.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	env := kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{9})}
	s, err := schema.Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	g, err := data.Init(ctx, st, testRoot, s, data.Options{Kernel: kernel.Options{Env: env, Grace: crashPolicy.Grace, NoRiding: versions}})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(branch, msg string, stage func(tx *data.Txn) error) {
		t.Helper()
		b, err := g.Branch(ctx, branch)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := g.Begin(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := stage(tx); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: msg}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	commit("main", "seed", func(tx *data.Txn) error {
		if err := tx.Insert("Company", data.Row{ID: "c1", Props: map[string]any{"name": "Acme"}}); err != nil {
			return err
		}
		return tx.Insert("Person", person("p0", "Ann"))
	})
	k := g.Kernel()
	main, _ := k.Branch(ctx, "main")
	if _, err := k.CreateBranch(ctx, "dev", main); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cycles; i++ {
		name := fmt.Sprintf("f%d", i%3)
		main, _ := k.Branch(ctx, "main")
		if _, err := k.CreateBranch(ctx, name, main); err != nil {
			t.Fatal(err)
		}
		commit(name, "feature", func(tx *data.Txn) error {
			if err := tx.Insert("Person", person(fmt.Sprintf("f%d", i), "Fay")); err != nil {
				return err
			}
			return tx.Insert("Knows", edgeRow(fmt.Sprintf("k%d", i), "p0", fmt.Sprintf("f%d", i)))
		})
		if i%2 == 0 {
			commit("main", "main", func(tx *data.Txn) error {
				return tx.Upsert("Person", person(fmt.Sprintf("m%d", i), "Max"))
			})
		}
		if i%3 == 1 {
			commit("dev", "dev", func(tx *data.Txn) error {
				return tx.Upsert("Company", data.Row{ID: fmt.Sprintf("d%d", i), Props: map[string]any{"name": "Dev"}})
			})
		}
		src, _ := k.Branch(ctx, name)
		tgt, _ := k.Branch(ctx, "main")
		if _, err := g.Merge(ctx, src, tgt, kernel.LineageIntent{Actor: "test", Message: "merge " + name}, data.MergeOptions{}); err != nil {
			t.Fatalf("cycle %d: merge: %v", i, err)
		}
		if err := k.DeleteBranch(ctx, name); err != nil {
			t.Fatal(err)
		}
		clock.Advance(5 * time.Second)
	}
	return st, clock
}

// collectOn runs one collection on st at the clock's time.
// collectSeed numbers the collections collectOn runs.
var collectSeed int

func collectOn(t *testing.T, st objstore.Store, clock *kernel.ManualClock) (maintain.Report, error) {
	t.Helper()
	// Each collection draws fresh entropy, as separate processes do: a
	// replayed seed would mint the same collection record id as a killed
	// run's record left on the store.
	collectSeed++
	m, err := maintain.New(st, testRoot, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{3, byte(collectSeed), byte(collectSeed >> 8)})})
	if err != nil {
		t.Fatal(err)
	}
	return m.Collect(context.Background(), crashPolicy)
}

// verifyClean runs verify's checks (--keep-last of the policy) and fails
// the test naming every problem.
func verifyClean(t *testing.T, st objstore.Store, clock *kernel.ManualClock, what string) {
	t.Helper()
	env := kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{4})}
	r, err := verifyGraph(context.Background(), st, testRoot, env, clock.Now(), crashPolicy.KeepLast)
	if err != nil {
		t.Fatalf("%s: verify: %v", what, err)
	}
	if len(r.ProblemCount) > 0 {
		var ps []string
		for _, p := range r.Problems {
			ps = append(ps, fmt.Sprintf("%s %s: %s", p.Rule, p.Key, p.Detail))
		}
		sort.Strings(ps)
		t.Fatalf("%s: verify: %v\n%s", what, r.ProblemCount, strings.Join(ps, "\n"))
	}
}

// TestVerifyAfterCollection: a branch-per-change history collected past
// its retention (deleted branches' tombstones expired, merged-from
// manifests of deleted branches collected) verifies clean under the
// collector's --keep-last.
func TestVerifyAfterCollection(t *testing.T) {
	st, clock := branchPerChange(t, 9, false)
	verifyClean(t, st, clock, "before collection")
	clock.Advance(time.Minute)
	if _, err := collectOn(t, st, clock); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, st, clock, "after collection")
}

// TestVerifyAfterKilledCollections is the errorfs-style sweep of issue 27
// part 5: for every delete index i of a full collection, (a) a collection
// killed at its i-th delete, (b) a second collection that loaded before a
// first one ran and was killed at its i-th delete, then continues — after
// either the graph verifies clean, and again after a complete collection.
func TestVerifyAfterKilledCollections(t *testing.T) {
	for _, versions := range []bool{false, true} {
		t.Run(fmt.Sprintf("versions-as-objects=%t", versions), func(t *testing.T) { killedCollections(t, versions) })
	}
}

// killedCollections is TestVerifyAfterKilledCollections on a history whose
// table versions ride their manifests (versions false: the collector
// deletes none, it marks what riding versions name) or are objects.
func killedCollections(t *testing.T, versions bool) {
	base, clock := branchPerChange(t, 9, versions)
	clock.Advance(time.Minute)
	probe := base.Clone()
	rep, err := collectOn(t, probe, clock)
	if err != nil {
		t.Fatal(err)
	}
	total := rep.Manifests.Deleted + rep.TableVersions.Deleted + rep.Fragments.Deleted + rep.Adjacency.Deleted + rep.CommitIndexes.Deleted + rep.Leases.Deleted
	if total < 20 || rep.Manifests.Deleted == 0 || rep.Adjacency.Deleted == 0 ||
		(versions && rep.TableVersions.Deleted == 0) || (!versions && rep.RidingVersions == 0) {
		t.Fatalf("the fixture collects too little to test: %+v", rep)
	}
	for i := 0; i < total; i++ {
		for _, race := range []bool{false, true} {
			name := fmt.Sprintf("kill-at-%d", i)
			if race {
				name = fmt.Sprintf("race-kill-at-%d", i)
			}
			st := base.Clone()
			killed := &killStore{Store: st, killAt: i, beforeAt: -1}
			if !race {
				if _, err := collectOn(t, killed, clock); !errors.Is(err, errKilled) {
					t.Fatalf("%s: collection: %v, want killed", name, err)
				}
			} else {
				// Collection B loads, then before its first delete a
				// collection A runs and is killed at its i-th delete; B
				// goes on with what it loaded.
				b := &killStore{Store: st, killAt: -1, beforeAt: 0, before: func() {
					if _, err := collectOn(t, killed, clock); !errors.Is(err, errKilled) {
						t.Fatalf("%s: collection A: %v, want killed", name, err)
					}
				}}
				b.killAt = i // B dies at the same index: the worst case for what it leaves
				if _, err := collectOn(t, b, clock); err != nil && !errors.Is(err, errKilled) {
					t.Fatalf("%s: collection B: %v", name, err)
				}
			}
			verifyClean(t, st, clock, name)
			if _, err := collectOn(t, st, clock); err != nil {
				t.Fatalf("%s: resumed collection: %v", name, err)
			}
			verifyClean(t, st, clock, name+" then resumed")
		}
	}
}

// adjRefJSON is an adjacency ref as the tests decode it (name, size,
// CRC-32C; internal/verify checks the same fields).
type adjRefJSON struct {
	Name   string `json:"name"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

// TestVerifyCollectedStillFindsDamage: what verify now calls garbage does
// not hide damage: after the collection, a table version object main's
// head pins (versions as objects), deleted, is a missing problem, though a
// tombstone pinning it too was walked first; and on a history whose
// versions ride their manifests, so is an index chunk a riding version
// main's head pins names (the version has no object to delete).
func TestVerifyCollectedStillFindsDamage(t *testing.T) {
	for _, versions := range []bool{true, false} {
		t.Run(fmt.Sprintf("versions-as-objects=%t", versions), func(t *testing.T) { collectedStillFindsDamage(t, versions) })
	}
}

func collectedStillFindsDamage(t *testing.T, versions bool) {
	ctx := context.Background()
	st, clock := branchPerChange(t, 9, versions)
	clock.Advance(time.Minute)
	if _, err := collectOn(t, st, clock); err != nil {
		t.Fatal(err)
	}
	env := kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{5})}
	g, err := kernel.Open(ctx, st, testRoot, kernel.Options{Env: env, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	main, _ := g.Branch(ctx, "main")
	s, err := g.SnapshotAt(ctx, main)
	if err != nil {
		t.Fatal(err)
	}
	keys := format.NewKeys(testRoot)
	for _, tc := range []struct{ typ, index string }{{"Person", "data.adj.id"}, {"Knows", "data.adj.out"}} {
		p, ok := s.Table(tc.typ)
		if !ok {
			t.Fatalf("main pins no %s", tc.typ)
		}
		if p.Ref().Rides == versions {
			t.Fatalf("main's %s pin rides: %t, want %t", tc.typ, p.Ref().Rides, !versions)
		}
		key := keys.TableVersionRef(tc.typ, p.Ref())
		if !versions {
			key = firstIndexChunk(t, g, p, keys, tc.index)
		}
		c := st.Clone()
		if err := c.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		r, err := verifyGraph(ctx, c, testRoot, env, clock.Now(), crashPolicy.KeepLast)
		if err != nil {
			t.Fatal(err)
		}
		if !hasProblem(*r, key, ruleMissing) {
			t.Fatalf("%s deleted: problems %+v", key, r.Problems)
		}
	}
}

// firstIndexChunk returns the key of the first chunk the version pin
// pins lists under metadata key md (data.adj.out, data.adj.id, ...).
func firstIndexChunk(t *testing.T, g *kernel.Graph, p format.TablePin, keys format.Keys, md string) string {
	t.Helper()
	tv, err := g.ReadPinned(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range tv.Metadata {
		if kv.Key != md {
			continue
		}
		var chunks []adjRefJSON
		if err := json.Unmarshal([]byte(kv.Value), &chunks); err != nil || len(chunks) == 0 {
			t.Fatalf("%s %s: %d chunks, %v", p.Name, md, len(chunks), err)
		}
		return keys.Adjacency(p.Name, ulid.MustParseStrict(chunks[0].Name))
	}
	t.Fatalf("%s has no %s index", p.Name, md)
	return ""
}

// TestVerifyKeptTombstoneRidingGarbage: a deleted branch whose first
// commit main and dev both merged keeps, past its retention, that merge
// base and so its tombstone (docs/gc.md rule 2), whose pins are not roots:
// the collection deletes what only the tombstone's versions name. Verify
// counts that as garbage, not damage, whether the versions were objects
// (their objects are gone) or rode the tombstone (the index chunks they
// name are gone: the riding versions are not checked as retained ones);
// and an index chunk main's head needs, deleted, is still damage.
func TestVerifyKeptTombstoneRidingGarbage(t *testing.T) {
	for _, versions := range []bool{false, true} {
		t.Run(fmt.Sprintf("versions-as-objects=%t", versions), func(t *testing.T) {
			f := newFixture(t, "sim")
			f.versions = versions
			g := f.buildGraph()
			ctx := context.Background()
			k := g.Kernel()
			main, _ := k.Branch(ctx, "main")
			for _, b := range []string{"dev", "gone"} {
				if _, err := k.CreateBranch(ctx, b, main); err != nil {
					t.Fatal(err)
				}
			}
			unique := func(n string) { // more edges than an adjacency delta holds: the commit writes index objects
				f.commit(g, "gone", "unique "+n, func(tx *data.Txn) error {
					if err := tx.Insert("Person", person("u"+n, "Una")); err != nil {
						return err
					}
					for j := 0; j <= data.MaxAdjDeltaRows; j++ {
						if err := tx.Insert("Knows", edgeRow(fmt.Sprintf("ku%s-%02d", n, j), "u"+n, "p1")); err != nil {
							return err
						}
					}
					return nil
				})
			}
			unique("1")
			for _, into := range []string{"main", "dev"} {
				src, _ := k.Branch(ctx, "gone")
				tgt, _ := k.Branch(ctx, into)
				if _, err := g.Merge(ctx, src, tgt, kernel.LineageIntent{Actor: "test", Message: "merge gone"}, data.MergeOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			unique("2") // only the tombstone pins what this writes
			if err := k.DeleteBranch(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Hour)
			rep, err := collectOn(t, f.store, f.clock)
			if err != nil {
				t.Fatal(err)
			}
			if rep.MergeBases == 0 || rep.Adjacency.Deleted == 0 || (versions && rep.TableVersions.Deleted == 0) || (!versions && rep.RidingVersions == 0) {
				t.Fatalf("the fixture collects too little to test: %+v", rep)
			}
			env := kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{4})}
			r, err := verifyGraph(ctx, f.store, testRoot, env, f.clock.Now(), crashPolicy.KeepLast)
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(r.Notes, "\n")
			if len(r.Problems) != 0 || !strings.Contains(notes, "table version(s) pinned only by manifests outside retention") ||
				strings.Contains(notes, " 0 table version(s) pinned only") {
				t.Fatalf("problems %+v\nnotes %v", r.Problems, r.Notes)
			}
			// What main's head needs, deleted, is still damage (though the
			// tombstone was walked first and its versions may share it).
			main, _ = k.Branch(ctx, "main")
			snap, err := k.SnapshotAt(ctx, main)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := snap.Table("Knows")
			chunk := firstIndexChunk(t, k, p, format.NewKeys(testRoot), "data.adj.out")
			if err := f.store.Inner().Delete(ctx, chunk); err != nil {
				t.Fatal(err)
			}
			if r, err = verifyGraph(ctx, f.store, testRoot, env, f.clock.Now(), crashPolicy.KeepLast); err != nil || !hasProblem(*r, chunk, ruleMissing) {
				t.Fatalf("%s deleted: %v, problems %+v", chunk, err, r.Problems)
			}
		})
	}
}
