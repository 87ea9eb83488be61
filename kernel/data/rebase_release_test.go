package data

import (
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// lostOnceStore answers the next GET of a key containing match with
// objstore.ErrNotFound, once (what the GET of a fragment the garbage
// collector removed returns), then serves it again.
type lostOnceStore struct {
	objstore.Store
	match string
	kind  error // the error kind of the failed GET (nil: objstore.ErrNotFound)
	lost  []string
}

func (s *lostOnceStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.match != "" && strings.Contains(key, s.match) {
		s.match = ""
		s.lost = append(s.lost, key)
		kind := s.kind
		if kind == nil {
			kind = objstore.ErrNotFound
		}
		return objstore.Object{}, &objstore.Error{Op: objstore.OpGet, Key: key, Kind: kind}
	}
	return s.Store.Get(ctx, key)
}

// TestRebaseFailedRebuildIsRetried: a commit whose rebase releases its old
// build and then fails to rebuild (the tail fragment it merges with is
// reclaimed: kernel.ErrReclaimed, a refusal the kernel re-plans on the
// loaded head, calling Build again) must neither release the old build's
// records a second time nor build on them: the staged record the old build
// shared (gather's wholeRecord) dropped to zero references, so the second
// Build sorted or encoded a record whose columns were gone (simulator data
// seed 17 under embed-carry-drop: "encode fragment of WorksAt: 0 columns,
// want 3"; here srcID's index out of range). The commit succeeds on the
// second Build, and every row is there.
func TestRebaseFailedRebuildIsRetried(t *testing.T) {
	objectFragments(t)
	s := &lostOnceStore{Store: sim.New(sim.Config{Seed: 1})}
	a := initGraph(t, s, Limits{})
	commitTx(t, a, func(tx *Txn) error {
		return tx.Insert("Person", person("p1", "a"), person("p2", "b"), person("p3", "c"), person("p4", "d"))
	})
	// Another handle appends a one-row fragment: a's view is now stale, and
	// a's next one-row insert merges with that fragment (mergeCount 1), which
	// a has not cached, so its rebase GETs it.
	b := openGraph(t, s, 2)
	commitTx(t, b, func(tx *Txn) error { return tx.Insert("Person", person("p5", "e")) })

	tx := begin(t, a)
	must(t, tx.Insert("Person", person("p6", "f")))
	s.match = "/data/Person/"
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "p6"}); err != nil {
		t.Fatalf("commit after one reclaimed GET: %v", err)
	}
	if len(s.lost) != 1 {
		t.Fatalf("the store lost %d GETs (%v), want 1: the rebase did not read the merged fragment", len(s.lost), s.lost)
	}
	if got, want := scanIDs(t, snap(t, openGraph(t, s, 3)), "Person"), "p1,p2,p3,p4,p5,p6"; got != want {
		t.Fatalf("Person after the commit: %s, want %s", got, want)
	}
}

// TestGroupRebaseFailureKeepsMemberRecords: a group's one write shares its
// members' staged records (unionTxn retains them). When its rebase
// releases the old build and the rebuild then fails for good (a store
// fault: the write gives up, the group fails definitely), the write's
// cleanup must not release that build again: the extra release dropped a
// member's record to zero references, and the member, committing alone
// next, read a record whose columns were gone. Each member commits alone.
func TestGroupRebaseFailureKeepsMemberRecords(t *testing.T) {
	objectFragments(t)
	s := &lostOnceStore{Store: sim.New(sim.Config{Seed: 1})}
	s.kind = objstore.ErrRejected
	g := groupGraph(t, s, GroupOptions{})
	txns := []*Txn{beginWith(t, g, insertPerson("g0")), beginWith(t, g, func(tx *Txn) error { return tx.Insert("Company", company("c9")) })}
	// Another handle appends a one-row Person fragment the group's write
	// rebases onto and merges with (not cached by g).
	b := openGraph(t, s, 2)
	commitTx(t, b, func(tx *Txn) error { return tx.Insert("Person", person("p9", "e")) })
	s.match = "/data/Person/"
	out := runQueue(t, g, txns)
	for i, o := range out {
		if o.err != nil || o.info != (GroupInfo{Position: 0, Size: 1}) || o.c.ID == out[1-i].c.ID {
			t.Fatalf("member %d: info %+v err %v, want its own commit (the group failed)", i, o.info, o.err)
		}
	}
	if len(s.lost) != 1 {
		t.Fatalf("the store failed %d GETs (%v), want 1", len(s.lost), s.lost)
	}
	sn := snap(t, g)
	for _, r := range [][2]string{{"Person", "g0"}, {"Company", "c9"}, {"Person", "p9"}} {
		if _, ok, err := sn.Get(ctx, r[0], r[1]); err != nil || !ok {
			t.Fatalf("%s %s after the members committed alone: ok=%v err=%v", r[0], r[1], ok, err)
		}
	}
}
