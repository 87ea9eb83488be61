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
	"runtime/debug"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
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
		now: time.Now, tty: isTerminal(os.Stderr), getenv: os.Getenv}
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
	tty            bool                                // stderr is a terminal: progress bars are drawn
	limits         data.Limits                         // transaction limits of load (zero: the data plane's defaults)
	feedLimits     feed.Limits                         // page limits of diff and changes (zero: the feed's defaults)
	getenv         func(string) string                 // GRAPHKERNEL_STORE, GRAPHKERNEL_ROOT (nil: none set)
	testSpec       string                              // a STORE spec besides fs: and s3:// (tests: "sim")
	statusEvery    time.Duration                       // interval of the status line without a terminal (0: defaultStatusEvery)
	wrapStore      func(objstore.Store) objstore.Store // openGraph wraps the store (progress meters); nil: as opened
	stdoutBytes    int64                               // bytes written to stdout so far (a --json failure prints its object only on an empty stdout)
	reachEntries   int                                 // kernel.Options.ReachEntries of openGraph's handle (0: the kernel's; maintain's --reach-entries)
	reachFolds     int                                 // kernel.Options.ReachFolds of openGraph's handle (0: the kernel's; maintain's --reach-folds)
	// newMaintainer makes maintain's Maintainer (nil: maintain.NewWith;
	// tests see the options the flags give).
	newMaintainer func(objstore.Store, string, kernel.Env, maintain.Options) (*maintain.Maintainer, error)
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
	lead    int // positional arguments before STORE (branch: the action)
}

// opts holds every flag any subcommand takes; each subcommand registers the
// ones it reads.
type opts struct {
	json        bool
	n           int
	ignoreLease bool
	upsert      bool
	replace     bool     // load: --replace (with --upsert: whole rows)
	nullString  *string  // load: --null-string (CSV)
	prefer      []string // merge: --prefer (repeatable)
	from        string   // branch create: --from
	format      string
	schemaFile  string
	batchRows   int
	batchBytes  int64 // load: --batch-bytes
	actor       string
	message     string
	types       []string  // diff, changes: --type
	ops         []feed.Op // diff, changes: --op
	limit       int64     // diff, changes: --limit
	dryRun      bool      // merge, schema apply: --dry-run
	renames     []string  // schema apply: --rename (repeatable)
	dropRows    bool      // schema apply: --drop-rows
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
	cmds = append(cmds, branchCommand())
	cmds = append(cmds, changeCommands()...)
	cmds = append(cmds, mergeCommand(), maintainCommand(), schemaApplyCommand(), schemaDiffCommand())
	return append(cmds, ioCommands()...)
}

// usageError is a command line the command cannot run: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errProblems marks a run that completed and found problems: exit 1, with
// the problems already printed.
var errProblems = errors.New("problems found")

func (a *app) run(ctx context.Context, args []string) int {
	if _, ok := a.stdout.(*countingWriter); !ok {
		a.stdout = &countingWriter{w: a.stdout, n: &a.stdoutBytes}
	}
	a.stdoutBytes, a.wrapStore = 0, nil // per invocation
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		a.mainUsage(a.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(a.stdout, versionString())
		return exitOK
	}
	if args[0] == "schema" && len(args) > 1 && args[1] == "apply" {
		args = append([]string{schemaApplyName}, args[2:]...) // a two-word command
	}
	if args[0] == "schema" && len(args) > 1 && args[1] == "diff" {
		args = append([]string{schemaDiffName}, args[2:]...)
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
	jsonOut := wantsJSON(o, args[1:])
	if err == nil {
		pos, err = a.withEnv(cmd, pos)
	}
	if err == nil && !cmd.nargs(len(pos)) {
		err = &usageError{fmt.Sprintf("%s takes %s, got %d argument(s)", cmd.name, cmd.args, len(pos))}
	}
	if err == nil {
		err = cmd.run(ctx, a, o, pos)
	}
	return a.exit(cmd, err, jsonOut)
}

// wantsJSON reports whether the command line asked for --json (from the
// parsed flags, or the raw arguments when they did not parse).
func wantsJSON(o *opts, args []string) bool {
	if o != nil {
		return o.json
	}
	for _, a := range args {
		if a == "--json" || a == "-json" || a == "--json=true" || a == "-json=true" {
			return true
		}
	}
	return false
}

// Environment variables STORE and ROOT default to.
const (
	envStore = "GRAPHKERNEL_STORE"
	envRoot  = "GRAPHKERNEL_ROOT"
)

// withEnv fills in STORE and ROOT from the environment. The rule is
// positional and never guesses from counts: if the argument where STORE
// belongs is a store spec (fs:DIR, s3://...), STORE and ROOT are the
// command line's (the environment is ignored); otherwise STORE is
// $GRAPHKERNEL_STORE (a usage error when unset) and ROOT is
// $GRAPHKERNEL_ROOT if set, else that argument.
func (a *app) withEnv(cmd *command, pos []string) ([]string, error) {
	if len(pos) > cmd.lead && a.isStoreSpec(pos[cmd.lead]) {
		return pos, nil
	}
	getenv := a.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	store, root := getenv(envStore), getenv(envRoot)
	if store == "" {
		if len(pos) > cmd.lead {
			return nil, &usageError{fmt.Sprintf("%q is not a STORE (fs:DIR or s3://bucket/prefix), and %s is not set", pos[cmd.lead], envStore)}
		}
		return pos, nil // the count check names what is missing
	}
	out := append([]string{}, pos[:min(cmd.lead, len(pos))]...)
	out = append(out, store)
	if root != "" {
		out = append(out, root)
	}
	if len(pos) > cmd.lead {
		out = append(out, pos[cmd.lead:]...)
	}
	return out, nil
}

// isStoreSpec reports whether s names a store: fs:DIR, s3://bucket/prefix
// (or the tests' spec).
func (a *app) isStoreSpec(s string) bool {
	return strings.HasPrefix(s, "fs:") || strings.HasPrefix(s, "s3://") || (a.testSpec != "" && s == a.testSpec)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// errorJSON is what a --json run that fails prints on stdout when it
// printed nothing else: the error, its hint and the exit status.
type errorJSON struct {
	Command string `json:"command"`
	Error   string `json:"error"`
	Hint    string `json:"hint,omitempty"`
	Exit    int    `json:"exit"`
}

// exit maps err to the exit status, printing it (and with --json, as a
// JSON object on stdout unless the command already printed its document).
func (a *app) exit(cmd *command, err error, jsonOut bool) int {
	var ue *usageError
	code := exitProblems
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		code = exitUsage
		fmt.Fprintf(a.stderr, "graphkernel %s: %v\n", cmd.name, err)
		fmt.Fprintf(a.stderr, "usage: graphkernel %s %s [flags]  (-h for help)\n", cmd.name, cmd.args)
	case errors.Is(err, errProblems):
		return exitProblems
	default:
		fmt.Fprintf(a.stderr, "graphkernel %s: %v\n", cmd.name, err)
	}
	hint := hintFor(err)
	if hint != "" {
		fmt.Fprintf(a.stderr, "hint: %s\n", hint)
	}
	if jsonOut && a.stdoutBytes == 0 {
		_ = a.emitJSON(errorJSON{Command: cmd.name, Error: err.Error(), Hint: hint, Exit: code})
	}
	return code
}

// parseArgs parses flags anywhere among the positional arguments.
func parseArgs(cmd *command, args []string, stderr io.Writer) (*opts, []string, error) {
	o := &opts{}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.json, "json", false, "machine-readable JSON output (a failure too: an object with an \"error\" field)")
	if cmd.flags != nil {
		cmd.flags(fs, o)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: graphkernel %s %s [flags]\n\n%s\n", cmd.name, cmd.args, cmd.summary)
		if cmd.notes != "" {
			fmt.Fprintf(stderr, "\n%s\n", cmd.notes)
		}
		fmt.Fprintf(stderr, "\nexample:\n  %s\n\nflags:\n", cmd.example)
		printFlags(stderr, fs)
		fmt.Fprintf(stderr, "\nSTORE is fs:DIR or s3://bucket/prefix; STORE and ROOT may come from $%s and $%s\n"+
			"(see graphkernel -h). Exit status: 0 ok, 1 problems found, 2 usage.\n", envStore, envRoot)
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

// printFlags lists a flag set's flags in their --name form (the flag
// package prints -name; both are accepted).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch f.DefValue {
		case "", "0", "false", "[]", "0s":
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// versionString is the module version, VCS revision and Go version of
// this binary (runtime/debug build information).
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "graphkernel (no build information)"
	}
	v := "graphkernel " + bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.time":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + bi.GoVersion
}

func (a *app) mainUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: graphkernel COMMAND STORE ROOT [ARGS] [flags]")
	fmt.Fprintln(w, "       graphkernel --version")
	fmt.Fprintln(w, "\nSTORE is fs:DIR or s3://bucket/prefix (S3: endpoint, region and keys from the standard AWS")
	fmt.Fprintln(w, "environment, e.g. AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); ROOT is")
	fmt.Fprintf(w, "the graph root in it. When the argument where STORE belongs is not fs:... or s3://..., STORE is\n")
	fmt.Fprintf(w, "$%s and ROOT is $%s if set (else that argument).\n", envStore, envRoot)
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
