// Package kerneltest is test support for the kernel and the simulator: a
// deterministic environment, a reader of a graph's visible state (for "pre
// or post, never a mix" comparisons), inspection of recovery objects, and
// the exhaustive crash-cut sweep (SweepCuts) that the kernel's recovery
// tests and the simulator's cuts workload both run.
//
// It is an ordinary package (not a _test file) so the simulator can import
// it; nothing in the kernel imports it.
package kerneltest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Epoch is the start time of every ManualClock Env builds.
var Epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// Env returns a deterministic kernel environment: a ManualClock at Epoch,
// ChaCha8 entropy seeded from seed, and the failpoint set fps (nil:
// disabled). Handles that must mint distinct ids need distinct seeds.
func Env(seed uint64, fps *failpoint.Set) kernel.Env { return EnvAt(seed, fps, Epoch) }

// Later is a start time past kernel.RecoveryLease for any sidecar written
// by an Env handle that has not slept for an hour: handles starting there
// see every such sidecar as abandoned.
var Later = Epoch.Add(time.Hour)

// EpochSkewMargin is the kernel.Options.SkewMargin of Epoch handles in
// tests that also run Later handles: there the hour between the clocks
// stands for time that passed (a recoverer past the lease), not for a
// wrong clock, so an Epoch handle must not refuse to build on a Later
// handle's commit (docs/gc.md §4).
const EpochSkewMargin = 2 * time.Hour

// EnvAt is Env with the ManualClock starting at start.
func EnvAt(seed uint64, fps *failpoint.Set, start time.Time) kernel.Env {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	s[31] = 0x5e // keep these streams apart from other test helpers'
	return kernel.Env{Clock: kernel.NewManualClock(start), Entropy: rand.NewChaCha8(s), Failpoints: fps}
}

// Inspector reads a store's durable state without faults or hooks
// (objstore/sim's Keys and Peek satisfy it).
type Inspector interface {
	Keys(prefix string) []string
	Peek(key string) ([]byte, bool)
}

// Sidecars returns the recovery sidecar keys under root, sorted.
func Sidecars(in Inspector, root string) []string {
	return in.Keys(format.NewKeys(root).SidecarPrefix())
}

// AuditCounts returns, per operation id, how many audit records exist under
// root (the invariant is at most one).
func AuditCounts(in Inspector, root string) map[string]int {
	prefix := format.NewKeys(root).AuditPrefix()
	out := map[string]int{}
	for _, k := range in.Keys(prefix) {
		op, _, _ := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		out[op]++
	}
	return out
}

// Audits decodes every audit record under root, sorted by key.
func Audits(in Inspector, root string) ([]format.Audit, error) {
	var out []format.Audit
	for _, k := range in.Keys(format.NewKeys(root).AuditPrefix()) {
		b, ok := in.Peek(k)
		if !ok {
			continue
		}
		a, _, err := format.DecodeAudit(b)
		if err != nil {
			return nil, fmt.Errorf("audit %s: %w", k, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// SidecarOps returns the operation ids of the sidecars under root.
func SidecarOps(in Inspector, root string) ([]string, error) {
	keys := format.NewKeys(root)
	var ops []string
	for _, k := range Sidecars(in, root) {
		id, err := keys.ParseSidecarKey(k)
		if err != nil {
			return nil, err
		}
		ops = append(ops, id.String())
	}
	return ops, nil
}

// State is the visible state of a graph: for every live branch, the content
// of every pinned table and the messages of its history. Recovery roll-back
// commits (actor kernel.RecoveryActor, message prefix
// kernel.RecoveryMessagePrefix) are left out: they change no content. A
// roll-forward commit carries the writer's message, so it counts like the
// writer's own commit.
type State struct {
	Branches []BranchState
}

// BranchState is one branch of a State.
type BranchState struct {
	Name    string
	Tables  []TableState
	History []string // commit messages, newest first
}

// TableState is the content of one pinned table version (not its version
// number: a roll-back restores content by writing a new version).
type TableState struct {
	Table     string
	Fragments []string
	Rows      uint64
	Metadata  []format.KV
}

// String renders s canonically; two states are equal iff their strings are.
func (s State) String() string {
	var b strings.Builder
	for _, br := range s.Branches {
		fmt.Fprintf(&b, "branch %s\n", br.Name)
		for _, t := range br.Tables {
			fmt.Fprintf(&b, "  table %s rows=%d fragments=%q metadata=%v\n", t.Table, t.Rows, t.Fragments, t.Metadata)
		}
		fmt.Fprintf(&b, "  history %q\n", br.History)
	}
	return b.String()
}

// MaxStateCommits bounds the history ReadState walks per branch.
const MaxStateCommits = 10_000

// ReadState reads the visible state of g (any handle, read-only is fine).
func ReadState(ctx context.Context, g *kernel.Graph) (State, error) {
	refs, err := g.ListBranches(ctx)
	if err != nil {
		return State{}, err
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name() < refs[j].Name() })
	var s State
	for _, b := range refs {
		bs, err := readBranch(ctx, g, b)
		if err != nil {
			return State{}, fmt.Errorf("branch %s: %w", b, err)
		}
		s.Branches = append(s.Branches, bs)
	}
	return s, nil
}

func readBranch(ctx context.Context, g *kernel.Graph, b kernel.BranchRef) (BranchState, error) {
	bs := BranchState{Name: b.Name()}
	snap, err := g.SnapshotAt(ctx, b)
	if err != nil {
		return bs, err
	}
	for _, p := range snap.Tables() {
		tv, err := g.ReadPinned(ctx, p)
		if err != nil {
			return bs, err
		}
		bs.Tables = append(bs.Tables, TableState{Table: p.Name, Fragments: tv.Fragments, Rows: tv.Rows, Metadata: tv.Metadata})
	}
	cur := kernel.LogCursor("")
	for n := 0; ; {
		page, err := g.Log(ctx, b, cur, 0)
		if err != nil {
			return bs, err
		}
		for _, c := range page.Commits {
			if c.Actor == kernel.RecoveryActor && strings.HasPrefix(c.Message, kernel.RecoveryMessagePrefix) {
				continue
			}
			bs.History = append(bs.History, c.Message)
		}
		n += len(page.Commits)
		if page.Next == "" {
			return bs, nil
		}
		if n > MaxStateCommits {
			return bs, errors.New("history longer than MaxStateCommits")
		}
		cur = page.Next
	}
}

// RecoveryCommitProblems counts effects, not only records: it lists every
// recovery commit (kind recovery) under root that no audit record names, or
// that more than one names, and every audit record naming a commit in no
// chain. Empty means each recovery commit is named by exactly one audit.
func RecoveryCommitProblems(in Inspector, root string) ([]string, error) {
	as, err := Audits(in, root)
	if err != nil {
		return nil, err
	}
	named := map[format.ID]int{}
	for _, a := range as {
		if a.RecoveryCommit != (format.ID{}) {
			named[a.RecoveryCommit]++
		}
	}
	var problems []string
	inChain := map[format.ID]bool{}
	for _, k := range in.Keys(format.NewKeys(root).Root() + "/branches/") {
		b, _ := in.Peek(k)
		m, _, err := format.DecodeManifestAnyStamp(b)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", k, err)
		}
		if m.Commit == nil {
			continue
		}
		inChain[m.Commit.ID] = true
		if m.Commit.Kind == format.KindRecovery && named[m.Commit.ID] != 1 {
			problems = append(problems, fmt.Sprintf("recovery commit %s at %s is named by %d audit records, want exactly 1", m.Commit.ID, k, named[m.Commit.ID]))
		}
	}
	for _, a := range as {
		if a.RecoveryCommit != (format.ID{}) && !inChain[a.RecoveryCommit] {
			problems = append(problems, fmt.Sprintf("the audit record of op %s names commit %s, which is in no chain", a.Op, a.RecoveryCommit))
		}
	}
	return problems, nil
}
