package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
)

// Commit validates the whole transaction and, if it holds, writes one new
// version of every touched table and publishes them in one commit.
//
// Order of effects: (1) the bounds and the mixing rule were enforced while
// staging, before any I/O; (2) Commit reads the branch's live head and the
// data the rules need, and validates every rule (see validate) against the
// pinned base (endpoints, remaining edges of deleted nodes) and the tables'
// live published versions (id existence, cardinality); (3) only then does
// it write new fragments and hand one TableWrite per table to kernel.Write,
// which commits the table versions and publishes once. A rejected
// transaction has written nothing and moved no table HEAD.
//
// Strict tables (an Update or Delete, including cascaded edge deletes) must
// still be at the base version: otherwise Commit returns an error matching
// kernel.ErrVersionMismatch, and the caller should Begin a new transaction
// and retry. Non-strict tables rebase onto newer versions and are
// re-validated against them.
func (t *Txn) Commit(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return kernel.Commit{}, ErrTxnDone
	}
	defer t.finish()
	if len(t.s.tables) == 0 {
		return kernel.Commit{}, ErrEmptyTransaction
	}
	if t.s.rows > t.s.limits.MaxRows || t.s.bytes > t.s.limits.MaxBytes {
		panic(fmt.Sprintf("data: staged %d rows / %d bytes beyond the limits admit enforces", t.s.rows, t.s.bytes))
	}
	c, err := t.commit(ctx, intent)
	if err != nil {
		return kernel.Commit{}, fmt.Errorf("commit on %s: %w", t.branch, err)
	}
	return c, nil
}

// committer carries one Commit: the loaded views, the plans and the
// content built for each table at the version it was validated against.
type committer struct {
	t     *Txn
	live  kernel.Snapshot
	vs    viewSet
	plans map[string]*tablePlan
	built map[string]builtAt
}

// builtAt is a table's new content and the published version it was built
// on; content is set once its fragments are written.
type builtAt struct {
	on      kernel.TableRef
	b       builtTable
	content *kernel.TableContent
}

func (t *Txn) commit(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	live, err := t.g.k.SnapshotAt(ctx, t.branch)
	if err != nil {
		return kernel.Commit{}, err
	}
	c := &committer{t: t, live: live, built: map[string]builtAt{}}
	if err := c.checkStrict(t.stagedStrict()); err != nil {
		return kernel.Commit{}, err
	}
	if err := c.load(ctx); err != nil {
		return kernel.Commit{}, err
	}
	if c.plans, err = validate(t.s, c.vs); err != nil {
		return kernel.Commit{}, err
	}
	if err := c.checkStrict(c.strictPlans()); err != nil {
		return kernel.Commit{}, err
	}
	for _, name := range keys(c.plans) {
		if err := c.build(ctx, name, pinRef(live, name)); err != nil {
			return kernel.Commit{}, err
		}
	}
	defer c.release()
	return t.g.k.Write(ctx, t.branch, c.writes(ctx), intent)
}

// stagedStrict lists the staged tables with an Update or Delete.
func (t *Txn) stagedStrict() []string {
	var out []string
	for _, name := range t.s.names() {
		st := t.s.tables[name]
		strict := len(st.deletes) > 0
		for _, w := range st.writes {
			strict = strict || w.op.Strict()
		}
		if strict {
			out = append(out, name)
		}
	}
	return out
}

func (c *committer) strictPlans() []string {
	var out []string
	for _, name := range keys(c.plans) {
		if c.plans[name].strict {
			out = append(out, name)
		}
	}
	return out
}

// checkStrict fails, before any write, if a strict table moved since Begin.
func (c *committer) checkStrict(tables []string) error {
	for _, name := range tables {
		base, live := pinRef(c.t.base, name), pinRef(c.live, name)
		if base != live {
			return fmt.Errorf("table %s changed since the transaction began; begin a new transaction and retry: %w",
				name, &kernel.VersionMismatchError{Table: name, Expected: base.Version, Actual: live.Version})
		}
	}
	return nil
}

// load reads what validation needs: the live version of every table the
// transaction may touch, and the base version of the tables whose rows
// must exist (edge endpoints) or whose edges a node delete must see.
func (c *committer) load(ctx context.Context) error {
	c.vs = viewSet{base: map[string]*tableView{}, head: map[string]*tableView{}}
	s := c.t.s
	for _, name := range s.names() {
		st := s.tables[name]
		head, err := c.headView(ctx, name)
		if err != nil {
			return err
		}
		if err := c.t.r.loadIDs(ctx, head, pendingIDs(st)); err != nil {
			return err
		}
		if err := c.loadEndpoints(ctx, st); err != nil {
			return err
		}
		if len(st.deletes) > 0 && !st.t.Edge {
			for _, e := range c.t.cat.edgesTouching(name) {
				if err := c.loadEdgesFully(ctx, e.Name); err != nil {
					return err
				}
			}
		}
	}
	for _, name := range c.t.cat.names {
		e := c.t.cat.tables[name]
		_, staged := s.tables[name]
		_, fromStaged := s.tables[e.From]
		// A bounded edge type is counted when it is written, or when its
		// from type gains nodes that need a minimum of out-edges.
		if e.Edge && !e.Card.IsDefault() && (staged || (fromStaged && e.Card.Min > 0)) {
			if err := c.loadEdgesFully(ctx, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// headView returns the view of table at its live published version.
func (c *committer) headView(ctx context.Context, name string) (*tableView, error) {
	if v, ok := c.vs.head[name]; ok {
		return v, nil
	}
	tb, err := c.t.cat.table(name)
	if err != nil {
		return nil, err
	}
	v, err := c.t.r.view(ctx, tb, pinRef(c.live, name))
	if err != nil {
		return nil, err
	}
	c.vs.head[name] = v
	return v, nil
}

// baseView returns the base view of table, shared with its head view when
// both name the same version.
func (c *committer) baseView(ctx context.Context, name string) (*tableView, error) {
	if v, ok := c.vs.base[name]; ok {
		return v, nil
	}
	var v *tableView
	var err error
	if pinRef(c.t.base, name) == pinRef(c.live, name) {
		v, err = c.headView(ctx, name)
	} else {
		v, err = c.t.baseView(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	c.vs.base[name] = v
	return v, nil
}

// loadEndpoints loads, in the base views of the endpoint node types, the
// fragments that may hold the endpoints of st's pending edges.
func (c *committer) loadEndpoints(ctx context.Context, st *stagedTable) error {
	if !st.t.Edge {
		return nil
	}
	var from, to []string
	for _, ref := range st.index() {
		from = append(from, st.str(ref, colFrom))
		to = append(to, st.str(ref, colTo))
	}
	for _, end := range [2]struct {
		typ string
		ids []string
	}{{st.t.From, from}, {st.t.To, to}} {
		v, err := c.baseView(ctx, end.typ)
		if err != nil {
			return err
		}
		if err := c.t.r.loadIDs(ctx, v, end.ids); err != nil {
			return err
		}
	}
	return nil
}

// loadEdgesFully loads an edge table completely at its live and base
// versions (cardinality counts and node-delete checks need every edge).
func (c *committer) loadEdgesFully(ctx context.Context, name string) error {
	head, err := c.headView(ctx, name)
	if err != nil {
		return err
	}
	base, err := c.baseView(ctx, name)
	if err != nil {
		return err
	}
	if err := c.t.r.loadAll(ctx, head); err != nil {
		return err
	}
	return c.t.r.loadAll(ctx, base)
}

func pendingIDs(st *stagedTable) []string {
	ids := make([]string, 0, len(st.deletes))
	for _, ref := range st.index() {
		ids = append(ids, st.id(ref))
	}
	for _, d := range st.deletes {
		ids = append(ids, d.id)
	}
	return ids
}

// build computes (pure, after loading the fragments a merge rewrites) the
// new content of table name on version on.
func (c *committer) build(ctx context.Context, name string, on kernel.TableRef) error {
	p := c.plans[name]
	if err := c.t.r.loadTail(ctx, p.head, mergeCount(p.head.frags, uint64(len(p.inserts)))); err != nil {
		return err
	}
	c.built[name] = builtAt{on: on, b: buildTable(p)}
	return nil
}

func (c *committer) release() {
	for _, b := range c.built { //detlint:ordered releases every record; no output
		b.b.release()
	}
}

// writes returns one kernel.TableWrite per planned table, in name order.
func (c *committer) writes(ctx context.Context) []kernel.TableWrite {
	var out []kernel.TableWrite
	for _, name := range keys(c.plans) {
		out = append(out, kernel.TableWrite{
			Table:       name,
			Strict:      c.plans[name].strict,
			BaseVersion: pinRef(c.t.base, name).Version,
			Build: func(pinned kernel.TableVersion) (kernel.TableContent, error) {
				return c.content(ctx, name, kernel.TableRef{Fork: pinned.Fork, Version: pinned.Version})
			},
		})
	}
	return out
}

// content is the Build of one table: the content validated on version on,
// with its fragments written (once). On a newer version, a non-strict table
// is reloaded, re-validated and rebuilt; a strict one is stale.
func (c *committer) content(ctx context.Context, name string, on kernel.TableRef) (kernel.TableContent, error) {
	b := c.built[name]
	if b.on != on {
		if c.plans[name].strict {
			return kernel.TableContent{}, &kernel.VersionMismatchError{Table: name, Expected: b.on.Version, Actual: on.Version}
		}
		if err := c.rebase(ctx, name, on); err != nil {
			return kernel.TableContent{}, err
		}
		b = c.built[name]
	}
	if b.content != nil {
		return *b.content, nil
	}
	content, err := c.materialize(ctx, c.plans[name].t, b.b)
	if err != nil {
		return kernel.TableContent{}, err
	}
	b.content = &content
	c.built[name] = b
	return content, nil
}

// rebase re-validates the transaction with table name's head view at the
// newer published version on, and rebuilds that table.
func (c *committer) rebase(ctx context.Context, name string, on kernel.TableRef) error {
	tb := c.plans[name].t
	v, err := c.t.r.view(ctx, tb, on)
	if err != nil {
		return err
	}
	if err := c.t.r.loadIDs(ctx, v, pendingIDs(c.t.s.tables[name])); err != nil {
		return err
	}
	if tb.Edge && !tb.Card.IsDefault() {
		if err := c.t.r.loadAll(ctx, v); err != nil {
			return err
		}
	}
	c.vs.head[name] = v
	plans, err := validate(c.t.s, c.vs)
	if err != nil {
		return err
	}
	c.plans[name] = plans[name]
	c.built[name].b.release()
	return c.build(ctx, name, on)
}

// materialize writes the new fragments of a build and returns the table
// content. A new fragment that breaks the fragment rules is an internal bug.
func (c *committer) materialize(ctx context.Context, t *Table, b builtTable) (kernel.TableContent, error) {
	infos := make([]FragmentInfo, 0, len(b.frags))
	var rows uint64
	for _, f := range b.frags {
		if f.keep != nil {
			infos = append(infos, *f.keep)
			rows += f.keep.Rows
			continue
		}
		data, info, err := EncodeFragment(t, f.rec)
		if err != nil {
			panic(fmt.Sprintf("data: built fragment of %s breaks the fragment rules: %v", t.Name, err))
		}
		id, err := c.t.g.mintName()
		if err != nil {
			return kernel.TableContent{}, err
		}
		if err := c.t.g.putFragment(ctx, c.t.g.keys.Data(t.Name, id), data); err != nil {
			return kernel.TableContent{}, err
		}
		info.Name = id.String()
		infos = append(infos, info)
		rows += info.Rows
	}
	if rows != b.rows {
		panic(fmt.Sprintf("data: content of %s has %d rows, build counted %d", t.Name, rows, b.rows))
	}
	return tableContent(infos, rows), nil
}
