package workload

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	"math/rand/v2"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model/datamodel"
	"github.com/graphkernel/graphkernel/sim/check"
)

// dataSchema is the data workload's graph: people working at (at most one)
// company, and knowing each other.
const dataSchema = `node Person { name: string }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) {}
edge Knows: Person -> Person {}
`

// The data workload's fixed node ids, created by the init process.
var (
	dataPeople    = []string{"p0", "p1", "p2", "p3"}
	dataCompanies = []string{"c0", "c1", "c2"}
)

func mustContract(text string) []byte {
	s, err := schema.Parse([]byte(text))
	if err != nil {
		panic(fmt.Sprintf("workload: data schema: %v", err))
	}
	c, err := s.Contract()
	if err != nil {
		panic(fmt.Sprintf("workload: data schema: %v", err))
	}
	return c
}

func init() {
	Register(&Workload{
		Name:        "data",
		RidingScale: ridingScaleData,
		Doc: "typed transactions on the data plane: linking people to at most one company (@card 0..1) from racing " +
			"writers, updates, cascading deletes, and readers checking cardinality, dangling edges and every graph read " +
			"against the reference data model (reads-vs-model)",
		Generate: func(seed uint64, faults string) *Scenario { return genData(seed, faults, false) },
		Plants:   []string{plant.StaleCard, plant.FeedSkip, plant.AdjShortIn, plant.UpsertKeepsRow, plant.PageSkip, plant.EmbedCarryDrop, plant.RidingDropped, plant.AdjDeltaSkip},
		Contract: mustContract(dataSchema),
		Seed:     seedData,
		Final:    finalData,
	})
	Register(&Workload{
		Name:        "data-drops",
		RidingScale: ridingScaleData,
		Doc: "the data workload plus cascading deletes of people racing new edges to them " +
			"(dangling edges: the race the simulator found, closed by read expectations)",
		Generate: func(seed uint64, faults string) *Scenario { return genData(seed, faults, true) },
		// Deleted and re-inserted people spread Person over fragment
		// chunks that a later update's commit leaves unread (the fragment
		// tree edit, kernel/data/fragtree.go); in data only WorksAt's
		// commits leave chunks unread (17 in seeds 1-100), none caught.
		Plants:   []string{plant.FragEditDropsSubtree},
		Contract: mustContract(dataSchema),
		Seed:     seedData,
		Final:    finalData,
	})
	RegisterOp("dtx", opDataTx)
	RegisterOp("dread", opDataRead)
}

// finalData is the data workloads' final check: the data invariants at
// main's head, then the feed consumers' replay.
func finalData(p *Proc) error {
	if err := opDataRead(p, 0, Op{Args: map[string]string{"branch": "main"}}); err != nil {
		return err
	}
	return finalFeed(p)
}

// simInlineFragments is the InlineFragments of every simulated data
// handle: every table version holding a fragment is paged, so the
// workloads' small tables exercise fragment chunks (docs/format.md,
// "Paged fragment infos") under races, faults, crashes and collection.
const simInlineFragments = -1

// simIndexFanout is the IndexFanout of every simulated data handle: pages
// of 4 rows, 4 per chunk and 4 refs per ref chunk, so a table past 16
// rows carries an index tree (docs/format.md, "Paged index refs") under
// races, faults, crashes, collection and the leak check.
const simIndexFanout = 4

// indexFanout is the IndexFanout of the process's data handles: the
// workload's, else simIndexFanout.
func (p *Proc) indexFanout() int {
	if n := p.run.wl.IndexFanout; n > 0 {
		return n
	}
	return simIndexFanout
}

// jsonIndexChunks reports whether the process's data handles write index
// chunks as JSON (formats 7 to 11) rather than binary (format 12): about
// one process in four, chosen by a hash of the seed and the process's name
// (no draw from the seed's PRNG, so the schedules stay as they were), so
// that most graphs mix both forms as a graph migrated from format 11 does,
// under races, faults, crashes, collection and the leak check.
func (p *Proc) jsonIndexChunks() bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", p.run.S.Seed, p.name)
	return h.Sum64()%4 == 0
}

// dg returns the process's data-plane handle, opening it on first use.
func (p *Proc) dg() (*data.Graph, error) {
	if p.data != nil {
		return p.data, nil
	}
	if p.svc != nil { // one handle for the service's actors (service.go)
		g, err := p.svc.handle(p)
		p.data = g
		return g, err
	}
	g, err := p.openData()
	if err != nil {
		return nil, err
	}
	p.data = g
	return g, nil
}

// openData opens a new data-plane handle of the process (dg's, or a
// fresh one with cold caches).
func (p *Proc) openData() (*data.Graph, error) {
	return data.Open(p.Ctx(), p.run.Store, p.run.Root, data.Options{Kernel: p.kopts(), InlineFragments: simInlineFragments, IndexFanout: p.indexFanout(), JSONIndexChunks: p.jsonIndexChunks()})
}

// headSnapshot opens the data graph (once per process) and takes a
// snapshot of branch's head. stop reports that a read failed; err is then
// what the op returns (readFailed's answer, labelled what).
func (p *Proc) headSnapshot(what, branch string) (ref kernel.BranchRef, s *data.Snapshot, stop bool, err error) {
	g, err := p.dg()
	if err != nil {
		return ref, nil, true, p.readFailed(what+": open", err)
	}
	if ref, err = g.Branch(p.Ctx(), branch); err != nil {
		return ref, nil, true, p.readFailed(what+": branch", err)
	}
	if s, err = g.SnapshotAt(p.Ctx(), ref); err != nil {
		return ref, nil, true, p.readFailed(what+": snapshot", err)
	}
	return ref, s, false, nil
}

// seedData upserts the fixed people and companies until acknowledged (the
// init process runs it once the graph exists).
func seedData(p *Proc) error {
	return p.seedRetry("data seed never acknowledged", func(attempt int) error {
		return p.dataCommitOps(fmt.Sprintf("%s.seed%d", p.name, attempt), "main", func(*data.Txn) ([]datamodel.Op, error) {
			var ops []datamodel.Op
			for _, id := range dataPeople {
				ops = append(ops, datamodel.Op{Kind: datamodel.Upsert, Type: "Person", Row: datamodel.Row{ID: id, Props: map[string]any{"name": id}}})
			}
			for _, id := range dataCompanies {
				ops = append(ops, datamodel.Op{Kind: datamodel.Upsert, Type: "Company", Row: datamodel.Row{ID: id, Props: map[string]any{"name": id}}})
			}
			return ops, nil
		})
	})
}

// dataCommitOps is dataCommit of the operations plan returns (plan may
// read through the transaction), recording them under tag for the
// reference data model (check.CheckReadsVsModel) before the commit.
func (p *Proc) dataCommitOps(tag, branch string, plan func(*data.Txn) ([]datamodel.Op, error)) error {
	return p.dataCommit(tag, branch, func(tx *data.Txn) error {
		ops, err := plan(tx)
		if err != nil {
			return err
		}
		if err := stageOps(tx, ops); err != nil {
			return err
		}
		p.run.models.Txn(tag, ops)
		return nil
	})
}

// dataCommit begins a transaction on branch, stages it with stage and
// commits it with a message carrying tag, recording the commit in the chain
// history. It returns the commit error (nil when acknowledged).
func (p *Proc) dataCommit(tag, branch string, stage func(*data.Txn) error) error {
	g, err := p.dg()
	if err != nil {
		return err
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, branch)
	if err != nil {
		return err
	}
	tx, err := g.Begin(ctx, ref)
	if err != nil {
		return err
	}
	if err := stage(tx); err != nil {
		tx.Discard()
		return err
	}
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(branch, ref.Incarnation()), tag, nil)
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)})
	if p.Over(err) {
		return p.end(err)
	}
	out := Outcome(err)
	pc.End(out)
	p.run.note("%s dtx %s -> %v (%v)", p.name, tag, out, errText(err))
	return err
}

// opDataTx runs one data transaction: kind=link (person works at company),
// unlink (delete the person's WorksAt edges), rename (strict update),
// know (a Knows edge), drop (cascading delete of a person, re-created by
// the next upsert) or upsert (re-create a person).
func opDataTx(p *Proc, idx int, op Op) error {
	tag := p.Tag(idx)
	person, company := op.Arg("person"), op.Arg("company")
	err := p.dataCommitOps(tag, op.Arg("branch"), func(tx *data.Txn) ([]datamodel.Op, error) {
		one := func(k datamodel.Kind, typ string, r datamodel.Row) ([]datamodel.Op, error) {
			return []datamodel.Op{{Kind: k, Type: typ, Row: r}}, nil
		}
		switch op.Arg("kind") {
		case "link":
			return one(datamodel.Insert, "WorksAt", datamodel.Row{ID: "e-" + tag, From: person, To: company})
		case "know":
			return one(datamodel.Insert, "Knows", datamodel.Row{ID: "k-" + tag, From: person, To: op.Arg("other")})
		case "unlink":
			edges, err := tx.Out(p.Ctx(), "WorksAt", person)
			if err != nil || len(edges) == 0 {
				return nil, errNothingToDo
			}
			return one(datamodel.Delete, "WorksAt", datamodel.Row{ID: edges[0].ID})
		case "rename":
			return one(datamodel.Update, "Person", datamodel.Row{ID: person, Props: map[string]any{"name": tag}})
		case "drop":
			return one(datamodel.DeleteCascade, "Person", datamodel.Row{ID: person})
		case "upsert":
			return one(datamodel.Upsert, "Person", datamodel.Row{ID: person, Props: map[string]any{"name": tag}})
		}
		return nil, fmt.Errorf("workload: unknown dtx kind %q", op.Arg("kind"))
	})
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil && !errors.Is(err, errNothingToDo) {
		p.Unexpected("dtx", err)
	}
	return nil
}

// stageOps stages the model's operations on tx.
func stageOps(tx *data.Txn, ops []datamodel.Op) error {
	for _, o := range ops {
		r := data.Row{ID: o.Row.ID, From: o.Row.From, To: o.Row.To, Props: o.Row.Props}
		var err error
		switch o.Kind {
		case datamodel.Insert:
			err = tx.Insert(o.Type, r)
		case datamodel.Upsert:
			err = tx.Upsert(o.Type, r)
		case datamodel.Update:
			err = tx.Update(o.Type, r)
		case datamodel.Delete:
			err = tx.Delete(o.Type, r.ID)
		case datamodel.DeleteCascade:
			err = tx.DeleteCascade(o.Type, r.ID)
		default:
			err = fmt.Errorf("workload: op kind %v", o.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// errNothingToDo skips a transaction that has nothing to stage.
var errNothingToDo = errors.New("workload: nothing to do")

// opDataRead reads a branch's snapshot and checks the data invariants: no
// person works at more than one company, and no edge dangles.
func opDataRead(p *Proc, _ int, op Op) error {
	ref, snap, stop, err := p.headSnapshot("dread", op.Arg("branch"))
	if stop {
		return err
	}
	ctx := p.Ctx()
	for _, person := range dataPeople {
		for _, et := range []string{"WorksAt", "Knows"} {
			edges, err := snap.Out(ctx, et, person)
			if err != nil {
				return p.readFailed("dread: out", err)
			}
			if et == "WorksAt" && len(edges) > 1 {
				p.run.Violate(check.Violation{Check: "cardinality", Detail: fmt.Sprintf(
					"%s at %s v%d: %s works at %d companies (@card 0..1): %v", p.name, ref, snap.Kernel().ManifestVersion(), person, len(edges), edgeIDs(edges))})
			}
			if err := p.checkEndpoints(snap, ref, et, edges); err != nil {
				return err
			}
		}
	}
	if err := p.checkGets(snap, ref); err != nil {
		return err
	}
	if err := p.checkScans(snap, ref); err != nil {
		return err
	}
	return p.checkReads(snap, ref)
}

// modelScans are filtered scans compared with the reference data model
// only: ranges, negation and null tests over the renamed people, and
// endpoint filters over both edge types.
var modelScans = []struct {
	typ  string
	pred pred.Expr
}{
	{"Person", pred.And(pred.Ge("name", "d2"), pred.Not(pred.Eq("id", "p1")))},
	{"Person", pred.Or(pred.IsNull("name"), pred.Lt("name", "d"))},
	{"Knows", pred.Or(pred.Eq("from", "p0"), pred.In("to", "p1", "p2"))},
	{"WorksAt", pred.And(pred.Ne("to", "c0"), pred.NotNull("from"))},
}

// checkScans runs modelScans on snap, for the reference data model.
func (p *Proc) checkScans(snap *data.Snapshot, ref kernel.BranchRef) error {
	for _, sc := range modelScans {
		got, err := scanIDs(p.Ctx(), snap, sc.typ, &sc.pred)
		if err != nil {
			return p.readFailed("dread: scanwhere", err)
		}
		sc := sc
		p.modelRead(snap, ref, fmt.Sprintf("ScanWhere(%s, %v)", sc.typ, sc.pred.String()), got, func(m *datamodel.State) ([]string, error) {
			rows, err := m.ScanWhere(sc.typ, &sc.pred)
			return datamodel.IDs(rows), err
		})
	}
	return nil
}

// modelRead records one read of snap (on ref) for the comparison with the
// reference data model at the snapshot's commit (check.CheckReadsVsModel).
func (p *Proc) modelRead(snap *data.Snapshot, ref kernel.BranchRef, what string, got []string, want func(*datamodel.State) ([]string, error)) {
	p.run.models.Read(check.ModelRead{
		Key: check.IncarnationKey(ref.Name(), ref.Incarnation()), Version: snap.Kernel().ManifestVersion(),
		Where: fmt.Sprintf("%s at %s v%d", p.name, ref, snap.Kernel().ManifestVersion()), What: what, Got: got, Want: want,
	})
}

// checkGets reads every fixed person and company with Get, for the
// reference data model.
func (p *Proc) checkGets(snap *data.Snapshot, ref kernel.BranchRef) error {
	for _, n := range []struct {
		typ string
		ids []string
	}{{"Person", dataPeople}, {"Company", dataCompanies}} {
		for _, id := range n.ids {
			r, ok, err := snap.Get(p.Ctx(), n.typ, id)
			if err != nil {
				return p.readFailed("dread: get", err)
			}
			typ, id := n.typ, id
			p.modelRead(snap, ref, fmt.Sprintf("Get(%s, %s)", typ, id), []string{getString(r, ok)},
				func(m *datamodel.State) ([]string, error) {
					r, ok := m.Get(typ, id)
					return []string{getString(modelRowToData(r), ok)}, nil
				})
		}
	}
	return nil
}

// getString renders a Get's answer.
func getString(r data.Row, ok bool) string {
	if !ok {
		return "absent"
	}
	return datamodel.RowString(dataRowToModel(r))
}

func dataRowToModel(r data.Row) datamodel.Row {
	return datamodel.Row{ID: r.ID, From: r.From, To: r.To, Props: r.Props}
}

func modelRowToData(r datamodel.Row) data.Row {
	return data.Row{ID: r.ID, From: r.From, To: r.To, Props: r.Props}
}

// rowStrings renders rows (datamodel.RowString each).
func rowStrings(rows []data.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = datamodel.RowString(dataRowToModel(r))
	}
	return out
}

// modelRowStrings renders the model's rows like rowStrings.
func modelRowStrings(rows []datamodel.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = datamodel.RowString(r)
	}
	return out
}

// checkReads compares the graph reads of snap (Out, In, the degrees,
// GetMany, ScanWhere, Expand) with the naive evaluation over full scans of
// the same snapshot (check.Adjacent, check.Expand): "read-consistency".
func (p *Proc) checkReads(snap *data.Snapshot, ref kernel.BranchRef) error {
	ctx := p.Ctx()
	where := fmt.Sprintf("%s at %s v%d", p.name, ref, snap.Kernel().ManifestVersion())
	var vs []check.Violation
	scanned := map[string][]check.Edge{}
	for _, et := range []string{"WorksAt", "Knows"} {
		edges, err := scanEdges(ctx, snap, et)
		if err != nil {
			return p.readFailed("dread: scan", err)
		}
		scanned[et] = edges
		et := et
		p.modelRead(snap, ref, fmt.Sprintf("Scan(%s)", et), edgeStrings(edges), func(m *datamodel.State) ([]string, error) {
			return edgeStrings(check.ModelEdges(m.Rows(et))), nil
		})
		targets := dataPeople
		if et == "WorksAt" {
			targets = dataCompanies
		}
		for _, pair := range []struct {
			nodes []string
			out   bool
		}{{dataPeople, true}, {targets, false}} {
			for _, n := range pair.nodes {
				got, deg, err := adjacent(ctx, snap, et, n, pair.out)
				if err != nil {
					return p.readFailed("dread: adjacency", err)
				}
				want := check.Adjacent(edges, n, pair.out)
				what := fmt.Sprintf("%s(%s, %s) and its degree %d", map[bool]string{true: "Out", false: "In"}[pair.out], et, n, deg)
				vs = append(vs, check.SameReads(where, what, append(strings.Split(edgeIDs(got), ","), fmt.Sprint(deg)),
					append(strings.Split(strings.Join(want, ","), ","), fmt.Sprint(len(want))))...)
				n, out := n, pair.out
				p.modelRead(snap, ref, what, append(rowStrings(got), fmt.Sprint(deg)), func(m *datamodel.State) ([]string, error) {
					rows, deg := m.In(et, n), m.InDegree(et, n)
					if out {
						rows, deg = m.Out(et, n), m.OutDegree(et, n)
					}
					return append(modelRowStrings(rows), fmt.Sprint(deg)), nil
				})
			}
		}
	}
	more, err := p.checkNodeReads(snap, ref, where, scanned["Knows"])
	if err != nil {
		return err
	}
	for _, v := range append(vs, more...) {
		p.run.Violate(v)
	}
	return nil
}

// checkNodeReads compares GetMany, a ScanWhere and two Expands with the
// naive evaluation over full scans.
func (p *Proc) checkNodeReads(snap *data.Snapshot, ref kernel.BranchRef, where string, knows []check.Edge) ([]check.Violation, error) {
	ctx := p.Ctx()
	people, err := scanIDs(ctx, snap, "Person", nil)
	if err != nil {
		return nil, p.readFailed("dread: scan", err)
	}
	ids := append([]string{"nobody"}, dataPeople...)
	many, err := snap.GetMany(ctx, "Person", ids)
	if err != nil {
		return nil, p.readFailed("dread: getmany", err)
	}
	p.modelRead(snap, ref, "GetMany(Person, all)", rowStrings(many), func(m *datamodel.State) ([]string, error) {
		return modelRowStrings(m.GetMany("Person", ids)), nil
	})
	vs := check.SameReads(where, "GetMany(Person, all)", strings.Split(edgeIDs(many), ","), strings.Split(strings.Join(people, ","), ","))
	e := pred.Or(pred.In("name", "p0", "p2"), pred.Eq("id", "p3"))
	got, err := scanIDs(ctx, snap, "Person", &e)
	if err != nil {
		return nil, p.readFailed("dread: scanwhere", err)
	}
	var want []string
	for _, r := range many {
		if name := r.Props["name"]; name == "p0" || name == "p2" || r.ID == "p3" {
			want = append(want, r.ID)
		}
	}
	vs = append(vs, check.SameReads(where, "ScanWhere(Person, "+e.String()+")", got, want)...)
	p.modelRead(snap, ref, "ScanWhere(Person, "+e.String()+")", got, func(m *datamodel.State) ([]string, error) {
		rows, err := m.ScanWhere("Person", &e)
		return datamodel.IDs(rows), err
	})
	for _, x := range []struct {
		dir      traverse.Direction
		min, max int
	}{{traverse.Both, 0, 3}, {traverse.Out, 1, 2}} {
		res, err := data.Expand(ctx, snap, []string{"p0"}, "Knows", x.dir, x.min, x.max, traverse.Limits{})
		if err != nil {
			return nil, p.readFailed("dread: expand", err)
		}
		var hops []check.Hop
		for _, n := range res.Nodes {
			hops = append(hops, check.Hop{ID: n.ID, Hops: n.Hops})
		}
		naive := check.Expand(knows, []string{"p0"}, x.dir != traverse.In, x.dir != traverse.Out, x.min, x.max)
		what := fmt.Sprintf("Expand(Knows, p0, %v, %d..%d)", x.dir, x.min, x.max)
		vs = append(vs, check.SameReads(where, what, check.HopStrings(hops), check.HopStrings(naive))...)
		x := x
		p.modelRead(snap, ref, what, check.HopStrings(hops), func(m *datamodel.State) ([]string, error) {
			return check.HopStrings(check.Expand(check.ModelEdges(m.Rows("Knows")), []string{"p0"},
				x.dir != traverse.In, x.dir != traverse.Out, x.min, x.max)), nil
		})
	}
	return vs, nil
}

// adjacent returns Out or In of node and the matching degree.
func adjacent(ctx context.Context, snap *data.Snapshot, et, node string, out bool) ([]data.Row, int, error) {
	if out {
		rows, err := snap.Out(ctx, et, node)
		if err != nil {
			return nil, 0, err
		}
		deg, err := snap.OutDegree(ctx, et, node)
		return rows, deg, err
	}
	rows, err := snap.In(ctx, et, node)
	if err != nil {
		return nil, 0, err
	}
	deg, err := snap.InDegree(ctx, et, node)
	return rows, deg, err
}

// scanEdges reads every edge of et with a full scan.
func scanEdges(ctx context.Context, snap *data.Snapshot, et string) ([]check.Edge, error) {
	rr, err := snap.Scan(ctx, et, "id", "from", "to")
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var out []check.Edge
	for rr.Next() {
		rec := rr.Record()
		ids, from, to := rec.Column(0).(*array.String), rec.Column(1).(*array.String), rec.Column(2).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			out = append(out, check.Edge{ID: ids.Value(i), From: from.Value(i), To: to.Value(i)})
		}
	}
	return out, rr.Err()
}

// scanIDs returns, sorted, the ids of typ's rows matching where (all when
// nil).
func scanIDs(ctx context.Context, snap *data.Snapshot, typ string, where *pred.Expr) ([]string, error) {
	rr, err := snap.ScanWhere(ctx, typ, where, "id")
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var out []string
	for rr.Next() {
		ids := rr.Record().Column(0).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			out = append(out, ids.Value(i))
		}
	}
	sort.Strings(out)
	return out, rr.Err()
}

// checkEndpoints reports edges whose endpoints do not exist in snap.
func (p *Proc) checkEndpoints(snap *data.Snapshot, ref kernel.BranchRef, et string, edges []data.Row) error {
	to := "Company"
	if et == "Knows" {
		to = "Person"
	}
	for _, e := range edges {
		for _, end := range []struct{ typ, id string }{{"Person", e.From}, {to, e.To}} {
			_, ok, err := snap.Get(p.Ctx(), end.typ, end.id)
			if err != nil {
				return p.readFailed("dread: get", err)
			}
			if !ok {
				p.run.Violate(check.Violation{Check: "dangling-edge", Detail: fmt.Sprintf(
					"%s at %s v%d: %s edge %s points at missing %s %s", p.name, ref, snap.Kernel().ManifestVersion(), et, e.ID, end.typ, end.id)})
			}
		}
	}
	return nil
}

// edgeStrings renders edges like datamodel.RowString renders a prop-less
// edge row.
func edgeStrings(edges []check.Edge) []string {
	out := make([]string, len(edges))
	for i, e := range edges {
		out[i] = datamodel.RowString(datamodel.Row{ID: e.ID, From: e.From, To: e.To})
	}
	sort.Strings(out)
	return out
}

func edgeIDs(rows []data.Row) string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return strings.Join(ids, ",")
}

var dataShape = shape{faultPhase: 6 * time.Minute, quietPhase: time.Minute}

// genData generates a data-workload scenario: writers racing to link the
// same few people to companies, with renames, unlinks and cascading drops,
// and readers checking the invariants.
func genData(seed uint64, faults string, drops bool) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x64617461)) // "data"
	name := "data"
	if drops {
		name = "data-drops"
	}
	s := &Scenario{Workload: name, Seed: seed, Faults: faults, FaultPhase: dataShape.faultPhase, QuietPhase: dataShape.quietPhase}
	think := [2]time.Duration{500 * time.Millisecond, 5 * time.Second}
	nw := 3 + rng.IntN(3)
	for i := 0; i < nw; i++ {
		a := ActorPlan{Name: fmt.Sprintf("d%d", i)}
		for n := opsFor(dataShape, think); n > 0; n-- {
			a.Ops = append(a.Ops, genDataTx(rng, think, drops))
		}
		s.Actors = append(s.Actors, a)
	}
	for i := 0; i < 2; i++ {
		a := ActorPlan{Name: fmt.Sprintf("q%d", i)}
		for n := opsFor(dataShape, [2]time.Duration{2 * time.Second, 8 * time.Second}); n > 0; n-- {
			a.Ops = append(a.Ops, Op{Kind: "dread", Think: 2*time.Second + time.Duration(rng.Int64N(int64(6*time.Second))),
				Args: map[string]string{"branch": "main"}})
		}
		s.Actors = append(s.Actors, a)
	}
	s.Actors = append(s.Actors, genFeedConsumer(rng, dataShape))
	return s
}

func genDataTx(rng *rand.Rand, think [2]time.Duration, drops bool) Op {
	op := Op{Kind: "dtx", Think: think[0] + time.Duration(rng.Int64N(int64(think[1]-think[0]))),
		Args: map[string]string{"branch": "main", "person": dataPeople[rng.IntN(len(dataPeople))]}}
	switch x := rng.Float64(); {
	case x < 0.45:
		op.Args["kind"], op.Args["company"] = "link", dataCompanies[rng.IntN(len(dataCompanies))]
	case x < 0.65:
		op.Args["kind"] = "unlink"
	case x < 0.75:
		op.Args["kind"] = "rename"
	case x < 0.85:
		op.Args["kind"], op.Args["other"] = "know", dataPeople[rng.IntN(len(dataPeople))]
	case x < 0.92 && drops:
		op.Args["kind"] = "drop"
	default:
		op.Args["kind"] = "upsert"
	}
	return op
}
