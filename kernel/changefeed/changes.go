package changefeed

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// Change is one id of one type that differs between two snapshots. Before
// is nil for an insert, After is nil for a delete; an update carries both
// and they differ (data.RowsEqual is false). Edge images carry their
// endpoints (Row.From, Row.To).
type Change struct {
	Type   string
	Edge   bool
	ID     string
	Op     feed.Op
	Before *data.Row
	After  *data.Row
}

// errPageFull stops data.TableChanges when the page has no room left.
var errPageFull = errors.New("changefeed: page full")

// span is the changes of one diff (from -> to) in delivery order, consumed
// page by page: the schema change first (when the schemas differ), then
// the row changes, expressed in to's schema.
type span struct {
	from, to *data.Snapshot
	types    []feed.TypeRef // ordered and filtered (feed.Order)
	filter   feed.Filter
	schema   *SchemaChange // nil when from and to have one schema
}

func newSpan(from, to *data.Snapshot, f feed.Filter) span {
	s := to.Schema()
	types := make([]feed.TypeRef, 0, len(s.Nodes)+len(s.Edges))
	for _, n := range s.Nodes {
		types = append(types, feed.TypeRef{Name: n.Name})
	}
	for _, e := range s.Edges {
		types = append(types, feed.TypeRef{Name: e.Name, Edge: true})
	}
	return span{from: from, to: to, types: feed.Order(types, f), filter: f, schema: SchemaChangeOf(from, to)}
}

// filled is what one page took of a span.
type filled struct {
	changes []Change
	schema  *SchemaChange // the span's schema change, when this page delivers it
	next    feed.Resume   // where to continue (unless done)
	done    bool          // the span is exhausted
}

// fill takes the span's changes from start on, as many as p admits: the
// schema change first when start is the span's beginning (the zero
// Resume; any later position, a type with no id after it included, lies
// past it), then the row changes.
func (s span) fill(ctx context.Context, start feed.Resume, p *feed.Packer) (filled, error) {
	var f filled
	if start == (feed.Resume{}) && s.schema != nil {
		if !p.Admit(s.schema.size()) {
			return f, nil // not even the event fits after what the page holds
		}
		f.schema = s.schema
	}
	first, err := feed.ResumeIndex(s.types, start)
	if err != nil {
		return filled{}, err
	}
	for i := first; i < len(s.types); i++ {
		t := s.types[i]
		after := ""
		if i == first {
			after = start.After
		}
		if samePin(s.from, s.to, t.Name) && !data.DiffReadsWhole(s.from, s.to, t.Name) {
			continue
		}
		var full bool
		f.changes, after, full, err = s.fillType(ctx, t, after, p, f.changes)
		if err != nil {
			return filled{}, err
		}
		if full {
			f.next = feed.Resume{Type: t.Name, After: after}
			return f, nil
		}
	}
	f.done = true
	return f, nil
}

// fillType appends the changes of one type above after; full reports that
// the page refused one, which is then the first after the returned id.
func (s span) fillType(ctx context.Context, t feed.TypeRef, after string, p *feed.Packer, out []Change) ([]Change, string, bool, error) {
	full := false
	err := data.TableChanges(ctx, s.from, s.to, t.Name, after, func(rc data.RowChange) error {
		op := feed.Op(rc.Op)
		if !s.filter.WantsOp(op) {
			after = rc.ID // skipped for good: resuming after it loses nothing selected
			return nil
		}
		if !p.Admit(feed.ChangeSize(t.Name, rc.ID, image(rc.Before), image(rc.After))) {
			full = true
			return errPageFull
		}
		out = append(out, Change{Type: t.Name, Edge: t.Edge, ID: rc.ID, Op: op, Before: rc.Before, After: rc.After})
		after = rc.ID
		return nil
	})
	if full && errors.Is(err, errPageFull) {
		return out, after, true, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("changes of %s: %w", t.Name, err)
	}
	return out, after, false, nil
}

// samePin reports whether both snapshots pin the same version of type
// typ's storage table (or neither pins it): then nothing of it changed and
// nothing is read. The storage table (b's, the newer side's schema) is the
// type's identity on both sides: a renamed type keeps it.
func samePin(a, b *data.Snapshot, typ string) bool {
	table := typ
	if t, err := b.Table(typ); err == nil {
		table = t.Storage
	}
	pa, oka := a.Kernel().Table(table)
	pb, okb := b.Kernel().Table(table)
	return oka == okb && (!oka || pa.Ref() == pb.Ref())
}

func image(r *data.Row) *feed.Image {
	if r == nil {
		return nil
	}
	return &feed.Image{From: r.From, To: r.To, Props: r.Props}
}

// DiffPage is one page of a Diff.
type DiffPage struct {
	// Schema is set on the first page of a diff between two schemas.
	Schema  *SchemaChange
	Changes []Change
	// Done is true once the diff is exhausted (this page holds its last
	// changes, possibly none).
	Done bool
}

// DiffStream pulls the changes between two snapshots page by page. It is
// not safe for concurrent use.
type DiffStream struct {
	s    span
	next feed.Resume
	done bool
}

// Diff returns a stream of every change between snapshots from and to (of
// one graph; any branches, manifest versions, commits or schemas) that f
// selects, in the feed's order (node types before edge types, types by
// name, ids ascending). Between two schemas the first page carries the
// SchemaChange and the changes are expressed in to's schema (a property's
// identity is its storage column, as in merges; data.TableChanges). Nothing
// is read until Next.
func Diff(from, to *data.Snapshot, f feed.Filter) (*DiffStream, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &DiffStream{s: newSpan(from, to, f.Canonical())}, nil
}

// Next returns the next page under lim (zero fields take the defaults).
// After a page with Done it returns an empty Done page.
func (d *DiffStream) Next(ctx context.Context, lim feed.Limits) (DiffPage, error) {
	lim, err := lim.Normalize()
	if err != nil {
		return DiffPage{}, err
	}
	if d.done {
		return DiffPage{Done: true}, nil
	}
	res, err := d.s.fill(ctx, d.next, feed.NewPacker(lim))
	if err != nil {
		return DiffPage{}, gapOf("", err)
	}
	d.next, d.done = res.next, res.done
	return DiffPage{Schema: res.schema, Changes: res.changes, Done: res.done}, nil
}

// CommitPage is one page of a commit's changes.
type CommitPage struct {
	// Commit is the cause: id, parents (the merged parent second), kind,
	// actor, message, time and where it was published.
	Commit kernel.Commit
	// Schema is set on the first page of a commit that changed the schema
	// (an ApplySchema commit, or a merge that brought a schema change).
	Schema  *SchemaChange
	Changes []Change
	// Next continues the commit's changes ("" once they are all given).
	Next string
}

// emptySide returns the snapshot a parentless commit is diffed from: the
// commit's own snapshot, which must pin no table (the genesis commit).
func emptySide(to *data.Snapshot, c kernel.Commit) (*data.Snapshot, error) {
	if n := len(to.Kernel().Tables()); n != 0 {
		return nil, fmt.Errorf("changefeed: parentless commit %s pins %d tables: %w", c.ID, n, kernel.ErrCorrupt)
	}
	return to, nil
}

// commitSpan loads commit id, its snapshot and its first parent's.
func (f *Feed) commitSpan(ctx context.Context, id kernel.CommitID, filter feed.Filter) (kernel.Commit, span, error) {
	c, err := f.g.Kernel().Commit(ctx, id)
	if err != nil {
		return kernel.Commit{}, span{}, err
	}
	to, err := f.g.SnapshotAtCommit(ctx, id)
	if err != nil {
		return kernel.Commit{}, span{}, err
	}
	var from *data.Snapshot
	if len(c.Parents) == 0 {
		from, err = emptySide(to, c)
	} else {
		from, err = f.g.SnapshotAtCommit(ctx, c.Parents[0])
	}
	if err != nil {
		return kernel.Commit{}, span{}, err
	}
	return c, newSpan(from, to, filter), nil
}

// CommitChanges returns a page of the changes of commit id relative to its
// first parent (a merge commit's too: what the merge changed on its
// branch), with the commit as cause. pageToken is "" for the first page,
// then the Next of the previous page; filter must be the same on every
// page. A commit that changed no data (a branch's genesis, a commit that
// rewrote identical rows) has no changes.
func (f *Feed) CommitChanges(ctx context.Context, id kernel.CommitID, pageToken string, filter feed.Filter, lim feed.Limits) (CommitPage, error) {
	lim, filter, err := normalize(lim, filter)
	if err != nil {
		return CommitPage{}, err
	}
	graph, err := f.graphID(ctx)
	if err != nil {
		return CommitPage{}, err
	}
	tok := feed.Token{Kind: feed.KindCommitPage, Binding: feed.Binding{Graph: graph, Filter: filter.Digest()}}
	if pageToken != "" {
		if tok, err = decodeFor(pageToken, feed.KindCommitPage, tok.Binding); err != nil {
			return CommitPage{}, err
		}
		if tok.At.Commit != feed.ID(id) {
			return CommitPage{}, &feed.CursorError{Problem: feed.NotOnChain, Detail: "page token of another commit"}
		}
	}
	c, s, err := f.commitSpan(ctx, id, filter)
	if err != nil {
		return CommitPage{}, gapOf(id.String(), fmt.Errorf("changes of commit %s: %w", id, err))
	}
	res, err := s.fill(ctx, tok.Resume, feed.NewPacker(lim))
	if err != nil {
		return CommitPage{}, gapOf(id.String(), fmt.Errorf("changes of commit %s: %w", id, err))
	}
	page := CommitPage{Commit: c, Schema: res.schema, Changes: res.changes}
	if !res.done {
		page.Next = feed.Delivered(tok, pointOf(c), false, res.next).Encode()
	}
	return page, nil
}

func normalize(lim feed.Limits, filter feed.Filter) (feed.Limits, feed.Filter, error) {
	lim, err := lim.Normalize()
	if err != nil {
		return feed.Limits{}, feed.Filter{}, err
	}
	if err := filter.Validate(); err != nil {
		return feed.Limits{}, feed.Filter{}, err
	}
	return lim, filter.Canonical(), nil
}

// decodeFor decodes s and checks it against the binding of a request.
func decodeFor(s string, kind feed.TokenKind, b feed.Binding) (feed.Token, error) {
	tok, err := feed.Decode(s)
	if err != nil {
		return feed.Token{}, err
	}
	if err := tok.Check(kind, b); err != nil {
		return feed.Token{}, err
	}
	return tok, nil
}

func pointOf(c kernel.Commit) feed.Point {
	return feed.Point{Commit: feed.ID(c.ID), Branch: c.Branch, Incarnation: c.Incarnation, Version: c.ManifestVersion}
}
