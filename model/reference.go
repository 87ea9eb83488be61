package model

import (
	"errors"
	"fmt"
	"sort"
)

// Errors of the reference model. Tests map them to the kernel's sentinels.
var (
	ErrRefInvalidName   = errors.New("reference: invalid name")
	ErrRefProtected     = errors.New("reference: main is protected")
	ErrRefExists        = errors.New("reference: branch exists")
	ErrRefNoBranch      = errors.New("reference: branch not found")
	ErrRefNoCommit      = errors.New("reference: commit not found")
	ErrRefHasDependents = errors.New("reference: branch has dependents")
	ErrRefInvalid       = errors.New("reference: invalid request")
)

// RefMain is the protected branch every reference graph starts with.
const RefMain = "main"

// Incarnation names one incarnation of a branch name.
type Incarnation struct {
	Name string
	N    int // 1, 2, ... per name
}

// RefCommit is one commit of the reference model: its parents (first =
// previous head) and the full table state visible at it.
type RefCommit struct {
	ID      string
	Parents []string
	Tables  map[string]string // table -> value
	Home    Incarnation       // where it was published
}

type refBranch struct {
	inc        Incarnation
	head       string
	forkedFrom *Incarnation // nil for main
}

// Reference is a small, pure, sequential model of the kernel's public API:
// branches (with incarnations) pointing at commits, commits holding parents
// and table values. It does no I/O and has no notion of concurrency or
// storage; commit ids are supplied by the caller (the kernel mints them).
// It is deliberately written independently of kernel/lineage, so that
// comparing the two checks the kernel rather than restating it.
type Reference struct {
	branches map[string]*refBranch
	commits  map[string]RefCommit
	incs     map[string]int // last incarnation number per name ever created
}

// NewReference returns a graph holding main with a genesis commit.
func NewReference(genesisID string) *Reference {
	r := &Reference{branches: map[string]*refBranch{}, commits: map[string]RefCommit{}, incs: map[string]int{}}
	main := Incarnation{Name: RefMain, N: 1}
	r.incs[RefMain] = 1
	r.commits[genesisID] = RefCommit{ID: genesisID, Tables: map[string]string{}, Home: main}
	r.branches[RefMain] = &refBranch{inc: main, head: genesisID}
	return r
}

// ValidRefName mirrors the documented name rules: 1..64 bytes of
// [A-Za-z0-9._-], not starting with '.' or '-'.
func ValidRefName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '.' || name[0] == '-' {
		return false
	}
	for _, c := range []byte(name) {
		ok := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

func (r *Reference) branch(name string) (*refBranch, error) {
	if !ValidRefName(name) {
		return nil, fmt.Errorf("%w: %q", ErrRefInvalidName, name)
	}
	b, ok := r.branches[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrRefNoBranch, name)
	}
	return b, nil
}

// Branches returns the live branch names, sorted.
func (r *Reference) Branches() []string {
	out := make([]string, 0, len(r.branches))
	//detlint:ordered collects names that are sorted next
	for n := range r.branches {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// IncarnationOf returns the live incarnation of name.
func (r *Reference) IncarnationOf(name string) (Incarnation, error) {
	b, err := r.branch(name)
	if err != nil {
		return Incarnation{}, err
	}
	return b.inc, nil
}

// Head returns the head commit id of branch name.
func (r *Reference) Head(name string) (string, error) {
	b, err := r.branch(name)
	if err != nil {
		return "", err
	}
	return b.head, nil
}

// CommitIDs returns every commit id ever made, sorted.
func (r *Reference) CommitIDs() []string {
	out := make([]string, 0, len(r.commits))
	//detlint:ordered collects ids that are sorted next
	for id := range r.commits {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Commit returns commit id.
func (r *Reference) Commit(id string) (RefCommit, error) {
	c, ok := r.commits[id]
	if !ok {
		return RefCommit{}, fmt.Errorf("%w: %s", ErrRefNoCommit, id)
	}
	return c, nil
}

// Tables returns the table values visible at commit id.
func (r *Reference) Tables(id string) (map[string]string, error) {
	c, err := r.Commit(id)
	if err != nil {
		return nil, err
	}
	return copyTables(c.Tables), nil
}

func copyTables(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	//detlint:ordered copies into another map
	for k, v := range t {
		out[k] = v
	}
	return out
}

// CommitOn adds commit id on branch name with the given table writes.
func (r *Reference) CommitOn(name, id string, writes map[string]string) error {
	b, err := r.branch(name)
	if err != nil {
		return err
	}
	if _, dup := r.commits[id]; dup {
		return fmt.Errorf("%w: duplicate commit id %s", ErrRefInvalid, id)
	}
	tables := copyTables(r.commits[b.head].Tables)
	//detlint:ordered writes into a map
	for k, v := range writes {
		tables[k] = v
	}
	r.commits[id] = RefCommit{ID: id, Parents: []string{b.head}, Tables: tables, Home: b.inc}
	b.head = id
	return nil
}

// Merge adds merge commit id on branch name with second parent merged; the
// table state is the branch's (the kernel merges lineage, not data).
func (r *Reference) Merge(name, id, merged string) error {
	b, err := r.branch(name)
	if err != nil {
		return err
	}
	if _, ok := r.commits[merged]; !ok {
		return fmt.Errorf("%w: %s", ErrRefNoCommit, merged)
	}
	if merged == b.head {
		return fmt.Errorf("%w: merging the head into itself", ErrRefInvalid)
	}
	r.commits[id] = RefCommit{ID: id, Parents: []string{b.head, merged}, Tables: copyTables(r.commits[b.head].Tables), Home: b.inc}
	b.head = id
	return nil
}

func (r *Reference) checkCreate(name string) error {
	switch {
	case !ValidRefName(name):
		return fmt.Errorf("%w: %q", ErrRefInvalidName, name)
	case name == RefMain:
		return fmt.Errorf("%w: main", ErrRefExists)
	}
	return nil
}

func (r *Reference) create(name, head string, from Incarnation) error {
	if _, ok := r.branches[name]; ok {
		return fmt.Errorf("%w: %q", ErrRefExists, name)
	}
	r.incs[name]++
	r.branches[name] = &refBranch{inc: Incarnation{Name: name, N: r.incs[name]}, head: head, forkedFrom: &from}
	return nil
}

// CreateBranch creates name at the head of branch from.
func (r *Reference) CreateBranch(name, from string) error {
	if err := r.checkCreate(name); err != nil {
		return err
	}
	src, err := r.branch(from)
	if err != nil {
		return err
	}
	return r.create(name, src.head, src.inc)
}

// CreateBranchAt creates name at commit id, forked from the incarnation the
// commit was published on.
func (r *Reference) CreateBranchAt(name, id string) error {
	if err := r.checkCreate(name); err != nil {
		return err
	}
	c, err := r.Commit(id)
	if err != nil {
		return err
	}
	return r.create(name, id, c.Home)
}

// DeleteBranch deletes name unless it is main or live branches were forked
// from its live incarnation; dependents lists those (sorted).
func (r *Reference) DeleteBranch(name string) (dependents []string, err error) {
	if name == RefMain {
		return nil, ErrRefProtected
	}
	b, err := r.branch(name)
	if err != nil {
		return nil, err
	}
	for _, other := range r.Branches() {
		if ob := r.branches[other]; other != name && ob.forkedFrom != nil && *ob.forkedFrom == b.inc {
			dependents = append(dependents, other)
		}
	}
	if len(dependents) > 0 {
		return dependents, fmt.Errorf("%w: %v", ErrRefHasDependents, dependents)
	}
	delete(r.branches, name)
	return nil, nil
}

// Log returns branch name's first-parent history, newest first.
func (r *Reference) Log(name string) ([]string, error) {
	b, err := r.branch(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for id := b.head; ; {
		out = append(out, id)
		ps := r.commits[id].Parents
		if len(ps) == 0 {
			return out, nil
		}
		id = ps[0]
	}
}

// ancestors returns every commit reachable from id (id included).
func (r *Reference) ancestors(id string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		stack = append(stack, r.commits[x].Parents...)
	}
	return seen
}

// MergeBase returns the best common ancestor of the heads of a and b: a
// common ancestor from which no other common ancestor descends; among
// several, the greatest id. (Quadratic on purpose: a plain restatement of
// the definition.)
func (r *Reference) MergeBase(a, b string) (string, error) {
	ha, err := r.Head(a)
	if err != nil {
		return "", err
	}
	hb, err := r.Head(b)
	if err != nil {
		return "", err
	}
	return r.MergeBaseOf(ha, hb)
}

// MergeBaseOf returns the best common ancestor of commits ha and hb, by the
// rule of MergeBase, or ErrRefNoCommit.
func (r *Reference) MergeBaseOf(ha, hb string) (string, error) {
	if _, ok := r.commits[ha]; !ok {
		return "", ErrRefNoCommit
	}
	if _, ok := r.commits[hb]; !ok {
		return "", ErrRefNoCommit
	}
	inA, inB := r.ancestors(ha), r.ancestors(hb)
	var common []string
	for _, id := range r.CommitIDs() {
		if inA[id] && inB[id] {
			common = append(common, id)
		}
	}
	best := ""
	for _, c := range common {
		dominated := false
		for _, d := range common {
			if d != c && r.ancestors(d)[c] {
				dominated = true
				break
			}
		}
		if !dominated && c > best {
			best = c
		}
	}
	if best == "" {
		return "", ErrRefNoCommit
	}
	return best, nil
}
