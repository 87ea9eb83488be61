// Command graphkernel inspects, verifies, recovers, loads and exports
// graphkernel graphs on any backend, over the public API only.
//
//	graphkernel branches fs:/var/lib/graphs g1
//	graphkernel log fs:/var/lib/graphs g1 main -n 20
//	graphkernel show fs:/var/lib/graphs g1 01JGJFGR489VX2QM8Y7AF9FRQ2
//	graphkernel schema fs:/var/lib/graphs g1
//	graphkernel diff fs:/var/lib/graphs g1 main@3 feature --type Person
//	graphkernel changes fs:/var/lib/graphs g1 main --op delete
//	graphkernel merge fs:/var/lib/graphs g1 feature main --dry-run
//	graphkernel verify s3://bucket/prefix g1
//	graphkernel recover fs:/var/lib/graphs g1 --ignore-lease
//	graphkernel maintain fs:/var/lib/graphs g1 --keep-last 20
//	graphkernel load fs:/var/lib/graphs g1 main people.jsonl knows.csv
//	graphkernel export fs:/var/lib/graphs g1 main out/ --format parquet
//
// STORE is fs:DIR or s3://bucket/prefix (the same syntax as simrun's -store);
// ROOT is the graph root inside the store. Every subcommand takes -h (usage
// with an example) and --json (machine-readable output). Exit status: 0
// success, 1 problems found (or an operation failed), 2 usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// Exit statuses.
const (
	exitOK       = 0
	exitProblems = 1 // problems found, or the operation failed
	exitUsage    = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a := &app{stdout: os.Stdout, stderr: os.Stderr, open: openStore, env: kernel.SystemEnv(),
		now: time.Now, tty: isTerminal(os.Stderr)}
	code := a.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// app is one invocation's environment: where output goes, how a STORE spec
// becomes a store, and the kernel's time and entropy. Tests build one around
// a sim store.
type app struct {
	stdout, stderr io.Writer
	open           func(ctx context.Context, spec string) (objstore.Store, error)
	env            kernel.Env
	now            func() time.Time
	tty            bool        // stderr is a terminal: progress bars are drawn
	limits         data.Limits // transaction limits of load (zero: the data plane's defaults)
	feedLimits     feed.Limits // page limits of diff and changes (zero: the feed's defaults)
}

// command is one subcommand.
type command struct {
	name    string
	args    string // positional arguments, for the usage line
	summary string
	notes   string // more help for -h, after the summary (optional)
	example string
	flags   func(fs *flag.FlagSet, o *opts)
	run     func(ctx context.Context, a *app, o *opts, pos []string) error
	nargs   func(n int) bool
}

// opts holds every flag any subcommand takes; each subcommand registers the
// ones it reads.
type opts struct {
	json        bool
	n           int
	ignoreLease bool
	upsert      bool
	format      string
	schemaFile  string
	batchRows   int
	actor       string
	message     string
	types       []string  // diff, changes: --type
	ops         []feed.Op // diff, changes: --op
	limit       int64     // diff, changes: --limit
	dryRun      bool      // merge: --dry-run
	maint       maintainOpts
	keepLast    int // verify: --keep-last
}

func exactly(k int) func(int) bool { return func(n int) bool { return n == k } }
func between(lo, hi int) func(int) bool {
	return func(n int) bool { return n >= lo && n <= hi }
}
func atLeast(k int) func(int) bool { return func(n int) bool { return n >= k } }

// commands is the subcommand table, in help order.
func commands() []command {
	cmds := []command{
		{name: "branches", args: "STORE ROOT", nargs: exactly(2),
			summary: "list live branches with head commit, depth and incarnation",
			example: "graphkernel branches fs:/var/lib/graphs g1", run: runBranches},
		{name: "log", args: "STORE ROOT [BRANCH]", nargs: between(2, 3),
			summary: "commits newest first; merges show both parents, recovery and other non-plain commits are marked",
			notes: "When garbage collection reclaimed the history below the oldest commit listed, the text ends with a note\n" +
				"and --json sets \"retention_boundary\": true on that commit (absent on every other commit).",
			example: "graphkernel log fs:/var/lib/graphs g1 main -n 20",
			flags:   func(fs *flag.FlagSet, o *opts) { fs.IntVar(&o.n, "n", 20, "show at most `N` commits (1..100000)") },
			run:     runLog},
		{name: "show", args: "STORE ROOT REF", nargs: exactly(3),
			summary: "a commit's lineage, the table versions it pins and the rows of each type (REF: commit id, BRANCH or BRANCH@VERSION)",
			example: "graphkernel show fs:/var/lib/graphs g1 01JGJFGR489VX2QM8Y7AF9FRQ2", run: runShow},
		{name: "schema", args: "STORE ROOT", nargs: exactly(2),
			summary: "the schema contract in its text form",
			example: "graphkernel schema fs:/var/lib/graphs g1", run: runSchema},
		{name: "verify", args: "STORE ROOT", nargs: exactly(2),
			summary: "check everything reachable from every live branch (read-only); exit 1 on any problem",
			example: "graphkernel verify s3://bucket/prefix g1 --json --keep-last 10",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.IntVar(&o.keepLast, "keep-last", gc.DefaultKeepLast, "the graph's retention (maintain --keep-last): a manifest missing among an incarnation's newest `N` is damage, history below them collected")
			},
			run: runVerify},
		{name: "recover", args: "STORE ROOT", nargs: exactly(2),
			summary: "run the recovery sweep and print what it decided and audited",
			example: "graphkernel recover fs:/var/lib/graphs g1 --ignore-lease",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.ignoreLease, "ignore-lease", false, "act on sidecars younger than the lease too (only when no writer runs)")
			},
			run: runRecover},
	}
	cmds = append(cmds, changeCommands()...)
	cmds = append(cmds, mergeCommand(), maintainCommand())
	return append(cmds, ioCommands()...)
}

// usageError is a command line the command cannot run: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errProblems marks a run that completed and found problems: exit 1, with
// the problems already printed.
var errProblems = errors.New("problems found")

func (a *app) run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		a.mainUsage(a.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == args[0] {
			c := c
			cmd = &c
		}
	}
	if cmd == nil {
		fmt.Fprintf(a.stderr, "graphkernel: unknown command %q\n", args[0])
		a.mainUsage(a.stderr)
		return exitUsage
	}
	o, pos, err := parseArgs(cmd, args[1:], a.stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil && !cmd.nargs(len(pos)) {
		err = &usageError{fmt.Sprintf("%s takes %s, got %d argument(s)", cmd.name, cmd.args, len(pos))}
	}
	if err == nil {
		err = cmd.run(ctx, a, o, pos)
	}
	return a.exit(cmd, err)
}

// exit maps err to the exit status, printing it.
func (a *app) exit(cmd *command, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "graphkernel %s: %v\n", cmd.name, err)
		fmt.Fprintf(a.stderr, "usage: graphkernel %s %s [flags]  (-h for help)\n", cmd.name, cmd.args)
		return exitUsage
	case errors.Is(err, errProblems):
		return exitProblems
	default:
		fmt.Fprintf(a.stderr, "graphkernel %s: %v\n", cmd.name, err)
		return exitProblems
	}
}

// parseArgs parses flags anywhere among the positional arguments.
func parseArgs(cmd *command, args []string, stderr io.Writer) (*opts, []string, error) {
	o := &opts{}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.json, "json", false, "machine-readable JSON output")
	if cmd.flags != nil {
		cmd.flags(fs, o)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: graphkernel %s %s [flags]\n\n%s\n", cmd.name, cmd.args, cmd.summary)
		if cmd.notes != "" {
			fmt.Fprintf(stderr, "\n%s\n", cmd.notes)
		}
		fmt.Fprintf(stderr, "\nexample:\n  %s\n\nflags:\n", cmd.example)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nSTORE is fs:DIR or s3://bucket/prefix. Exit status: 0 ok, 1 problems found, 2 usage.\n")
	}
	var pos []string
	for range len(args) + 1 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, err
			}
			return nil, nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return o, pos, nil
}

func (a *app) mainUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: graphkernel COMMAND STORE ROOT [ARGS] [flags]")
	fmt.Fprintln(w, "\nSTORE is fs:DIR or s3://bucket/prefix; ROOT is the graph root in it.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`graphkernel COMMAND -h` shows a command's flags and an example.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 problems found (or the operation failed), 2 usage error.")
}

// openStore turns a STORE spec into a store: fs:DIR or s3://bucket/prefix.
// Errors name the spec only (never credentials: those come from the
// standard AWS configuration chain and are never printed).
func openStore(ctx context.Context, spec string) (objstore.Store, error) {
	switch {
	case strings.HasPrefix(spec, "fs:"):
		return openFS(strings.TrimPrefix(spec, "fs:"))
	case strings.HasPrefix(spec, "s3://"):
		return openS3(ctx, spec)
	}
	return nil, &usageError{fmt.Sprintf("STORE %q: want fs:DIR or s3://bucket/prefix", spec)}
}
