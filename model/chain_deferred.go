package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Chain returns the commit-chain model the simulator checks with: the same
// language as ChainSpec, but it defers ordering commits until a read shows
// their order.
//
// State: the chain as last read (C), the ids of commits linearized since
// then that certainly applied (sure, acknowledged), and the ambiguous
// commits not seen yet (maybe), each with its interval. A read R is legal
// iff R = C ++ S where S holds every sure id, only sure or maybe ids, no id
// twice, and S respects real time (no id in S returned before an earlier id
// in S was called). After the read the state is (R, none, maybe minus S).
//
// Ambiguous commits float: like Jepsen's indeterminate operations they may
// take effect at any point after their call, even after they returned (the
// recovery sweep can roll an interrupted write forward later), so a maybe id
// left out of one read may still appear in a later one, and it never
// constrains real-time order after its call. ChainSpec expresses the same
// semantics when an ambiguous operation's return is set to the end of the
// history (LateAmbiguous does that).
//
// Why it is equivalent: porcupine picks a real-time-consistent order of all
// operations; between two reads, only the order of the commits that took
// effect is observable, and any order of them that respects real time
// pairwise can be given linearization points inside their intervals (assign
// each the latest call so far: it is within its interval exactly when no
// later one returned before an earlier one was called). So a history is
// accepted by Chain iff it is accepted by ChainSpec; TestChainModelsAgree
// checks this on random histories. The gain: k concurrent commits between
// two reads are one state instead of k! states.
func Chain() porcupine.Model {
	return porcupine.Model{
		Partition:         partitionByKey,
		PartitionEvent:    partitionEventsByKey,
		Init:              func() interface{} { return deferredState{} },
		Step:              deferredStep,
		Equal:             func(a, b interface{}) bool { return a.(deferredState).equal(b.(deferredState)) },
		Hash:              func(s interface{}) uint64 { return s.(deferredState).hash() },
		DescribeOperation: ChainSpec.DescribeOperation,
		DescribeState: func(s interface{}) string {
			d := s.(deferredState)
			return fmt.Sprintf("[%s] +{%s} ?{%s}", strings.Join(d.chain, " "), ids(d.sure), ids(d.maybe))
		},
	}
}

// pend is a commit linearized since the last read, with its interval.
type pend struct {
	id        string
	call, ret int64
}

// deferredState is immutable: steps build new slices.
type deferredState struct {
	chain []string
	key   string // chain joined by '\n'
	sure  []pend // sorted by id
	maybe []pend // sorted by id
}

func (s deferredState) equal(o deferredState) bool {
	return s.key == o.key && samePends(s.sure, o.sure) && samePends(s.maybe, o.maybe)
}

func samePends(a, b []pend) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id {
			return false
		}
	}
	return true
}

func (s deferredState) hash() uint64 {
	h := fnv.New64a()
	h.Write([]byte(s.key))
	for _, p := range s.sure {
		h.Write([]byte("\x01" + p.id))
	}
	for _, p := range s.maybe {
		h.Write([]byte("\x02" + p.id))
	}
	return h.Sum64()
}

func ids(ps []pend) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.id
	}
	return strings.Join(out, " ")
}

// withPend returns ps plus p, sorted by id (a new slice).
func withPend(ps []pend, p pend) []pend {
	out := make([]pend, 0, len(ps)+1)
	out = append(out, ps...)
	out = append(out, p)
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func findPend(ps []pend, id string) (pend, bool) {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].id >= id })
	if i < len(ps) && ps[i].id == id {
		return ps[i], true
	}
	return pend{}, false
}

func deferredStep(state, input, output interface{}) (bool, interface{}) {
	s := state.(deferredState)
	in := input.(ChainInput)
	out := output.(ChainOutput)
	switch in.Kind {
	case ChainCommit:
		if strings.Contains(in.ID, "\n") || in.ID == "" {
			panic(fmt.Sprintf("model: invalid commit id %q", in.ID))
		}
		p := pend{id: in.ID, call: in.Call, ret: in.Return}
		switch out.Outcome {
		case OK:
			return true, deferredState{chain: s.chain, key: s.key, sure: withPend(s.sure, p), maybe: s.maybe}
		case Failed:
			return true, s
		case Ambiguous:
			p.ret = math.MaxInt64 // floats: may take effect after it returned
			return true, deferredState{chain: s.chain, key: s.key, sure: s.sure, maybe: withPend(s.maybe, p)}
		}
		panic(fmt.Sprintf("model: commit with outcome %v", out.Outcome))
	case ChainRead:
		return deferredRead(s, out.Chain)
	}
	panic(fmt.Sprintf("model: unknown chain op kind %d", in.Kind))
}

// deferredRead checks a read of chain r against s.
func deferredRead(s deferredState, r []string) (bool, interface{}) {
	if len(r) < len(s.chain) {
		return false, nil
	}
	for i, id := range s.chain {
		if r[i] != id {
			return false, nil
		}
	}
	seen := make(map[string]bool, len(r))
	for _, id := range s.chain {
		seen[id] = true
	}
	suffix := make([]pend, 0, len(r)-len(s.chain))
	sure := 0
	used := map[string]bool{}
	for _, id := range r[len(s.chain):] {
		if seen[id] {
			return false, nil // a commit present twice
		}
		seen[id] = true
		p, ok := findPend(s.sure, id)
		if ok {
			sure++
		} else if p, ok = findPend(s.maybe, id); !ok {
			return false, nil // not (yet) committed
		} else {
			used[id] = true
		}
		suffix = append(suffix, p)
	}
	if sure != len(s.sure) {
		return false, nil // an acknowledged commit is missing
	}
	for j := range suffix {
		for i := 0; i < j; i++ {
			if suffix[j].ret < suffix[i].call {
				return false, nil // ordered against real time
			}
		}
	}
	chain := append([]string(nil), r...)
	var left []pend
	for _, p := range s.maybe {
		if !used[p.id] {
			left = append(left, p)
		}
	}
	return true, deferredState{chain: chain, key: strings.Join(chain, "\n"), maybe: left}
}

// LateAmbiguous returns a copy of a chain or value history in which every
// operation that returned an ambiguous outcome returns at the end instead:
// under the reference specifications that is what "may take effect even
// after it returned" means. Tests use it to compare Chain and Value with
// ChainSpec and ValueSpec.
func LateAmbiguous(h []porcupine.Operation) []porcupine.Operation {
	var end int64
	for _, op := range h {
		end = max(end, op.Return)
	}
	out := append([]porcupine.Operation(nil), h...)
	for i, op := range out {
		amb := false
		switch o := op.Output.(type) {
		case ChainOutput:
			amb = o.Outcome == Ambiguous
		case ValueOutput:
			amb = o.Outcome == Ambiguous
		}
		if amb {
			out[i].Return = end + 1
		}
	}
	return out
}
