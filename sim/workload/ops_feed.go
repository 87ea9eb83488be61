package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/graphkernel/graphkernel/kernel/changefeed"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/sim/check"
)

// A feed consumer polls main's change feed and applies it to a replayed
// state. What it saves durably (in the run, outside the graph's store) is
// its state and its cursor, together, only when a page ends at a commit
// boundary; its in-memory progress past that is lost when its process
// crashes (or when an op asks it to crash), and it resumes from the saved
// cursor. In the quiet phase the janitor catches every consumer up and
// checks its state against main's head (check.FeedReplay).

func init() {
	RegisterOp("fpoll", opFeedPoll)
}

// feedSave is a consumer's durable record.
type feedSave struct {
	cursor string
	state  check.Rows
}

// feedConsumer is a consumer's in-memory state in one process.
type feedConsumer struct {
	f     *changefeed.Feed
	state check.Rows
	pos   changefeed.Position
}

// maxFeedPolls bounds the pages one catch-up reads.
const maxFeedPolls = 100_000

// savedFeed returns the consumer's durable record (zero if none).
func (r *Run) savedFeed(name string) (feedSave, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.feedSaves[name]
	return s, ok
}

func (r *Run) saveFeed(name string, s feedSave) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.feedSaves == nil {
		r.feedSaves = map[string]feedSave{}
	}
	r.feedSaves[name] = s
}

// consumer returns the process's consumer, loading it from the saved
// record (or the beginning) on first use.
func (p *Proc) consumer(name string) (*feedConsumer, error) {
	if p.fc != nil {
		return p.fc, nil
	}
	g, err := p.dg()
	if err != nil {
		return nil, err
	}
	fc := &feedConsumer{f: changefeed.New(g), state: check.Rows{}, pos: changefeed.Beginning()}
	if s, ok := p.run.savedFeed(name); ok {
		fc.state, fc.pos = cloneRows(s.state), changefeed.FromToken(s.cursor)
	}
	p.fc = fc
	return fc, nil
}

// poll reads up to pages pages (0: until caught up), applying and saving
// as it goes; caught is true once it reached the head.
func (fc *feedConsumer) poll(p *Proc, name string, lim feed.Limits, pages int) (caught bool, err error) {
	for n := 0; n < maxFeedPolls && (pages == 0 || n < pages); n++ {
		page, err := fc.f.Poll(p.Ctx(), "main", fc.pos, feed.Filter{}, lim)
		if err != nil {
			return false, err
		}
		for _, b := range page.Blocks {
			for _, c := range b.Changes {
				applyChange(fc.state, c)
			}
		}
		if page.Cursor != "" {
			p.run.saveFeed(name, feedSave{cursor: page.Cursor, state: cloneRows(fc.state)})
		}
		fc.pos = changefeed.FromToken(page.Cursor + page.PageToken)
		if page.CaughtUp {
			return true, nil
		}
	}
	return false, nil
}

// opFeedPoll polls a few pages under the op's limits, then crashes the
// consumer (drops its unsaved progress) when the op says so.
func opFeedPoll(p *Proc, _ int, op Op) error {
	name := p.plan.Name
	fc, err := p.consumer(name)
	if err != nil {
		return p.readFailed("fpoll: open", err)
	}
	lim := feed.Limits{MaxChanges: argInt(op, "changes"), MaxBytes: argInt(op, "bytes"), MaxCommits: argInt(op, "commits")}
	_, err = fc.poll(p, name, lim, argInt(op, "pages"))
	if op.Arg("crash") == "1" {
		p.fc = nil
	}
	if err != nil {
		return p.feedFailed(name, err)
	}
	return nil
}

// feedFailed records a typed feed refusal as a violation (main is never
// deleted, no history is reclaimed, and the consumer only uses tokens the
// feed gave it); other failures (store faults) are retried by the next op.
func (p *Proc) feedFailed(name string, err error) error {
	if p.Over(err) {
		return p.end(err)
	}
	if errors.Is(err, feed.ErrBadCursor) || errors.Is(err, feed.ErrBranchChanged) || errors.Is(err, feed.ErrGap) {
		p.run.Violate(check.Violation{Check: "feed-error", Detail: fmt.Sprintf("%s (%s): %v", p.name, name, err)})
		return nil
	}
	p.Unexpected("fpoll", err)
	return nil
}

// argInt reads a non-negative integer argument ("" is 0, the feed's
// default); anything else is a malformed scenario, a programming or case
// file error, and panics.
func argInt(op Op, key string) int {
	v := op.Arg(key)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		panic(fmt.Sprintf("workload: %s: argument %s=%q is not a non-negative integer", op.Kind, key, v))
	}
	return n
}

func applyChange(s check.Rows, c changefeed.Change) {
	if s[c.Type] == nil {
		s[c.Type] = map[string]data.Row{}
	}
	if c.Op == feed.OpDelete {
		delete(s[c.Type], c.ID)
		return
	}
	s[c.Type][c.ID] = *c.After
}

func cloneRows(s check.Rows) check.Rows {
	out := check.Rows{}
	for typ, rows := range s { //detlint:ordered a copy
		m := make(map[string]data.Row, len(rows))
		for id, r := range rows { //detlint:ordered a copy
			m[id] = r
		}
		out[typ] = m
	}
	return out
}

// feedConsumers lists the scenario's consumer actors, in plan order.
func feedConsumers(s *Scenario) []string {
	var out []string
	for _, a := range s.Actors {
		for _, op := range a.Ops {
			if op.Kind == "fpoll" {
				out = append(out, a.Name)
				break
			}
		}
	}
	return out
}

// finalFeed runs in the janitor (quiet phase, no writer left): it catches
// every consumer up from its saved cursor and checks its state against
// main's head.
func finalFeed(p *Proc) error {
	consumers := feedConsumers(p.run.S)
	if len(consumers) == 0 {
		return nil
	}
	g, err := p.dg()
	if err != nil {
		return p.readFailed("feed final: open", err)
	}
	head, err := headRows(p, g)
	if err != nil {
		return p.readFailed("feed final: head", err)
	}
	for _, name := range consumers {
		p.fc = nil
		fc, err := p.consumer(name)
		if err != nil {
			return p.readFailed("feed final: consumer", err)
		}
		caught, err := fc.poll(p, name, feed.Limits{}, 0)
		if err != nil {
			return p.feedFailed(name, err)
		}
		if !caught {
			p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("%s: feed not caught up in %d polls", name, maxFeedPolls)})
			continue
		}
		for _, v := range check.FeedReplay(name, "main", fc.state, head) {
			p.run.Violate(v)
		}
	}
	p.fc = nil
	return nil
}

// headRows reads every row at main's head, by one diff from the genesis
// (an independent path from the per-commit walk the consumers took).
func headRows(p *Proc, g *data.Graph) (check.Rows, error) {
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, "main")
	if err != nil {
		return nil, err
	}
	s0, err := g.Kernel().SnapshotAtVersion(ctx, ref, 0)
	if err != nil {
		return nil, err
	}
	from, err := g.SnapshotAtCommit(ctx, s0.Head())
	if err != nil {
		return nil, err
	}
	to, err := g.SnapshotAt(ctx, ref)
	if err != nil {
		return nil, err
	}
	d, err := changefeed.Diff(from, to, feed.Filter{})
	if err != nil {
		return nil, err
	}
	rows := check.Rows{}
	for n := 0; n < maxFeedPolls; n++ {
		page, err := d.Next(ctx, feed.Limits{})
		if err != nil {
			return nil, err
		}
		for _, c := range page.Changes {
			applyChange(rows, c)
		}
		if page.Done {
			return rows, nil
		}
	}
	return nil, fmt.Errorf("head diff longer than %d pages", maxFeedPolls)
}

// genFeedConsumer plans a consumer polling main with small, varying pages
// (so commits split across pages) that sometimes crashes.
func genFeedConsumer(rng *rand.Rand, sh shape) ActorPlan {
	think := [2]time.Duration{2 * time.Second, 8 * time.Second}
	a := ActorPlan{Name: "f0"}
	for n := opsFor(sh, think); n > 0; n-- {
		crash := "0"
		if rng.IntN(4) == 0 {
			crash = "1"
		}
		a.Ops = append(a.Ops, Op{Kind: "fpoll", Think: think[0] + time.Duration(rng.Int64N(int64(think[1]-think[0]))),
			Args: map[string]string{
				"changes": strconv.Itoa(1 + rng.IntN(3)), "bytes": strconv.Itoa(64 + rng.IntN(2048)),
				"commits": strconv.Itoa(1 + rng.IntN(3)), "pages": strconv.Itoa(1 + rng.IntN(4)), "crash": crash,
			}})
	}
	return a
}
