package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/sim/workload"
)

// maxArtifactSeeds bounds how many failing seeds get artifacts (each costs a
// traced re-run and a shrink).
const maxArtifactSeeds = 5

// traceLines bounds the trace kept for an artifact.
const traceLines = 1 << 21

// writeArtifacts writes, for each of the first failing seeds, a directory
// with the seed and how to replay it, the violations, the full scenario, the
// trace (simulator only), a porcupine visualization of each failing
// partition, and a shrunk reproduction (simulator only).
func writeArtifacts(c *config, exec executor, outs []outcome, stderr io.Writer) error {
	n := 0
	for _, o := range outs {
		if !o.res.Failed() || n >= maxArtifactSeeds {
			continue
		}
		n++
		dir := filepath.Join(c.out, fmt.Sprintf("%s-seed-%d", o.res.Scenario.Workload, o.seed))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("artifacts: %w", err)
		}
		if err := seedArtifacts(c, exec, o, dir, stderr); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "simrun: artifacts of seed %d in %s\n", o.seed, dir)
	}
	return nil
}

func seedArtifacts(c *config, exec executor, o outcome, dir string, stderr io.Writer) error {
	s, res := o.res.Scenario, o.res
	if c.store == "sim" {
		traced := exec(s, c.opts(traceLines))
		if traced.TraceHash != res.TraceHash {
			fmt.Fprintf(stderr, "simrun: seed %d: traced re-run hash differs: NONDETERMINISM\n", o.seed)
		}
		res = traced
		if err := writeFile(dir, "trace.txt", strings.Join(traced.Trace, "\n")+"\n"); err != nil {
			return err
		}
	}
	plantFlag, tags := "", ""
	if c.plant != "" {
		plantFlag, tags = " -plant "+c.plant, " -tags simplant"
	}
	shrinks := c.store == "sim" && c.shrinkRuns > 0 // only the simulator shrinks
	seedText := fmt.Sprintf("seed %d\nworkload %s\nfaults %s\nstore %s\ntrace_hash %x\nreplay: go run%s ./cmd/simrun -workload %s -faults %s -seed %d%s%s\n",
		o.seed, s.Workload, s.Faults, c.store, res.TraceHash, tags, s.Workload, s.Faults, o.seed, storeFlags(c.store, c.scale), plantFlag)
	if shrinks {
		seedText += fmt.Sprintf("shrunk: go run%s ./cmd/simrun -case %s%s\n", tags, filepath.Join(dir, "shrunk.txt"), plantFlag)
	}
	if err := writeFile(dir, "seed.txt", seedText); err != nil {
		return err
	}
	var vs strings.Builder
	for _, v := range res.Violations {
		fmt.Fprintln(&vs, v)
	}
	if err := writeFile(dir, "violations.txt", vs.String()); err != nil {
		return err
	}
	if err := writeFile(dir, "case.txt", s.String()); err != nil {
		return err
	}
	for i, f := range res.LinFailures {
		if i >= 3 {
			break
		}
		name := fmt.Sprintf("lin-%s-%s.html", f.Model, sanitize(f.Partition))
		if err := f.Visualize(filepath.Join(dir, name), 30*time.Second); err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
		}
	}
	if !shrinks {
		return nil
	}
	shrunk, sres, runs := workload.Shrink(s, res, c.shrinkRuns, func(sc *workload.Scenario) *workload.Result {
		return exec(sc, c.opts(0))
	})
	text := shrunk.String() + fmt.Sprintf("# shrunk from %d actors / %d ops to %d actors / %d ops in %d runs\n",
		len(s.Actors), s.Ops(), len(shrunk.Actors), shrunk.Ops(), runs)
	for _, v := range sres.Violations {
		text += "# " + v.String() + "\n"
	}
	return writeFile(dir, "shrunk.txt", text)
}

func writeFile(dir, name, content string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	return nil
}

// sanitize makes a partition key usable in a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
