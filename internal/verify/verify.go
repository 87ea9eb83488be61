// Package verify is graphkernel verify (fsck) as a library: Graph walks one
// graph root read-only and reports every broken rule by key, retention-aware
// (a --keep-last: what every collection with it keeps must be present,
// garbage is a note). cmd/graphkernel and simrun -procs run the same code.
package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/branchindex"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// Rules verify reports. Each problem names the key and one of these.
const (
	RuleRead         = "read"               // the store failed to return the object
	RuleMissing      = "missing"            // a referenced object does not exist
	RuleTooLarge     = "too-large"          // larger than the format allows: not read
	RuleEnvelope     = "envelope"           // frame, length or CRC32C of the envelope
	RuleDecode       = "decode"             // the payload does not decode under the format's rules
	RuleLocation     = "location"           // the content names another key than the one it is stored at
	RuleChainGap     = "chain-gap"          // a manifest missing among an incarnation's newest --keep-last versions, or main's genesis missing
	RuleChain        = "chain"              // successor rules: first parent, same incarnation, pins never backwards
	RuleForkPoint    = "fork-point"         // fork_of / merged_from names no manifest with that head
	RuleRows         = "rows"               // row counts disagree (pin, table version, fragments)
	RuleHeadBehind   = "head-behind-pin"    // a table HEAD below the version a live head pins
	RuleFragment     = "fragment"           // size, CRC32C or Arrow decode of a fragment
	RuleFragmentRule = "fragment-rows"      // ids unsorted or duplicated in a fragment, or min/max wrong
	RuleDuplicateID  = "duplicate-id"       // one id twice in a table version
	RuleDangling     = "dangling-edge"      // an edge endpoint that is not a node
	RuleCard         = "card"               // a source node's out-edge count outside @card
	RuleSidecar      = "sidecar-unreadable" // a pending sidecar that does not decode
	RuleSchema       = "schema"             // schema contract object
	RuleCommitIndex  = "commit-index"       // a commit index (lineage aid) that does not decode or names another commit
	RuleForkIndex    = "fork-index"         // a live fork without its marker under a complete fork index, or a marker that does not decode
	RuleLease        = "lease"              // a lease that does not decode, or an unexpired lease whose snapshot manifest is gone
)

// Per-object read bounds: an object larger than this is reported, never
// fetched (Head first).
const (
	maxEnvelopeBytes = format.MaxPayloadBytes + 64
	maxFragmentBytes = 1 << 30
	// maxProblemsPerRule bounds the problems listed per rule (the count
	// goes on).
	maxProblemsPerRule = 100
)

// Problem is one broken rule at one key.
type Problem struct {
	Key    string `json:"key"`
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// PendingSidecar is a recovery sidecar still on the store.
type PendingSidecar struct {
	Key        string   `json:"key"`
	Op         string   `json:"op"`
	AgeSeconds float64  `json:"age_seconds"`
	PastLease  bool     `json:"past_lease"`
	Branch     string   `json:"branch,omitempty"`
	WriterKind string   `json:"writer_kind,omitempty"`
	Tables     []string `json:"tables,omitempty"`
}

// Report is what verify found (`graphkernel verify --json`): what it
// checked, every problem (at most maxProblemsPerRule listed per rule; the
// count goes on), pending sidecars and notes. No problem means the graph
// verifies clean.
type Report struct {
	LiveBranches  []string `json:"live_branches"`
	Manifests     int      `json:"manifests"`
	TableVersions int      `json:"table_versions"`
	Fragments     int      `json:"fragments"`
	// AdjacencyObjects counts the adjacency chunks and pages checked.
	AdjacencyObjects int              `json:"adjacency_objects"`
	RowsChecked      uint64           `json:"rows_checked"`
	Problems         []Problem        `json:"problems"`
	ProblemCount     map[string]int   `json:"problem_count"`
	Sidecars         []PendingSidecar `json:"pending_sidecars"`
	Notes            []string         `json:"notes,omitempty"`
}

// verifier walks one graph root. It only reads (Get, Head, List).
type verifier struct {
	st       objstore.Store
	keys     format.Keys
	root     string
	now      time.Time
	rep      *Report
	tables   map[string]*data.Table // by type, from the schema (nil: fragments get size and CRC checks only)
	sch      schema.Schema
	schemas  map[string]bool      // schema hashes checked
	tvRows   map[string]uint64    // table-version keys checked -> rows held (tvUnreadable if not)
	seenFrag map[string]bool      // fragment keys checked
	sums     rowSums              // per fragment and index object: the multiset hashes of its entries
	refs     []format.ManifestRef // fork points and merged-from refs to check at the end
	refHeads []format.ID
	refFrom  []string
	live     []liveHead

	// indexMissing, indexStale and indexTorn count commits whose index is
	// absent, names another location, or is torn (the store reports
	// objstore.ErrCorruptObject: a deferred write an OS crash cut): all
	// three are states the kernel reads past (K10a), so notes, not problems.
	indexMissing, indexStale, indexTorn int
	opaque                              map[string]bool // tables outside the schema seen

	keepLast  uint64            // the retention verify assumes (docs/gc.md §2): gaps below an incarnation's newest keepLast versions are collected history
	incHeads  map[incKey]uint64 // every incarnation's head version
	refLive   []bool            // per ref: a live branch's fork point (must exist) rather than history collection may reclaim
	truncated int               // incarnations whose history below the retention window was collected
	reclaimed int               // fork points and merged-from manifests of collected history

	least      gc.Policy         // gc.LeastRetention(keepLast): what every collection with this KeepLast keeps
	incExpired map[incKey]bool   // deleted incarnations every such collection may have reclaimed (all but the tombstone)
	tvGone     map[string]string // missing table versions only unretained manifests pin (garbage, not damage) -> the first such manifest
	garbage    int               // references from unretained manifests to collected objects
	// ridingLater: the versions riding only manifests outside retention
	// seen so far (format 11), checked after the walk (checkRidingLater).
	ridingLater []ridingPin
	scratch     *[]Problem // while set, problem collects here (checkRidingLater)
	kernelOnly  bool       // the schema contract is no data-plane schema: every table is opaque

	g         *data.Graph           // the read-only data handle (nil if the open failed)
	views     map[string]schemaView // per schema hash (schemas.go)
	curSchema string                // the schema of the manifest whose pins are being checked
}

// incKey names one branch incarnation.
type incKey struct {
	name string
	inc  uint64
}

// liveHead is the newest manifest of a live branch incarnation.
type liveHead struct {
	key string
	m   format.Manifest
}

func (v *verifier) problem(key, rule, f string, args ...any) {
	if v.scratch != nil {
		*v.scratch = append(*v.scratch, Problem{Key: key, Rule: rule, Detail: fmt.Sprintf(f, args...)})
		return
	}
	v.rep.ProblemCount[rule]++
	if v.rep.ProblemCount[rule] <= maxProblemsPerRule {
		v.rep.Problems = append(v.rep.Problems, Problem{Key: key, Rule: rule, Detail: fmt.Sprintf(f, args...)})
	}
}

func (v *verifier) note(f string, args ...any) {
	v.rep.Notes = append(v.rep.Notes, fmt.Sprintf(f, args...))
}

// Graph checks everything reachable from every live branch of the
// graph at root and returns the report; an error means verify itself could
// not run (the store failed to list), not that the graph is damaged.
//
// keepLast is the retention the graph is collected with (maintain's
// --keep-last): a manifest missing among an incarnation's newest keepLast
// versions is damage, a gap below them is collected history (a note).
func Graph(ctx context.Context, st objstore.Store, root string, env kernel.Env, now time.Time, keepLast int) (*Report, error) {
	v := &verifier{st: st, keys: format.NewKeys(root), root: root, now: now, keepLast: uint64(keepLast), incHeads: map[incKey]uint64{},
		least: gc.LeastRetention(keepLast), incExpired: map[incKey]bool{}, tvGone: map[string]string{},
		rep:     &Report{LiveBranches: []string{}, Problems: []Problem{}, ProblemCount: map[string]int{}, Sidecars: []PendingSidecar{}},
		schemas: map[string]bool{}, tvRows: map[string]uint64{}, seenFrag: map[string]bool{}, opaque: map[string]bool{}, sums: newRowSums()}
	v.loadTables(ctx, env)
	if err := v.walkManifests(ctx); err != nil {
		return nil, err
	}
	v.checkRidingLater(ctx)
	v.checkRefs(ctx)
	if v.truncated > 0 || v.reclaimed > 0 || v.garbage > 0 {
		v.note("retention: %d incarnation(s) hold no history below their retained manifests, %d fork point(s) or merged-from manifest(s) of collected history are gone, %d table version(s) pinned only by manifests outside retention (kept tombstones, or collected history not yet deleted) are gone (garbage collection, docs/gc.md)",
			v.truncated, v.reclaimed, v.garbage)
	}
	if len(v.opaque) > 0 {
		names := make([]string, 0, len(v.opaque))
		for n := range v.opaque { //detlint:ordered sorted below
			names = append(names, n)
		}
		sort.Strings(names)
		v.note("tables outside the schema (the kernel's opaque tables) checked as kernel objects only: %s", strings.Join(names, ", "))
	}
	if v.indexMissing > 0 || v.indexStale > 0 || v.indexTorn > 0 {
		v.note("commit indexes (lineage aids, never authoritative): %d commits have none, %d name another location, %d torn by a crash (read as absent, rebuilt by the next writer)",
			v.indexMissing, v.indexStale, v.indexTorn)
	}
	v.checkForkIndex(ctx)
	for _, h := range v.live {
		if err := v.checkHead(ctx, h); err != nil {
			return nil, err
		}
	}
	if err := v.listSidecars(ctx); err != nil {
		return nil, err
	}
	if err := v.checkLeases(ctx); err != nil {
		return nil, err
	}
	return v.rep, nil
}

// loadTables gets the storage view of every type through a read-only open
// (main's head names the schema). If the open fails, fragments still get
// their size and CRC checks, and the failure is a note (the walk reports
// the damage itself).
func (v *verifier) loadTables(ctx context.Context, env kernel.Env) {
	g, err := data.Open(ctx, v.st, v.root, data.Options{Kernel: kernel.Options{ReadOnly: true, Env: env}})
	if err == nil {
		var b kernel.BranchRef
		if b, err = g.Branch(ctx, format.MainBranch); err == nil {
			var s *data.Snapshot
			if s, err = g.SnapshotAt(ctx, b); err == nil {
				v.sch = s.Schema()
				v.g, v.views = g, map[string]schemaView{}
				v.tables = map[string]*data.Table{} // by storage table: the kernel table a manifest pins
				for _, n := range v.sch.Nodes {
					t, _ := s.Table(n.Name)
					v.tables[n.StorageTable()] = t
				}
				for _, e := range v.sch.Edges {
					t, _ := s.Table(e.Name)
					v.tables[e.StorageTable()] = t
				}
				return
			}
		}
	}
	v.note("read-only open failed (%v): fragments get size and CRC checks only, row rules are skipped", err)
}

// getBounded reads key after checking its size (Head) against limit.
func (v *verifier) getBounded(ctx context.Context, key string, limit int64) ([]byte, bool) {
	at, err := v.st.Head(ctx, key)
	if err != nil {
		v.readProblem(key, err)
		return nil, false
	}
	if at.Size > limit {
		v.problem(key, RuleTooLarge, "%d bytes, more than %d", at.Size, limit)
		return nil, false
	}
	obj, err := v.st.Get(ctx, key)
	if err != nil {
		v.readProblem(key, err)
		return nil, false
	}
	return obj.Data, true
}

func (v *verifier) readProblem(key string, err error) {
	if errors.Is(err, objstore.ErrNotFound) {
		v.problem(key, RuleMissing, "referenced object does not exist")
		return
	}
	v.problem(key, RuleRead, "%v", err)
}

// branchesPrefix is R/branches/ (every manifest of every branch).
func branchesPrefix(k format.Keys) string { return strings.TrimSuffix(k.BranchPrefix("x"), "x/") }

// manifestKey is a parsed manifest key.
type manifestKey struct {
	name     string
	inc, ver uint64
}

func (v *verifier) parseManifestKey(key string) (manifestKey, bool) {
	rest := strings.TrimPrefix(key, branchesPrefix(v.keys))
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return manifestKey{}, false
	}
	inc, err1 := format.ParseInverted(parts[1])
	ver, err2 := format.ParseInverted(parts[2])
	if err1 != nil || err2 != nil {
		return manifestKey{}, false
	}
	return manifestKey{name: parts[0], inc: inc, ver: ver}, true
}

// chainState follows one incarnation's manifests newest first.
type chainState struct {
	name    string
	inc     uint64
	prevKey string
	prevVer uint64
	prev    *format.Manifest // the manifest just above (nil if it did not decode)
	newest  bool             // the incarnation is the newest of its name
	started bool
	headVer uint64 // the incarnation's newest version
	tomb    bool   // its newest manifest is a tombstone
	cut     bool   // history below the retention window was collected

	tombNano int64             // the tombstone's time (gc.TombstoneTime), 0 if live
	times    []gc.ManifestTime // the retained run so far, newest first (gc.Protected's input)
	outside  bool              // a manifest above was outside the retained run: so is every one below
	expired  bool              // a deleted incarnation that collection may have reclaimed: all but its tombstone may be gone
}

// window is the lowest version of cs's retention window: its newest
// keepLast versions, which collection never deletes.
func (v *verifier) window(head uint64) uint64 {
	if head+1 <= v.keepLast {
		return 0
	}
	return head + 1 - v.keepLast
}

// gapIsDamage reports whether versions lo..hi missing below version above
// break retention: some is inside the window, unless the incarnation is a
// deleted one past retention (collection keeps only its tombstone, and
// the fork points live branches still need; it deletes the rest oldest
// first, so a killed collection leaves any part of it), or it is the gap
// right below a tombstone.
func (v *verifier) gapIsDamage(cs *chainState, above, hi uint64) bool {
	if cs.expired || (cs.tomb && above == cs.headVer) {
		return false
	}
	return hi >= v.window(cs.headVer)
}

// walkManifests streams every manifest key of every branch (names ascending,
// incarnations and versions newest first) and checks each manifest and the
// pair it forms with the one above it. Memory is one manifest per step.
func (v *verifier) walkManifests(ctx context.Context) error {
	var cs chainState
	lastName := ""
	err := ListKeys(ctx, v.st, branchesPrefix(v.keys), func(key string) error {
		mk, ok := v.parseManifestKey(key)
		if !ok {
			v.problem(key, RuleLocation, "not a manifest key (want branches/<name>/<inv(inc)>/<inv(version)>)")
			return nil
		}
		if !cs.started || mk.name != cs.name || mk.inc != cs.inc {
			v.endChain(&cs)
			cs = chainState{name: mk.name, inc: mk.inc, newest: mk.name != lastName, started: true}
			lastName = mk.name
		}
		v.stepChain(ctx, &cs, key, mk)
		return nil
	})
	v.endChain(&cs)
	if len(v.rep.LiveBranches) == 0 && err == nil {
		v.problem(v.keys.BranchPrefix(format.MainBranch), RuleMissing, "no live branch: not a graph root, or main is gone")
	}
	return err
}

func (v *verifier) endChain(cs *chainState) {
	if !cs.started {
		return
	}
	defer func() {
		if cs.cut {
			v.truncated++
		}
	}()
	switch {
	case cs.prevVer == 0:
	case cs.name == format.MainBranch && cs.inc == 1:
		v.problem(v.keys.Manifest(cs.name, cs.inc, 0), RuleChainGap,
			"main's genesis manifest is missing (collection keeps it forever: it is the graph's identity)")
	case v.gapIsDamage(cs, cs.prevVer, cs.prevVer-1):
		v.problem(v.keys.Manifest(cs.name, cs.inc, cs.prevVer-1), RuleChainGap,
			"incarnation %s#%d has no manifest below version %d, inside its newest %d versions (head %d), which collection keeps",
			cs.name, cs.inc, cs.prevVer, v.keepLast, cs.headVer)
	default:
		cs.cut = true
	}
}

// stepChain checks one manifest and its successor (the manifest above it).
func (v *verifier) stepChain(ctx context.Context, cs *chainState, key string, mk manifestKey) {
	v.rep.Manifests++
	first := cs.prevKey == ""
	if !first && mk.ver != cs.prevVer-1 {
		if v.gapIsDamage(cs, cs.prevVer, cs.prevVer-1) {
			v.problem(v.keys.Manifest(mk.name, mk.inc, cs.prevVer-1), RuleChainGap,
				"version %d follows version %d: versions %d..%d are missing inside the incarnation's newest %d versions (head %d), which collection keeps",
				mk.ver, cs.prevVer, mk.ver+1, cs.prevVer-1, v.keepLast, cs.headVer)
		} else {
			cs.cut = true
		}
		// Below the window: collected history, and what collection keeps
		// apart from the retained run (main's genesis, fork points, leased
		// snapshots).
		cs.prev = nil
	}
	m, ok := v.readManifest(ctx, key, mk)
	if first {
		cs.headVer, cs.tomb = mk.ver, ok && m.Tombstone
		v.incHeads[incKey{mk.name, mk.inc}] = mk.ver
		if ok {
			cs.tombNano = gc.TombstoneTime(m)
		}
	}
	retained := v.retained(cs, m, ok, mk)
	if first && cs.tomb && !retained {
		v.incExpired[incKey{mk.name, mk.inc}], cs.expired = true, true
	}
	if ok && first && cs.newest && !m.Tombstone {
		v.live = append(v.live, liveHead{key: key, m: m})
		v.rep.LiveBranches = append(v.rep.LiveBranches, fmt.Sprintf("%s#%d", mk.name, mk.inc))
	}
	// Format-3 manifests carry no lineage, and a migration manifest (no
	// commit) follows one: the successor rules apply from format 4 on.
	if ok && cs.prev != nil && m.FormatStamp >= format.FormatV4 && cs.prev.Commit != nil {
		if err := lineage.CheckSuccessor(&m, cs.prev); err != nil {
			v.problem(cs.prevKey, RuleChain, "successor of %s: %v", key, err)
		}
	}
	cs.prevKey, cs.prevVer, cs.prev = key, mk.ver, nil
	if ok {
		cs.prev = &m
		v.collectRefs(key, &m, cs.newest && !cs.tomb)
		v.checkPins(ctx, key, &m, retained)
		if m.Commit != nil {
			v.checkIndex(ctx, mk, m.Commit.ID)
		}
	}
}

// retained reports whether the manifest just read (m, ok=false if it did
// not decode) is in its incarnation's retained run under the least
// retention of --keep-last (gc.Protected with gc.LeastRetention: the
// collector's own rule), so what it pins must be present. The run is
// contiguous newest first; a manifest that did not decode counts as of
// unknown time (retained, as the collector keeps it).
func (v *verifier) retained(cs *chainState, m format.Manifest, ok bool, mk manifestKey) bool {
	if cs.outside {
		return false
	}
	t := gc.ManifestTime{Version: mk.ver}
	if ok {
		t = gc.ManifestTimeOf(m)
	}
	cs.times = append(cs.times, t)
	if n, _ := gc.Protected(cs.times, len(cs.times), cs.tombNano, v.least, v.now); n < len(cs.times) {
		cs.outside, cs.times = true, nil
		return false
	}
	return true
}

// readManifest reads, decodes and locates one manifest.
func (v *verifier) readManifest(ctx context.Context, key string, mk manifestKey) (format.Manifest, bool) {
	b, ok := v.getBounded(ctx, key, maxEnvelopeBytes)
	if !ok {
		return format.Manifest{}, false
	}
	if _, err := format.DecodeEnvelope(b); err != nil {
		v.problem(key, RuleEnvelope, "%v", err)
		return format.Manifest{}, false
	}
	m, _, err := format.DecodeManifestAnyStamp(b)
	if err != nil {
		v.problem(key, RuleDecode, "manifest: %v", err)
		return format.Manifest{}, false
	}
	if m.Branch.Name != mk.name || m.Branch.Incarnation != mk.inc || m.Version != mk.ver {
		v.problem(key, RuleLocation, "manifest names %s#%d version %d, stored at %s#%d version %d",
			m.Branch.Name, m.Branch.Incarnation, m.Version, mk.name, mk.inc, mk.ver)
		return format.Manifest{}, false
	}
	v.checkSchema(ctx, m.Schema)
	return m, true
}

// checkIndex checks the commit index of a published commit, if there is
// one (histories from before the aid have none). An index is never
// authoritative (readers verify it against the manifest it names), so one
// naming another location is only counted in a note; one that does not
// decode, or names another commit, is a problem.
func (v *verifier) checkIndex(ctx context.Context, mk manifestKey, id format.ID) {
	key := v.keys.CommitIndex(id)
	at, err := v.st.Head(ctx, key)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		v.indexMissing++
		return
	case errors.Is(err, objstore.ErrCorruptObject):
		v.indexTorn++ // an OS crash's leftover: the kernel reads it as absent and rebuilds it (K10a, S11)
		return
	case err != nil:
		v.readProblem(key, err)
		return
	case at.Size > maxEnvelopeBytes:
		v.problem(key, RuleTooLarge, "%d bytes, more than %d", at.Size, maxEnvelopeBytes)
		return
	}
	obj, err := v.st.Get(ctx, key)
	if errors.Is(err, objstore.ErrCorruptObject) {
		v.indexTorn++ // a torn file whose header survived passes Head
		return
	}
	if err != nil {
		v.readProblem(key, err)
		return
	}
	b := obj.Data
	x, _, err := format.DecodeCommitIndex(b)
	switch {
	case err != nil:
		v.problem(key, RuleCommitIndex, "%v", err)
	case x.ID != id:
		v.problem(key, RuleCommitIndex, "index of commit %s is stored under %s", x.ID, id)
	case x.At != (format.ManifestRef{Branch: mk.name, Incarnation: mk.inc, Version: mk.ver}):
		v.indexStale++
	}
}

// checkForkIndex checks the fork index's one load-bearing rule: once the
// graph carries the fork-index flag, every live forked incarnation has its
// fork marker (a delete relies on the absence of markers to find no
// dependents). The flag and each live fork's marker must decode.
func (v *verifier) checkForkIndex(ctx context.Context) {
	key := v.keys.ForkIndexFlagKey()
	obj, err := v.st.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return // a graph from before the fork index: nothing relies on markers yet
	}
	if err != nil {
		v.readProblem(key, err)
		return
	}
	if _, _, err := format.DecodeForkIndexFlag(obj.Data); err != nil {
		v.problem(key, RuleForkIndex, "%v", err)
		return
	}
	for _, h := range v.live {
		if !branchindex.NeedsMarker(&h.m) {
			continue
		}
		mk, _ := branchindex.MarkerFor(&h.m)
		mkey := v.keys.ForkMarker(mk.Source, mk.Child, mk.ChildIncarnationID)
		obj, err := v.st.Get(ctx, mkey)
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			v.problem(mkey, RuleForkIndex, "live fork %s#%d has no fork marker, yet the graph's fork index says it is complete (a delete of its source would not see it)",
				h.m.Branch.Name, h.m.Branch.Incarnation)
		case err != nil:
			v.readProblem(mkey, err)
		default:
			if got, _, err := format.DecodeForkMarker(obj.Data); err != nil {
				v.problem(mkey, RuleForkIndex, "%v", err)
			} else if got != mk {
				v.problem(mkey, RuleForkIndex, "marker names %+v, want %+v", got, mk)
			}
		}
	}
}

// collectRefs remembers the fork point and merged-from manifest m names;
// live says m is of a live incarnation (whose fork point collection keeps).
func (v *verifier) collectRefs(key string, m *format.Manifest, live bool) {
	if m.ForkOf != nil && m.Version == 0 {
		v.refs = append(v.refs, format.ManifestRef{Branch: m.ForkOf.Branch, Incarnation: m.ForkOf.Incarnation, Version: m.ForkOf.ManifestVersion})
		v.refHeads, v.refFrom = append(v.refHeads, m.ForkOf.CommitID), append(v.refFrom, key)
		v.refLive = append(v.refLive, live)
	}
	if m.Commit != nil && m.Commit.MergedFrom != nil && len(m.Commit.Parents) > 1 {
		v.refs = append(v.refs, *m.Commit.MergedFrom)
		v.refHeads, v.refFrom = append(v.refHeads, m.Commit.Parents[1]), append(v.refFrom, key)
		v.refLive = append(v.refLive, false)
	}
}

// reclaimable reports whether a missing manifest r may be collected
// history: r is not a live branch's fork point, and it lies below its
// incarnation's retention window (or the incarnation is gone).
func (v *verifier) reclaimable(r format.ManifestRef, liveFork bool) bool {
	if liveFork {
		return false
	}
	ik := incKey{r.Branch, r.Incarnation}
	head, ok := v.incHeads[ik]
	return !ok || v.incExpired[ik] || r.Version < v.window(head)
}

// checkRefs checks that every fork point and merged-from names a manifest
// whose head is the commit it claims.
func (v *verifier) checkRefs(ctx context.Context) {
	for i, r := range v.refs {
		key := v.keys.Manifest(r.Branch, r.Incarnation, r.Version)
		obj, err := v.st.Get(ctx, key)
		if errors.Is(err, objstore.ErrNotFound) && v.reclaimable(r, v.refLive[i]) {
			v.reclaimed++
			continue
		}
		if err != nil {
			v.problem(v.refFrom[i], RuleForkPoint, "names %s: %v", key, err)
			continue
		}
		m, _, err := format.DecodeManifestAnyStamp(obj.Data)
		if err != nil {
			continue // reported by the walk
		}
		if m.FormatStamp >= format.FormatV4 && m.Head != v.refHeads[i] { // a v3 head is derived from legacy commits
			v.problem(v.refFrom[i], RuleForkPoint, "names %s whose head is %s, want %s", key, m.Head, v.refHeads[i])
		}
		if v.refLive[i] {
			v.checkPins(ctx, key, &m, true) // a live branch's fork point is a root (rule 3a): its pins are kept
		}
	}
}

// checkSchema checks the schema contract object once per hash.
func (v *verifier) checkSchema(ctx context.Context, hash string) {
	if v.schemas[hash] {
		return
	}
	v.schemas[hash] = true
	key := v.keys.Schema(hash)
	b, ok := v.getBounded(ctx, key, maxEnvelopeBytes)
	if !ok {
		return
	}
	c, _, err := format.DecodeSchema(b)
	if err != nil {
		v.problem(key, RuleEnvelope, "%v", err)
		return
	}
	if id := schema.ContractID(c); id != hash {
		v.problem(key, RuleSchema, "contract hashes to %s, stored under %s", id, hash)
	}
	if _, err := schema.Decode(c); err != nil {
		if v.tables != nil || schema.ContractID(c) != hash {
			v.problem(key, RuleSchema, "%v", err)
			return
		}
		// A kernel-level graph (kernel.Init takes any contract): the
		// contract is intact (it hashes to its key) but no data-plane
		// schema, so every table is the kernel's opaque table.
		if !v.kernelOnly {
			v.kernelOnly = true
			v.note("schema %s is not a data-plane schema (%v): a kernel-level graph, its tables checked as kernel objects only", hash, err)
		}
	}
}

// checkPins checks every table version m pins (once per version). A
// retained manifest's pins must be present; a missing version that only
// manifests outside retention pin is collected garbage (counted in a note)
// until a retained manifest pins it too.
func (v *verifier) checkPins(ctx context.Context, mkey string, m *format.Manifest, retained bool) {
	v.curSchema = m.Schema // fragments are read through the schema of the manifest pinning them
	for _, p := range m.Tables {
		key := v.keys.TableVersionRef(p.Name, p.Ref())
		if from, gone := v.tvGone[key]; gone && retained {
			delete(v.tvGone, key)
			v.garbage--
			v.problem(key, RuleMissing, "referenced object does not exist (pinned by retained %s; also by %s)", mkey, from)
			continue
		}
		if p.Riding != "" && !retained {
			v.ridingLater = append(v.ridingLater, ridingPin{pin: p, mkey: mkey, schema: m.Schema})
			continue
		}
		rows, ok := v.tableVersion(ctx, p, mkey, retained)
		if ok && rows != p.Rows {
			v.problem(mkey, RuleRows, "pins %s version %d with %d rows; its fragments hold %d", p.Name, p.Version, p.Rows, rows)
		}
	}
}

// ridingPin is a pin riding a manifest outside retention, to check after
// the walk: the pin, its manifest and that manifest's schema.
type ridingPin struct {
	pin    format.TablePin
	mkey   string
	schema string
}

// checkRidingLater checks the versions riding only manifests outside
// retention (format 11), after the walk checked every retained one. Such
// a version has no object to be collected, but what it names may be: a
// collection deletes the objects only unretained manifests' versions name
// (docs/gc.md rule 2: a kept tombstone's pins are not roots). If its check
// finds an object missing, it is garbage, as a collected version object
// is; any other problem is damage. Checked last, it reaches only objects
// no retained version shares (the walk marked those seen): a shared
// object missing was a retained version's problem.
func (v *verifier) checkRidingLater(ctx context.Context) {
	defer func(s string) { v.curSchema = s }(v.curSchema)
	for _, r := range v.ridingLater {
		key := v.keys.TableVersionRef(r.pin.Name, r.pin.Ref())
		if _, seen := v.tvRows[key]; seen {
			continue // a retained manifest pins it too, or an earlier entry checked it
		}
		var ps []Problem
		v.scratch, v.curSchema = &ps, r.schema
		rows, ok := v.tableVersion(ctx, r.pin, r.mkey, false)
		v.scratch = nil
		missing := false
		for _, pr := range ps {
			missing = missing || pr.Rule == RuleMissing
		}
		if missing {
			v.garbage++
			continue
		}
		for _, pr := range ps {
			v.problem(pr.Key, pr.Rule, "%s", pr.Detail)
		}
		if ok && rows != r.pin.Rows {
			v.problem(r.mkey, RuleRows, "pins %s version %d with %d rows; its fragments hold %d", r.pin.Name, r.pin.Version, r.pin.Rows, rows)
		}
	}
}

func sumRows(infos []data.FragmentInfo) uint64 {
	var n uint64
	for _, f := range infos {
		n += f.Rows
	}
	return n
}

// tableVersion checks one table version and its fragments once, and
// returns the rows its fragments hold. Only that count is kept per version
// (memory grows with distinct versions, never with their fragment lists).
func (v *verifier) tableVersion(ctx context.Context, p format.TablePin, mkey string, retained bool) (uint64, bool) {
	key := v.keys.TableVersionRef(p.Name, p.Ref())
	if rows, seen := v.tvRows[key]; seen {
		return rows, rows != tvUnreadable
	}
	v.rep.TableVersions++
	v.tvRows[key] = tvUnreadable
	infos, pr := v.readInfos(ctx, key, p)
	if pr != nil && pr.Rule == RuleMissing && !retained {
		v.tvGone[key] = mkey
		v.garbage++
		return 0, false
	}
	if pr != nil {
		v.problem(pr.Key, pr.Rule, "%s", pr.Detail)
		return 0, false
	}
	for _, f := range infos {
		v.checkFragment(ctx, p.Name, f)
	}
	v.indexMatchesRows(key, p.Name, infos)
	v.tvRows[key] = sumRows(infos)
	if !v.dataTable(p.Name) {
		v.opaque[p.Name] = true
		v.tvRows[key] = p.Rows // the kernel's own count is all there is
	}
	v.headNotBehind(ctx, key, p)
	return v.tvRows[key], true
}

// dataTable reports whether table is a type of the schema (its fragments
// are the data plane's Arrow files). Other tables are the kernel's opaque
// tables (written through the kernel API directly): checked as kernel
// objects only. Without a schema every table is taken as a data table.
func (v *verifier) dataTable(table string) bool {
	if v.tables == nil {
		return !v.kernelOnly
	}
	return v.tableIn(context.Background(), v.curSchema, table) != nil
}

// tvUnreadable marks a table version that did not read or decode.
const tvUnreadable = ^uint64(0)

// readInfos reads a table version (bounded), checks its envelope, decode
// and location, and returns its fragment infos, or the problem.
func (v *verifier) readInfos(ctx context.Context, key string, p format.TablePin) ([]data.FragmentInfo, *Problem) {
	if p.Riding != "" {
		// It rides the manifest (format 11): no object. The manifest's
		// decode checked only the payload's frame; RidingVersion decodes
		// it whole and checks it against the pin.
		tv, err := format.RidingVersion(p)
		if err != nil {
			return nil, &Problem{key, RuleDecode, "riding table version: " + err.Error()}
		}
		return v.versionInfos(ctx, key, p, tv)
	}
	at, err := v.st.Head(ctx, key)
	if err == nil && at.Size > maxEnvelopeBytes {
		return nil, &Problem{key, RuleTooLarge, fmt.Sprintf("%d bytes, more than %d", at.Size, maxEnvelopeBytes)}
	}
	var obj objstore.Object
	if err == nil {
		obj, err = v.st.Get(ctx, key)
	}
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return nil, &Problem{key, RuleMissing, "referenced object does not exist"}
	case err != nil:
		return nil, &Problem{key, RuleRead, err.Error()}
	}
	if _, err := format.DecodeEnvelope(obj.Data); err != nil {
		return nil, &Problem{key, RuleEnvelope, err.Error()}
	}
	tv, _, err := format.DecodeTableVersion(obj.Data)
	if err != nil {
		return nil, &Problem{key, RuleDecode, "table version: " + err.Error()}
	}
	if tv.Table != p.Name || tv.Ref() != p.Ref() {
		return nil, &Problem{key, RuleLocation, fmt.Sprintf("table version names %s/%s/%d", tv.Table, tv.Fork, tv.Version)}
	}
	return v.versionInfos(ctx, key, p, tv)
}

// versionInfos returns the fragment infos of table version tv (read from
// its object or its pin), checking its paged infos and adjacency.
func (v *verifier) versionInfos(ctx context.Context, key string, p format.TablePin, tv format.TableVersion) ([]data.FragmentInfo, *Problem) {
	if !v.dataTable(p.Name) {
		return nil, nil // opaque to the data plane: its fragments are not ours to read
	}
	infos, pr := v.pagedInfos(ctx, key, tv)
	if pr != nil {
		return nil, pr
	}
	if infos == nil {
		var err error
		if infos, err = fragmentInfos(tv); err != nil {
			return nil, &Problem{key, RuleDecode, err.Error()}
		}
	}
	md := make(map[string]string, len(tv.Metadata))
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	v.checkAdjacency(ctx, key, p.Name, md)
	infos, err := data.WithEmbedded(tv, infos)
	if err != nil {
		return nil, &Problem{key, RuleDecode, err.Error()}
	}
	return infos, nil
}

// headNotBehind checks that the fork's newest version of the table is not
// below a version some manifest pins.
//
// A pin named per attempt (format 8) has no HEAD: versions are not
// counters there, so there is nothing to compare.
func (v *verifier) headNotBehind(ctx context.Context, key string, p format.TablePin) {
	if p.Ref().Named() {
		return
	}
	page, err := v.st.List(ctx, v.keys.TableForkPrefix(p.Name, p.Fork), "", 1)
	if err != nil || len(page.Keys) == 0 {
		return // the version itself was just read: a listing failure is the store's
	}
	if v.keys.IsTableAttemptKey(p.Name, p.Fork, page.Keys[0]) {
		return // no counter-named version on the fork
	}
	h, err := v.keys.ParseTableVersionKey(p.Name, p.Fork, page.Keys[0])
	if err == nil && h < p.Version {
		v.problem(key, RuleHeadBehind, "table HEAD %d is below pinned version %d", h, p.Version)
	}
}

// fragmentInfos parses the data plane's fragment metadata of a table
// version (docs/format.md, "Table version metadata").
func fragmentInfos(tv format.TableVersion) ([]data.FragmentInfo, error) {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	if len(tv.Fragments) > 0 && md["data.format"] != "1" {
		return nil, fmt.Errorf("data.format %q, want \"1\"", md["data.format"])
	}
	infos := make([]data.FragmentInfo, len(tv.Fragments))
	var rows uint64
	for i, name := range tv.Fragments {
		raw, ok := md["data.fragment."+name]
		if !ok {
			return nil, fmt.Errorf("fragment %s has no info", name)
		}
		if err := json.Unmarshal([]byte(raw), &infos[i]); err != nil {
			return nil, fmt.Errorf("fragment %s info: %v", name, err)
		}
		infos[i].Name = name
		rows += infos[i].Rows
	}
	if rows != tv.Rows {
		return nil, fmt.Errorf("fragments hold %d rows, the version says %d", rows, tv.Rows)
	}
	return infos, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkFragment checks one fragment once: size, CRC32C, Arrow decode, and
// the fragment rules (ids sorted and unique, min and max as recorded).
func (v *verifier) checkFragment(ctx context.Context, table string, f data.FragmentInfo) {
	key := v.fragKey(table, f.Name)
	if key == "" {
		v.problem(v.keys.TableForkPrefix(table, format.ID{}), RuleDecode, "fragment name %q of table %s is not a ULID", f.Name, table)
		return
	}
	if v.seenFrag[key] {
		return
	}
	v.seenFrag[key] = true
	v.rep.Fragments++
	b, ok := v.fragmentBytes(ctx, key, f)
	if !ok {
		return
	}
	if uint64(len(b)) != f.Bytes || crc32.Checksum(b, castagnoli) != f.CRC32C {
		v.problem(key, RuleFragment, "size %d crc32c %08x, the table version records %d and %08x", len(b), crc32.Checksum(b, castagnoli), f.Bytes, f.CRC32C)
		return
	}
	t := v.tableIn(ctx, v.curSchema, table)
	if t == nil {
		return
	}
	rec, err := data.DecodeFragment(t, f, b)
	if err != nil {
		v.problem(key, RuleFragment, "%v", err)
		return
	}
	defer rec.Release()
	v.fragmentRows(key, f, idColumn(rec, 0))
	v.sums.fragment(key, rec, t.Edge)
}

// fragmentBytes returns the stored bytes of fragment f at key: embedded in
// its table version (format 9: no object), else read (bounded).
func (v *verifier) fragmentBytes(ctx context.Context, key string, f data.FragmentInfo) ([]byte, bool) {
	if b := f.Embedded(); b != nil {
		return b, true
	}
	return v.getBounded(ctx, key, maxFragmentBytes)
}

// fragKey is the key of fragment name of table ("" if name is no ULID).
func (v *verifier) fragKey(table, name string) string {
	id, err := ulid.ParseStrict(name)
	if err != nil {
		return ""
	}
	return v.keys.Data(table, id)
}

// checkLeases checks every snapshot lease (R/leases/, kind 12): it
// decodes (envelope, CRC, rules), and while it has not expired (by verify's
// clock) the manifest it pins exists (collection keeps it: G7).
func (v *verifier) checkLeases(ctx context.Context) error {
	return ListKeys(ctx, v.st, v.keys.LeasePrefix(), func(key string) error {
		b, ok := v.getBounded(ctx, key, maxEnvelopeBytes)
		if !ok {
			return nil
		}
		l, _, err := format.DecodeLease(b)
		if err != nil {
			v.problem(key, RuleLease, "%v", err)
			return nil
		}
		if v.now.UnixNano() >= l.ExpiresUnixNano {
			return nil // expired: the next collection deletes it
		}
		mkey := v.keys.Manifest(l.Snapshot.Branch, l.Snapshot.Incarnation, l.Snapshot.Version)
		obj, err := v.st.Get(ctx, mkey)
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			v.problem(key, RuleLease, "unexpired lease (until %s) pins %s, which is gone", time.Unix(0, l.ExpiresUnixNano).UTC().Format(time.RFC3339), mkey)
		case err != nil:
			v.readProblem(mkey, err)
		default:
			if m, _, err := format.DecodeManifestAnyStamp(obj.Data); err == nil {
				v.checkPins(ctx, mkey, &m, true) // a leased snapshot is a root (rule 6): its pins are kept
			}
		}
		return nil
	})
}

// listSidecars lists the pending recovery sidecars with their age.
func (v *verifier) listSidecars(ctx context.Context) error {
	return ListKeys(ctx, v.st, v.keys.SidecarPrefix(), func(key string) error {
		ps := PendingSidecar{Key: key}
		if op, err := v.keys.ParseSidecarKey(key); err == nil {
			age := ageOf(op, v.now)
			ps.Op, ps.AgeSeconds, ps.PastLease = op.String(), age.Seconds(), age >= kernel.RecoveryLease
		}
		if b, ok := v.getBounded(ctx, key, maxEnvelopeBytes); ok {
			sc, _, err := format.DecodeSidecar(b)
			if err != nil {
				v.problem(key, RuleSidecar, "%v (recovery cannot resolve it: see QuarantineSidecar)", err)
			} else {
				ps.Branch, ps.WriterKind = fmt.Sprintf("%s#%d", sc.Branch.Name, sc.Branch.Incarnation), sc.WriterKind
				for _, t := range sc.Tables {
					ps.Tables = append(ps.Tables, t.Table)
				}
			}
		}
		v.rep.Sidecars = append(v.rep.Sidecars, ps)
		return nil
	})
}
