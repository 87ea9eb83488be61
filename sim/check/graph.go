package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/model"
)

// TagPrefix starts the commit message of every simulated commit; the rest of
// the message is the operation's unique tag.
const TagPrefix = "sim:"

// MessageFor returns the commit message carrying tag.
func MessageFor(tag string) string { return TagPrefix + tag }

// TagOf extracts the tag from a commit message.
func TagOf(message string) (string, bool) {
	if !strings.HasPrefix(message, TagPrefix) || len(message) == len(TagPrefix) {
		return "", false
	}
	return message[len(TagPrefix):], true
}

// IncarnationKey is the partition key of one branch incarnation.
func IncarnationKey(branch string, incarnation uint64) string {
	return fmt.Sprintf("%s#%d", branch, incarnation)
}

// Inspector reads a store's durable state without faults, hooks or
// scheduling: objstore/sim's Peek and Keys, or an adapter over a real store.
type Inspector interface {
	Keys(prefix string) []string
	Peek(key string) ([]byte, bool)
}

// Torn reports whether key holds an object a machine crash tore (an
// inspector that can tell: objstore/sim's Torn). A torn object exists,
// has no bytes, and every read of it through the store reports
// objstore.ErrCorruptObject; only an object never made durable can be
// torn (objstore.DeferAll), so a checker meeting one decides whether the
// kernel may have left it unreferenced (a publish attempt's commit index)
// or not (a version a durable manifest pins: then undecodable bytes are a
// violation as ever).
func Torn(in Inspector, key string) bool {
	t, ok := in.(interface{ Torn(key string) bool })
	return ok && t.Torn(key)
}

// Incarnation is one branch incarnation's manifest chain as stored.
type Incarnation struct {
	Key       string // IncarnationKey
	Manifests []format.Manifest
}

// Latest returns the newest manifest.
func (inc Incarnation) Latest() format.Manifest { return inc.Manifests[len(inc.Manifests)-1] }

// Graph is the durable state of one graph root, decoded.
type Graph struct {
	Root         string
	Incarnations []Incarnation // sorted by branch name, then incarnation
}

// LoadGraph decodes every manifest chain under root. Undecodable or gapped
// chains are violations and are left out of the returned graph.
func LoadGraph(in Inspector, root string) (Graph, []Violation) { return loadGraph(in, root, false) }

// LoadRetainedGraph is LoadGraph for a graph garbage collection may have
// truncated: each incarnation's chain must be contiguous from its oldest
// retained manifest (not necessarily version 0) to its head.
func LoadRetainedGraph(in Inspector, root string) (Graph, []Violation) {
	return loadGraph(in, root, true)
}

func loadGraph(in Inspector, root string, truncated bool) (Graph, []Violation) {
	keys := format.NewKeys(root)
	prefix := keys.Root() + "/branches/"
	type incID struct {
		name string
		inc  uint64
	}
	byInc := map[incID][]string{}
	var vs []Violation
	for _, k := range in.Keys(prefix) {
		parts := strings.Split(strings.TrimPrefix(k, prefix), "/")
		if len(parts) != 3 {
			vs = append(vs, violation("format", "unexpected key %q under branches/", k))
			continue
		}
		inc, v, err := keys.ParseManifestKey(parts[0], k)
		if err != nil {
			vs = append(vs, violation("format", "manifest key %q: %v", k, err))
			continue
		}
		_ = v
		id := incID{parts[0], inc}
		byInc[id] = append(byInc[id], k)
	}
	ids := make([]incID, 0, len(byInc))
	//detlint:ordered collects ids, sorted next
	for id := range byInc {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].name != ids[j].name {
			return ids[i].name < ids[j].name
		}
		return ids[i].inc < ids[j].inc
	})
	g := Graph{Root: root}
	for _, id := range ids {
		inc, ivs := loadIncarnation(in, keys, id.name, id.inc, byInc[id], truncated)
		vs = append(vs, ivs...)
		if len(ivs) == 0 {
			g.Incarnations = append(g.Incarnations, inc)
		}
	}
	return g, vs
}

// loadIncarnation decodes one incarnation's manifests, oldest first, and
// checks they are versions 0..n without gaps, with one identity.
func loadIncarnation(in Inspector, keys format.Keys, name string, incN uint64, ks []string, truncated bool) (Incarnation, []Violation) {
	inc := Incarnation{Key: IncarnationKey(name, incN)}
	// Inverted versions: ascending key order is descending version order.
	for i := len(ks) - 1; i >= 0; i-- {
		b, ok := in.Peek(ks[i])
		if !ok {
			return inc, []Violation{violation("format", "manifest %q listed but missing", ks[i])}
		}
		m, _, err := format.DecodeManifestAnyStamp(b)
		if err != nil {
			return inc, []Violation{violation("format", "manifest %q: %v", ks[i], err)}
		}
		want := uint64(len(inc.Manifests))
		if truncated && len(inc.Manifests) > 0 && m.Version != inc.Manifests[0].Version+uint64(len(inc.Manifests)) {
			// Older manifests kept apart from the retained run (main's
			// genesis, fork points of live branches): the chain checked is
			// the newest contiguous run.
			inc.Manifests = inc.Manifests[:0]
		}
		if truncated && len(inc.Manifests) == 0 {
			want = m.Version // the oldest manifest of the retained run
		} else if truncated {
			want = inc.Manifests[0].Version + uint64(len(inc.Manifests))
		}
		if m.Version != want || m.Branch.Name != name || m.Branch.Incarnation != incN {
			return inc, []Violation{violation("linear-chain", "%s: manifest %q holds %s#%d v%d, want v%d (gap or misplaced)",
				inc.Key, ks[i], m.Branch.Name, m.Branch.Incarnation, m.Version, want)}
		}
		if len(inc.Manifests) > 0 && m.Branch.IncarnationID != inc.Manifests[0].Branch.IncarnationID {
			return inc, []Violation{violation("linear-chain", "%s v%d: incarnation id changed", inc.Key, m.Version)}
		}
		inc.Manifests = append(inc.Manifests, m)
	}
	return inc, nil
}

// Migrations counts the migration manifests (the v3->v4 lineage fold of a
// branch incarnation) in the graph.
func (g Graph) Migrations() int {
	n := 0
	for _, inc := range g.Incarnations {
		for _, m := range inc.Manifests {
			if m.Legacy != nil {
				n++
			}
		}
	}
	return n
}

// legacy reports a manifest written in the v3 format (no commit, no head).
func legacy(m *format.Manifest) bool { return m.FormatStamp < format.FormatV4 }

// CheckChains checks every incarnation's manifest chain: one linear chain
// (each commit's first parent is the previous head; merged parents aside), a
// tombstone only at the end, and no table pin going backwards.
func CheckChains(g Graph) []Violation {
	var vs []Violation
	for _, inc := range g.Incarnations {
		for i := 1; i < len(inc.Manifests); i++ {
			prev, m := inc.Manifests[i-1], inc.Manifests[i]
			vs = append(vs, checkSuccessor(inc.Key, &prev, &m)...)
		}
	}
	return vs
}

func checkSuccessor(key string, prev, m *format.Manifest) []Violation {
	var vs []Violation
	if prev.Tombstone {
		vs = append(vs, violation("linear-chain", "%s v%d follows a tombstone", key, m.Version))
	}
	if legacy(m) && !legacy(prev) {
		vs = append(vs, violation("format", "%s v%d: a v3 manifest after a current one", key, m.Version))
	}
	switch {
	case legacy(m):
		// v3: lineage lives in separate legacy commits; the migration checks it.
	case m.Commit == nil && m.Legacy == nil:
		vs = append(vs, violation("linear-chain", "%s v%d: no commit", key, m.Version))
	case m.Commit == nil:
		// the migration fold: it records the legacy lineage and adds no commit
	case legacy(prev):
		vs = append(vs, violation("linear-chain", "%s v%d: a commit right after a v3 manifest, without the migration fold", key, m.Version))
	case len(m.Commit.Parents) == 0 || m.Commit.Parents[0] != prev.Head:
		vs = append(vs, violation("linear-chain", "%s v%d: first parent is not the previous head %s", key, m.Version, prev.Head))
	}
	own := m.Branch.IncarnationID
	for _, p := range m.Tables {
		old, ok := prev.Pin(p.Name)
		switch {
		case !ok && p.Fork != own:
			vs = append(vs, violation("pin-backwards", "%s v%d: new table %q pinned on foreign fork", key, m.Version, p.Name))
		case ok && p.Fork == old.Fork && p.Version < old.Version:
			vs = append(vs, violation("pin-backwards", "%s v%d: table %q pin %d < previous %d", key, m.Version, p.Name, p.Version, old.Version))
		case ok && p.Fork != old.Fork && p.Fork != own:
			vs = append(vs, violation("pin-backwards", "%s v%d: table %q moved to foreign fork", key, m.Version, p.Name))
		case ok && old.Fork == own && p.Fork != own:
			vs = append(vs, violation("pin-backwards", "%s v%d: table %q moved off its own fork", key, m.Version, p.Name))
		}
	}
	for _, old := range prev.Tables {
		if _, ok := m.Pin(old.Name); !ok {
			vs = append(vs, violation("pin-backwards", "%s v%d: table %q unpinned", key, m.Version, old.Name))
		}
	}
	return vs
}

// CheckCommits checks the recorded commits against the stored chains: every
// commit tag appears at most once in the whole graph and only on the
// incarnation it targeted; every acknowledged commit appears exactly once; a
// commit that failed definitely never appears; a tag nobody committed never
// appears.
func CheckCommits(g Graph, h *History) []Violation {
	var vs []Violation
	seen := map[string][]string{} // tag -> where
	for _, inc := range g.Incarnations {
		for _, m := range inc.Manifests {
			if m.Commit == nil {
				continue
			}
			tags, _ := TagsOf(m.Commit.Message) // a group commit lists several
			for _, tag := range tags {
				seen[tag] = append(seen[tag], fmt.Sprintf("%s v%d", inc.Key, m.Version))
				if info, known := h.Commit(tag); known && info.Key != inc.Key {
					vs = append(vs, violation("commit-wrong-branch", "commit %s targeted %s, found on %s v%d", tag, info.Key, inc.Key, m.Version))
				}
			}
		}
	}
	tags := make([]string, 0, len(seen))
	//detlint:ordered collects tags, sorted next
	for t := range seen {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		where := seen[tag]
		if len(where) > 1 {
			vs = append(vs, violation("commit-exactly-once", "commit %s present %d times: %s", tag, len(where), strings.Join(where, ", ")))
		}
		info, known := h.Commit(tag)
		switch {
		case !known:
			vs = append(vs, violation("unknown-commit", "commit %s at %s was never issued", tag, where[0]))
		case info.Outcome == model.Failed:
			vs = append(vs, violation("failed-commit-visible", "commit %s failed definitely but is at %s", tag, where[0]))
		}
	}
	for _, tag := range h.Tags() {
		info, _ := h.Commit(tag)
		if info.Outcome == model.OK && len(seen[tag]) == 0 {
			vs = append(vs, violation("commit-exactly-once", "acknowledged commit %s on %s is missing", tag, info.Key))
		}
	}
	return vs
}

// CheckTableHeads checks, for the newest manifest of every live incarnation,
// that each pinned table version exists and is what it claims, and that the
// table's HEAD on that fork is not behind the pin.
func CheckTableHeads(in Inspector, g Graph) []Violation {
	keys := format.NewKeys(g.Root)
	var vs []Violation
	for _, inc := range g.Incarnations {
		m := inc.Latest()
		if m.Tombstone {
			continue
		}
		for _, p := range m.Tables {
			vs = append(vs, checkPin(in, keys, inc.Key, p)...)
		}
	}
	return vs
}

func checkPin(in Inspector, keys format.Keys, incKey string, p format.TablePin) []Violation {
	k := keys.TableVersionRef(p.Name, p.Ref())
	if p.Riding != "" {
		// It rides the manifest (format 11): there must be no object.
		if _, ok := in.Peek(k); ok {
			return []Violation{violation("table-head", "%s pins %s v%d riding its manifest, and an object %q exists", incKey, p.Name, p.Version, k)}
		}
		if _, err := format.RidingVersion(p); err != nil {
			return []Violation{violation("format", "riding table version %q: %v", k, err)}
		}
		return nil
	}
	b, ok := in.Peek(k)
	if !ok {
		return []Violation{violation("table-head", "%s pins %s v%d, which does not exist", incKey, p.Name, p.Version)}
	}
	tv, _, err := format.DecodeTableVersion(b)
	if err != nil {
		return []Violation{violation("format", "table version %q: %v", k, err)}
	}
	if tv.Table != p.Name || tv.Ref() != p.Ref() {
		return []Violation{violation("table-head", "%q holds %s/%s v%d", k, tv.Table, tv.Fork, tv.Version)}
	}
	if p.Ref().Named() {
		return nil // format 8: a version named per attempt has no counter HEAD to fall behind
	}
	heads := in.Keys(keys.TableForkPrefix(p.Name, p.Fork))
	if len(heads) == 0 {
		return []Violation{violation("table-head", "%s: table %s fork has no versions", incKey, p.Name)}
	}
	head, err := keys.ParseTableVersionKey(p.Name, p.Fork, heads[0])
	if err != nil {
		return []Violation{violation("format", "table key %q: %v", heads[0], err)}
	}
	if head < p.Version {
		return []Violation{violation("table-head", "%s: table %s HEAD %d is behind its published version %d", incKey, p.Name, head, p.Version)}
	}
	return nil
}

// TagOfTable returns the simulator tag a table version carries in its
// metadata (MetaTag), or model.Absent.
func TagOfTable(tv format.TableVersion) string {
	for _, kv := range tv.Metadata {
		if kv.Key == MetaTag {
			return kv.Value
		}
	}
	return model.Absent
}

// MetaTag is the table-version metadata key holding the writing operation's
// tag: the value the table-value model sees.
const MetaTag = "sim-tag"
