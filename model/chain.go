package model

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

// ChainOpKind is the kind of a commit-chain operation.
type ChainOpKind uint8

// The commit-chain operations.
const (
	// ChainCommit appends one commit id to the branch's chain.
	ChainCommit ChainOpKind = iota + 1
	// ChainRead reads the whole chain.
	ChainRead
)

// ChainInput is the input of one commit-chain operation. Key is the branch
// incarnation (the partition); ID is the commit's identity (for the
// simulator, the unique tag the writer put in the commit message). IDs must
// not contain a newline. Call and Return repeat the operation's interval
// (the porcupine timestamps): the deferred model (Chain) needs them to check
// real-time order among commits it orders late; ChainSpec ignores them.
type ChainInput struct {
	Key          string
	Kind         ChainOpKind
	ID           string
	Call, Return int64
}

// PartitionKey implements Keyed.
func (in ChainInput) PartitionKey() string { return in.Key }

// ChainOutput is the result of one commit-chain operation: Outcome for a
// commit, Chain (oldest first, only ids of this partition's commits) for a
// read.
type ChainOutput struct {
	Outcome Outcome
	Chain   []string
}

// chainState is the chain as ids joined by '\n' ("" is the empty chain). A
// string keeps the state immutable, comparable and cheap to hash.
type chainState string

func (s chainState) contains(id string) bool {
	if s == "" {
		return false
	}
	for _, x := range strings.Split(string(s), "\n") {
		if x == id {
			return true
		}
	}
	return false
}

func (s chainState) appended(id string) chainState {
	if s == "" {
		return chainState(id)
	}
	return s + "\n" + chainState(id)
}

// chainStep returns every state the chain can be in after op. An
// acknowledged commit appends its id, which must not be present yet (a commit
// lands exactly once); a failed one changes nothing; an ambiguous one may do
// either. A read is legal only if it returns exactly the chain.
func chainStep(state, input, output interface{}) []interface{} {
	s := state.(chainState)
	in := input.(ChainInput)
	out := output.(ChainOutput)
	switch in.Kind {
	case ChainCommit:
		if strings.Contains(in.ID, "\n") || in.ID == "" {
			panic(fmt.Sprintf("model: invalid commit id %q", in.ID))
		}
		switch out.Outcome {
		case OK:
			if s.contains(in.ID) {
				return nil
			}
			return []interface{}{s.appended(in.ID)}
		case Failed:
			return []interface{}{s}
		case Ambiguous:
			if s.contains(in.ID) {
				return []interface{}{s}
			}
			return []interface{}{s, s.appended(in.ID)}
		}
		panic(fmt.Sprintf("model: commit with outcome %v", out.Outcome))
	case ChainRead:
		if string(s) == strings.Join(out.Chain, "\n") {
			return []interface{}{s}
		}
		return nil
	}
	panic(fmt.Sprintf("model: unknown chain op kind %d", in.Kind))
}

// ChainSpec is the nondeterministic commit-chain model, partitioned per
// branch incarnation (ChainInput.Key). Every partition starts empty: reads
// must report only the commits made on that incarnation.
//
// It is the reference specification: simple, and exponential in the number
// of concurrent commits between two reads (every order is a distinct state).
// The checker uses Chain, which is equivalent (a test checks that on random
// histories) and collapses those orders.
var ChainSpec = porcupine.NondeterministicModel{
	Partition:      partitionByKey,
	PartitionEvent: partitionEventsByKey,
	Init:           func() []interface{} { return []interface{}{chainState("")} },
	Step:           chainStep,
	Equal:          func(a, b interface{}) bool { return a.(chainState) == b.(chainState) },
	Hash:           func(s interface{}) uint64 { return hashString(string(s.(chainState))) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(ChainInput), output.(ChainOutput)
		if in.Kind == ChainCommit {
			return fmt.Sprintf("commit(%s) -> %v", in.ID, out.Outcome)
		}
		return fmt.Sprintf("read() -> [%s]", strings.Join(out.Chain, " "))
	},
	DescribeState: func(s interface{}) string {
		return "[" + strings.ReplaceAll(string(s.(chainState)), "\n", " ") + "]"
	},
}

// ChainReference is ChainSpec converted to a porcupine.Model (power-set
// construction).
func ChainReference() porcupine.Model { return ChainSpec.ToModel() }
