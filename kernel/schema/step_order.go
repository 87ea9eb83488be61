package schema

import "fmt"

// replayOrder orders the steps of a change from a schema to new so that
// they apply one after the other, each naming types and properties as the
// steps before it left them (docs/invariants.md S12: what a change-feed
// consumer does with an event): no step names something an earlier step
// renamed or dropped, and none takes a name still held. The order:
//
//  1. dropped types (their names are free from then on);
//  2. type renames, a rename whose new name another type still holds
//     after that one; a cycle (a swap) moves one type to a temporary name
//     (fresh, as freshName gives: A_2) and on from it;
//  3. per type of new, in steps' order: its add, or its property drops,
//     then its property renames (ordered as the type renames), then the
//     other steps in steps' order (loosenings and widenings, adds, @card).
//
// A change with no name reused keeps steps' order apart from drops coming
// first. steps is Compare's (or Evolve's) list, grouped by type.
func replayOrder(steps []Step, new Schema) []Step {
	var typeDrops, typeRenames []Step
	groups := map[string][]Step{}
	var order []string
	for _, st := range steps {
		switch st.Op {
		case DropType:
			typeDrops = append(typeDrops, st)
			continue
		case RenameType:
			typeRenames = append(typeRenames, st)
			continue
		}
		if _, ok := groups[st.Type]; !ok {
			order = append(order, st.Type)
		}
		groups[st.Type] = append(groups[st.Type], st)
	}
	out := append([]Step(nil), typeDrops...)
	out = append(out, sequenceRenames(typeRenames, typeNames(new, steps))...)
	for _, typ := range order {
		out = append(out, typeOrder(groups[typ], propNames(new, typ, groups[typ]))...)
	}
	return out
}

// typeOrder orders one type's steps: its add, its property drops, its
// property renames, then the rest.
func typeOrder(steps []Step, used map[string]bool) []Step {
	var drops, renames, rest []Step
	for _, st := range steps {
		switch st.Op {
		case DropProp:
			drops = append(drops, st)
		case RenameProp:
			renames = append(renames, st)
		default:
			rest = append(rest, st)
		}
	}
	var out []Step
	for len(rest) > 0 && (rest[0].Op == AddNode || rest[0].Op == AddEdge) {
		out, rest = append(out, rest[0]), rest[1:]
	}
	out = append(out, drops...)
	out = append(out, sequenceRenames(renames, used)...)
	return append(out, rest...)
}

// renameEnds are the old and new names of a RenameType or RenameProp
// step, and a copy of it between two other names.
func renameEnds(st Step) (from, to string) {
	if st.Op == RenameType {
		return st.From, st.Type
	}
	return st.From, st.Prop
}

func renamed(st Step, from, to string) Step {
	st.From = from
	if st.Op == RenameType {
		st.Type = to
	} else {
		st.Prop = to
	}
	return st
}

// sequenceRenames orders renames (distinct old names, distinct new names)
// so that each new name is free when its rename applies: the first
// pending rename whose new name no pending rename still holds goes next;
// when none can (a cycle), the first pending one moves to a temporary
// name not in used (which it adds). Bounded: each round emits a step, and
// a cycle is broken at most once per rename.
func sequenceRenames(renames []Step, used map[string]bool) []Step {
	pending := append([]Step(nil), renames...)
	var out []Step
	for round := 0; len(pending) > 0; round++ {
		if round > 2*len(renames) {
			panic(fmt.Sprintf("schema: renames not sequenced after %d rounds: %v", round, pending))
		}
		held := make(map[string]bool, len(pending))
		for _, st := range pending {
			from, _ := renameEnds(st)
			held[from] = true
		}
		next := -1
		for i, st := range pending {
			if _, to := renameEnds(st); !held[to] {
				next = i
				break
			}
		}
		if next >= 0 {
			out = append(out, pending[next])
			pending = append(pending[:next:next], pending[next+1:]...)
			continue
		}
		from, to := renameEnds(pending[0])
		tmp := freshName(from, used)
		used[tmp] = true
		out = append(out, renamed(pending[0], from, tmp))
		pending[0] = renamed(pending[0], tmp, to)
	}
	return out
}

// typeNames returns every type name of new and every old name steps
// mention (renamed and dropped types): what a temporary name must avoid.
func typeNames(new Schema, steps []Step) map[string]bool {
	used := map[string]bool{}
	for _, n := range new.Nodes {
		used[n.Name] = true
	}
	for _, e := range new.Edges {
		used[e.Name] = true
	}
	for _, st := range steps {
		if st.Op == RenameType || st.Op == DropType {
			used[st.From] = true
			used[st.Type] = true
		}
	}
	return used
}

// propNames returns the property names of type typ in new and the old
// names its steps mention.
func propNames(new Schema, typ string, steps []Step) map[string]bool {
	used := map[string]bool{}
	props, _ := propsOf(new, typ)
	for _, p := range props {
		used[p.Name] = true
	}
	for _, st := range steps {
		used[st.Prop] = true
		if st.Op == RenameProp {
			used[st.From] = true
		}
	}
	return used
}
