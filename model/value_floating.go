package model

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Value returns the table-value model the simulator checks with. Ambiguous
// writes float, like Jepsen's indeterminate operations: one may take effect
// at any point after its call, even after it returned, because the recovery
// sweep can roll an interrupted write forward later. (ValueSpec, where an
// ambiguous write takes effect inside its interval or never, agrees with it
// once every ambiguous operation's return is moved to the end of the
// history: see LateAmbiguous and TestValueModelsAgree.)
//
// State: the current value and the floating writes not seen yet. A floating
// write is applied lazily, when an observation needs it: a read of its
// value, or a strict write expecting its value. A non-strict floating write
// applies at any time; a strict one only when the value equals its Expect,
// which may itself need a floating write applied first. Values are unique
// tags (an inherited value is never one of the partition's own tags), so
// that chain is forced and the model stays deterministic per observation.
func Value() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition:      partitionByKey,
		PartitionEvent: partitionEventsByKey,
		Init:           func() []interface{} { return []interface{}{floatState{cur: unknownValue}} },
		Step:           floatStep,
		Equal:          func(a, b interface{}) bool { return a.(floatState).key() == b.(floatState).key() },
		Hash: func(s interface{}) uint64 {
			h := fnv.New64a()
			h.Write([]byte(s.(floatState).key()))
			return h.Sum64()
		},
		DescribeOperation: ValueSpec.DescribeOperation,
		DescribeState: func(s interface{}) string {
			f := s.(floatState)
			return fmt.Sprintf("%s float{%s}", ValueSpec.DescribeState(f.cur), f.floatKey())
		},
	}
	return nm.ToModel()
}

// floatW is a floating write.
type floatW struct {
	value, expect string
	strict        bool
}

// floatState is immutable.
type floatState struct {
	cur   string
	float []floatW // sorted by value (values are unique tags)
}

func (s floatState) floatKey() string {
	parts := make([]string, len(s.float))
	for i, w := range s.float {
		parts[i] = w.value
	}
	return strings.Join(parts, " ")
}

func (s floatState) key() string { return s.cur + "\x01" + s.floatKey() }

// with returns the state with value cur and w added to the floating set.
func (s floatState) with(cur string, w *floatW) floatState {
	out := floatState{cur: cur, float: append([]floatW(nil), s.float...)}
	if w != nil {
		out.float = append(out.float, *w)
		sort.Slice(out.float, func(i, j int) bool { return out.float[i].value < out.float[j].value })
	}
	return out
}

// without returns the state with value cur and the floating writes whose
// values are in drop removed.
func (s floatState) without(cur string, drop ...string) floatState {
	out := floatState{cur: cur}
	for _, w := range s.float {
		keep := true
		for _, d := range drop {
			keep = keep && w.value != d
		}
		if keep {
			out.float = append(out.float, w)
		}
	}
	return out
}

// reach returns the states in which the value is target, reached by
// applying floating writes. Tags are unique, so the way there is forced:
// target is the current value, or the one floating write carrying it
// applies; a strict one first needs its Expect reached the same way.
func (s floatState) reach(target string) []interface{} {
	if s.cur == target {
		return []interface{}{s}
	}
	if s.cur == unknownValue {
		// An inherited value is never a tag written in this partition: a
		// value some floating write carries came from it.
		return []interface{}{s.without(target, target)}
	}
	var chain []string // floating writes to apply, last first
	for want, steps := target, 0; want != s.cur; steps++ {
		w, ok := s.floating(want)
		if !ok || steps > len(s.float) {
			return nil
		}
		chain = append(chain, w.value)
		if !w.strict {
			break
		}
		want = w.expect
	}
	return []interface{}{s.without(target, chain...)}
}

// floating returns the floating write carrying value.
func (s floatState) floating(value string) (floatW, bool) {
	i := sort.Search(len(s.float), func(i int) bool { return s.float[i].value >= value })
	if i < len(s.float) && s.float[i].value == value {
		return s.float[i], true
	}
	return floatW{}, false
}

func floatStep(state, input, output interface{}) []interface{} {
	s := state.(floatState)
	in := input.(ValueInput)
	out := output.(ValueOutput)
	switch in.Kind {
	case ValueWrite:
		if in.Value == Absent || in.Value == unknownValue {
			panic(fmt.Sprintf("model: invalid written value %q", in.Value))
		}
		switch out.Outcome {
		case OK:
			if !in.Strict {
				return []interface{}{s.without(in.Value)}
			}
			var next []interface{}
			for _, r := range s.reach(in.Expect) {
				next = append(next, r.(floatState).without(in.Value))
			}
			return next
		case Failed:
			return []interface{}{s}
		case Ambiguous:
			return []interface{}{s.with(s.cur, &floatW{value: in.Value, expect: in.Expect, strict: in.Strict})}
		}
		panic(fmt.Sprintf("model: write with outcome %v", out.Outcome))
	case ValueRead:
		return s.reach(out.Value)
	}
	panic(fmt.Sprintf("model: unknown value op kind %d", in.Kind))
}
