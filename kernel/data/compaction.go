package data

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
)

// MaintenanceActor is the actor of every maintenance commit (compaction).
const MaintenanceActor = "maintenance"

// WriterKindCompact is the writer kind of a compaction: recorded in its
// recovery sidecars and in any audit record recovery writes for them.
const WriterKindCompact = "compact"

// CompactReport says what one Compact call published.
type CompactReport struct {
	// Tables lists the tables compacted, by name; a table with nothing
	// worth doing is not listed (and nothing was published for it).
	Tables []TableCompaction
}

// TableCompaction is one table's compaction commit.
type TableCompaction struct {
	Table           string
	Commit          kernel.Commit
	FragmentsBefore int
	FragmentsAfter  int
	Rows            uint64
	// Repacked lists the index directions repacked ("id", "out", "in").
	Repacked []string
}

// errNothingToCompact ends a compaction's write from its Build: the
// version it would compact needs nothing (a concurrent compaction did it).
var errNothingToCompact = errors.New("data: nothing to compact")

// Compact rewrites, in every table of b whose live version has at least
// policy.MinFragments small fragments, runs of consecutive small fragments
// into fragments of at most policy.TargetRows rows (ids sorted inside),
// repacks into full pages and chunks every index direction whose pages
// fill poorly (repackWorth: then it holds ceil(rows/page size) pages), and
// publishes each table's result as one content-preserving version
// (kernel.TableContent.ContentPreserving): a maintenance commit of writer
// kind WriterKindCompact by MaintenanceActor, through kernel.WriteAs, so it
// has a sidecar and recovery covers a crash at any cut.
//
// A compaction builds on the pinned version and is non-strict: a data
// write that publishes first makes it rebuild on the data write's version
// (the result holds both); one that publishes after it rebuilds itself on
// the compacted version, and a strict one is not refused for it
// (kernel.Graph.PinSatisfied). Nothing to do publishes nothing, so running
// it again right after converges. It takes no lock: any number of
// compactions and writers may run at once.
//
// A compaction plans and builds under the schema of the head it read and
// its publish expects that schema: a schema change that lands first makes
// it plan again on the new head (at most compactSchemaTries times in all,
// then the retryable *kernel.SchemaChangedError), so it never reads a
// version written under a schema it does not know.
func (g *Graph) Compact(ctx context.Context, b kernel.BranchRef, policy compact.Policy) (CompactReport, error) {
	p, err := policy.WithDefaults()
	if err != nil {
		return CompactReport{}, fmt.Errorf("compact %s: %w: %v", b, kernel.ErrInvalidArgument, err)
	}
	var rep CompactReport
	for try := 1; ; try++ {
		err = g.compactOnHead(ctx, b, p, &rep)
		if err == nil || !errors.Is(err, kernel.ErrSchemaChanged) || try == compactSchemaTries {
			return rep, err
		}
	}
}

// compactSchemaTries bounds how many heads one Compact plans on when
// schema changes keep landing under it.
const compactSchemaTries = 3

// compactOnHead compacts every table of b's head under its schema,
// appending what it published to rep.
func (g *Graph) compactOnHead(ctx context.Context, b kernel.BranchRef, p compact.Policy, rep *CompactReport) error {
	snap, err := g.k.SnapshotAt(ctx, b)
	if err != nil {
		return fmt.Errorf("compact %s: %w", b, err)
	}
	cat, err := g.catalog(ctx, snap.SchemaHash())
	if err != nil {
		return fmt.Errorf("compact %s: %w", b, err)
	}
	for _, name := range cat.names {
		pin := cat.pin(snap, name)
		if pin == (kernel.TablePin{}) {
			continue
		}
		tv, err := g.k.ReadPinned(ctx, pin)
		if err != nil {
			return fmt.Errorf("compact %s: %w", b, err)
		}
		r := newReader(g, cat)
		hv, err := r.versionInfos(ctx, cat.tables[name], tv)
		if err != nil {
			return fmt.Errorf("compact %s: %w", b, err)
		}
		if compact.Plan(fragmentRows(hv.frags), p) == nil {
			dirs, err := r.indexesToRepack(ctx, cat.tables[name], tv)
			if err != nil {
				return fmt.Errorf("compact %s: %w", b, err)
			}
			if dirs == nil {
				continue
			}
		}
		tc, err := g.compactTable(ctx, b, r, cat.tables[name], p, tv, snap.SchemaHash())
		if errors.Is(err, errNothingToCompact) {
			continue
		}
		if err != nil {
			return fmt.Errorf("compact %s: %w", b, err)
		}
		rep.Tables = append(rep.Tables, tc)
	}
	return nil
}

func fragmentRows(infos []FragmentInfo) []uint64 {
	rows := make([]uint64, len(infos))
	for i, f := range infos {
		rows[i] = f.Rows
	}
	return rows
}

// compactTable publishes one table's compaction, expecting the schema
// it was planned under; seen is the version Compact planned on (used only
// by the planted bug compact-drops-write).
func (g *Graph) compactTable(ctx context.Context, b kernel.BranchRef, r *reader, t *Table, p compact.Policy, seen kernel.TableVersion, schemaHash string) (TableCompaction, error) {
	tc := TableCompaction{Table: t.Name}
	build := func(pinned kernel.TableVersion) (kernel.TableContent, error) {
		if plant.Enabled(plant.CompactDropsWrite) { // planted bug: rebuild on the version first seen, not the pin
			pinned = seen
		}
		return g.compactBuild(ctx, r, t, pinned, p, &tc)
	}
	c, err := g.k.WriteAs(ctx, WriterKindCompact, b, []kernel.TableWrite{{Table: t.Storage, Build: build}},
		kernel.LineageIntent{Actor: MaintenanceActor, Message: "compact " + t.Name, ExpectSchema: schemaHash})
	if err != nil {
		return TableCompaction{}, err
	}
	tc.Commit = c
	return tc, nil
}

// compactBuild is a compaction's Build: the content of pinned with each
// planned group of fragments rewritten as one new fragment (written here),
// marked content-preserving. It asserts that the rows are unchanged.
func (g *Graph) compactBuild(ctx context.Context, r *reader, t *Table, pinned kernel.TableVersion, p compact.Policy, tc *TableCompaction) (kernel.TableContent, error) {
	if pinned.Version == 0 {
		return kernel.TableContent{}, errNothingToCompact
	}
	v, err := r.versionInfos(ctx, t, pinned)
	if err != nil {
		return kernel.TableContent{}, err
	}
	infos := v.frags
	groups := compact.Plan(fragmentRows(infos), p)
	dirs, err := r.indexesToRepack(ctx, t, pinned)
	if err != nil {
		return kernel.TableContent{}, err
	}
	if groups == nil && dirs == nil {
		return kernel.TableContent{}, errNothingToCompact
	}
	out := make([]FragmentInfo, 0, len(infos))
	next := 0
	for _, gr := range groups {
		out = append(out, infos[next:gr.First]...)
		info, err := g.rewriteGroup(ctx, r, v, gr)
		if err != nil {
			return kernel.TableContent{}, err
		}
		out = append(out, info)
		next = gr.First + gr.Count
	}
	out = append(out, infos[next:]...)
	var rows uint64
	for _, f := range out {
		rows += f.Rows
	}
	if rows != pinned.Rows || len(out) > len(infos) || (groups != nil && len(out) == len(infos)) {
		panic(fmt.Sprintf("data: compaction of %s v%d: %d rows in %d fragments from %d rows in %d", t.Name, pinned.Version, rows, len(out), pinned.Rows, len(infos)))
	}
	*tc = TableCompaction{Table: t.Name, FragmentsBefore: len(infos), FragmentsAfter: len(out), Rows: rows}
	for _, dir := range dirs {
		tc.Repacked = append(tc.Repacked, dir.d.String())
	}
	content, err := adjWriter{g: g, r: r}.fragContent(ctx, t, out, rows, v)
	if err != nil {
		return kernel.TableContent{}, err
	}
	// The same rows: the indexes (sorted by key and id, independent of the
	// fragment layout) stay valid as they are, but for the directions
	// whose pages fill poorly, repacked into full pages.
	for _, kv := range pinned.Metadata {
		if strings.HasPrefix(kv.Key, metaAdjPrefix) || kv.Key == metaIDDeltaKey || kv.Key == metaAdjDeltaKey {
			content.Metadata[kv.Key] = kv.Value
		}
	}
	if err := (adjWriter{g: g, r: r}).repackIndexes(ctx, t, dirs, rows, content.Metadata); err != nil {
		return kernel.TableContent{}, err
	}
	content.ContentPreserving = true
	return content, nil
}

// rewriteGroup writes the rows of fragments gr of v as one new fragment,
// ids sorted, and returns its info.
func (g *Graph) rewriteGroup(ctx context.Context, r *reader, v *tableView, gr compact.Group) (FragmentInfo, error) {
	var src []rowSrc
	for i := gr.First; i < gr.First+gr.Count; i++ {
		if err := r.load(ctx, v, i); err != nil {
			return FragmentInfo{}, err
		}
		rec := v.recs[i]
		for row := 0; row < int(rec.NumRows()); row++ {
			src = append(src, rowSrc{rec, row})
		}
	}
	sort.SliceStable(src, func(a, b int) bool { return srcID(src[a]) < srcID(src[b]) })
	rec := gather(v.t, src)
	defer rec.Release()
	data, info, err := EncodeFragmentWith(v.t, rec, g.codec)
	if err != nil {
		panic(fmt.Sprintf("data: compacted fragment of %s breaks the fragment rules (duplicate ids across fragments?): %v", v.t.Name, err))
	}
	if info.Rows != gr.Rows {
		panic(fmt.Sprintf("data: compacted fragment of %s has %d rows, the group %d", v.t.Name, info.Rows, gr.Rows))
	}
	id, err := g.mintName()
	if err != nil {
		return FragmentInfo{}, err
	}
	if err := g.putFragment(ctx, g.keys.Data(v.t.Storage, id), data); err != nil {
		return FragmentInfo{}, err
	}
	info.Name = id.String()
	return info, nil
}
