package data

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// groupGraph is a seeded graph on store with group commit on.
func groupGraph(t testing.TB, store objstore.Store, o GroupOptions) *Graph {
	t.Helper()
	seedGraph(t, initGraph(t, store, Limits{}))
	o.Enabled = true
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(3)}, Group: o})
	must(t, err)
	return g
}

// groupOutcome is one member's result.
type groupOutcome struct {
	c    kernel.Commit
	info GroupInfo
	err  error
}

// runQueue commits txns through one branch queue deterministically,
// without goroutines: every commit is queued first (the first leads), then
// leaders run until every slot is decided, then each settles as its
// Commit would. Member i has actor "w<i>".
func runQueue(t *testing.T, g *Graph, txns []*Txn) []groupOutcome {
	t.Helper()
	gr := g.group
	slots := make([]*groupSlot, len(txns))
	for i, tx := range txns {
		slots[i] = &groupSlot{t: tx, intent: kernel.LineageIntent{Actor: fmt.Sprintf("w%d", i), Message: fmt.Sprintf("txn %d", i)},
			rows: tx.s.rows, bytes: tx.s.bytes}
		must(t, gr.enqueue(slots[i]))
	}
	for range 2 * len(slots) {
		var next *groupSlot
		for _, s := range slots {
			if s.lead && !s.done {
				next = s
				break
			}
		}
		if next == nil {
			break
		}
		gr.lead(ctx, next)
	}
	out := make([]groupOutcome, len(slots))
	for i, s := range slots {
		if !s.done {
			t.Fatalf("member %d never decided", i)
		}
		c, err := s.settle(ctx)
		out[i] = groupOutcome{c: c, info: s.t.grouped, err: err}
		s.t.Discard()
	}
	return out
}

func beginWith(t *testing.T, g *Graph, f func(tx *Txn) error) *Txn {
	t.Helper()
	tx := begin(t, g)
	must(t, f(tx))
	return tx
}

func insertPerson(id string) func(tx *Txn) error {
	return func(tx *Txn) error { return tx.Insert("Person", person(id, "n"+id)) }
}

func manifestVersion(t *testing.T, g *Graph) uint64 {
	t.Helper()
	c, err := g.Kernel().Head(ctx, mainRef(t, g))
	must(t, err)
	return c.ManifestVersion
}

// TestGroupCommitOnePublish pins the shape of a group: four independent
// transactions publish one manifest, one commit listing all four in queue
// order; each member gets that commit and its own position, and every row
// is visible.
func TestGroupCommitOnePublish(t *testing.T) {
	g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{})
	v0 := manifestVersion(t, g)
	var txns []*Txn
	for i := range 4 {
		txns = append(txns, beginWith(t, g, insertPerson(fmt.Sprintf("g%d", i))))
	}
	out := runQueue(t, g, txns)
	for i, o := range out {
		must(t, o.err)
		if o.c.ID != out[0].c.ID || o.info != (GroupInfo{Position: i, Size: 4}) {
			t.Fatalf("member %d: commit %s info %+v, want %s at %d of 4", i, o.c.ID, o.info, out[0].c.ID, i)
		}
	}
	if v := manifestVersion(t, g); v != v0+1 {
		t.Fatalf("manifest v%d after the group, want v%d (one publish)", v, v0+1)
	}
	page, err := g.Kernel().Log(ctx, mainRef(t, g), "", 1)
	must(t, err)
	head := page.Commits[0]
	if head.ID != out[0].c.ID || head.Actor != "group" {
		t.Fatalf("log head %s by %q, want the group commit %s by \"group\"", head.ID, head.Actor, out[0].c.ID)
	}
	for i := range 4 {
		if line := fmt.Sprintf("\n%d\tw%d\ttxn %d", i, i, i); !strings.Contains(head.Message, line) {
			t.Fatalf("group message %q does not list member %d", head.Message, i)
		}
	}
	s := snap(t, g)
	for i := range 4 {
		if _, ok, err := s.Get(ctx, "Person", fmt.Sprintf("g%d", i)); err != nil || !ok {
			t.Fatalf("member %d's row: ok=%v err=%v", i, ok, err)
		}
	}
}

// TestGroupMemberFailsAlone pins member isolation: a member whose own
// expectations fail (an id that exists; an Update of a table that moved
// since its Begin) gets its own typed error and writes nothing, while
// every other member of the same group publishes. Red if a member's
// failure fails the group (isolate replaced by failing every member) or
// is committed anyway.
func TestGroupMemberFailsAlone(t *testing.T) {
	cases := []struct {
		name string
		bad  func(t *testing.T, g *Graph) *Txn
		want func(error) bool
	}{
		{"id exists", func(t *testing.T, g *Graph) *Txn {
			return beginWith(t, g, func(tx *Txn) error { return tx.Insert("Person", person("p1", "dup")) })
		}, func(err error) bool { return errors.Is(err, ErrIDExists) }},
		{"dangling edge", func(t *testing.T, g *Graph) *Txn {
			return beginWith(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("kx", "p1", "nobody")) })
		}, func(err error) bool { return errors.Is(err, ErrDanglingEdge) }},
		{"stale update", func(t *testing.T, g *Graph) *Txn {
			tx := beginWith(t, g, func(tx *Txn) error { return tx.Update("Company", company("c1")) })
			commitTx(t, g, func(tx *Txn) error { return tx.Insert("Company", company("c9")) }) // Company moves after its Begin
			return tx
		}, func(err error) bool { var mm *kernel.VersionMismatchError; return errors.As(err, &mm) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{})
			bad := tc.bad(t, g)
			txns := []*Txn{beginWith(t, g, insertPerson("a")), bad, beginWith(t, g, insertPerson("b")), beginWith(t, g, insertPerson("c"))}
			v0 := manifestVersion(t, g)
			out := runQueue(t, g, txns)
			if !tc.want(out[1].err) {
				t.Fatalf("the failing member got %v", out[1].err)
			}
			for _, i := range []int{0, 2, 3} {
				if out[i].err != nil {
					t.Fatalf("member %d failed with the other member's failure: %v", i, out[i].err)
				}
				if out[i].c.ID != out[0].c.ID || out[i].info.Size != 3 {
					t.Fatalf("member %d: %s %+v, want one group of 3 with %s", i, out[i].c.ID, out[i].info, out[0].c.ID)
				}
			}
			if v := manifestVersion(t, g); v != v0+1 {
				t.Fatalf("manifest v%d, want v%d", v, v0+1)
			}
			s := snap(t, g)
			if _, ok, err := s.Get(ctx, "Knows", "kx"); err != nil || ok {
				t.Fatalf("the failed member's edge is visible (ok=%v err=%v)", ok, err)
			}
			if r, ok, err := s.Get(ctx, "Person", "p1"); err != nil || !ok || r.Props["name"] != "ann" {
				t.Fatalf("the failed member's row replaced p1: %+v ok=%v err=%v", r, ok, err)
			}
		})
	}
}

// TestGroupDependentMemberWaits pins that a member is checked against the
// state the members before it leave: one that depends on an earlier
// member (an edge to its new node; the same id) is not admitted with it,
// waits for the next group, and then fails exactly as it would committing
// after it; an independent later member joins the first group.
func TestGroupDependentMemberWaits(t *testing.T) {
	g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{})
	txns := []*Txn{
		beginWith(t, g, insertPerson("n1")),
		beginWith(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("kn", "p1", "n1")) }), // needs n1
		beginWith(t, g, insertPerson("n1")), // the same id: exists once member 0 committed
		beginWith(t, g, insertPerson("n2")),
	}
	out := runQueue(t, g, txns)
	must(t, out[0].err)
	must(t, out[3].err)
	// Alone after member 0, member 1's edge is checked at its Begin
	// snapshot, which has no n1 (today's rule), and member 2's n1 exists.
	if !errors.Is(out[1].err, ErrDanglingEdge) {
		t.Fatalf("edge to the earlier member's node: %v, want ErrDanglingEdge as when committed after it", out[1].err)
	}
	if !errors.Is(out[2].err, ErrIDExists) {
		t.Fatalf("second insert of n1: %v, want ErrIDExists", out[2].err)
	}
	if out[3].c.ID != out[0].c.ID || out[3].info != (GroupInfo{Position: 1, Size: 2}) {
		t.Fatalf("member 3: %s %+v, want in member 0's group (%s) at 1 of 2", out[3].c.ID, out[3].info, out[0].c.ID)
	}
	if len(danglingEdges(t, snap(t, g))) != 0 {
		t.Fatal("dangling edge")
	}
}

// ambiguousManifests makes every manifest PUT on main fail with a lost
// acknowledgement while armed (land says whether the write is applied).
type ambiguousManifests struct {
	objstore.Store
	prefix string
	mu     sync.Mutex
	armed  bool
	land   bool
	puts   int
	limit  int // armed for this many manifest PUTs (0: no limit)
}

func (s *ambiguousManifests) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	s.mu.Lock()
	armed := s.armed && strings.HasPrefix(key, s.prefix) && (s.limit == 0 || s.puts < s.limit)
	if armed {
		s.puts++
	}
	s.mu.Unlock()
	if !armed {
		return s.Store.Put(ctx, key, data, cond)
	}
	if s.land {
		if _, err := s.Store.Put(ctx, key, data, cond); err != nil {
			return "", err
		}
	}
	return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errors.New("ack lost"))
}

// TestGroupAmbiguityIsShared pins ambiguity: a group publish whose outcome
// cannot be read back is ambiguous for every member (each error matches
// objstore.ErrAmbiguous and none is retried alone, which could commit it
// twice), and one that read-back finds landed is a success for all.
func TestGroupAmbiguityIsShared(t *testing.T) {
	for _, land := range []bool{false, true} {
		t.Run(fmt.Sprintf("landed=%v", land), func(t *testing.T) {
			// Armed for exactly one publish's attempts (RetryBudget): a
			// member retried alone afterwards would land.
			const budget = 3
			store := &ambiguousManifests{Store: sim.New(sim.Config{Seed: 1}), prefix: format.NewKeys(testRoot).BranchPrefix("main"), land: land, limit: budget}
			seedGraph(t, initGraph(t, store, Limits{}))
			g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(3), RetryBudget: budget}, Group: GroupOptions{Enabled: true}})
			must(t, err)
			v0 := manifestVersion(t, g)
			txns := []*Txn{beginWith(t, g, insertPerson("a")), beginWith(t, g, insertPerson("b")), beginWith(t, g, insertPerson("c"))}
			store.mu.Lock()
			store.armed = true
			store.mu.Unlock()
			out := runQueue(t, g, txns)
			store.mu.Lock()
			store.armed = false
			store.mu.Unlock()
			for i, o := range out {
				if land {
					if o.err != nil || o.c.ID != out[0].c.ID {
						t.Fatalf("member %d: %v (commit %s), want the group's commit after read-back", i, o.err, o.c.ID)
					}
					continue
				}
				if !errors.Is(o.err, objstore.ErrAmbiguous) {
					t.Fatalf("member %d: %v, want an error matching objstore.ErrAmbiguous", i, o.err)
				}
			}
			want := v0
			if land {
				want = v0 + 1
			}
			if v := manifestVersion(t, g); v != want {
				t.Fatalf("manifest v%d, want v%d (no member retried alone)", v, want)
			}
		})
	}
}

// TestGroupQueueBounded pins back-pressure and the follower's bounded wait:
// a full queue refuses at once with ErrGroupQueueFull; a queued commit no
// leader takes gives up after MaxFollowerWait with ErrGroupWait (nothing
// written), and one a leader took but never reported on gives up with an
// error matching objstore.ErrAmbiguous.
func TestGroupQueueBounded(t *testing.T) {
	g := groupGraph(t, sim.New(sim.Config{Seed: 1}), GroupOptions{QueueLimit: 2, Poll: time.Second, MaxFollowerWait: time.Minute})
	gr := g.group
	slot := func(id string) *groupSlot {
		return &groupSlot{t: beginWith(t, g, insertPerson(id)), intent: kernel.LineageIntent{Actor: "t"}}
	}
	leader, follower := slot("a"), slot("b")
	must(t, gr.enqueue(leader))
	must(t, gr.enqueue(follower))
	if err := gr.enqueue(slot("c")); !errors.Is(err, ErrGroupQueueFull) {
		t.Fatalf("third commit on a queue of limit 2: %v, want ErrGroupQueueFull", err)
	}
	if !leader.lead || follower.lead {
		t.Fatal("the first commit must lead, the second follow")
	}
	// The leader never runs: the follower waits MaxFollowerWait, then leaves the queue.
	if err := gr.await(ctx, follower); !errors.Is(err, ErrGroupWait) || errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("untaken follower: %v, want ErrGroupWait (definite)", err)
	}
	if n := len(gr.queues[mainRef(t, g)].pending); n != 1 {
		t.Fatalf("%d queued after the follower left, want 1", n)
	}
	taken := slot("d")
	must(t, gr.enqueue(taken))
	members := gr.take(mainRef(t, g)) // a leader takes it and does not report in time
	if err := gr.await(ctx, taken); !errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("taken follower: %v, want an error matching objstore.ErrAmbiguous", err)
	}
	// The leader defers it after all: a member whose caller left is
	// dropped, never requeued (nobody would read its outcome).
	for _, m := range members {
		m.deferred = true
	}
	gr.finish(mainRef(t, g), members)
	for _, p := range gr.queues[mainRef(t, g)].pending {
		if p == taken {
			t.Fatal("a member whose caller left was requeued")
		}
	}
}

// TestGroupCommitConcurrent runs real concurrent Commits through one
// handle (the system clock; run it with -race): every commit succeeds,
// each row is visible, and no more manifests than commits were published
// (how many groups form depends on the scheduler; TestGroupCommitOnePublish
// pins the grouping itself), with and without RegroupWait.
func TestGroupCommitConcurrent(t *testing.T) {
	for _, regroup := range []time.Duration{0, 5 * time.Millisecond} {
		t.Run(fmt.Sprintf("regroup=%v", regroup), func(t *testing.T) { groupCommitConcurrent(t, regroup) })
	}
}

func groupCommitConcurrent(t *testing.T, regroup time.Duration) {
	store := sim.New(sim.Config{Seed: 1})
	seedGraph(t, initGraph(t, store, Limits{}))
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kernel.SystemEnv()}, Group: GroupOptions{Enabled: true, RegroupWait: regroup}})
	must(t, err)
	v0 := manifestVersion(t, g)
	const writers, each = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tx, err := g.Begin(ctx, mainRef(t, g))
				if err == nil {
					err = tx.Insert("Person", person(fmt.Sprintf("c%d-%d", w, i), "x"))
				}
				if err == nil {
					_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "w", Message: "m"})
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	s := snap(t, g)
	for w := range writers {
		for i := range each {
			if _, ok, err := s.Get(ctx, "Person", fmt.Sprintf("c%d-%d", w, i)); err != nil || !ok {
				t.Fatalf("row c%d-%d: ok=%v err=%v", w, i, ok, err)
			}
		}
	}
	if v := manifestVersion(t, g); v-v0 > writers*each {
		t.Fatalf("%d manifests for %d commits", v-v0, writers*each)
	}
}
