package check

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model/datamodel"
)

// ModelRead is one graph read a simulated reader made, kept to be compared
// with the reference data model at the commit its snapshot showed.
type ModelRead struct {
	// Key is the branch incarnation read (IncarnationKey) and Version the
	// manifest version of its snapshot.
	Key     string
	Version uint64
	// Where and What say who read what, for the violation.
	Where, What string
	// Got is what the read answered, rendered.
	Got []string
	// Want renders the model's answer to the same read.
	Want func(*datamodel.State) ([]string, error)
}

// DataRecord records, for CheckReadsVsModel, the operations each data
// transaction was staged with (by commit tag) and the graph reads the
// simulator's readers made. The zero value is ready; it is safe for
// concurrent use.
type DataRecord struct {
	mu    sync.Mutex
	txns  map[string][]datamodel.Op
	reads []ModelRead
}

// Txn records the operations of the transaction committed with tag (before
// the commit is called: an ambiguous commit may still land, through its
// own publish or a recovery roll-forward carrying its message).
func (d *DataRecord) Txn(tag string, ops []datamodel.Op) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.txns == nil {
		d.txns = map[string][]datamodel.Op{}
	}
	d.txns[tag] = append([]datamodel.Op(nil), ops...)
}

// Read records one read.
func (d *DataRecord) Read(r ModelRead) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reads = append(d.reads, r)
}

// Reads returns how many reads were recorded.
func (d *DataRecord) Reads() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.reads)
}

// ModelCoverage says how much of a run the reference data model explained.
type ModelCoverage struct {
	// Checked reads were compared with the model; Unmodelled reads were at
	// a commit whose content the model cannot know (see CheckReadsVsModel).
	Checked, Unmodelled int
	// Commits counts the commits replayed; UnmodelledCommits those the
	// model could not explain (the first such commit makes every later
	// commit of its incarnation unmodelled too, and is counted once).
	Commits, UnmodelledCommits int
	// RolledForward and RolledBack count the recovery commits replayed:
	// roll-forwards applied their writer's operations, roll-backs kept
	// their parent's rows.
	RolledForward, RolledBack int
}

// CheckReadsVsModel compares every recorded read with the reference data
// model ("reads-vs-model"). For each incarnation read, it replays the
// durable manifest chain from genesis: the state at version v is the state
// at v-1 (the first parent) with v's commit applied, where
//
//   - a commit whose message carries a recorded transaction's tag (the
//     writer's own publish, or a recovery roll-forward, which carries the
//     writer's message) applies that transaction's operations;
//   - a recovery roll-back (kernel.RecoveryMessagePrefix) restores the
//     pinned content: the state is the parent's;
//   - anything else (an unknown tag, a fork's inherited start, a manifest
//     without a commit, a merge) is unmodelled from there on.
//
// A commit the model's rules refuse (an insert of an existing id, a
// dangling edge, @card exceeded) is a violation: the kernel acknowledged
// what its own rules forbid, or stored something other than what was
// staged. Reads at unmodelled versions are counted, never passed silently.
func CheckReadsVsModel(g Graph, s *schema.Schema, d *DataRecord) ([]Violation, ModelCoverage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var cov ModelCoverage
	var vs []Violation
	byKey := map[string][]ModelRead{}
	var keys []string
	for _, r := range d.reads {
		if byKey[r.Key] == nil {
			keys = append(keys, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	sort.Strings(keys)
	for _, key := range keys {
		var inc *Incarnation
		for i := range g.Incarnations {
			if g.Incarnations[i].Key == key {
				inc = &g.Incarnations[i]
			}
		}
		var states map[uint64]modelState
		if inc != nil {
			var more []Violation
			states, more = replay(*inc, s, d.txns, &cov)
			vs = append(vs, more...)
		}
		for _, r := range byKey[key] {
			st, ok := states[r.Version]
			if !ok || st.state == nil {
				cov.Unmodelled++
				continue
			}
			cov.Checked++
			vs = append(vs, compareRead(r, st)...)
		}
	}
	return vs, cov
}

// modelState is the model's state at one manifest version (nil state:
// unmodelled) and the commit that made it.
type modelState struct {
	state  *datamodel.State
	commit string
}

// replay rebuilds the model's state at every manifest version of inc.
func replay(inc Incarnation, s *schema.Schema, txns map[string][]datamodel.Op, cov *ModelCoverage) (map[uint64]modelState, []Violation) {
	out := map[uint64]modelState{}
	var vs []Violation
	var prev *datamodel.State
	for i, m := range inc.Manifests {
		cov.Commits++
		next, why := step(prev, i == 0, m, s, txns)
		if why != "" && (prev != nil || i == 0) {
			cov.UnmodelledCommits++
			if strings.HasPrefix(why, "refused") {
				vs = append(vs, violation("reads-vs-model", "%s v%d: commit %s %s", inc.Key, m.Version, commitName(m), why))
			}
		}
		if m.Commit != nil {
			out[m.Version] = modelState{state: next, commit: commitName(m)}
			if next != nil && m.Commit.Kind == format.KindRecovery {
				if strings.HasPrefix(m.Commit.Message, kernel.RecoveryMessagePrefix) {
					cov.RolledBack++
				} else {
					cov.RolledForward++
				}
			}
		}
		prev = next
	}
	return out, vs
}

// step returns the state after manifest m on prev (nil: unmodelled, with
// the reason).
func step(prev *datamodel.State, first bool, m format.Manifest, s *schema.Schema, txns map[string][]datamodel.Op) (*datamodel.State, string) {
	switch {
	case m.Commit == nil:
		return nil, "has no commit"
	case first && m.Commit.Kind == format.KindGenesis && m.ForkOf == nil:
		return datamodel.New(s), ""
	case first:
		return nil, "starts a fork"
	case prev == nil:
		return nil, "follows an unmodelled commit"
	case m.Commit.Kind == format.KindRecovery && strings.HasPrefix(m.Commit.Message, kernel.RecoveryMessagePrefix):
		return prev, "" // a roll-back restores the pinned content
	case m.Commit.Kind != format.KindCommit && m.Commit.Kind != format.KindRecovery:
		return nil, fmt.Sprintf("is of kind %s", m.Commit.Kind)
	}
	tags, ok := TagsOf(m.Commit.Message) // a group commit: its members in position order
	if !ok {
		return nil, fmt.Sprintf("(%q) is no recorded data transaction", m.Commit.Message)
	}
	next := prev
	for _, tag := range tags {
		ops, known := txns[tag]
		if !known {
			return nil, fmt.Sprintf("(%q) is no recorded data transaction", m.Commit.Message)
		}
		var err error
		if next, err = next.Apply(ops); err != nil {
			return nil, fmt.Sprintf("refused by the model (transaction %s): %v", tag, err)
		}
	}
	return next, ""
}

func commitName(m format.Manifest) string {
	if m.Commit == nil {
		return "-"
	}
	if tags, ok := TagsOf(m.Commit.Message); ok {
		return fmt.Sprintf("%s (%s)", m.Commit.ID, strings.Join(tags, " "))
	}
	return m.Commit.ID.String()
}

// compareRead returns a "reads-vs-model" violation when r's answer is not
// the model's at r's commit.
func compareRead(r ModelRead, st modelState) []Violation {
	want, err := r.Want(st.state)
	if err != nil {
		return []Violation{violation("reads-vs-model", "%s: %s: the model cannot answer: %v", r.Where, r.What, err)}
	}
	if strings.Join(r.Got, ",") == strings.Join(want, ",") {
		return nil
	}
	return []Violation{violation("reads-vs-model", "%s: %s = [%s], the reference model at commit %s says [%s]",
		r.Where, r.What, strings.Join(r.Got, ","), st.commit, strings.Join(want, ","))}
}

// ModelEdges converts the model's edge rows for Adjacent and Expand.
func ModelEdges(rows []datamodel.Row) []Edge {
	out := make([]Edge, len(rows))
	for i, r := range rows {
		out[i] = Edge{ID: r.ID, From: r.From, To: r.To}
	}
	return out
}
