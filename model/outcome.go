package model

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/anishathalye/porcupine"
)

// Outcome is what a client learned about a mutating operation.
type Outcome uint8

// The three outcomes of a mutating operation.
const (
	// OK: acknowledged. The effect happened exactly once, inside the
	// operation's interval.
	OK Outcome = iota + 1
	// Failed: a definite failure. The effect never happened.
	Failed
	// Ambiguous: the effect may or may not have happened (lost
	// acknowledgement, exhausted retries after an ambiguous attempt, crash).
	// A pending operation that never returned is ambiguous too.
	Ambiguous
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Ambiguous:
		return "ambiguous"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Keyed is implemented by every model input: Key names the partition (the
// object) the operation belongs to.
type Keyed interface{ PartitionKey() string }

// partitionByKey splits a history into one partition per input key, in
// sorted key order, preserving the operations' relative order.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	groups := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(Keyed).PartitionKey()
		groups[k] = append(groups[k], op)
	}
	keys := make([]string, 0, len(groups))
	//detlint:ordered collects keys, sorted next
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// partitionEventsByKey is partitionByKey for the event representation. A
// return event is keyed by its call's key.
func partitionEventsByKey(history []porcupine.Event) [][]porcupine.Event {
	keyOf := map[int]string{}
	groups := map[string][]porcupine.Event{}
	for _, ev := range history {
		if ev.Kind == porcupine.CallEvent {
			keyOf[ev.Id] = ev.Value.(Keyed).PartitionKey()
		}
		k, ok := keyOf[ev.Id]
		if !ok {
			panic(fmt.Sprintf("model: return event %d before its call", ev.Id))
		}
		groups[k] = append(groups[k], ev)
	}
	keys := make([]string, 0, len(groups))
	//detlint:ordered collects keys, sorted next
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Event, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// hashString is the FNV-1a hash of s, used as the models' state hash.
func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
