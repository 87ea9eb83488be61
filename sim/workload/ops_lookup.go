package workload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/sim/check"
)

func init() { RegisterOp("lookup", opLookup) }

// maxLookupAncestry bounds the commits the lookup op's reference walk
// loads; a larger ancestry skips the merge-base comparison.
const maxLookupAncestry = 4096

// opLookup asks a cold handle (a fresh read-only open: nothing cached, as
// on S3 after a restart) lineage questions and checks the answers, which
// come from the commit indexes where they are sound:
//   - every commit a commit index names, as Commit and SnapshotAtCommit:
//     an answer must be that commit (an index left by a publish attempt
//     that never landed must not misplace it);
//   - the merge base of a commit of branch's log and one of other's, which
//     must equal lineage.MergeBase over the ancestry the process walks
//     itself through the commits' recorded parents.
func opLookup(p *Proc, _ int, op Op) error {
	cold, err := kernel.Open(p.Ctx(), p.run.Store, p.run.Root, kernel.Options{Env: p.env(), ReadOnly: true})
	if err != nil {
		return p.readFailed("lookup: open", err)
	}
	if err := p.lookupIndexed(cold); err != nil {
		return err
	}
	return p.lookupMergeBase(cold, op.Arg("branch"), op.Arg("other"))
}

// lookupIndexed checks Commit and SnapshotAtCommit of up to two commits
// named by stored commit indexes, picked among the stale ones (an index
// whose slot does not hold its commit: the case the reader's verification
// exists for) when there are any.
func (p *Proc) lookupIndexed(cold *kernel.Graph) error {
	all, stale := p.storedIndexes()
	pool := all
	if len(stale) > 0 {
		pool = stale
	}
	for n := 0; n < 2 && len(pool) > 0; n++ {
		id := pool[p.Rand().IntN(len(pool))]
		c, err := cold.Commit(p.Ctx(), id)
		if err == nil && c.ID != id {
			p.violateLookup("Commit(%s) returned commit %s", id, c.ID)
		}
		if p.Over(err) {
			return p.end(err)
		}
		p.Unexpected("lookup: commit", err) // not found is the right answer for a commit that never landed
		s, err := cold.SnapshotAtCommit(p.Ctx(), id)
		if err == nil && s.Head() != id {
			p.violateLookup("SnapshotAtCommit(%s) is the snapshot of %s#%d v%d, whose head is %s", id, s.Branch(), s.Incarnation(), s.ManifestVersion(), s.Head())
		}
		if done, err := p.lookupDone("lookup: snapshot", err); done {
			return err
		}
	}
	return nil
}

// storedIndexes lists, from the durable state, the commits with an index
// and those whose index is stale.
func (p *Proc) storedIndexes() (all, stale []kernel.CommitID) {
	keys := format.NewKeys(p.run.Root)
	prefix := keys.CommitIndexPrefix()
	for _, k := range p.run.Insp.Keys(prefix) {
		id, err := kernel.CommitIDFromString(strings.TrimPrefix(k, prefix))
		if err != nil {
			p.run.Violate(check.Violation{Check: "kernel-error", Detail: fmt.Sprintf("%s: commit index key %s: %v", p.name, k, err)})
			continue
		}
		all = append(all, id)
		if check.Torn(p.run.Insp, k) {
			// An attempt that lost its slot left its index deferred and
			// a machine crash tore it: the reader takes it for absent
			// (kernel verifiedIndex), the case for a stale one.
			stale = append(stale, id)
			continue
		}
		b, _ := p.run.Insp.Peek(k)
		x, _, err := format.DecodeCommitIndex(b)
		if err != nil {
			p.run.Violate(check.Violation{Check: "format", Detail: fmt.Sprintf("%s: commit index %s: %v", p.name, k, err)})
			continue
		}
		mb, ok := p.run.Insp.Peek(keys.Manifest(x.At.Branch, x.At.Incarnation, x.At.Version))
		if !ok {
			stale = append(stale, id)
			continue
		}
		if m, _, err := format.DecodeManifestAnyStamp(mb); err == nil && (m.Commit == nil || m.Commit.ID != id) {
			stale = append(stale, id)
		}
	}
	return all, stale
}

// lookupMergeBase compares the cold handle's MergeBaseOf of two logged
// commits with the merge base of the walked ancestry.
func (p *Proc) lookupMergeBase(cold *kernel.Graph, branch, other string) error {
	a, ok, err := p.loggedCommit(branch)
	if err != nil || !ok {
		return err
	}
	b, ok, err := p.loggedCommit(other)
	if err != nil || !ok {
		return err
	}
	parents, ok, err := p.walkParents(a.ID, b.ID)
	if err != nil || !ok {
		return err
	}
	want, ok := lineage.MergeBase(parents, a.ID, b.ID)
	if !ok {
		p.violateLookup("commits %s and %s share no ancestor", a.ID, b.ID)
		return nil
	}
	got, err := cold.MergeBaseOf(p.Ctx(), a.ID, b.ID)
	if err == nil && got.ID != want {
		p.violateLookup("MergeBaseOf(%s, %s) = %s, the ancestry walk says %s", a.ID, b.ID, got.ID, want)
	}
	_, err = p.lookupDone("lookup: merge base", err)
	return err
}

// loggedCommit picks a random commit of the first log page of branch (a
// walk of its manifests, which no aid serves); ok=false if the branch is
// gone or the read failed benignly.
func (p *Proc) loggedCommit(branch string) (kernel.Commit, bool, error) {
	ref, err := p.g.Branch(p.Ctx(), branch)
	if errors.Is(err, kernel.ErrBranchNotFound) {
		return kernel.Commit{}, false, nil
	}
	if err != nil {
		return kernel.Commit{}, false, p.readFailed("lookup: branch", err)
	}
	c, ok, err := p.oldCommit(ref)
	if err != nil {
		return kernel.Commit{}, false, p.readFailed("lookup: log", err)
	}
	return c, ok, nil
}

// walkParents loads the ancestry of a and b (id -> parents) through the
// process's own handle, commit by commit; ok=false when it exceeds
// maxLookupAncestry or a read failed benignly.
func (p *Proc) walkParents(a, b kernel.CommitID) (map[format.ID][]format.ID, bool, error) {
	parents := map[format.ID][]format.ID{}
	queue := []kernel.CommitID{a, b}
	for len(queue) > 0 {
		id := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if _, seen := parents[id]; seen {
			continue
		}
		if len(parents) >= maxLookupAncestry {
			return nil, false, nil
		}
		c, err := p.g.Commit(p.Ctx(), id)
		if err != nil {
			return nil, false, p.readFailed("lookup: ancestry", err)
		}
		parents[id] = c.Parents
		queue = append(queue, c.Parents...)
	}
	return parents, true, nil
}

// lookupDone ends the op on a failed read: done=true with the error that
// ends the process, or nil when the failure was benign (faults, a deleted
// branch's commit is still found, so only faults are benign here).
func (p *Proc) lookupDone(what string, err error) (bool, error) {
	if err == nil {
		return false, nil
	}
	return true, p.readFailed(what, err)
}

func (p *Proc) violateLookup(f string, a ...any) {
	p.run.Violate(check.Violation{Check: "cold-lookup", Detail: p.name + ": " + fmt.Sprintf(f, a...)})
}
