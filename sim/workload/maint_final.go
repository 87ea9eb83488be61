package workload

import (
	"github.com/oklog/ulid/v2"

	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// maintFinal runs in the quiet phase once every other process ended: the
// retained snapshots and the acknowledged inserts read whole; then, past
// the grace period and every lease, a collection with zero retention (the
// last manifest of each incarnation) and no pins must leave nothing the
// heads cannot reach (checkNoLeak).
func maintFinal(p *Proc) error {
	if err := p.readRetained(maintKeepLast); err != nil {
		return err
	}
	if err := opMaintRead(p, 0, Op{}); err != nil {
		return err
	}
	if err := p.sleep(p.run.scenarioTime(p.run.maintGrace()+p.run.maintSkew()+p.run.maintLease()) + 5e9); err != nil {
		return err
	}
	zero := maintain.Policy{Policy: gc.Policy{KeepLast: 1, Grace: p.run.maintGrace(), SkewMargin: p.run.maintSkew()}}
	var last error
	for attempt := 0; attempt < maxFinalAttempts; attempt++ {
		rep, err := p.maintainer().Collect(p.Ctx(), zero)
		if err == nil && rep.Complete {
			if err := p.readRetained(1); err != nil {
				return err
			}
			return p.checkNoLeak()
		}
		if p.Over(err) {
			return p.end(err)
		}
		last = err
		if err := p.sleep(finalRetryDelay); err != nil {
			return err
		}
	}
	p.run.Violate(check.Violation{Check: "liveness", Detail: fmt.Sprintf("final collection never completed: %v", last)})
	return nil
}

// checkNoLeak lists the store and reports every manifest, table version,
// fragment, commit index or lease that the branch heads do not reach,
// beyond what docs/gc.md keeps on purpose: each fork's newest version of
// each table, versions above (or of tables outside) a live head's pins on
// its own fork, and the fragments those name.
func (p *Proc) checkNoLeak() error {
	l := &leakCheck{p: p, keys: format.NewKeys(p.run.Root), allowed: map[string]bool{}}
	l.allowed[l.keys.Manifest(format.MainBranch, 1, 0)] = true // the genesis: the graph's identity
	if err := l.heads(); err != nil {
		return err
	}
	var leaks []string
	for _, part := range []string{"branches", "tables", "data", "adj", "index/commits", "leases", "gc"} {
		keys, err := l.list(l.prefix(part))
		if err != nil {
			return p.readFailed("leak: list", err)
		}
		if part == "tables" {
			if err := l.allowTables(keys); err != nil {
				return err
			}
		}
		for _, k := range keys {
			if !l.allowed[k] {
				leaks = append(leaks, k)
			}
		}
	}
	if len(leaks) > 0 {
		sort.Strings(leaks)
		p.run.Violate(check.Violation{Check: "leak", Detail: fmt.Sprintf("%d objects the heads cannot reach after the final collection, e.g. %s",
			len(leaks), strings.Join(leaks[:min(len(leaks), 5)], " "))})
	}
	return nil
}

type leakCheck struct {
	p       *Proc
	keys    format.Keys
	allowed map[string]bool
	forks   map[format.ID]map[string]uint64 // live incarnation fork -> its head's pins
	reaches []lineage.Reach                 // the reach of every live head with a complete commit index
}

func (l *leakCheck) prefix(part string) string { return l.p.run.Root + "/" + part + "/" }

func (l *leakCheck) list(prefix string) ([]string, error) {
	var out []string
	after := ""
	for page := 0; page < 1<<12; page++ {
		pg, err := l.p.run.Store.List(l.p.Ctx(), prefix, after, objstore.MaxListLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, pg.Keys...)
		if !pg.Truncated || len(pg.Keys) == 0 {
			break
		}
		after = pg.Keys[len(pg.Keys)-1]
	}
	return out, nil
}

func (l *leakCheck) get(key string) ([]byte, error) {
	obj, err := l.p.run.Store.Get(l.p.Ctx(), key)
	return obj.Data, err
}

// heads allows the newest manifest of every incarnation, its commit's
// index, and every table version a live head pins (with its fragments).
func (l *leakCheck) heads() error {
	keys, err := l.list(l.prefix("branches"))
	if err != nil {
		return l.p.readFailed("leak: list branches", err)
	}
	l.p.run.note("leak: %d manifests listed", len(keys))
	l.forks = map[format.ID]map[string]uint64{}
	lastInc := ""
	for _, k := range keys {
		inc := k[:strings.LastIndex(k, "/")]
		if inc == lastInc {
			continue
		}
		lastInc = inc
		b, err := l.get(k)
		if err != nil {
			return l.p.readFailed("leak: head", err)
		}
		m, _, err := format.DecodeManifest(b)
		if err != nil {
			return l.p.readFailed("leak: head", err)
		}
		l.allowed[k] = true
		if m.Commit != nil {
			l.allowed[l.keys.CommitIndex(m.Commit.ID)] = true
		}
		if m.Tombstone {
			continue
		}
		if f := m.ForkOf; f != nil { // a live branch's fork point is kept (its first merge base)
			if err := l.allowManifest(l.keys.Manifest(f.Branch, f.Incarnation, f.ManifestVersion)); err != nil {
				return err
			}
		}
		pins := map[string]uint64{}
		for _, pin := range m.Tables {
			pins[pin.Name] = pin.Version
			if err := l.allowPin(pin); err != nil {
				return err
			}
		}
		l.forks[m.Branch.IncarnationID] = pins
		if err := l.noteReach(k, m); err != nil {
			return err
		}
	}
	return l.allowMergeBases()
}

// noteReach records a live head's reach, from its head commit's index
// (a commit-less head adds itself to its fork commit's reach). A head
// without a complete index contributes none: its merge bases are not kept
// (Report.MergeBasesUnknown), so none are allowed.
func (l *leakCheck) noteReach(key string, m format.Manifest) error {
	at := format.ManifestRef{Branch: m.Branch.Name, Incarnation: m.Branch.Incarnation, Version: m.Version}
	r, ok, err := l.reachOf(at)
	if err != nil || !ok {
		return err
	}
	l.reaches = append(l.reaches, r)
	return nil
}

// allowMergeBases allows what docs/gc.md rule 3b keeps: for every live
// pair, every manifest lineage.ReachMergeBaseOpenAll loads to answer their merge
// base, and the manifest holding each loaded reach's head commit (and each
// live head's), with what they pin — computed here with its own loader,
// independently of gc.MergeBaseKeep and the collector. A manifest already
// gone is no leak; a pair that cannot be answered allows nothing more.
func (l *leakCheck) allowMergeBases() error {
	var loaded []format.ManifestRef
	var ioErr error
	// The store is quiet here, so a reach read once stands for the whole
	// check: every pair's answer reads each manifest at most once (without
	// the memo, the pairs of a long history re-read the same folds and the
	// check outlived the quiet phase).
	type memo struct {
		r  lineage.Reach
		ok bool
	}
	seen := make(map[format.ManifestRef]memo)
	load := func(at format.ManifestRef) (lineage.Reach, bool, error) {
		if m, hit := seen[at]; hit {
			return m.r, m.ok, nil
		}
		r, ok, err := l.reachOf(at)
		if err != nil {
			ioErr = err
			return lineage.Reach{}, false, err
		}
		seen[at] = memo{r, ok}
		if ok {
			loaded = append(loaded, r.At, r.HeadAt)
		}
		return r, ok, nil
	}
	for _, h := range l.reaches {
		loaded = append(loaded, h.HeadAt)
	}
	for i := range l.reaches {
		for j := i + 1; j < len(l.reaches); j++ {
			_, _ = lineage.ReachMergeBaseOpenAll(l.reaches[i], l.reaches[j], load)
			if ioErr != nil {
				return ioErr
			}
		}
	}
	for _, t := range loaded {
		key := l.keys.Manifest(t.Branch, t.Incarnation, t.Version)
		if l.allowed[key] {
			continue
		}
		if _, err := l.get(key); errors.Is(err, objstore.ErrNotFound) {
			continue
		}
		if err := l.allowManifest(key); err != nil {
			return err
		}
	}
	return nil
}

// reachOf reads the reach of the manifest at from its head commit's index,
// trusted only when complete and the manifest it names holds the commit
// (ok=false otherwise, or when a manifest is gone).
func (l *leakCheck) reachOf(at format.ManifestRef) (lineage.Reach, bool, error) {
	m, ok, err := l.manifestAt(at)
	if err != nil || !ok {
		return lineage.Reach{}, false, err
	}
	xb, err := l.get(l.keys.CommitIndex(m.Head))
	if errors.Is(err, objstore.ErrNotFound) {
		return lineage.Reach{}, false, nil
	}
	if err != nil {
		return lineage.Reach{}, false, l.p.readFailed("leak: commit index", err)
	}
	x, _, err := format.DecodeCommitIndex(xb)
	if err != nil || !x.Complete || x.ID != m.Head {
		return lineage.Reach{}, false, nil
	}
	shown, ok, err := l.manifestAt(x.At)
	if err != nil || !ok || shown.Commit == nil || shown.Commit.ID != x.ID {
		return lineage.Reach{}, false, err
	}
	if m.Commit != nil && x.At != at {
		return lineage.Reach{}, false, nil
	}
	return lineage.FromIndex(x).ForManifest(at), true, nil
}

func (l *leakCheck) manifestAt(at format.ManifestRef) (format.Manifest, bool, error) {
	b, err := l.get(l.keys.Manifest(at.Branch, at.Incarnation, at.Version))
	if errors.Is(err, objstore.ErrNotFound) {
		return format.Manifest{}, false, nil
	}
	if err != nil {
		return format.Manifest{}, false, l.p.readFailed("leak: manifest", err)
	}
	m, _, err := format.DecodeManifest(b)
	if err != nil {
		return format.Manifest{}, false, nil
	}
	return m, true, nil
}

// allowManifest allows a kept non-head manifest and what it pins.
func (l *leakCheck) allowManifest(key string) error {
	b, err := l.get(key)
	if err != nil {
		return l.p.readFailed("leak: fork point "+key, err)
	}
	m, _, err := format.DecodeManifest(b)
	if err != nil {
		return l.p.readFailed("leak: fork point "+key, err)
	}
	l.allowed[key] = true
	if m.Commit != nil {
		l.allowed[l.keys.CommitIndex(m.Commit.ID)] = true
	}
	for _, pin := range m.Tables {
		if err := l.allowPin(pin); err != nil {
			return err
		}
	}
	return nil
}

// allowTables allows each fork's newest version of each table and, on a
// live fork, versions above its head's pin or of a table it does not pin.
func (l *leakCheck) allowTables(keys []string) error {
	last := ""
	for _, k := range keys {
		segs := strings.Split(strings.TrimPrefix(k, l.prefix("tables")), "/")
		if len(segs) != 3 {
			continue
		}
		group := segs[0] + "/" + segs[1]
		newest := group != last
		last = group
		fork, err := ulid.ParseStrict(segs[1])
		v, verr := format.ParseInverted(segs[2])
		if err != nil || verr != nil {
			continue
		}
		pins, live := l.forks[fork]
		pin, pinned := pins[segs[0]]
		if newest || (live && (!pinned || v > pin)) {
			if err := l.allowVersion(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// allowPin allows the table version pin names and what it names: from
// the pin's payload when the version rides its manifest (format 11: no
// object), else from its object.
func (l *leakCheck) allowPin(pin format.TablePin) error {
	key := l.keys.TableVersionRef(pin.Name, pin.Ref())
	if pin.Riding == "" {
		return l.allowVersion(key)
	}
	if l.allowed[key] {
		return nil
	}
	l.allowed[key] = true
	tv, err := format.RidingVersion(pin)
	if err != nil {
		return l.p.readFailed("leak: riding table version "+key, err)
	}
	return l.allowContent(key, tv)
}

// allowVersion allows a table version and the fragments it names.
func (l *leakCheck) allowVersion(key string) error {
	if l.allowed[key] {
		return nil
	}
	l.allowed[key] = true
	b, err := l.get(key)
	if err != nil {
		return l.p.readFailed("leak: table version "+key, err)
	}
	tv, _, err := format.DecodeTableVersion(b)
	if err != nil {
		return l.p.readFailed("leak: table version "+key, err)
	}
	return l.allowContent(key, tv)
}

// allowContent allows the fragments and index objects table version tv
// (at key) names.
func (l *leakCheck) allowContent(key string, tv format.TableVersion) error {
	for _, f := range tv.Fragments {
		l.allowed[l.prefix("data")+tv.Table+"/"+f] = true
	}
	if err := l.allowFragmentChunks(tv); err != nil {
		return err
	}
	chunks, err := data.AdjacencyChunks(tv)
	if err != nil {
		return l.p.readFailed("leak: adjacency of "+key, err)
	}
	return l.allowChunks(tv.Table, chunks, 0)
}

// allowChunks allows index chunks of table and what they list: pages, or
// the chunks below a ref chunk (format 10), at most data.MaxIndexLevels
// deep.
func (l *leakCheck) allowChunks(table string, chunks []string, depth int) error {
	if depth > data.MaxIndexLevels {
		return l.p.readFailed("leak: adjacency chunks of "+table, fmt.Errorf("deeper than %d levels", data.MaxIndexLevels))
	}
	for _, c := range chunks {
		ck := l.prefix("adj") + table + "/" + c
		l.allowed[ck] = true
		b, err := l.get(ck)
		if err != nil {
			return l.p.readFailed("leak: adjacency chunk "+ck, err)
		}
		entries, below, err := data.AdjacencyChunkEntries(b)
		if err != nil {
			return l.p.readFailed("leak: adjacency chunk "+ck, err)
		}
		if below {
			if err := l.allowChunks(table, entries, depth+1); err != nil {
				return err
			}
			continue
		}
		for _, pg := range entries {
			l.allowed[l.prefix("adj")+table+"/"+pg] = true
		}
	}
	return nil
}

// allowFragmentChunks allows a paged table version's fragment chunks and
// the fragments they list, walking fragment ref chunks (format 10) down
// to the fragment chunks.
func (l *leakCheck) allowFragmentChunks(tv format.TableVersion) error {
	chunks, err := data.FragmentChunks(tv)
	if err != nil {
		return l.p.readFailed("leak: fragment chunks of "+tv.Table, err)
	}
	return l.allowFragChunks(tv.Table, chunks, 0)
}

// allowFragChunks allows fragment chunks of table and what they list, at
// most data.MaxFragmentLevels deep.
func (l *leakCheck) allowFragChunks(table string, chunks []string, depth int) error {
	if depth > data.MaxFragmentLevels {
		return l.p.readFailed("leak: fragment chunks of "+table, fmt.Errorf("deeper than %d levels", data.MaxFragmentLevels))
	}
	for _, c := range chunks {
		ck := l.prefix("adj") + table + "/" + c
		l.allowed[ck] = true
		b, err := l.get(ck)
		if err != nil {
			return l.p.readFailed("leak: fragment chunk "+ck, err)
		}
		infos, below, err := data.FragmentChunkEntries(table, b)
		if err != nil {
			return l.p.readFailed("leak: fragment chunk "+ck, err)
		}
		if len(below) > 0 {
			if err := l.allowFragChunks(table, below, depth+1); err != nil {
				return err
			}
			continue
		}
		for _, f := range infos {
			l.allowed[l.prefix("data")+table+"/"+f.Name] = true
		}
	}
	return nil
}
