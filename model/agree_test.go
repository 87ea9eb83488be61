package model

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestChainModelsAgree checks the optimized deferred chain model against the
// plain nondeterministic reference (with ambiguous operations returning at
// the end: LateAmbiguous) on random small histories: concurrent commits with
// every outcome, and reads that return random (often wrong) chains. Any
// disagreement is a bug in Chain.
func TestChainModelsAgree(t *testing.T) {
	legal := 0
	for round := 0; round < 10; round++ { // 10 x rapid's default 100 histories
		rapid.Check(t, agreeOnce(&legal))
	}
	if legal == 0 {
		t.Fatal("no legal history generated: the agreement test is vacuous")
	}
	t.Logf("%d legal histories", legal)
}

func agreeOnce(legal *int) func(*rapid.T) {
	return func(t *rapid.T) {
		nCommits := rapid.IntRange(1, 5).Draw(t, "commits")
		nReads := rapid.IntRange(1, 4).Draw(t, "reads")
		var h []porcupine.Operation
		ids := make([]string, nCommits)
		for i := range ids {
			ids[i] = fmt.Sprintf("c%d", i)
			call := int64(rapid.IntRange(0, 20).Draw(t, "call"))
			ret := call + int64(rapid.IntRange(0, 10).Draw(t, "len"))
			o := Outcome(rapid.IntRange(1, 3).Draw(t, "outcome"))
			h = append(h, op(i, call, ret, ChainInput{Key: "k", Kind: ChainCommit, ID: ids[i], Call: call, Return: ret}, outcome(o)))
		}
		for i := 0; i < nReads; i++ {
			call := int64(rapid.IntRange(0, 30).Draw(t, "rcall"))
			ret := call + int64(rapid.IntRange(0, 5).Draw(t, "rlen"))
			perm := rapid.Permutation(ids).Draw(t, "perm")
			n := rapid.IntRange(0, len(perm)).Draw(t, "n")
			got := append([]string(nil), perm[:n]...)
			if n > 0 && rapid.IntRange(0, 9).Draw(t, "dup") == 0 {
				got = append(got, got[0])
			}
			h = append(h, op(nCommits+i, call, ret, ChainInput{Key: "k", Kind: ChainRead, Call: call, Return: ret}, chain(got...)))
		}
		ref := porcupine.CheckOperations(ChainReference(), LateAmbiguous(h))
		fast := porcupine.CheckOperations(Chain(), h)
		if ref != fast {
			t.Fatalf("reference says %v, deferred says %v for %+v", ref, fast, h)
		}
		if ref {
			*legal++
		}
	}
}

// TestValueModelsAgree checks the floating value model against the
// reference (with LateAmbiguous) on random small histories of non-strict and
// strict writes with every outcome and reads of random values.
func TestValueModelsAgree(t *testing.T) {
	legal := 0
	for round := 0; round < 10; round++ {
		rapid.Check(t, func(t *rapid.T) {
			values := []string{"a", "b", "c", "d", "e"}
			n := rapid.IntRange(1, 5).Draw(t, "writes")
			// A known start, as in the simulator: a partition's unknown start
			// is a value inherited from another partition, never one of its
			// own writes' unique tags (Value relies on that).
			h := []porcupine.Operation{op(9, -2, -1, readValue("k"), saw(Absent))}
			for i := 0; i < n; i++ {
				call := int64(rapid.IntRange(0, 20).Draw(t, "call"))
				ret := call + int64(rapid.IntRange(0, 8).Draw(t, "len"))
				o := Outcome(rapid.IntRange(1, 3).Draw(t, "outcome"))
				in := ValueInput{Key: "k", Kind: ValueWrite, Value: values[i]}
				if rapid.IntRange(0, 1).Draw(t, "strict") == 0 {
					in.Strict = true
					in.Expect = rapid.SampledFrom(append([]string{Absent}, values[:n]...)).Draw(t, "expect")
				}
				h = append(h, op(i, call, ret, in, wrote(o)))
			}
			for i := rapid.IntRange(1, 4).Draw(t, "reads"); i > 0; i-- {
				call := int64(rapid.IntRange(0, 30).Draw(t, "rcall"))
				ret := call + int64(rapid.IntRange(0, 4).Draw(t, "rlen"))
				v := rapid.SampledFrom(append([]string{Absent}, values[:n]...)).Draw(t, "value")
				h = append(h, op(n+i, call, ret, readValue("k"), saw(v)))
			}
			ref := porcupine.CheckOperations(ValueReference(), LateAmbiguous(h))
			got := porcupine.CheckOperations(Value(), h)
			if ref != got {
				t.Fatalf("reference says %v, floating says %v for %+v", ref, got, h)
			}
			if ref {
				legal++
			}
		})
	}
	if legal == 0 {
		t.Fatal("no legal history generated: the agreement test is vacuous")
	}
	t.Logf("%d legal histories", legal)
}
