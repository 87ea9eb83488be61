package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// op builds one operation of client c over [call, ret].
func op(c int, call, ret int64, in, out interface{}) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret}
}

func commit(key, id string) ChainInput { return ChainInput{Key: key, Kind: ChainCommit, ID: id} }
func readChain(key string) ChainInput  { return ChainInput{Key: key, Kind: ChainRead} }
func outcome(o Outcome) ChainOutput    { return ChainOutput{Outcome: o} }
func chain(ids ...string) ChainOutput  { return ChainOutput{Chain: ids} }

// TestChainModel pins what the commit-chain model accepts: every history here
// is tiny and hand-written, and the illegal ones are the anomalies the
// simulator exists to catch.
func TestChainModel(t *testing.T) {
	const b = "main#1"
	cases := []struct {
		name    string
		history []porcupine.Operation
		legal   bool
	}{
		{"sequential commits then read", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(0, 2, 3, commit(b, "B"), outcome(OK)),
			op(1, 4, 5, readChain(b), chain("A", "B")),
		}, true},
		{"sequential commits read reordered", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(0, 2, 3, commit(b, "B"), outcome(OK)),
			op(1, 4, 5, readChain(b), chain("B", "A")),
		}, false},
		{"concurrent commits either order", []porcupine.Operation{
			op(0, 0, 10, commit(b, "A"), outcome(OK)),
			op(1, 1, 9, commit(b, "B"), outcome(OK)),
			op(2, 11, 12, readChain(b), chain("B", "A")),
		}, true},
		{"acknowledged commit missing", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(1, 2, 3, readChain(b), chain()),
		}, false},
		{"acknowledged commit duplicated", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(1, 2, 3, readChain(b), chain("A", "A")),
		}, false},
		{"failed commit visible", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(Failed)),
			op(1, 2, 3, readChain(b), chain("A")),
		}, false},
		{"ambiguous commit visible", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(Ambiguous)),
			op(1, 2, 3, readChain(b), chain("A")),
		}, true},
		{"ambiguous commit invisible", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(Ambiguous)),
			op(1, 2, 3, readChain(b), chain()),
		}, true},
		{"ambiguous commit may land after it returned", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(Ambiguous)),
			op(1, 2, 3, readChain(b), chain()),
			op(1, 4, 5, readChain(b), chain("A")),
		}, true},
		{"ambiguous commit landed then vanished", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(Ambiguous)),
			op(1, 2, 3, readChain(b), chain("A")),
			op(1, 4, 5, readChain(b), chain()),
		}, false},
		{"pending commit may land late", []porcupine.Operation{
			op(0, 0, 100, commit(b, "A"), outcome(Ambiguous)),
			op(1, 2, 3, readChain(b), chain()),
			op(1, 4, 5, readChain(b), chain("A")),
		}, true},
		{"read goes back in time", []porcupine.Operation{
			op(0, 0, 10, commit(b, "A"), outcome(OK)),
			op(1, 1, 2, readChain(b), chain("A")),
			op(1, 3, 4, readChain(b), chain()),
		}, false},
		{"commits read against real time", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(1, 2, 3, commit(b, "B"), outcome(Ambiguous)),
			op(2, 4, 5, readChain(b), chain("B", "A")),
		}, false},
		{"late ambiguous commit goes after what was read", []porcupine.Operation{
			op(0, 0, 3, commit(b, "A"), outcome(Ambiguous)),
			op(1, 0, 1, commit(b, "B"), outcome(OK)),
			op(2, 4, 5, readChain(b), chain("B")),
			op(2, 6, 7, readChain(b), chain("A", "B")),
		}, false},
		{"ambiguous commit cannot precede one that returned before it was called", []porcupine.Operation{
			op(1, 0, 1, commit(b, "B"), outcome(OK)),
			op(0, 2, 3, commit(b, "A"), outcome(Ambiguous)),
			op(2, 4, 5, readChain(b), chain("A", "B")),
		}, false},
		{"partitions are independent", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(1, 2, 3, commit("dev#1", "B"), outcome(OK)),
			op(2, 4, 5, readChain("dev#1"), chain("B")),
			op(2, 6, 7, readChain(b), chain("A")),
		}, true},
		{"commit leaks into another partition", []porcupine.Operation{
			op(0, 0, 1, commit(b, "A"), outcome(OK)),
			op(2, 4, 5, readChain("dev#1"), chain("A")),
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := withIntervals(tc.history)
			if got := porcupine.CheckOperations(Chain(), h); got != tc.legal {
				t.Fatalf("deferred model: linearizable = %v, want %v", got, tc.legal)
			}
			if got := porcupine.CheckOperations(ChainReference(), LateAmbiguous(h)); got != tc.legal {
				t.Fatalf("reference model: linearizable = %v, want %v", got, tc.legal)
			}
		})
	}
}

// withIntervals copies each chain operation's interval into its input, as
// the simulator's history does.
func withIntervals(h []porcupine.Operation) []porcupine.Operation {
	out := append([]porcupine.Operation(nil), h...)
	for i, op := range out {
		if in, ok := op.Input.(ChainInput); ok {
			in.Call, in.Return = op.Call, op.Return
			out[i].Input = in
		}
	}
	return out
}

func write(key, v string) ValueInput { return ValueInput{Key: key, Kind: ValueWrite, Value: v} }
func cas(key, expect, v string) ValueInput {
	return ValueInput{Key: key, Kind: ValueWrite, Value: v, Strict: true, Expect: expect}
}
func readValue(key string) ValueInput { return ValueInput{Key: key, Kind: ValueRead} }
func wrote(o Outcome) ValueOutput     { return ValueOutput{Outcome: o} }
func saw(v string) ValueOutput        { return ValueOutput{Value: v} }

// TestValueModel pins what the table-value model accepts, including the
// lost update a broken strict write would cause.
func TestValueModel(t *testing.T) {
	const k = "main#1/t1"
	cases := []struct {
		name    string
		history []porcupine.Operation
		legal   bool
	}{
		{"write then read", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(OK)),
			op(1, 2, 3, readValue(k), saw("x")),
		}, true},
		{"stale read after acknowledged write", []porcupine.Operation{
			op(0, 0, 1, readValue(k), saw(Absent)),
			op(0, 2, 3, write(k, "x"), wrote(OK)),
			op(1, 4, 5, readValue(k), saw(Absent)),
		}, false},
		{"unknown start fixed by first read", []porcupine.Operation{
			op(0, 0, 1, readValue(k), saw("inherited")),
			op(1, 2, 3, readValue(k), saw("inherited")),
		}, true},
		{"unknown start then disagreeing read", []porcupine.Operation{
			op(0, 0, 1, readValue(k), saw("inherited")),
			op(1, 2, 3, readValue(k), saw("other")),
		}, false},
		{"strict write on current base", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(OK)),
			op(0, 2, 3, cas(k, "x", "y"), wrote(OK)),
			op(1, 4, 5, readValue(k), saw("y")),
		}, true},
		{"lost update: strict write on stale base succeeded", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(OK)),
			op(1, 2, 3, write(k, "z"), wrote(OK)),
			op(0, 4, 5, cas(k, "x", "y"), wrote(OK)),
		}, false},
		{"strict write on stale base failed", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(OK)),
			op(1, 2, 3, write(k, "z"), wrote(OK)),
			op(0, 4, 5, cas(k, "x", "y"), wrote(Failed)),
			op(1, 6, 7, readValue(k), saw("z")),
		}, true},
		{"failed write visible", []porcupine.Operation{
			op(1, 0, 1, readValue(k), saw(Absent)),
			op(0, 0, 1, write(k, "x"), wrote(Failed)),
			op(1, 2, 3, readValue(k), saw("x")),
		}, false},
		{"unknown start: failed write value may be the inherited one", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(Failed)),
			op(1, 2, 3, readValue(k), saw("x")),
		}, true},
		{"ambiguous write visible or not", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(Ambiguous)),
			op(1, 2, 3, readValue(k), saw("x")),
			op(2, 4, 5, write(k, "y"), wrote(OK)),
			op(1, 6, 7, readValue(k), saw("y")),
		}, true},
		{"ambiguous write may land after it returned", []porcupine.Operation{
			op(1, 0, 1, readValue(k), saw(Absent)),
			op(0, 2, 3, write(k, "x"), wrote(Ambiguous)),
			op(1, 4, 5, readValue(k), saw(Absent)),
			op(1, 6, 7, readValue(k), saw("x")),
		}, true},
		{"late write cannot come back after being overwritten and read", []porcupine.Operation{
			op(3, 0, 0, readValue(k), saw(Absent)),
			op(0, 0, 1, write(k, "x"), wrote(Ambiguous)),
			op(1, 2, 3, readValue(k), saw("x")),
			op(2, 4, 5, write(k, "y"), wrote(OK)),
			op(1, 6, 7, readValue(k), saw("x")),
		}, false},
		{"chain of late strict writes", []porcupine.Operation{
			op(1, 0, 1, readValue(k), saw("a")),
			op(0, 2, 3, cas(k, "a", "b"), wrote(Ambiguous)),
			op(0, 4, 5, cas(k, "b", "c"), wrote(Ambiguous)),
			op(1, 6, 7, readValue(k), saw("c")),
		}, true},
		{"late strict write on a base that never came", []porcupine.Operation{
			op(1, 0, 1, readValue(k), saw("a")),
			op(0, 2, 3, cas(k, "a", "b"), wrote(Failed)),
			op(0, 4, 5, cas(k, "b", "c"), wrote(Ambiguous)),
			op(1, 6, 7, readValue(k), saw("c")),
		}, false},
		{"ambiguous stale strict write cannot apply", []porcupine.Operation{
			op(0, 0, 1, write(k, "x"), wrote(OK)),
			op(1, 2, 3, write(k, "z"), wrote(OK)),
			op(0, 4, 5, cas(k, "x", "y"), wrote(Ambiguous)),
			op(1, 6, 7, readValue(k), saw("y")),
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(Value(), tc.history); got != tc.legal {
				t.Fatalf("floating model: linearizable = %v, want %v", got, tc.legal)
			}
			if got := porcupine.CheckOperations(ValueReference(), LateAmbiguous(tc.history)); got != tc.legal {
				t.Fatalf("reference model: linearizable = %v, want %v", got, tc.legal)
			}
		})
	}
}

// TestPartitionOrderIsSorted pins that partitions come out in key order,
// whatever the history order, so reports never depend on map iteration.
func TestPartitionOrderIsSorted(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 1, readChain("c"), chain()),
		op(0, 2, 3, readChain("a"), chain()),
		op(0, 4, 5, readChain("b"), chain()),
		op(0, 6, 7, readChain("a"), chain()),
	}
	parts := partitionByKey(h)
	var keys []string
	for _, p := range parts {
		keys = append(keys, p[0].Input.(ChainInput).Key)
	}
	if len(keys) != 3 || keys[0] != "a" || keys[1] != "b" || keys[2] != "c" || len(parts[0]) != 2 {
		t.Fatalf("partitions %v, want [a b c] with 2 ops in a", keys)
	}
	evs := []porcupine.Event{
		{Kind: porcupine.CallEvent, Value: readChain("b"), Id: 0},
		{Kind: porcupine.CallEvent, Value: readChain("a"), Id: 1},
		{Kind: porcupine.ReturnEvent, Value: chain(), Id: 1},
		{Kind: porcupine.ReturnEvent, Value: chain(), Id: 0},
	}
	ep := partitionEventsByKey(evs)
	if len(ep) != 2 || len(ep[0]) != 2 || ep[0][0].Id != 1 {
		t.Fatalf("event partitions %+v", ep)
	}
}
