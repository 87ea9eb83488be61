package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
)

// mergeOp is the op vocabulary of the truth table. Every op needs a case in
// do and model and a full row and column in truthTable; the test fails for
// an op without them.
type mergeOp int

const (
	opNoop     mergeOp = iota
	opAddNode          // insert Person eve, named per side
	opRmNode           // delete Person alice (no edges)
	opAddEdge          // insert Knows k2<side>: alice -> carol
	opRmEdge           // delete Knows k1
	opSetA             // alice.age = 31 (source) / 32 (target)
	opSetB             // alice.city = "Oslo" (source) / "Rome" (target)
	opSetASame         // alice.age = 40 on either side
	opNetZero          // insert Knows k3 dan -> bob, commit, delete it, commit
	opMoveEdge         // k1.to = dan (source) / alice (target)
	numMergeOps
)

var mergeOpNames = [numMergeOps]string{"noop", "addNode", "rmNode", "addEdge", "rmEdge", "setA", "setB", "setASame", "netZero", "moveEdge"}

func (o mergeOp) String() string { return mergeOpNames[o] }

// side-specific values.
func sideOf(source bool, s, t any) any {
	if source {
		return s
	}
	return t
}

// do applies op on branch b of f through transactions.
func (op mergeOp) do(t *testing.T, f *mergeFixture, b kernel.BranchRef, source bool) {
	t.Helper()
	alice := func(f2 func(Row) Row) {
		f.commit(b, func(tx *Txn) error {
			r, _, err := tx.Get(ctx, "Person", "alice")
			if err != nil {
				return err
			}
			return tx.Update("Person", f2(r))
		})
	}
	switch op {
	case opNoop:
	case opAddNode:
		f.commit(b, func(tx *Txn) error {
			return tx.Insert("Person", Row{ID: "eve", Props: map[string]any{"name": sideOf(source, "Eve S", "Eve T")}})
		})
	case opRmNode:
		f.commit(b, func(tx *Txn) error { return tx.Delete("Person", "alice") })
	case opAddEdge:
		f.commit(b, func(tx *Txn) error {
			return tx.Insert("Knows", Row{ID: sideOf(source, "k2s", "k2t").(string), From: "alice", To: "carol"})
		})
	case opRmEdge:
		f.commit(b, func(tx *Txn) error { return tx.Delete("Knows", "k1") })
	case opSetA:
		alice(func(r Row) Row { r.Props["age"] = sideOf(source, int64(31), int64(32)); return r })
	case opSetB:
		alice(func(r Row) Row { r.Props["city"] = sideOf(source, "Oslo", "Rome"); return r })
	case opSetASame:
		alice(func(r Row) Row { r.Props["age"] = int64(40); return r })
	case opNetZero:
		f.commit(b, func(tx *Txn) error { return tx.Insert("Knows", Row{ID: "k3", From: "dan", To: "bob"}) })
		f.commit(b, func(tx *Txn) error { return tx.Delete("Knows", "k3") })
	case opMoveEdge:
		f.commit(b, func(tx *Txn) error {
			return tx.Update("Knows", Row{ID: "k1", From: "bob", To: sideOf(source, "dan", "alice").(string)})
		})
	default:
		t.Fatalf("op %v has no do case", op)
	}
}

// model applies op's effect to a state (the expected result).
func (op mergeOp) model(t *testing.T, s map[string]map[string]Row, source bool) {
	t.Helper()
	switch op {
	case opNoop, opNetZero:
	case opAddNode:
		s["Person"]["eve"] = Row{ID: "eve", Props: map[string]any{"name": sideOf(source, "Eve S", "Eve T")}}
	case opRmNode:
		delete(s["Person"], "alice")
	case opAddEdge:
		id := sideOf(source, "k2s", "k2t").(string)
		s["Knows"][id] = Row{ID: id, From: "alice", To: "carol", Props: map[string]any{}}
	case opRmEdge:
		delete(s["Knows"], "k1")
	case opSetA:
		s["Person"]["alice"].Props["age"] = sideOf(source, int64(31), int64(32))
	case opSetB:
		s["Person"]["alice"].Props["city"] = sideOf(source, "Oslo", "Rome")
	case opSetASame:
		s["Person"]["alice"].Props["age"] = int64(40)
	case opMoveEdge:
		k := s["Knows"]["k1"]
		k.To = sideOf(source, "dan", "alice").(string)
		s["Knows"]["k1"] = k
	default:
		t.Fatalf("op %v has no model case", op)
	}
}

// cell is one expected result: the outcome and the conflicts.
type cell struct {
	out merge.Outcome
	cs  []conflictKey
}

var (
	utd = cell{out: merge.AlreadyUpToDate}
	ff  = cell{out: merge.FastForward}
	mg  = cell{out: merge.Merged}
)

func conflicted(cs ...conflictKey) cell { return cell{out: merge.Merged, cs: cs} }

var (
	diEve     = conflictKey{merge.DivergentInsert, "Person", "eve", ""}
	dvuAlice  = conflictKey{merge.DeleteVsUpdate, "Person", "alice", ""}
	duAge     = conflictKey{merge.DivergentUpdate, "Person", "alice", "age"}
	duCity    = conflictKey{merge.DivergentUpdate, "Person", "alice", "city"}
	dvuK1     = conflictKey{merge.DeleteVsUpdate, "Knows", "k1", ""}
	duK1To    = conflictKey{merge.DivergentUpdate, "Knows", "k1", "to"}
	oeK2sFrom = conflictKey{merge.OrphanEdge, "Knows", "k2s", "from"}
	oeK2tFrom = conflictKey{merge.OrphanEdge, "Knows", "k2t", "from"}
	oeK1To    = conflictKey{merge.OrphanEdge, "Knows", "k1", "to"}
)

// truthTable[source][target]. Rows are the source's op, columns the
// target's, in mergeOp order:
// noop, addNode, rmNode, addEdge, rmEdge, setA, setB, setASame, netZero, moveEdge.
var truthTable = [numMergeOps][numMergeOps]cell{
	opNoop:     {utd, utd, utd, utd, utd, utd, utd, utd, utd, utd},
	opAddNode:  {ff, conflicted(diEve), mg, mg, mg, mg, mg, mg, mg, mg},
	opRmNode:   {ff, mg, mg, conflicted(oeK2tFrom), mg, conflicted(dvuAlice), conflicted(dvuAlice), conflicted(dvuAlice), mg, conflicted(oeK1To)},
	opAddEdge:  {ff, mg, conflicted(oeK2sFrom), mg, mg, mg, mg, mg, mg, mg},
	opRmEdge:   {ff, mg, mg, mg, mg, mg, mg, mg, mg, conflicted(dvuK1)},
	opSetA:     {ff, mg, conflicted(dvuAlice), mg, mg, conflicted(duAge), mg, conflicted(duAge), mg, mg},
	opSetB:     {ff, mg, conflicted(dvuAlice), mg, mg, mg, conflicted(duCity), mg, mg, mg},
	opSetASame: {ff, mg, conflicted(dvuAlice), mg, mg, conflicted(duAge), mg, mg, mg, mg},
	opNetZero:  {ff, mg, mg, mg, mg, mg, mg, mg, mg, mg},
	opMoveEdge: {ff, mg, mg, mg, conflicted(dvuK1), mg, mg, mg, mg, conflicted(duK1To)},
}

// TestMergeTruthTable runs every source x target cell from one fixture:
// the outcome, the exact conflict list, and the target's state after the
// merge (the model of both ops when merged, the target's own state on
// conflict, and the target untouched when up to date). A new op without
// its row, column, do or model case fails here.
func TestMergeTruthTable(t *testing.T) {
	for s := mergeOp(0); s < numMergeOps; s++ {
		for tg := mergeOp(0); tg < numMergeOps; tg++ {
			want := truthTable[s][tg]
			t.Run(s.String()+"/"+tg.String(), func(t *testing.T) {
				if want.out == 0 {
					t.Fatalf("truth table cell %v x %v is not filled in", s, tg)
				}
				runCell(t, s, tg, want)
			})
		}
	}
}

func runCell(t *testing.T, s, tg mergeOp, want cell) {
	f := newMergeFixture(t)
	fixture := f.state(f.main)
	src := f.branch("feature", f.main)
	s.do(t, f, src, true)
	tg.do(t, f, f.main, false)
	before := f.state(f.main)
	beforeHead, _ := f.g.Kernel().Head(ctx, f.main)
	srcHead, _ := f.g.Kernel().Head(ctx, src)

	res, err := f.merge(src, f.main, MergeOptions{})
	got := conflictKeys(t, err)
	if res.Outcome != want.out || !sameConflicts(got, want.cs) {
		t.Fatalf("outcome %v conflicts %v, want %v %v", res.Outcome, got, want.out, want.cs)
	}
	head, _ := f.g.Kernel().Head(ctx, f.main)
	expect := before
	switch {
	case len(want.cs) > 0 || want.out == merge.AlreadyUpToDate:
		if head.ID != beforeHead.ID {
			t.Fatalf("a merge that %v moved the target head", want.out)
		}
	default:
		expect = cloneState(fixture)
		s.model(t, expect, true)
		tg.model(t, expect, false)
		if len(head.Parents) != 2 || head.Parents[0] != beforeHead.ID || head.Parents[1] != srcHead.ID || head.ID != res.Commit.ID {
			t.Fatalf("merge commit %+v, want parents %s, %s", head, beforeHead.ID, srcHead.ID)
		}
	}
	if d := sameState(f.state(f.main), expect); d != "" {
		t.Fatalf("target after merge: %s", d)
	}
}
