package check

import (
	"fmt"
	"sort"
	"sync"

	"github.com/anishathalye/porcupine"

	"github.com/graphkernel/graphkernel/model"
)

// TableWrite is one table a commit writes: its new value is the commit's
// tag. A strict write also names the value it was based on.
type TableWrite struct {
	Table  string
	Strict bool
	Expect string
}

// TableValue is one table's value as a read observed it (model.Absent if
// the table is not pinned).
type TableValue struct {
	Table string
	Value string
}

// CommitInfo is what the history knows about one commit operation.
type CommitInfo struct {
	// Key is the branch incarnation the commit targeted.
	Key string
	// Outcome is model.OK, Failed or Ambiguous; a commit that never returned
	// (its actor crashed) is Ambiguous.
	Outcome model.Outcome
	// Pending reports that the commit never returned.
	Pending bool
}

// History records operations as porcupine operations, with call and return
// timestamps from a strictly increasing counter (the world's Tick in the
// simulator), so their order is exactly the order things happened. It is
// safe for concurrent use (real-store runs record from many goroutines).
type History struct {
	mu      sync.Mutex
	tick    func() int64
	chain   []porcupine.Operation
	value   []porcupine.Operation
	commits map[string]*commitRec // by tag
	reads   int
}

type commitRec struct {
	key      string
	chainIdx int
	valueIdx []int
	outcome  model.Outcome
	done     bool
}

// NewHistory returns an empty history timestamped by tick.
func NewHistory(tick func() int64) *History {
	return &History{tick: tick, commits: map[string]*commitRec{}}
}

// PendingCommit is a commit operation that has been called and not returned.
type PendingCommit struct {
	h   *History
	tag string
}

// BeginCommit records the call of a commit of tag on the branch incarnation
// key, writing tables. Tags must be unique in a history.
func (h *History) BeginCommit(client int, key, tag string, tables []TableWrite) PendingCommit {
	return h.beginCommit(client, key, tag, tables, true)
}

// BeginValueCommit is BeginCommit without the chain-model operation, for a
// commit called after the last read of the chain returned: no chain read
// can constrain it, so leaving it out of the chain model changes no
// verdict (its presence, exactly once, is still checked by CheckCommits).
// cmd/simrun's process harness uses it to keep long runs checkable.
func (h *History) BeginValueCommit(client int, key, tag string, tables []TableWrite) PendingCommit {
	return h.beginCommit(client, key, tag, tables, false)
}

func (h *History) beginCommit(client int, key, tag string, tables []TableWrite, chain bool) PendingCommit {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, dup := h.commits[tag]; dup {
		panic(fmt.Sprintf("check: commit tag %q recorded twice", tag))
	}
	t := h.tick()
	rec := &commitRec{key: key, chainIdx: -1}
	if chain {
		rec.chainIdx = len(h.chain)
		h.chain = append(h.chain, porcupine.Operation{
			ClientId: client, Call: t, Return: -1,
			Input: model.ChainInput{Key: key, Kind: model.ChainCommit, ID: tag},
		})
	}
	for _, tw := range tables {
		rec.valueIdx = append(rec.valueIdx, len(h.value))
		h.value = append(h.value, porcupine.Operation{
			ClientId: client, Call: t, Return: -1,
			Input: model.ValueInput{Key: key + "/" + tw.Table, Kind: model.ValueWrite, Value: tag,
				Strict: tw.Strict, Expect: tw.Expect},
		})
	}
	h.commits[tag] = rec
	return PendingCommit{h: h, tag: tag}
}

// End records the commit's return with its outcome. A commit whose actor
// crashed is never ended: it stays pending, hence ambiguous.
func (p PendingCommit) End(out model.Outcome) {
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := h.commits[p.tag]
	if rec.done {
		panic(fmt.Sprintf("check: commit %q ended twice", p.tag))
	}
	t := h.tick()
	rec.done, rec.outcome = true, out
	if rec.chainIdx >= 0 {
		h.chain[rec.chainIdx].Return = t
		h.chain[rec.chainIdx].Output = model.ChainOutput{Outcome: out}
	}
	for _, i := range rec.valueIdx {
		h.value[i].Return = t
		h.value[i].Output = model.ValueOutput{Outcome: out}
	}
}

// PendingRead is a read that has been called and not returned.
type PendingRead struct {
	h      *History
	client int
	call   int64
}

// BeginRead records the call time of a read.
func (h *History) BeginRead(client int) PendingRead {
	h.mu.Lock()
	defer h.mu.Unlock()
	return PendingRead{h: h, client: client, call: h.tick()}
}

// End records what one atomic read of branch incarnation key saw: its
// chain of commit tags, oldest first (tags of other partitions and non-sim
// commits are filtered out later), and the values of tables. A read that
// never returned is simply not recorded: it constrains nothing.
func (r PendingRead) End(key string, chain []string, tables []TableValue) {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tick()
	h.reads++
	h.chain = append(h.chain, porcupine.Operation{
		ClientId: r.client, Call: r.call, Return: t,
		Input:  model.ChainInput{Key: key, Kind: model.ChainRead},
		Output: model.ChainOutput{Chain: append([]string(nil), chain...)},
	})
	for _, tv := range tables {
		h.value = append(h.value, porcupine.Operation{
			ClientId: r.client, Call: r.call, Return: t,
			Input:  model.ValueInput{Key: key + "/" + tv.Table, Kind: model.ValueRead},
			Output: model.ValueOutput{Value: tv.Value},
		})
	}
}

// EndTables records a read that saw only table values (no chain): the
// values of tables in one atomic snapshot of branch incarnation key.
// cmd/simrun's process harness uses it once chains grow too long to read.
func (r PendingRead) EndTables(key string, tables []TableValue) {
	h := r.h
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.tick()
	h.reads++
	for _, tv := range tables {
		h.value = append(h.value, porcupine.Operation{
			ClientId: r.client, Call: r.call, Return: t,
			Input:  model.ValueInput{Key: key + "/" + tv.Table, Kind: model.ValueRead},
			Output: model.ValueOutput{Value: tv.Value},
		})
	}
}

// Commit returns what the history knows about the commit tagged tag.
func (h *History) Commit(tag string) (CommitInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, ok := h.commits[tag]
	if !ok {
		return CommitInfo{}, false
	}
	if !rec.done {
		return CommitInfo{Key: rec.key, Outcome: model.Ambiguous, Pending: true}, true
	}
	return CommitInfo{Key: rec.key, Outcome: rec.outcome}, true
}

// Tags returns every recorded commit tag, sorted.
func (h *History) Tags() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.commits))
	//detlint:ordered collects tags, sorted next
	for t := range h.commits {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Counts returns the number of commit operations, of acknowledged ones, and
// of reads.
func (h *History) Counts() (commits, acked, reads int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	//detlint:ordered counts only
	for _, rec := range h.commits {
		if rec.done && rec.outcome == model.OK {
			acked++
		}
	}
	return len(h.commits), acked, h.reads
}

// Operations returns the chain and value histories ready for porcupine:
// pending operations return after everything else, ambiguous; chain reads
// keep only the tags of commits recorded in the same partition.
//
// The models treat an operation that returned an ambiguous outcome like a
// pending one (Jepsen's indeterminate operations): it may take effect at any
// point after its call, even after it returned, because the recovery sweep
// may complete an interrupted write later (roll forward). The operations keep
// their real return times; the models let ambiguous effects float.
func (h *History) Operations() (chain, value []porcupine.Operation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := h.tick() + 1
	inKey := map[string]map[string]bool{}
	//detlint:ordered builds a map
	for tag, rec := range h.commits {
		if inKey[rec.key] == nil {
			inKey[rec.key] = map[string]bool{}
		}
		inKey[rec.key][tag] = true
	}
	for _, op := range h.chain {
		in := op.Input.(model.ChainInput)
		if op.Return < 0 {
			op.Return, op.Output = end, model.ChainOutput{Outcome: model.Ambiguous}
		}
		in.Call, in.Return = op.Call, op.Return
		op.Input = in
		if in.Kind == model.ChainRead {
			var kept []string
			for _, tag := range op.Output.(model.ChainOutput).Chain {
				if inKey[in.Key][tag] {
					kept = append(kept, tag)
				}
			}
			op.Output = model.ChainOutput{Chain: kept}
		}
		chain = append(chain, op)
	}
	for _, op := range h.value {
		if op.Return < 0 {
			op.Return, op.Output = end, model.ValueOutput{Outcome: model.Ambiguous}
		}
		value = append(value, op)
	}
	return chain, value
}
