package data

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/internal/plant"
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
// it write new fragments and hand one TableWrite per table to
// kernel.WriteWith, which commits the table versions and publishes once. A
// rejected transaction has written nothing and moved no table HEAD.
//
// Strict tables (an Update or Delete, including cascaded edge deletes) must
// still be at the base version: otherwise Commit returns an error matching
// kernel.ErrVersionMismatch, and the caller should Begin a new transaction
// and retry. Non-strict tables rebase onto newer versions and are
// re-validated against them.
//
// Tables the transaction read but does not write are expected too (kernel
// read expectations), so a concurrent node delete and edge insert can never
// both publish (no dangling edge): pending edges expect their endpoint node
// types at the version the endpoints were found in (the base; a node type
// the transaction also writes is expected by its write) and, when such a
// type moved, re-check the endpoints on the newer version; a node delete
// strictly expects every edge type touching the node type at the base
// version it found no remaining edges in (else a version mismatch: begin a
// new transaction and retry).
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
	c, err := t.commitGrouped(ctx, intent) // group.go: t.commit unless group commit applies
	if err != nil {
		return kernel.Commit{}, fmt.Errorf("commit on %s: %w", t.branch, err)
	}
	return c, nil
}

// WriterKindTxn is the writer kind of every transaction commit: recorded in
// its recovery sidecars and in any audit record recovery writes for them.
const WriterKindTxn = "txn"

// committer carries one Commit: the loaded views, the plans and the
// content built for each table at the version it was validated against.
type committer struct {
	t     *Txn
	live  kernel.Snapshot
	vs    viewSet
	plans map[string]*tablePlan
	built map[string]builtAt
	// ends holds, per node type a pending edge ends at, the view its
	// endpoints are checked at: the version the publish will expect.
	ends map[string]*tableView
}

// builtAt is a table's new content and the published version it was built
// on; content is set once its fragments are written.
type builtAt struct {
	on      kernel.TableRef
	b       builtTable
	content *kernel.TableContent
	// unbuilt: a rebase validated the table on on and released its old
	// build, but the rebuild failed; b holds nothing, and the next content
	// call rebuilds (the kernel calls Build again after a refusal on its
	// view, e.g. a fragment reclaimed: ErrReclaimed).
	unbuilt bool
}

// commit validates on the handle's view of the branch (kernel
// SnapshotView: no head discovery when the view is current; the publish's
// create-only write finds a stale one out and the write rebases). A
// refusal computed on the view is returned only once a loaded head
// confirms it: the view is re-read with SnapshotAt and, if the head
// moved, the transaction is validated again on it.
func (t *Txn) commit(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	live, err := t.g.k.SnapshotView(ctx, t.branch)
	if err != nil {
		return kernel.Commit{}, err
	}
	c, err := t.prepareBuilt(ctx, live)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		fresh, ferr := t.g.k.SnapshotAt(ctx, t.branch)
		if ferr != nil || sameHead(fresh, live) {
			return kernel.Commit{}, err
		}
		c, err = t.prepareBuilt(ctx, fresh)
	}
	if err != nil {
		return kernel.Commit{}, err
	}
	return c.publish(ctx, intent)
}

// sameHead reports whether a and b are the same head of one incarnation.
func sameHead(a, b kernel.Snapshot) bool {
	return a.Incarnation() == b.Incarnation() && a.ManifestVersion() == b.ManifestVersion()
}

// prepareBuilt validates the transaction on live and builds every planned
// table. On error it has released what it built.
func (t *Txn) prepareBuilt(ctx context.Context, live kernel.Snapshot) (*committer, error) {
	c, err := t.prepare(ctx, live)
	if err != nil {
		return nil, err
	}
	if err := c.buildAll(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// prepare loads what validation needs at the live snapshot and validates
// the transaction (every check before any write); the group commit
// (group.go) validates through it too.
//
// A live snapshot under another schema than the transaction's base is
// refused first, with the *kernel.SchemaChangedError the publish would
// return: its table versions may hold columns the transaction's catalog
// does not know (a row written under the new schema through the same
// handle), so loading them under that catalog would misread them.
func (t *Txn) prepare(ctx context.Context, live kernel.Snapshot) (*committer, error) {
	if live.SchemaHash() != t.base.SchemaHash() && !plant.Enabled(plant.StaleSchemaValidate) { // the plant skips this gate too
		return nil, fmt.Errorf("transaction staged under the schema of its base: %w",
			&kernel.SchemaChangedError{Branch: t.branch.Name(), Expected: t.base.SchemaHash(), Actual: live.SchemaHash()})
	}
	c := &committer{t: t, live: live, built: map[string]builtAt{}, ends: map[string]*tableView{}}
	if err := c.checkStrict(ctx, t.stagedStrict()); err != nil {
		return nil, err
	}
	if err := c.load(ctx); err != nil {
		return nil, err
	}
	var err error
	if c.plans, err = validate(t.s, c.vs); err != nil {
		return nil, err
	}
	if !c.endsAreBase() { // else validate's rule 3 just checked exactly this
		if err := c.checkEnds(); err != nil {
			return nil, err
		}
	}
	if err := c.checkStrict(ctx, c.strictPlans()); err != nil {
		return nil, err
	}
	if err := c.checkStrict(ctx, c.deleteReads()); err != nil {
		return nil, err
	}
	return c, nil
}

// buildAll builds every planned table on its live version. On error it
// has released what it built.
func (c *committer) buildAll(ctx context.Context) error {
	for _, name := range keys(c.plans) {
		if err := c.build(ctx, name, c.t.cat.pin(c.live, name).Ref()); err != nil {
			c.release()
			return err
		}
	}
	return nil
}

// write builds every planned table and publishes them (the group
// commit's path: its members were validated together).
func (c *committer) write(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	if err := c.buildAll(ctx); err != nil {
		return kernel.Commit{}, err
	}
	return c.publish(ctx, intent)
}

// publish hands the built tables to kernel.WriteWith, which commits the
// table versions and publishes once, and releases what was built.
func (c *committer) publish(ctx context.Context, intent kernel.LineageIntent) (kernel.Commit, error) {
	defer c.release()
	opts := kernel.WriteOptions{Kind: WriterKindTxn, Expect: c.expectations(ctx), FollowCompactions: true}
	// Validated against the schema the transaction began under: a schema
	// change since is *kernel.SchemaChangedError at the publish.
	intent.ExpectSchema = c.t.base.SchemaHash()
	return c.t.g.k.WriteWith(ctx, c.t.branch, c.writes(ctx), intent, opts)
}

// expectations are the kernel read expectations of the transaction: the
// endpoint node types it does not write (non-strict: re-check the
// endpoints on a newer version) and the edge types a node delete checked
// for remaining edges that it does not write (strict).
func (c *committer) expectations(ctx context.Context) []kernel.ReadExpectation {
	var out []kernel.ReadExpectation
	for _, typ := range keys(c.ends) {
		if _, written := c.plans[typ]; !written {
			out = append(out, kernel.ReadExpectation{Table: c.t.cat.store(typ), Version: c.t.cat.pin(c.t.base, typ).Version, Revalidate: c.revalidateEnds(ctx, typ)})
		}
	}
	for _, name := range c.deleteReads() {
		out = append(out, kernel.ReadExpectation{Table: c.t.cat.store(name), Version: c.t.cat.pin(c.t.base, name).Version, Strict: true})
	}
	return out
}

// deleteReads lists, sorted, the edge types touching a node type the
// transaction deletes from that it does not write itself: their base
// versions are what the remaining-edges rule read.
func (c *committer) deleteReads() []string {
	set := map[string]bool{}
	for _, name := range c.t.s.names() {
		st := c.t.s.tables[name]
		if st.t.Edge || len(st.deletes) == 0 {
			continue
		}
		for _, e := range c.t.cat.edgesTouching(name) {
			if _, written := c.plans[e.Name]; !written {
				set[e.Name] = true
			}
		}
	}
	return keys(set)
}

// checkEnds checks every pending edge's endpoints in c.ends (and the
// pending writes): at the versions the publish will expect.
func (c *committer) checkEnds() error {
	return checkEndpoints(c.t.s, viewSet{base: c.ends})
}

// endsAreBase reports whether every endpoint type's view in c.ends is its
// base view: checkEnds then computes what validate's checkEndpoints did
// on the same views (a pure function of them), so a bulk commit need not
// look up every endpoint twice.
func (c *committer) endsAreBase() bool {
	for typ, v := range c.ends { //detlint:ordered all-of test; order-free
		if c.vs.base[typ] != v {
			return false
		}
	}
	return true
}

// revalidateEnds is the Revalidate of endpoint node type typ: load its
// newly published version and check the endpoints there.
func (c *committer) revalidateEnds(ctx context.Context, typ string) func(kernel.TableVersion) error {
	return func(p kernel.TableVersion) error {
		tb, err := c.t.cat.table(typ)
		if err != nil {
			return err
		}
		v, err := c.t.r.viewAt(tb, p)
		if err != nil {
			return err
		}
		if err := c.t.r.notePresence(ctx, v, c.t.s.endpointIDs(typ)); err != nil {
			return err
		}
		c.ends[typ] = v
		return c.checkEnds()
	}
}

// stagedStrict lists the staged tables with an Update or Delete.
func (t *Txn) stagedStrict() []string {
	var out []string
	for _, name := range t.s.names() {
		st := t.s.tables[name]
		strict := len(st.deletes) > 0
		st.seal()
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

// checkStrict fails, before any write, if a strict table moved since Begin
// other than through content-preserving versions (compactions: the same
// rows, so everything validated on the live version holds for the base).
func (c *committer) checkStrict(ctx context.Context, tables []string) error {
	for _, name := range tables {
		base, live := c.t.cat.pin(c.t.base, name), c.t.cat.pin(c.live, name)
		if base != live {
			if ok, err := c.t.g.k.PinSatisfied(ctx, c.t.cat.store(name), base.Version, live.Ref()); err != nil || ok {
				if err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("table %s changed since the transaction began; begin a new transaction and retry: %w",
				name, &kernel.VersionMismatchError{Table: name, Expected: base.Version, Actual: live.Version})
		}
	}
	return nil
}

// load reads what validation needs: the live version of every table the
// transaction may touch, and the base version of the tables whose rows
// must exist (edge endpoints) or whose edges a node delete must see. Edges
// are found through the adjacency index: the edges of each deleted node
// (and the fragments holding them, which a cascade rewrites), and the
// out-edges of every node whose @card count the transaction may change —
// so the cost follows the touched nodes' degrees, not the edge tables.
func (c *committer) load(ctx context.Context) error {
	c.vs = viewSet{base: map[string]*tableView{}, head: map[string]*tableView{}}
	s := c.t.s
	for _, name := range s.names() {
		st := s.tables[name]
		head, err := c.headView(ctx, name)
		if err != nil {
			return err
		}
		if err := c.t.r.loadPending(ctx, head, st); err != nil {
			return err
		}
		if len(st.deletes) > 0 && !st.t.Edge {
			for _, e := range c.t.cat.edgesTouching(name) {
				if err := c.noteEdges(ctx, e.Name, uniqueIDs(st.deletes), true); err != nil {
					return err
				}
			}
		}
	}
	if err := c.loadEnds(ctx); err != nil {
		return err
	}
	for _, name := range c.t.cat.names {
		e := c.t.cat.tables[name]
		if !e.Edge || e.Card.IsDefault() {
			continue
		}
		if cand := c.cardCandidates(e); len(cand) > 0 {
			if err := c.noteEdges(ctx, name, cand, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// noteEdges looks up the edges of nodes in edge table name at its live
// and base versions through their adjacency indexes (a version without one
// is loaded whole): with load, all their edges, and it loads the fragments
// holding them in both views; without, only their out-edges (what a
// @card check counts).
func (c *committer) noteEdges(ctx context.Context, name string, nodes []string, load bool) error {
	head, err := c.headView(ctx, name)
	if err != nil {
		return err
	}
	base, err := c.baseView(ctx, name)
	if err != nil {
		return err
	}
	var ids []string
	for _, v := range []*tableView{head, base} {
		if !v.hasAdj {
			if err := c.t.r.loadAll(ctx, v); err != nil {
				return err
			}
			continue
		}
		for _, n := range nodes {
			if noted, ok := v.noted[n]; ok && (!noted.outOnly || !load) {
				ids = append(ids, noted.all...)
				continue
			}
			out, err := c.t.r.adjacentIndexed(ctx, v, n, dirOut)
			if err != nil {
				return err
			}
			var in []Row
			if load { // a node delete needs all its edges; a @card check only its out-edges
				if in, err = c.t.r.adjacentIndexed(ctx, v, n, dirIn); err != nil {
					return err
				}
			}
			v.note(n, out, in, !load)
			ids = append(ids, v.noted[n].all...)
		}
	}
	if !load {
		return nil
	}
	for _, v := range []*tableView{head, base} {
		if err := c.t.r.loadIDs(ctx, v, ids); err != nil {
			return err
		}
	}
	return nil
}

// cardCandidates returns, sorted and unique, a superset of the source
// nodes whose out-edge count of bounded edge type e validation may check
// (see cardSources): the from of e's pending rows and, in its live
// version, of the ids they replace or delete; the new nodes of e's from
// type when its minimum is positive; and the from of every edge of e
// incident to a deleted node (a cascade removes it). The views it reads
// must be loaded for those ids.
func (c *committer) cardCandidates(e *Table) []string {
	s := c.t.s
	set := map[string]bool{}
	if st, ok := s.tables[e.Name]; ok {
		for _, ref := range st.index() {
			set[st.str(ref, colFrom)] = true
		}
		for _, id := range pendingIDs(st) {
			if from, _, ok := c.vs.head[e.Name].ends(id); ok {
				set[from] = true
			}
		}
	}
	if st, ok := s.tables[e.From]; ok && e.Card.Min > 0 {
		for _, ref := range st.index() {
			set[st.id(ref)] = true
		}
	}
	for _, typ := range []string{e.From, e.To} {
		st, ok := s.tables[typ]
		if !ok || len(st.deletes) == 0 {
			continue
		}
		base := c.vs.base[e.Name]
		for _, d := range uniqueIDs(st.deletes) {
			for _, id := range base.incident(d) {
				from, _, _ := base.ends(id)
				set[from] = true
			}
		}
	}
	return sortedKeys(set)
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
	v, err := c.t.r.view(ctx, tb, c.t.cat.pin(c.live, name))
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
	if c.t.cat.pin(c.t.base, name) == c.t.cat.pin(c.live, name) {
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

// loadEnds makes, for every node type a pending edge ends at, the
// endpoints' existence answerable (through the node table's id index, else
// by loading the fragments that may hold them): in the base view (validate's rule: the base
// plus the pending writes) and, as c.ends, in the view of the version the
// publish will expect — the live version when the transaction writes that
// node type too (its write expects the version it builds on), else the
// base (a read expectation that re-checks on a newer version).
func (c *committer) loadEnds(ctx context.Context) error {
	for _, typ := range c.t.s.endTypes() {
		ids := c.t.s.endpointIDs(typ)
		v, err := c.baseView(ctx, typ)
		if err != nil {
			return err
		}
		if err := c.t.r.notePresence(ctx, v, ids); err != nil {
			return err
		}
		if _, staged := c.t.s.tables[typ]; staged {
			if v, err = c.headView(ctx, typ); err != nil {
				return err
			}
			if err := c.t.r.notePresence(ctx, v, ids); err != nil {
				return err
			}
		}
		c.ends[typ] = v
	}
	return nil
}

// loadPending makes v answer what validation asks about st's pending ids:
// the existence of the ids st only inserts (through the id index when v
// has one: an insert of an existing id is refused, so a node's row is
// never needed; an existing edge's row is, for its ends), and the rows of
// the ids it may replace or delete.
func (r *reader) loadPending(ctx context.Context, v *tableView, st *stagedTable) error {
	inserts := make([]string, 0, len(st.index()))
	var others []string
	for _, ref := range st.index() {
		if st.writes[ref.w].op == OpInsert {
			inserts = append(inserts, st.id(ref))
		} else {
			others = append(others, st.id(ref))
		}
	}
	for _, d := range st.deletes {
		others = append(others, d.id)
	}
	if err := r.notePresence(ctx, v, inserts); err != nil {
		return err
	}
	if v.t.Edge { // an edge's ends must stay answerable (the @card candidates): load the rare existing ones
		for _, id := range inserts {
			if v.has(id) {
				others = append(others, id)
			}
		}
	}
	return r.loadIDs(ctx, v, others)
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
	if err := c.t.r.loadForBuild(ctx, p.head, uint64(len(p.inserts))); err != nil { // mergeCount reads the tail's infos
		return err
	}
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
			Table:       c.t.cat.store(name),
			Strict:      c.plans[name].strict,
			BaseVersion: c.t.cat.pin(c.t.base, name).Version,
			Build: func(pinned kernel.TableVersion) (kernel.TableContent, error) {
				return c.content(ctx, name, pinned)
			},
		})
	}
	return out
}

// content is the Build of one table: the content validated on version on,
// with its fragments written (once). On a newer version, a non-strict table
// is reloaded, re-validated and rebuilt; a strict one is stale.
func (c *committer) content(ctx context.Context, name string, pinned kernel.TableVersion) (kernel.TableContent, error) {
	on := pinned.Ref()
	b := c.built[name]
	if b.on != on || b.unbuilt {
		if c.plans[name].strict && b.on != on {
			// Only a compaction in between: the same rows, rebuild on it.
			ok, err := c.t.g.k.PinSatisfied(ctx, c.t.cat.store(name), b.on.Version, on)
			if err != nil {
				return kernel.TableContent{}, err
			}
			if !ok {
				return kernel.TableContent{}, &kernel.VersionMismatchError{Table: name, Expected: b.on.Version, Actual: on.Version}
			}
		}
		if err := c.rebase(ctx, name, pinned); err != nil {
			return kernel.TableContent{}, err
		}
		b = c.built[name]
	}
	if b.content != nil {
		return *b.content, nil
	}
	content, err := c.t.g.materialize(ctx, c.t.r, c.plans[name], b.b)
	if err != nil {
		return kernel.TableContent{}, err
	}
	b.content = &content
	c.built[name] = b
	return content, nil
}

// rebase re-validates the transaction with table name's head view at the
// newer published version on (and, for an endpoint node type, the
// endpoints there), and rebuilds that table.
func (c *committer) rebase(ctx context.Context, name string, pinned kernel.TableVersion) error {
	on := pinned.Ref()
	tb := c.plans[name].t
	v, err := c.t.r.viewAt(tb, pinned)
	if err != nil {
		return err
	}
	if err := c.t.r.loadPending(ctx, v, c.t.s.tables[name]); err != nil {
		return err
	}
	c.vs.head[name] = v
	if tb.Edge && !tb.Card.IsDefault() {
		if err := c.noteEdges(ctx, name, c.cardCandidates(tb), false); err != nil {
			return err
		}
	}
	if _, ok := c.ends[name]; ok { // a written endpoint type: check the endpoints on its new version
		if err := c.t.r.notePresence(ctx, v, c.t.s.endpointIDs(name)); err != nil {
			return err
		}
		c.ends[name] = v
	}
	plans, err := validate(c.t.s, c.vs)
	if err != nil {
		return err
	}
	if err := c.checkEnds(); err != nil {
		return err
	}
	c.plans[name] = plans[name]
	// The old build is released before the rebuild (never both held), and
	// forgotten: if the rebuild fails, neither a later Build nor the
	// committer's release may release its records again (a staged record
	// gather shared would drop to zero references while the transaction,
	// or a group's member, still holds it).
	c.built[name].b.release()
	c.built[name] = builtAt{on: on, unbuilt: true}
	return c.build(ctx, name, on)
}

// writeAdjacency is false only in tests that write edge table versions
// as they were before the adjacency index existed.
var writeAdjacency = true

// materializeObjects writes the new fragments of a build and returns the table
// content (materialize makes them durable). A new fragment that breaks the fragment rules is an internal bug.
func (g *Graph) materializeObjects(ctx context.Context, r *reader, p *tablePlan, b builtTable) (kernel.TableContent, error) {
	t := p.t
	if !p.head.allKnown() && len(b.frags) <= g.inlineFragments() {
		if err := r.ensureFrags(ctx, p.head); err != nil { // the version goes inline: every info is needed
			return kernel.TableContent{}, err
		}
	}
	infos := make([]FragmentInfo, 0, len(b.frags))
	from := make([]int, 0, len(b.frags))
	var rows uint64
	embedded := 0 // stored bytes of the kept fragments the version embeds
	for _, f := range b.frags {
		if f.keep != nil {
			embedded += len(f.keep.embed)
		}
	}
	carried := p.head.unattachedEmbeds() // in chunks kept unread: the version keeps them
	carriedBytes := 0
	for _, name := range carried {
		carriedBytes += len(p.head.embeds[name])
	}
	embedded += carriedBytes
	for _, f := range b.frags {
		if f.keep != nil {
			kept := *f.keep
			if plant.Enabled(plant.EmbedCarryDrop) { // planted bug: only new fragments keep their embedded bytes
				kept.embed = nil
			}
			infos, from = append(infos, kept), append(from, f.from)
			rows += f.keep.Rows
			continue
		}
		data, info, err := EncodeFragmentWith(t, f.rec, g.codec)
		if err != nil {
			panic(fmt.Sprintf("data: built fragment of %s breaks the fragment rules: %v", t.Name, err))
		}
		id, err := g.mintName()
		if err != nil {
			return kernel.TableContent{}, err
		}
		if g.embedFits(embedded, len(data)) {
			info.embed = data // rides the table version: no object (embed.go)
			embedded += len(data)
		} else if err := g.putFragment(ctx, g.keys.Data(t.Storage, id), data); err != nil {
			return kernel.TableContent{}, err
		}
		info.Name = id.String()
		g.cacheWrittenFragment(ctx, t, info, data)
		infos, from = append(infos, info), append(from, f.from)
		rows += info.Rows
	}
	rows += p.head.unknownRows()
	if rows != b.rows {
		panic(fmt.Sprintf("data: content of %s has %d rows, build counted %d", t.Name, rows, b.rows))
	}
	// Kept fragments come from one version (within the bound) and new ones
	// are embedded only within it, so no reader refuses what is written.
	if n := embeddedBytes(infos) + carriedBytes; n > MaxEmbeddedBytes {
		panic(fmt.Sprintf("data: content of %s embeds %d bytes, more than %d", t.Name, n, MaxEmbeddedBytes))
	}
	var content kernel.TableContent
	var err error
	if p.head.allKnown() {
		content, err = adjWriter{g: g, r: r}.fragContent(ctx, t, infos, rows, p.head)
	} else { // a paged head read in part: its unread chunks are kept by ref
		content, err = adjWriter{g: g, r: r}.fragContentTree(ctx, t, infos, from, carried, rows, p.head)
	}
	if err != nil {
		return kernel.TableContent{}, err
	}
	if t.Edge && writeAdjacency {
		md, err := adjWriter{g: g, r: r}.buildAdjacency(ctx, p, rows)
		if err != nil {
			return kernel.TableContent{}, err
		}
		for k, v := range md { //detlint:ordered copies into a map
			content.Metadata[k] = v
		}
	}
	md, err := adjWriter{g: g, r: r}.idIndexOf(ctx, p, rows)
	if err != nil {
		return kernel.TableContent{}, err
	}
	for k, v := range md { //detlint:ordered copies into a map
		content.Metadata[k] = v
	}
	return content, nil
}
