package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3"
	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// outcome is one finished seed.
type outcome struct {
	seed uint64
	res  *workload.Result
}

// executor runs one scenario on the configured store.
type executor func(s *workload.Scenario, opt workload.Options) *workload.Result

// newExecutor returns the executor of c.store.
func newExecutor(c *config) (executor, error) {
	if c.store == "sim" {
		return workload.Execute, nil
	}
	st, err := openStore(c.store)
	if err != nil {
		return nil, err
	}
	nonce := time.Now().UTC().Format("20060102T150405.000000000")
	clock := kernel.SystemEnv().Clock
	return func(s *workload.Scenario, opt workload.Options) *workload.Result {
		env := workload.RealEnv{Store: st, Root: fmt.Sprintf("simrun/%s/%s-%d/g", nonce, s.Workload, s.Seed),
			Clock: clock, Scale: c.scale, QuietBound: 2 * time.Minute}
		return workload.ExecuteReal(s, env, opt)
	}, nil
}

func openStore(spec string) (objstore.Store, error) {
	switch {
	case strings.HasPrefix(spec, "fs:"):
		dir := strings.TrimPrefix(spec, "fs:")
		st, err := fs.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("-store %s: %w", spec, err)
		}
		return st, nil
	case strings.HasPrefix(spec, "s3://"):
		st, err := s3.Open(context.Background(), spec, s3.Options{PathStyle: true})
		if err != nil {
			return nil, fmt.Errorf("-store %s: %w", spec, err)
		}
		return st, nil
	}
	return nil, fmt.Errorf("-store %q: want sim, fs:DIR or s3://bucket/prefix", spec)
}

// scenarioFor returns the scenario of seed under c (or the case file's).
func scenarioFor(c *config, seed uint64) *workload.Scenario {
	w, _ := workload.Lookup(c.workload)
	return w.Generate(seed, c.faults)
}

// soak runs the configured seeds and returns the summary.
func soak(c *config, stdout, stderr io.Writer) (*Summary, error) {
	exec, err := newExecutor(c)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var outs []outcome
	single := c.seedSet || c.caseFile != ""
	if c.caseFile != "" {
		s, err := readCase(c.caseFile)
		if err != nil {
			return nil, err
		}
		c.workload, c.faults = s.Workload, s.Faults
		outs = []outcome{{seed: s.Seed, res: exec(s, c.opts(0))}}
	} else if c.seedSet {
		outs = []outcome{{seed: c.seed, res: exec(scenarioFor(c, c.seed), c.opts(0))}}
	} else {
		outs = runSeeds(c, exec, start, progressTo(c, stdout, stderr))
	}
	wall := time.Since(start)
	sum := summarize(c, outs, wall, single)
	if c.out != "" {
		if err := writeArtifacts(c, exec, outs, stderr); err != nil {
			return nil, err
		}
	}
	if c.rerun {
		det, err := rerunInChild(c, outs, stderr)
		if err != nil {
			return nil, err
		}
		sum.Deterministic = &det
	}
	return sum, nil
}

// readCase parses a case file.
func readCase(path string) (*workload.Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-case: %w", err)
	}
	defer f.Close()
	return workload.Parse(f)
}

// runSeeds runs seeds seedBase, seedBase+1, ... on c.parallel workers until
// c.seeds are done or (with -duration) the wall budget is spent. Results come
// back in seed order.
func runSeeds(c *config, exec executor, start time.Time, progress func(done, total, failing int)) []outcome {
	limit := uint64(c.seeds)
	if c.duration > 0 && !c.seedsSet {
		limit = 1 << 62
	}
	var mu sync.Mutex
	var outs []outcome
	next, failing := uint64(0), 0
	var wg sync.WaitGroup
	for w := 0; w < c.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= limit || (c.duration > 0 && time.Since(start) >= c.duration) {
					mu.Unlock()
					return
				}
				seed := c.seedBase + next
				next++
				mu.Unlock()
				res := exec(scenarioFor(c, seed), c.opts(0))
				res.LinFailures = trimLin(res.LinFailures)
				mu.Lock()
				outs = append(outs, outcome{seed: seed, res: res})
				if res.Failed() {
					failing++
				}
				progress(len(outs), int(min(limit, 1<<31)), failing)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	progress(-1, 0, 0)
	sort.Slice(outs, func(i, j int) bool { return outs[i].seed < outs[j].seed })
	return outs
}

// trimLin keeps at most a few failing partitions per seed in memory.
func trimLin(fs []check.LinFailure) []check.LinFailure {
	if len(fs) > 3 {
		return fs[:3]
	}
	return fs
}
