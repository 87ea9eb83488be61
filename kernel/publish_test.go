package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
	"github.com/oklog/ulid/v2"
)

// ackStore wraps a store and, for Puts whose key matches, either applies the
// write and loses the acknowledgement (lost ack) or drops it and reports an
// ambiguous failure (phantom), a bounded number of times. after runs between
// the effect and the error reply.
type ackStore struct {
	objstore.Store
	mu        sync.Mutex
	match     func(key string) bool
	remaining int
	apply     bool
	after     func()
	hits      int
}

func (s *ackStore) Put(ctx2 context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	s.mu.Lock()
	fire := s.remaining > 0 && s.match(key)
	if fire {
		s.remaining--
		s.hits++
	}
	after := s.after
	s.mu.Unlock()
	if !fire {
		return s.Store.Put(ctx2, key, data, cond)
	}
	if s.apply {
		if _, err := s.Store.Put(ctx2, key, data, cond); err != nil {
			return "", err
		}
	}
	if after != nil {
		after()
	}
	return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errors.New("acknowledgement lost"))
}

func isManifestKey(key string) bool { return strings.Contains(key, "/branches/") }

// countIn returns how often id appears in log.
func countIn(log []kernel.Commit, id kernel.CommitID) int {
	n := 0
	for _, c := range log {
		if c.ID == id {
			n++
		}
	}
	return n
}

// A publish whose manifest write landed but whose acknowledgement was lost
// is reported as success after reading back, and the commit is in the chain
// exactly once. Without the read-back the caller would see a failure for a
// commit that is on the branch (or the retry would stack the commit on
// itself and trip the successor invariant).
func TestLostAckPublishIsResolvedByReadBack(t *testing.T) {
	for _, racer := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "another writer lands first"}[racer], func(t *testing.T) {
			base := sim.New(sim.Config{Seed: 1})
			g0 := mustInit(t, base, 1)
			other := mustBranch(t, g0, "main")
			store := &ackStore{Store: base, match: isManifestKey, remaining: 1, apply: true}
			if racer {
				// Between our write landing and our retry, another writer
				// publishes on top of our commit, so the read-back must look
				// below the head.
				store.after = func() { commitTable(t, g0, other, "b", "racer") }
			}
			g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2)})
			if err != nil {
				t.Fatal(err)
			}
			main := mustBranch(t, g, "main")
			c, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "me", Message: "lost ack"}, nil)
			if err != nil {
				t.Fatalf("Publish after lost ack: %v (the commit is on the branch: read-back missing?)", err)
			}
			if store.hits != 1 {
				t.Fatalf("lost-ack fault fired %d times", store.hits)
			}
			log := fullLog(t, g, main)
			if countIn(log, c.ID) != 1 {
				t.Fatalf("commit %s appears %d times in %d commits", c.ID, countIn(log, c.ID), len(log))
			}
			if want := 2 + btoi(racer); len(log) != want || c.ManifestVersion != 1 {
				t.Fatalf("log has %d commits (want %d); our commit at version %d", len(log), want, c.ManifestVersion)
			}
			assertLinear(t, log)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// With every acknowledgement lost (sim fault rate 1), Init, table commits,
// publishes and branch creation all still succeed exactly once.
func TestEveryAckLost(t *testing.T) {
	store := sim.New(sim.Config{Seed: 7, Faults: sim.Faults{LostAckRate: 1}})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	var ids []kernel.CommitID
	for i := range 5 {
		ids = append(ids, commitTable(t, g, main, "a", string(rune('p'+i))).ID)
	}
	if _, err := g.CreateBranch(ctx, "f", main); err != nil {
		t.Fatal(err)
	}
	log := fullLog(t, g, main)
	if len(log) != 6 {
		t.Fatalf("log length %d, want 6", len(log))
	}
	for _, id := range ids {
		if countIn(log, id) != 1 {
			t.Fatalf("commit %s appears %d times", id, countIn(log, id))
		}
	}
	if store.Counters().Faults.LostAck == 0 {
		t.Fatal("no acks were lost")
	}
}

// Exhausting the budget against permanent conflicts returns a retryable
// *ContentionError and publishes nothing.
func TestContentionErrorOnExhaustedBudget(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	mustInit(t, store, 1)
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2), RetryBudget: 5})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	store.SetFaults(sim.Faults{ConflictRate: 1})
	before := len(store.Keys(format.NewKeys(root).BranchPrefix("main")))
	_, err = g.Publish(ctx, main, nil, kernel.LineageIntent{}, nil)
	var ce *kernel.ContentionError
	if !errors.As(err, &ce) || !errors.Is(err, kernel.ErrContention) || !ce.Retryable() || ce.Attempts != 5 || ce.Ambiguous {
		t.Fatalf("got %v, want a non-ambiguous *ContentionError after 5 attempts", err)
	}
	if !errors.Is(err, objstore.ErrConflict) {
		t.Fatalf("last cause not kept: %v", err)
	}
	if got := len(store.Keys(format.NewKeys(root).BranchPrefix("main"))); got != before {
		t.Fatalf("manifests %d -> %d", before, got)
	}
}

// When every write is reported ambiguous but never lands, the budget runs
// out and the error says the outcome is unknown (never a guess).
func TestAmbiguousExhaustionIsReportedAsAmbiguous(t *testing.T) {
	base := sim.New(sim.Config{Seed: 1})
	mustInit(t, base, 1)
	store := &ackStore{Store: base, match: isManifestKey, remaining: 1 << 30, apply: false}
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2), RetryBudget: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Publish(ctx, mustBranch(t, g, "main"), nil, kernel.LineageIntent{}, nil)
	var ce *kernel.ContentionError
	if !errors.As(err, &ce) || !ce.Ambiguous || !errors.Is(err, objstore.ErrAmbiguous) || ce.CommitID == (kernel.CommitID{}) {
		t.Fatalf("got %v, want an ambiguous *ContentionError", err)
	}
	if _, err := g.Commit(ctx, ce.CommitID); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("phantom commit found: %v", err)
	}
}

// Expectations are checked against the loaded head: a stale one fails with
// *VersionMismatchError naming the table and both versions.
func TestPublishExpectationMismatch(t *testing.T) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g := mustInit(t, store, 1)
		main := mustBranch(t, g, "main")
		commitTable(t, g, main, "a", "f1")
		_, err := g.Publish(ctx, main, nil, kernel.LineageIntent{}, []kernel.Expectation{{Table: "a", Version: 0}})
		var mm *kernel.VersionMismatchError
		if !errors.As(err, &mm) || !errors.Is(err, kernel.ErrVersionMismatch) || mm.Table != "a" || mm.Expected != 0 || mm.Actual != 1 || !mm.Retryable() {
			t.Fatalf("got %v", err)
		}
		if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{}, []kernel.Expectation{{Table: "a", Version: 1}, {Table: "zz", Version: 0}}); err != nil {
			t.Fatalf("holding expectations: %v", err)
		}
	})
}

// A pin never goes backwards: publishing a version at or below the pinned
// one is a mismatch.
func TestPublishRefusesBackwardsPin(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "f1")
	commitTable(t, g, main, "a", "f2")
	_, err := g.Publish(ctx, main, []kernel.TableUpdate{{Table: "a", Fork: main.IncarnationID(), Version: 1}}, kernel.LineageIntent{}, nil)
	var mm *kernel.VersionMismatchError
	if !errors.As(err, &mm) || mm.Actual != 2 {
		t.Fatalf("got %v", err)
	}
}

func TestPublishInvalidArguments(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	head, _ := g.Head(ctx, main)
	fork := main.IncarnationID()
	unknown := kernel.CommitID{1, 2, 3}
	for _, tc := range []struct {
		name    string
		updates []kernel.TableUpdate
		intent  kernel.LineageIntent
		want    error
	}{
		{"duplicate table", []kernel.TableUpdate{{Table: "a", Fork: fork, Version: 1}, {Table: "a", Fork: fork, Version: 2}}, kernel.LineageIntent{}, kernel.ErrInvalidArgument},
		{"bad table name", []kernel.TableUpdate{{Table: "a/b", Fork: fork, Version: 1}}, kernel.LineageIntent{}, kernel.ErrInvalidArgument},
		{"zero version", []kernel.TableUpdate{{Table: "a", Fork: fork}}, kernel.LineageIntent{}, kernel.ErrInvalidArgument},
		{"bad actor", nil, kernel.LineageIntent{Actor: "\xff"}, kernel.ErrInvalidArgument},
		{"huge message", nil, kernel.LineageIntent{Message: strings.Repeat("m", format.MaxMessageBytes+1)}, kernel.ErrInvalidArgument},
		{"self merge", nil, kernel.LineageIntent{MergedParent: &head.ID}, kernel.ErrInvalidArgument},
		{"unknown merged parent", nil, kernel.LineageIntent{MergedParent: &unknown}, kernel.ErrNotFound},
	} {
		if _, err := g.Publish(ctx, main, tc.updates, tc.intent, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if log := fullLog(t, g, main); len(log) != 1 {
		t.Fatalf("invalid publishes added commits: %d", len(log))
	}
}

// Two handles given the same deterministic Env (a manual clock and the
// same seeded entropy) mint the same commit ids: the second handle's
// publish mints the id of the head the first one wrote. That is a caller
// bug (each handle needs its own entropy), and the kernel refuses it with
// ErrInvalidArgument instead of panicking on a commit that parents itself.
func TestPublishRefusesAReplayedCommitID(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	mustInit(t, store, 1)
	var heads []kernel.CommitID
	for round := range 2 {
		g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(7)})
		if err != nil {
			t.Fatal(err)
		}
		main := mustBranch(t, g, "main")
		c, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "replay"}, nil)
		if round == 0 {
			if err != nil {
				t.Fatal(err)
			}
			heads = append(heads, c.ID)
			continue
		}
		if !errors.Is(err, kernel.ErrInvalidArgument) {
			t.Fatalf("replayed env: publish = %v, %v; want ErrInvalidArgument", c.ID, err)
		}
		if head, _ := g.Head(ctx, main); head.ID != heads[0] {
			t.Fatalf("head %v after the refused publish, want %v", head.ID, heads[0])
		}
	}
}

// Commit ids and times come from the injected clock and entropy.
func TestCommitIdentityFromEnv(t *testing.T) {
	env := testEnv(9)
	clock := env.Clock.(*kernel.ManualClock)
	g, err := kernel.Init(ctx, sim.New(sim.Config{Seed: 1}), root, schema, kernel.Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * 60 * 1e9)
	now := clock.Now()
	c, err := g.Publish(ctx, mustBranch(t, g, "main"), nil, kernel.LineageIntent{Actor: "a", Message: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Time.Equal(now) || ulid.Time(c.ID.Time()).UnixMilli() != now.UnixMilli() || c.Actor != "a" || c.Message != "m" || c.Kind != format.KindCommit {
		t.Fatalf("commit %+v at %v", c, now)
	}
}

// The PublishBeforeWrite failpoint stops a publish before its write.
func TestPublishFailpoint(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	mustInit(t, store, 1)
	fps := failpoint.NewSet()
	env := testEnv(2)
	env.Failpoints = fps
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	fps.Arm(failpoint.PublishBeforeWrite, failpoint.Action{Kind: failpoint.ReturnError, Times: 1})
	main := mustBranch(t, g, "main")
	before := store.Counters().Writes()
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{}, nil); !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("got %v", err)
	}
	// Nothing is written before the failpoint: the commit's index follows
	// the manifest (issue #32).
	if store.Counters().Writes() != before || fps.Hits(failpoint.PublishBeforeWrite) != 1 {
		t.Fatal("failpoint did not stop the write")
	}
	if h, err := g.Head(ctx, main); err != nil || h.ManifestVersion != 0 {
		t.Fatalf("head after the failpoint: %+v, %v; want the genesis", h, err)
	}
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{}, nil); err != nil {
		t.Fatalf("after the failpoint: %v", err)
	}
}

// assertLinear checks that a newest-first log is one linear chain: each
// commit's first parent is the next entry, only the last is a root, and no
// id repeats.
func assertLinear(t testing.TB, log []kernel.Commit) {
	t.Helper()
	seen := map[kernel.CommitID]bool{}
	for i, c := range log {
		if seen[c.ID] {
			t.Fatalf("commit %s appears twice", c.ID)
		}
		seen[c.ID] = true
		if i == len(log)-1 {
			if len(c.Parents) != 0 {
				t.Fatalf("oldest commit %s has parents", c.ID)
			}
			continue
		}
		if len(c.Parents) == 0 || c.Parents[0] != log[i+1].ID {
			t.Fatalf("commit %d (%s) first parent %v is not the next commit %s", i, c.ID, c.Parents, log[i+1].ID)
		}
	}
}
