// Command simrun is graphkernel's soak harness: it runs many seeds of a
// simulated workload on the deterministic simulator (or, with -store, on a
// real filesystem or S3 store), checks every run with the invariant checkers
// and porcupine, and exits non-zero on any violation.
//
//	go run ./cmd/simrun                       # default soak: a few hundred seeds
//	go run ./cmd/simrun -seeds 200 -json      # machine-readable summary
//	go run ./cmd/simrun -seed 42 -out art     # replay one seed, keep artifacts
//	go run ./cmd/simrun -rerun                # check determinism across processes
//	go run -tags simplant ./cmd/simrun -plant reparent-once
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/sim"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// defaultSeeds is the default soak's size: a few hundred seeds, well under
// two minutes on two cores.
const defaultSeeds = 300

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// config is the parsed command line.
type config struct {
	seeds       int
	seedsSet    bool
	seedSet     bool
	seed        uint64
	seedBase    uint64
	duration    time.Duration
	workload    string
	faults      string
	store       string
	json        bool
	out         string
	rerun       bool
	plant       string
	parallel    int
	caseFile    string
	shrinkRuns  int
	scale       float64
	s3PathStyle bool
	childHashes bool
	list        bool
	recovery    bool
	procs       int
	procFaults  bool
	// indexFanout is -index-fanout: the shape of the process harness's
	// data handles that write (dataOptions; 0: the kernel's shapes).
	indexFanout    int
	indexFanoutSet bool
	writerMode     bool
	writer         writerConfig
	statusEvery    time.Duration // -status-every: status lines without a terminal
}

// procsWorkloads are the workloads the process harness (-procs) runs:
// mix (the default: the writers of writer.go), maint (maintproc.go) and
// schema (schemaproc.go).
var procsWorkloads = []string{"mix", maintWorkload, schemaProcWorkload}

// recoveryChecksDefault turns on the sidecar and audit checkers by default
// (the recovery issue's sweep has landed; -recovery-checks=false turns them
// off to soak a kernel without it).
const recoveryChecksDefault = true

// opts returns the workload options of one run.
func (c *config) opts(traceLines int) workload.Options {
	return workload.Options{TraceLines: traceLines, NoRecoveryChecks: !c.recovery}
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("simrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.seeds, "seeds", defaultSeeds, "run `N` seeds")
	fs.Uint64Var(&c.seed, "seed", 0, "replay one seed `S`")
	fs.Uint64Var(&c.seedBase, "seed-base", 1, "first seed of a multi-seed run")
	fs.DurationVar(&c.duration, "duration", 0, "run seeds for wall time `D` (with -seeds: whichever ends first)")
	fs.StringVar(&c.workload, "workload", "", "workload `NAME` (default mix; with -plant, the bug's workload); see -list")
	fs.StringVar(&c.faults, "faults", "default", "fault `PROFILE`: "+strings.Join(sim.ProfileNames(), ", "))
	fs.StringVar(&c.store, "store", "sim", "store: sim, fs:`DIR`, s3://bucket/prefix or (with -procs) s3test, a local S3 server started as the tests do")
	fs.IntVar(&c.procs, "procs", 0, "run `N` real writer processes on one graph of -store, SIGKILLing and restarting them, for -duration (default 30s)")
	fs.BoolVar(&c.procFaults, "proc-faults", true, "with -procs: inject store faults into the writers (objstore/faulty)")
	fs.IntVar(&c.indexFanout, "index-fanout", procsIndexFanout, "with -procs: the index fanout `N` (>= 2) of the processes' data handles, every version with a fragment paged (as the simulator's), so that small tables carry index and fragment trees; 0 takes the kernel's shapes")
	fs.BoolVar(&c.writerMode, writerFlag, false, "internal: be one writer process of -procs")
	fs.StringVar(&c.writer.root, "writer-root", "", "internal: the writer's graph root")
	fs.IntVar(&c.writer.id, "writer-id", 0, "internal: the writer's id")
	fs.IntVar(&c.writer.seg, "writer-seg", 0, "internal: the writer's restart count")
	fs.Uint64Var(&c.writer.seed, "writer-seed", 0, "internal: the writer's seed")
	fs.StringVar(&c.writer.hist, "writer-hist", "", "internal: the writer's history file")
	fs.BoolVar(&c.writer.faults, "writer-faults", false, "internal: inject store faults")
	fs.StringVar(&c.writer.workload, "writer-workload", "", "internal: the process's workload (maint, or the default writers)")
	fs.BoolVar(&c.json, "json", false, "print a machine-readable summary on stdout")
	fs.DurationVar(&c.statusEvery, "status-every", defaultStatusEvery, "without a terminal (or with -json), print a status line on stderr this often")
	fs.StringVar(&c.out, "out", "", "write failure artifacts under `DIR`")
	fs.BoolVar(&c.rerun, "rerun", false, "run every seed again in a second process and compare trace hashes")
	fs.StringVar(&c.plant, "plant", "", "enable planted bug `NAME` (needs -tags simplant): "+strings.Join(plant.All(), ", "))
	fs.IntVar(&c.parallel, "parallel", runtime.GOMAXPROCS(0), "seeds run at once")
	fs.StringVar(&c.caseFile, "case", "", "replay the scenario in case `FILE` (a shrunk reproduction)")
	fs.IntVar(&c.shrinkRuns, "shrink-runs", 200, "runs the shrinker may spend per failing seed (with -out)")
	fs.Float64Var(&c.scale, "scale", 0.02, "time scale of scenarios on a real store")
	fs.BoolVar(&c.s3PathStyle, "s3-path-style", true, "address S3 buckets path-style")
	fs.BoolVar(&c.recovery, "recovery-checks", recoveryChecksDefault, "check that no sidecar is left and each recovery audits once (needs the recovery sweep)")
	fs.BoolVar(&c.list, "list", false, "list workloads, fault profiles and planted bugs")
	fs.BoolVar(&c.childHashes, childFlag, false, "internal: print the trace hashes of the seeds read from stdin")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "seed":
			c.seedSet = true
		case "seeds":
			c.seedsSet = true
		case "index-fanout":
			c.indexFanoutSet = true
		}
	})
	return c, c.resolve()
}

// resolve fills defaults and checks the combination of flags.
func (c *config) resolve() error {
	if c.plant != "" {
		if !plant.Known(c.plant) {
			return fmt.Errorf("unknown planted bug %q (known: %s)", c.plant, strings.Join(plant.All(), ", "))
		}
		if err := plant.Enable(c.plant); err != nil {
			return err
		}
		if c.workload == "" {
			w, ok := workload.ForPlant(c.plant)
			if !ok {
				return fmt.Errorf("no workload catches planted bug %q yet", c.plant)
			}
			c.workload = w.Name
		}
	}
	if c.workload == "" {
		c.workload = "mix"
	}
	w, ok := workload.Lookup(c.workload)
	switch {
	case !ok:
		return fmt.Errorf("unknown workload %q (known: %s)", c.workload, strings.Join(workload.Names(), ", "))
	case w.Pending != "":
		return fmt.Errorf("workload %q cannot run yet: %s", c.workload, w.Pending)
	}
	if _, err := sim.Profile(c.faults); err != nil {
		return err
	}
	if c.seeds < 0 || c.parallel < 1 || c.shrinkRuns < 0 || c.scale <= 0 {
		return fmt.Errorf("-seeds, -parallel, -shrink-runs and -scale must be positive")
	}
	if c.rerun && c.store != "sim" {
		return fmt.Errorf("-rerun checks determinism, a simulator property: it needs -store sim")
	}
	switch {
	case c.procs < 0:
		return fmt.Errorf("-procs must not be negative")
	case c.procs > 0 && c.store == "sim":
		return fmt.Errorf("-procs runs real processes: it needs -store fs:DIR, s3://bucket/prefix or s3test")
	case c.procs > 0 && (c.rerun || c.caseFile != ""):
		return fmt.Errorf("-procs cannot be combined with -rerun or -case")
	case c.procs == 0 && c.store == "s3test":
		return fmt.Errorf("-store s3test needs -procs")
	case c.procs > 0 && !slices.Contains(procsWorkloads, c.workload):
		return fmt.Errorf("workload %q runs on the simulator only: -procs runs %s", c.workload, strings.Join(procsWorkloads, ", "))
	case c.indexFanout < 0 || c.indexFanout == 1:
		return fmt.Errorf("-index-fanout must be 0 (the kernel's shapes) or at least 2")
	case c.indexFanoutSet && c.procs == 0 && !c.writerMode:
		return fmt.Errorf("-index-fanout shapes the data handles of -procs processes: it needs -procs (the simulator's workloads choose their own)")
	}
	return nil
}

// run is main with its streams: it returns the exit status (0 clean, 1
// violations or nondeterminism, 2 usage or setup error).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return 2
	}
	if c.list {
		printList(stdout)
		return 0
	}
	if c.childHashes {
		return childMain(c, stdin, stdout, stderr)
	}
	if c.writerMode && c.writer.workload == maintWorkload {
		return maintMain(c, stdin, stderr)
	}
	if c.writerMode && c.writer.workload == schemaProcWorkload {
		return schemaMain(c, stdin, stderr)
	}
	if c.writerMode {
		return writerMain(c, stdin, stderr)
	}
	var sum *Summary
	if c.procs > 0 {
		sum, err = runProcs(c, stdout, stderr)
	} else {
		sum, err = soak(c, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "simrun:", err)
		return 2
	}
	if c.json {
		if err := writeJSON(stdout, sum); err != nil {
			fmt.Fprintln(stderr, "simrun:", err)
			return 2
		}
	} else {
		writeTable(stdout, sum)
	}
	if sum.Violations > 0 || (sum.Deterministic != nil && !*sum.Deterministic) {
		return 1
	}
	return 0
}

func printList(w io.Writer) {
	fmt.Fprintln(w, "workloads:")
	for _, n := range workload.Names() {
		wl, _ := workload.Lookup(n)
		status := ""
		if wl.Pending != "" {
			status = " [pending: " + wl.Pending + "]"
		}
		plants := append([]string(nil), wl.Plants...)
		sort.Strings(plants)
		fmt.Fprintf(w, "  %-12s %s%s", n, wl.Doc, status)
		if len(plants) > 0 {
			fmt.Fprintf(w, " (plants: %s)", strings.Join(plants, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "with -procs (real processes): %s (mix: the default writers)\n", strings.Join(procsWorkloads, ", "))
	fmt.Fprintf(w, "fault profiles: %s\n", strings.Join(sim.ProfileNames(), ", "))
	fmt.Fprintf(w, "planted bugs (need -tags simplant; built: %t): %s\n", plant.Built, strings.Join(plant.All(), ", "))
}
