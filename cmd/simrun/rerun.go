package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/graphkernel/graphkernel/sim/workload"
)

// childFlag is the hidden flag of the second process of -rerun.
const childFlag = "internal-child-hashes"

// rerunInChild runs every seed of outs again in a second process (this same
// binary) and compares the trace hashes. A different hash means the run
// depends on something other than its seed: map order, addresses, the
// clock, the environment.
func rerunInChild(c *config, outs []outcome, stderr io.Writer) (bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("-rerun: %w", err)
	}
	args := []string{"-" + childFlag, "-workload", c.workload, "-faults", c.faults, "-parallel", strconv.Itoa(c.parallel)}
	if c.plant != "" {
		args = append(args, "-plant", c.plant)
	}
	args = append(args, "-recovery-checks="+strconv.FormatBool(c.recovery))
	if c.caseFile != "" {
		args = append(args, "-case", c.caseFile)
	}
	var in strings.Builder
	for _, o := range outs {
		fmt.Fprintln(&in, o.seed)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = strings.NewReader(in.String())
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Errorf("-rerun: child process: %w", err)
	}
	got := map[uint64]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return false, fmt.Errorf("-rerun: child printed %q", line)
		}
		seed, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return false, fmt.Errorf("-rerun: child printed %q", line)
		}
		got[seed] = f[1]
	}
	same := true
	for _, o := range outs {
		want := hex.EncodeToString(o.res.TraceHash[:])
		if got[o.seed] != want {
			same = false
			fmt.Fprintf(stderr, "simrun: seed %d is NOT deterministic: trace hash %s here, %q in a second process\n", o.seed, want, got[o.seed])
		}
	}
	return same, nil
}

// childMain is the second process of -rerun: it reads seeds from stdin and
// prints "seed hash" for each, in input order.
func childMain(c *config, stdin io.Reader, stdout, stderr io.Writer) int {
	var seeds []uint64
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		seed, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil {
			fmt.Fprintln(stderr, "simrun child:", err)
			return 2
		}
		seeds = append(seeds, seed)
	}
	var fixed *workload.Scenario
	if c.caseFile != "" {
		s, err := readCase(c.caseFile)
		if err != nil {
			fmt.Fprintln(stderr, "simrun child:", err)
			return 2
		}
		fixed = s
	}
	hashes := make([]string, len(seeds))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < c.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				s := fixed
				if s == nil {
					s = scenarioFor(c, seeds[i])
				}
				h := workload.Execute(s, c.opts(0)).TraceHash
				hashes[i] = hex.EncodeToString(h[:])
			}
		}()
	}
	for i := range seeds {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, seed := range seeds {
		fmt.Fprintf(stdout, "%d %s\n", seed, hashes[i])
	}
	return 0
}
