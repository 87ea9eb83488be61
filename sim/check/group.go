package check

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/model"
)

// groupHeader starts the message of a group commit (kernel/data/group.go,
// docs/format.md "Group commit"): "group commit of N transactions", then
// one line per member in position order, "i\tactor\tfirst line of its
// message".
const groupHeader = "group commit of "

// TagsOf returns the simulator tags a commit message carries, in order:
// one for a plain commit (TagOf), one per member for a group commit (its
// position is its index). ok is false if the message carries none, or is a
// group message whose member lines do not match its header.
func TagsOf(message string) (tags []string, ok bool) {
	if tag, ok := TagOf(message); ok {
		return []string{tag}, true
	}
	lines := strings.Split(message, "\n")
	n, found := strings.CutPrefix(lines[0], groupHeader)
	if !found {
		return nil, false
	}
	n, found = strings.CutSuffix(n, " transactions")
	size, err := strconv.Atoi(n)
	if !found || err != nil || size != len(lines)-1 {
		return nil, false
	}
	for i, line := range lines[1:] {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[0] != strconv.Itoa(i) {
			return nil, false
		}
		tag, ours := TagOf(f[2])
		if !ours {
			return nil, false
		}
		tags = append(tags, tag)
	}
	return tags, len(tags) > 0
}

// GroupClass says what a grouped transaction's own validity is, whatever
// else commits: Sound (it holds on every state the run can reach: fresh
// ids, endpoints that always exist), Unsound (it fails on every state: an
// id that always exists, an endpoint that never does) or Either.
type GroupClass uint8

// Group classes.
const (
	Either GroupClass = iota
	Sound
	Unsound
)

// GroupObs is what one commit through a group-commit handle returned (a
// commit that never returned, its process crashed, has none).
type GroupObs struct {
	Tag     string
	Where   string // the process, for reports
	Class   GroupClass
	Outcome model.Outcome
	// OwnFailure: the error is a transaction's own (a validation rule or
	// a strict table moved since its Begin).
	OwnFailure bool
	// Shared: an ambiguity the group's publish returned (not a follower
	// that stopped waiting: Unknown). Waited: a follower no leader took
	// within its bound (data.ErrGroupWait, definite).
	Shared, Unknown, Waited bool
	// Elapsed is how long the commit call took (world time); FollowerLimit
	// the longest a follower that gave up may have waited: the handle's
	// MaxFollowerWait plus one longest poll and the
	// scheduler's window (0: not checked).
	Elapsed, FollowerLimit time.Duration
	// Commit, Position and Size are what an acknowledged member got: the
	// commit id and Txn.Group.
	Commit         string
	Position, Size int
}

// CheckGroups checks grouped commits against the durable chains (D20):
//
//   - "group-isolation": a Sound transaction got its own failure (another
//     member's failure was shared with it), or an Unsound one was
//     acknowledged;
//   - "group-position": an acknowledged member's commit id, position or
//     group size is not what the stored commit listing it says;
//   - "group-shared-ambiguity": one stored group commit has an
//     acknowledged member and a member told its publish was ambiguous
//     (the group's outcome is one for all);
//   - "group-follower-wait": a follower that gave up (Waited or Unknown)
//     waited longer than its FollowerLimit, or its outcome is not the
//     typed one (Waited is definite, Unknown ambiguous).
//
// A failed member that is visible anyway is CheckCommits'
// "failed-commit-visible". It also returns what the commits covered.
// GroupCoverage counts what the grouped commits exercised.
type GroupCoverage struct {
	// Members counts the commits that returned; Acked the acknowledged
	// ones, Grouped those acknowledged in a group of two or more.
	Members, Acked, Grouped int
	// Groups counts the stored commits listing two or more members;
	// MaxSize is the largest.
	Groups, MaxSize int
	// OwnFailures, Shared, Unknown and Waited count the members that
	// failed alone, shared a group's ambiguity, stopped waiting after a
	// leader took them (ambiguous), or were never taken (definite).
	OwnFailures, Shared, Unknown, Waited int
}

func CheckGroups(g Graph, obs []GroupObs) ([]Violation, GroupCoverage) {
	type place struct {
		where  string
		commit string
		tags   []string
	}
	stored := map[string]place{}
	for _, inc := range g.Incarnations {
		for _, m := range inc.Manifests {
			if m.Commit == nil {
				continue
			}
			tags, ok := TagsOf(m.Commit.Message)
			if !ok {
				continue
			}
			for _, t := range tags {
				stored[t] = place{where: fmt.Sprintf("%s v%d", inc.Key, m.Version), commit: m.Commit.ID.String(), tags: tags}
			}
		}
	}
	byTag := map[string]GroupObs{}
	var vs []Violation
	cov := GroupCoverage{Members: len(obs)}
	for _, o := range obs {
		byTag[o.Tag] = o
		cov.count(o)
		switch {
		case o.Class == Sound && o.OwnFailure:
			vs = append(vs, violation("group-isolation", "%s: %s holds on every state but failed as its own: %s", o.Where, o.Tag, outcomeName(o)))
		case o.Class == Unsound && o.Outcome == model.OK:
			vs = append(vs, violation("group-isolation", "%s: %s fails on every state but was acknowledged", o.Where, o.Tag))
		}
		vs = append(vs, checkFollowerWait(o)...)
		if o.Outcome != model.OK {
			continue
		}
		p, ok := stored[o.Tag]
		if !ok {
			continue // CheckCommits reports an acknowledged commit that is missing
		}
		pos := indexOf(p.tags, o.Tag)
		if p.commit != o.Commit || pos != o.Position || len(p.tags) != o.Size {
			vs = append(vs, violation("group-position", "%s: %s acknowledged as commit %s at %d of %d, stored at %s as %s at %d of %d",
				o.Where, o.Tag, o.Commit, o.Position, o.Size, p.where, p.commit, pos, len(p.tags)))
		}
	}
	seen := map[string]bool{}
	for _, o := range obs {
		p, ok := stored[o.Tag]
		if !ok || len(p.tags) < 2 || seen[p.where] {
			continue
		}
		seen[p.where] = true
		cov.Groups++
		cov.MaxSize = max(cov.MaxSize, len(p.tags))
		var acked, shared []string
		for _, t := range p.tags {
			m, ok := byTag[t]
			switch {
			case !ok:
			case m.Outcome == model.OK:
				acked = append(acked, t)
			case m.Shared:
				shared = append(shared, t)
			}
		}
		if len(acked) > 0 && len(shared) > 0 {
			vs = append(vs, violation("group-shared-ambiguity", "group commit at %s: %v acknowledged, %v told the publish was ambiguous",
				p.where, acked, shared))
		}
	}
	return vs, cov
}

func (c *GroupCoverage) count(o GroupObs) {
	switch {
	case o.Outcome == model.OK:
		c.Acked++
		if o.Size > 1 {
			c.Grouped++
		}
	case o.OwnFailure:
		c.OwnFailures++
	case o.Shared:
		c.Shared++
	case o.Unknown:
		c.Unknown++
	case o.Waited:
		c.Waited++
	}
}

// checkFollowerWait is "group-follower-wait" for one observation.
func checkFollowerWait(o GroupObs) []Violation {
	if !o.Waited && !o.Unknown {
		return nil
	}
	var vs []Violation
	if o.FollowerLimit > 0 && o.Elapsed > o.FollowerLimit {
		vs = append(vs, violation("group-follower-wait", "%s: %s gave up waiting after %v, beyond its bound %v", o.Where, o.Tag, o.Elapsed, o.FollowerLimit))
	}
	want := model.Ambiguous // taken by a leader that did not report: it may publish
	if o.Waited {
		want = model.Failed // never taken: nothing written
	}
	if o.Outcome != want {
		vs = append(vs, violation("group-follower-wait", "%s: %s gave up waiting (never taken %t) with outcome %v, want %v", o.Where, o.Tag, o.Waited, o.Outcome, want))
	}
	return vs
}

func indexOf(tags []string, tag string) int {
	for i, t := range tags {
		if t == tag {
			return i
		}
	}
	return -1
}

func outcomeName(o GroupObs) string {
	return fmt.Sprintf("%v (own failure %t)", o.Outcome, o.OwnFailure)
}
