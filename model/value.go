package model

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// ValueOpKind is the kind of a table-value operation.
type ValueOpKind uint8

// The table-value operations.
const (
	// ValueWrite publishes a new value of the table. A strict write carries
	// the value its writer based it on and may only succeed if that is still
	// the published value.
	ValueWrite ValueOpKind = iota + 1
	// ValueRead reads the published value.
	ValueRead
)

// Absent is the value of a table that has no published version.
const Absent = ""

// unknownValue is the state of a partition whose initial value the history
// does not tell (a forked branch inherits its source's pins). The first read
// or write fixes it. It cannot collide with a tag: tags are non-empty
// printable strings.
const unknownValue = "\x00?"

// ValueInput is the input of one table-value operation. Key is the
// partition (branch incarnation and table). For a write, Value is the new
// value (the writer's unique tag, never Absent); Strict writes also carry
// Expect, the value they were based on.
type ValueInput struct {
	Key    string
	Kind   ValueOpKind
	Value  string
	Strict bool
	Expect string
}

// PartitionKey implements Keyed.
func (in ValueInput) PartitionKey() string { return in.Key }

// ValueOutput is the result of one table-value operation: Outcome for a
// write, Value for a read (Absent if the table has no published version).
type ValueOutput struct {
	Outcome Outcome
	Value   string
}

// valueStep returns every state the value can be in after op.
//
// Soundness note for strict writes: the kernel's expectation compares table
// versions, and a version determines its value, so a strict write that
// succeeded saw its Expect value; a strict write may fail for reasons the
// value alone does not show (recovery re-pinned the same value at a new
// version), so a failure is always legal and changes nothing.
func valueStep(state, input, output interface{}) []interface{} {
	s := state.(string)
	in := input.(ValueInput)
	out := output.(ValueOutput)
	switch in.Kind {
	case ValueWrite:
		if in.Value == Absent || in.Value == unknownValue {
			panic(fmt.Sprintf("model: invalid written value %q", in.Value))
		}
		if in.Strict && s != unknownValue && s != in.Expect && out.Outcome == OK {
			return nil // a lost update: the base changed under a strict write
		}
		switch out.Outcome {
		case OK:
			return []interface{}{in.Value}
		case Failed:
			return []interface{}{s}
		case Ambiguous:
			if in.Strict && s != unknownValue && s != in.Expect {
				return []interface{}{s} // could not have applied here
			}
			return []interface{}{s, in.Value}
		}
		panic(fmt.Sprintf("model: write with outcome %v", out.Outcome))
	case ValueRead:
		if s == unknownValue || s == out.Value {
			return []interface{}{out.Value}
		}
		return nil
	}
	panic(fmt.Sprintf("model: unknown value op kind %d", in.Kind))
}

// ValueSpec is the nondeterministic table-value model, partitioned per
// ValueInput.Key. A partition starts unknown (a forked branch inherits its
// source's values); the first operation fixes it. It is the reference
// specification: an ambiguous write takes effect inside its interval or
// never. The checker uses Value, whose ambiguous writes float (see there).
var ValueSpec = porcupine.NondeterministicModel{
	Partition:      partitionByKey,
	PartitionEvent: partitionEventsByKey,
	Init:           func() []interface{} { return []interface{}{unknownValue} },
	Step:           valueStep,
	Equal:          func(a, b interface{}) bool { return a.(string) == b.(string) },
	Hash:           func(s interface{}) uint64 { return hashString(s.(string)) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(ValueInput), output.(ValueOutput)
		if in.Kind == ValueRead {
			return fmt.Sprintf("read() -> %q", out.Value)
		}
		if in.Strict {
			return fmt.Sprintf("cas(%q -> %q) -> %v", in.Expect, in.Value, out.Outcome)
		}
		return fmt.Sprintf("write(%q) -> %v", in.Value, out.Outcome)
	},
	DescribeState: func(s interface{}) string {
		if s.(string) == unknownValue {
			return "?"
		}
		return fmt.Sprintf("%q", s.(string))
	},
}

// ValueReference is ValueSpec converted to a porcupine.Model.
func ValueReference() porcupine.Model { return ValueSpec.ToModel() }
