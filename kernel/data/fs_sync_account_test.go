package data

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
)

// syncLedger wraps an fs store and records, per store call (and per
// SyncDeferred, which is no request), the fsyncs and sync rounds it made
// (fs.SyncStats). Single-goroutine use only.
type syncLedger struct {
	*fs.Store
	lines []syncLine
}

// syncLine is one call's cost.
type syncLine struct {
	call string
	cost fs.SyncStats
	took time.Duration // wall time, for the log only
}

func (l *syncLedger) note(call string, before fs.SyncStats, start time.Time) {
	l.lines = append(l.lines, syncLine{call: call, cost: l.Store.SyncStats().Sub(before), took: time.Since(start)})
}

func (l *syncLedger) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note(fmt.Sprintf("put(%d) %s", cond.Kind, key), before, start)
	return l.Store.Put(ctx, key, data, cond)
}

func (l *syncLedger) Delete(ctx context.Context, key string) error {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note("delete "+key, before, start)
	return l.Store.Delete(ctx, key)
}

func (l *syncLedger) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note("put-deferred "+key, before, start)
	return l.Store.PutDeferred(ctx, key, data)
}

func (l *syncLedger) SyncDeferred(ctx context.Context, keys []string) error {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note(fmt.Sprintf("sync-deferred (%d keys)", len(keys)), before, start)
	return l.Store.SyncDeferred(ctx, keys)
}

func (l *syncLedger) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note(fmt.Sprintf("put(%d)-deferred-intact %s", cond.Kind, key), before, start)
	return l.Store.PutDeferredIntact(ctx, key, data, cond)
}

func (l *syncLedger) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	before, start := l.Store.SyncStats(), time.Now()
	defer l.note(fmt.Sprintf("put(%d) after %d deferred %s", cond.Kind, len(deferred), key), before, start)
	return l.Store.PutAfterDeferred(ctx, key, data, cond, deferred)
}

func (l *syncLedger) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	before, start := l.Store.SyncStats(), time.Now()
	var what []string
	for _, r := range reqs {
		what = append(what, fmt.Sprintf("put(%d)/%d %s", r.Cond.Kind, r.Durability, r.Key))
	}
	defer l.note(fmt.Sprintf("batch %s", strings.Join(what, " + ")), before, start)
	return l.Store.PutMany(ctx, reqs)
}

// total sums the recorded lines.
func (l *syncLedger) total() fs.SyncStats {
	var t fs.SyncStats
	for _, x := range l.lines {
		t = fs.SyncStats{Files: t.Files + x.cost.Files, Dirs: t.Dirs + x.cost.Dirs, Rounds: t.Rounds + x.cost.Rounds, Mkdirs: t.Mkdirs + x.cost.Mkdirs}
	}
	return t
}

func (l *syncLedger) String() string {
	var b strings.Builder
	for _, x := range l.lines {
		fmt.Fprintf(&b, "  %-96s files %d dirs %2d rounds %d mkdirs %2d (%v)\n", x.call, x.cost.Files, x.cost.Dirs, x.cost.Rounds, x.cost.Mkdirs, x.took.Round(10*time.Microsecond))
	}
	t := l.total()
	fmt.Fprintf(&b, "  total: files %d dirs %d rounds %d mkdirs %d", t.Files, t.Dirs, t.Rounds, t.Mkdirs)
	return b.String()
}

// fsCommitRounds bounds the sync rounds of a one-row data-plane commit on
// fs (docs/perf.md, "fs commit accounting"): the batch of fragment and
// table version none (both deferred whole, objstore.PutDeferred: the
// version named per attempt, format 8, is read by nothing before the
// manifest that pins it; before, it was intact-deferred, one data fsync),
// the batch of commit index and manifest 2 (the manifest's: the
// fragment's and the version's syncs ride its temp file's round; the
// commit index is deferred whole, objstore.DeferAll, and synced by
// nothing: it follows the publish, session 22, kernel publishWrite;
// sessions 17-21 it was named in the manifest's After and rode the same
// round; before, it was intact-deferred with a round of its own,
// concurrently: 3). Format 7's
// counter-named write paid 8 (a sidecar PUT 2 and DELETE 1, and the
// fragment's own sync round before its version). A raw durable
// create-only Put is 2.
const fsCommitRounds = 2

// fsCommitFiles is the file fsyncs of that commit: the manifest's temp
// file (format 11: the version rides the manifest, no object; 2 with
// the version's object file in the manifest's first round, formats 9-10:
// the one-row fragment rides the version, format 9; the commit index is not
// synced, session 22: 3 while it rode the manifest's round, sessions
// 17-21; before that, its temp file in a round of its own; 5 while the
// fragment was an object and the version was also fsynced before its
// link).
const fsCommitFiles = 1

// fsCommitDirs is the directory fsyncs of that commit in the steady state
// on one Store, besides the parent of each directory the commit made: the
// manifest's leaf directory (format 11; formats 8-10 also the version's
// leaf directory, which held a new entry: 2; the
// fragment's too while it was an object; the commit index's while it
// rode the manifest's round, sessions 17-21: 3).
// Every other directory on the deferred keys' paths (15 more, and the
// root) the Store already knows durable (objstore/fs durableDirs: it
// fsynced their parents in an earlier commit, and they have the identity
// they had then); before that cache every commit fsynced them all, 18
// directories in the manifest's batch.
const fsCommitDirs = 1

// fsCommitMkdirs bounds the directories a steady-state one-row commit
// makes on a trie3 root (every new fs root): the fragment, the table
// version (format 8: named by its attempt's ULID) and the commit index
// none (ULID-named: their 32.8-second window's directory exists), and the
// manifest one when its inverted version crosses a multiple of 10 (a new
// one-digit level of the version trie, as in trie2). Format 7's sidecar
// made 5 more; on a trie2 root a commit made 28-31.
const fsCommitMkdirs = 1

// TestFsCommitSyncAccounting logs, per store call, the fsyncs, sync
// rounds and mkdirs of one-row data-plane commits on a durable fs store
// (a warm handle whose view is current, as BenchmarkCommitFloor commits);
// the figures are docs/perf.md's "fs commit accounting". The counts are
// exact (the store counts them): a commit must wait for exactly
// fsCommitRounds rounds, fsync exactly fsCommitFiles files and
// fsCommitDirs directories plus one per directory it made, make no
// directory for its ULID-named fragment, table version and commit index,
// and at most fsCommitMkdirs in all.
func TestFsCommitSyncAccounting(t *testing.T) {
	defaultFragmentShapes(t, "it counts each commit's fsyncs with no fragment chunk written")
	st, err := fs.Open(t.TempDir())
	must(t, err)
	l := &syncLedger{Store: st}
	g := initGraph(t, l, Limits{})
	seedGraph(t, g)
	br := mainRef(t, g)
	// The steady state: one commit first, whose manifest also fsyncs the
	// directories on its commit index's path (the first index to ride a
	// manifest: the seed's went out intact-deferred after it) that the
	// Store does not know durable yet.
	tx, err := g.Begin(ctx, br)
	must(t, err)
	must(t, tx.Insert("Person", person("acct-warm", "n")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	must(t, err)
	for i := range 8 {
		l.lines = nil
		tx, err := g.Begin(ctx, br)
		must(t, err)
		must(t, tx.Insert("Person", person(fmt.Sprintf("acct-%03d", i), "n")))
		start := time.Now()
		_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
		must(t, err)
		t.Logf("commit %d (%v):\n%s", i, time.Since(start).Round(10*time.Microsecond), l)
		total := l.total()
		if total.Rounds != fsCommitRounds {
			t.Errorf("commit %d waited for %d sync rounds, want %d", i, total.Rounds, fsCommitRounds)
		}
		if wantDirs := fsCommitDirs + total.Mkdirs; total.Files != fsCommitFiles || total.Dirs != wantDirs {
			t.Errorf("commit %d fsynced %d files and %d directories, want %d and %d", i, total.Files, total.Dirs, fsCommitFiles, wantDirs)
		}
		if total.Mkdirs > fsCommitMkdirs {
			t.Errorf("commit %d made %d directories, want at most %d", i, total.Mkdirs, fsCommitMkdirs)
		}
		for _, x := range l.lines {
			want, ok := ulidCallMkdirs(x.call)
			if ok && x.cost.Mkdirs != want {
				t.Errorf("commit %d: %s made %d directories, want %d", i, x.call, x.cost.Mkdirs, want)
			}
		}
	}
}

// ulidCallMkdirs is how many directories a commit's write of a
// ULID-named key makes on a trie3 root in the steady state (none: the
// fragment, the table version and the commit index, alone or in one
// batch); ok is false for any other call.
func ulidCallMkdirs(call string) (want uint64, ok bool) {
	switch {
	case strings.HasPrefix(call, "batch ") && batchOfULIDKeys(strings.TrimPrefix(call, "batch ")):
		return 0, true
	case strings.HasPrefix(call, "put-deferred ") && strings.Contains(call, "/data/"),
		strings.Contains(call, "-deferred-intact ") && strings.Contains(call, "/tables/") && strings.Contains(call, "/a/"),
		strings.Contains(call, "-deferred-intact ") && strings.Contains(call, "/index/commits/"):
		return 0, true
	}
	return 0, false
}

// batchOfULIDKeys reports whether every put of a batch line (syncLedger's
// PutMany) writes a fragment or a table version named per attempt.
func batchOfULIDKeys(puts string) bool {
	for _, p := range strings.Split(puts, " + ") {
		if !strings.Contains(p, "/data/") && !(strings.Contains(p, "/tables/") && strings.Contains(p, "/a/")) {
			return false
		}
	}
	return true
}
