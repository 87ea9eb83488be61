package fs

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// SyncStats counts the fsyncs a Store made since Open, over all its
// goroutines (PutDeferred's and PutAfterDeferred's included). A round is
// one wait for durability: the fsyncs of one round run concurrently and
// the file system can commit them together, so a write's latency follows
// its rounds more than its fsyncs (see docs/perf.md, "fs commit
// accounting"). The counts are exact; they exist for cost tests and
// benchmarks.
type SyncStats struct {
	Files  uint64 // fsyncs of object and temp files
	Dirs   uint64 // fsyncs of directories
	Rounds uint64 // sequential waits for a set of concurrent fsyncs
	Mkdirs uint64 // directories a write found missing and made (its own metadata to commit)
}

// Sub returns s - o, field by field.
func (s SyncStats) Sub(o SyncStats) SyncStats {
	return SyncStats{Files: s.Files - o.Files, Dirs: s.Dirs - o.Dirs, Rounds: s.Rounds - o.Rounds, Mkdirs: s.Mkdirs - o.Mkdirs}
}

// syncCounters backs SyncStats; copies of a Store share it. fastLeaves
// and walkedDirs (tests) count the leaf directories a deferred sync took
// on its fast path (openKnownLeaves) and the directories its walk opened.
type syncCounters struct {
	files, dirs, rounds, mkdirs atomic.Uint64
	fastLeaves, walkedDirs      atomic.Uint64
}

// SyncStats returns the counts so far (zero on a NoSync store).
func (s *Store) SyncStats() SyncStats {
	if s.stats == nil {
		return SyncStats{}
	}
	return SyncStats{Files: s.stats.files.Load(), Dirs: s.stats.dirs.Load(), Rounds: s.stats.rounds.Load(), Mkdirs: s.stats.mkdirs.Load()}
}

// syncTarget is one descriptor a round fsyncs; what names it in an error.
type syncTarget struct {
	fd   int
	dir  bool
	what string
}

// syncRound fsyncs every target at once (at most syncWorkers at a time)
// and waits for all: one round. The first failure in target order is
// returned.
func (s *Store) syncRound(targets []syncTarget) error {
	if s.noSync || len(targets) == 0 {
		return nil
	}
	s.count(targets)
	errs := make([]error, len(targets))
	if len(targets) == 1 {
		errs[0] = fsyncFd(targets[0].fd)
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(len(targets), syncWorkers) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1) - 1); i < len(targets); i = int(next.Add(1) - 1) {
					errs[i] = fsyncFd(targets[i].fd)
				}
			}()
		}
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("fsync %s: %w", targets[i].what, err)
		}
	}
	return nil
}

// count adds one round of targets to the stats.
func (s *Store) count(targets []syncTarget) {
	if s.stats == nil {
		return
	}
	s.stats.rounds.Add(1)
	for _, t := range targets {
		if t.dir {
			s.stats.dirs.Add(1)
		} else {
			s.stats.files.Add(1)
		}
	}
}
