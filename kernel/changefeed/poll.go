package changefeed

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// Feed reads the change feed of one graph. It is safe for concurrent use
// and keeps no per-consumer state.
type Feed struct {
	g *data.Graph

	mu      sync.Mutex
	genesis feed.ID // the graph's identity, read once
}

// New returns the feed of graph g.
func New(g *data.Graph) *Feed { return &Feed{g: g} }

// graphID returns the graph's identity: its genesis commit (main's first
// incarnation, version 0; main can be neither deleted nor re-created).
func (f *Feed) graphID(ctx context.Context) (feed.ID, error) {
	f.mu.Lock()
	id := f.genesis
	f.mu.Unlock()
	if !id.IsZero() {
		return id, nil
	}
	k := f.g.Kernel()
	main, err := k.Branch(ctx, "main")
	if err != nil {
		return feed.ID{}, fmt.Errorf("changefeed: graph identity: %w", err)
	}
	s, err := k.SnapshotAtVersion(ctx, main, 0)
	if err != nil {
		return feed.ID{}, fmt.Errorf("changefeed: graph identity: %w", err)
	}
	f.mu.Lock()
	f.genesis = feed.ID(s.Head())
	f.mu.Unlock()
	return feed.ID(s.Head()), nil
}

type posKind uint8

const (
	posBeginning posKind = iota + 1
	posNow
	posAfter
	posToken
)

// Position is where a Poll starts.
type Position struct {
	kind   posKind
	commit kernel.CommitID
	token  string
}

// Beginning starts at the first commit of the branch's first-parent chain
// (the graph's genesis; a branch's chain runs through the history it was
// forked from).
func Beginning() Position { return Position{kind: posBeginning} }

// Now starts after the branch's head: the page holds no block, only a
// cursor at the head.
func Now() Position { return Position{kind: posNow} }

// AfterCommit starts after commit id, which must be on the branch's
// first-parent chain.
func AfterCommit(id kernel.CommitID) Position { return Position{kind: posAfter, commit: id} }

// FromToken continues from a Page's Cursor or PageToken.
func FromToken(token string) Position { return Position{kind: posToken, token: token} }

// Block is the part of one commit's changes a page delivers.
type Block struct {
	// Commit is the cause: id, parents (a merge's merged parent second),
	// kind, actor, message, time, where it was published.
	Commit kernel.Commit
	// Schema is the commit's schema change (nil when it changed none),
	// delivered once, in the commit's first block (Continued false).
	Schema  *SchemaChange
	Changes []Change
	// Continued is true when earlier pages delivered the commit's first
	// changes; Complete when this block holds its last ones.
	Continued, Complete bool
}

// Page is one poll's result. Exactly one of Cursor and PageToken is set.
type Page struct {
	// Blocks are per-commit, oldest first, in the feed's order inside each.
	Blocks []Block
	// Cursor is set when the page ends at a commit boundary: every commit up
	// to the last block was delivered whole. Save it; poll from it.
	Cursor string
	// PageToken is set when the page ends inside a commit (its last block
	// is not Complete): poll from it to continue. Do not save it in place
	// of a cursor; a consumer that restarts from its last cursor sees the
	// partly delivered commit again (at-least-once).
	PageToken string
	// CaughtUp is true when the page reached the branch head as it was
	// when the poll started.
	CaughtUp bool
}

// Poll returns the next page of branch's first-parent chain from pos,
// commit by commit, oldest first, each commit relative to its first
// parent, holding the changes filter selects under lim (zero fields take
// the defaults; feed.HardMax* bound them). The chain is cut at the branch
// head as of the poll's start.
//
// Errors: a cursor or page token that is malformed, forged, of another
// graph, branch or filter, or naming a commit that is not on the chain
// where it says is *feed.CursorError (feed.ErrBadCursor); a branch deleted
// or re-created since the token was issued is feed.ErrBranchChanged;
// history that garbage collection reclaimed is a *feed.GapError
// (feed.ErrGap and kernel.ErrReclaimed): re-baseline from a snapshot.
func (f *Feed) Poll(ctx context.Context, branch string, pos Position, filter feed.Filter, lim feed.Limits) (Page, error) {
	lim, filter, err := normalize(lim, filter)
	if err != nil {
		return Page{}, err
	}
	p, err := f.start(ctx, branch, pos, filter)
	if err != nil {
		return Page{}, gapOf("", fmt.Errorf("poll %s: %w", branch, err))
	}
	if pos.kind == posNow {
		return Page{Cursor: p.tok.Encode(), CaughtUp: true}, nil
	}
	page, err := p.run(ctx, filter, lim)
	if err != nil {
		return Page{}, gapOf("", fmt.Errorf("poll %s: %w", branch, err))
	}
	return page, nil
}

// gapOf turns an error matching kernel.ErrReclaimed (history garbage
// collection removed) into a *feed.GapError, which matches both.
func gapOf(commit string, err error) error {
	if errors.Is(err, kernel.ErrReclaimed) && !errors.Is(err, feed.ErrGap) {
		return &feed.GapError{Commit: commit, Cause: err}
	}
	return err
}

// poller is one poll in progress.
type poller struct {
	f     *Feed
	chain *chain
	tok   feed.Token // the position so far
}

// start resolves pos into a checked position on branch's chain.
func (f *Feed) start(ctx context.Context, branch string, pos Position, filter feed.Filter) (*poller, error) {
	graph, err := f.graphID(ctx)
	if err != nil {
		return nil, err
	}
	bind := feed.Binding{Graph: graph, Branch: branch, Filter: filter.Digest()}
	ref, err := f.g.Branch(ctx, branch)
	switch {
	case errors.Is(err, kernel.ErrBranchNotFound) && pos.kind == posToken:
		if _, err := decodeFor(pos.token, feed.KindCursor, bind); err != nil && !errors.Is(err, feed.ErrBranchChanged) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", feed.ErrBranchChanged, err)
	case err != nil:
		return nil, err
	}
	bind.Incarnation = feed.ID(ref.IncarnationID())
	ch, err := newChain(ctx, f.g, ref)
	if err != nil {
		return nil, err
	}
	p := &poller{f: f, chain: ch, tok: feed.Token{Kind: feed.KindCursor, Binding: bind}}
	switch pos.kind {
	case posBeginning:
		return p, nil
	case posNow:
		p.tok.Last, err = ch.headPoint(ctx)
	case posAfter:
		p.tok.Last, err = ch.check(ctx, pos.commit, nil)
	case posToken:
		err = p.resume(ctx, pos.token, bind)
	default:
		err = fmt.Errorf("changefeed: zero Position: %w", kernel.ErrInvalidArgument)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// resume checks a token against the request and the store.
func (p *poller) resume(ctx context.Context, s string, bind feed.Binding) error {
	tok, err := decodeFor(s, feed.KindCursor, bind)
	if err != nil {
		return err
	}
	if !tok.Last.IsZero() {
		if _, err := p.chain.check(ctx, kernel.CommitID(tok.Last.Commit), &tok.Last); err != nil {
			return err
		}
	}
	if tok.Kind == feed.KindPage {
		next, ok, err := p.chain.next(ctx, tok.Last)
		if err != nil {
			return err
		}
		if !ok || next != tok.At {
			return &feed.CursorError{Problem: feed.NotOnChain, Detail: "page token's commit does not follow its cursor"}
		}
	}
	p.tok = tok
	return nil
}

// run delivers commits from p's position until the page is full, the
// commit limit is reached or the chain's cut is.
func (p *poller) run(ctx context.Context, filter feed.Filter, lim feed.Limits) (Page, error) {
	var page Page
	pk := feed.NewPacker(lim)
	for len(page.Blocks) < lim.MaxCommits && !pk.Full() {
		at, resume, continued := p.tok.At, p.tok.Resume, p.tok.Kind == feed.KindPage
		if !continued {
			var ok bool
			var err error
			if at, ok, err = p.chain.next(ctx, p.tok.Last); err != nil {
				return Page{}, err
			} else if !ok {
				page.CaughtUp = true
				break
			}
		}
		c, s, err := p.f.commitSpan(ctx, kernel.CommitID(at.Commit), filter)
		if err != nil {
			return Page{}, fmt.Errorf("commit %s: %w", kernel.CommitID(at.Commit), err)
		}
		if err := followsOnChain(c, p.tok.Last); err != nil {
			return Page{}, err
		}
		res, err := s.fill(ctx, resume, pk)
		if err != nil {
			return Page{}, fmt.Errorf("commit %s: %w", c.ID, err)
		}
		if !res.done && len(res.changes) == 0 && res.schema == nil {
			break // not one change fits after the blocks before it: end at their boundary
		}
		page.Blocks = append(page.Blocks, Block{Commit: c, Schema: res.schema, Changes: res.changes, Continued: continued, Complete: res.done})
		p.tok = feed.Delivered(p.tok, at, res.done, res.next)
		if !res.done {
			break
		}
	}
	if p.tok.Kind == feed.KindCursor {
		page.CaughtUp = page.CaughtUp || p.chain.atCut(p.tok.Last)
		page.Cursor = p.tok.Encode()
	} else {
		page.PageToken = p.tok.Encode()
	}
	return page, nil
}

// followsOnChain checks the chain's invariant before a block is delivered:
// a commit's first parent is the commit delivered before it (none for the
// first commit, the genesis).
func followsOnChain(c kernel.Commit, last feed.Point) error {
	switch {
	case last.IsZero() && len(c.Parents) == 0:
		return nil
	case !last.IsZero() && len(c.Parents) > 0 && c.Parents[0] == kernel.CommitID(last.Commit):
		return nil
	}
	return fmt.Errorf("commit %s (parents %v) does not follow %s on the first-parent chain: %w",
		c.ID, c.Parents, kernel.CommitID(last.Commit), kernel.ErrCorrupt)
}
