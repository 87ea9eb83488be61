package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// ioCommands are load and export.
func ioCommands() []command {
	return []command{
		{name: "load", args: "STORE ROOT BRANCH FILE...", nargs: atLeast(4),
			summary: "load nodes and edges from JSON Lines (.jsonl), CSV (.csv) or Parquet (.parquet) files; " +
				"a row's type is its _type column, else the file name up to the first dot; node rows load before edge rows",
			notes: "Without --upsert every row is inserted and an id already on the branch is an error.\n" +
				"With --upsert a row whose id exists is a patch: only the columns the row names change (the keys of a\n" +
				"JSON object, every column of a CSV header or Parquet file; a named column that is null sets null),\n" +
				"the others keep their values; a new id is inserted. --upsert --replace replaces whole rows instead:\n" +
				"every column a row leaves out becomes null. Re-running either is idempotent.\n" +
				"CSV has no null: an empty cell is null for non-string columns and \"\" for string columns, unless\n" +
				"--null-string S makes every cell equal to S null (string columns too).\n" +
				"Rows are committed in transactions of at most --batch-bytes estimated bytes (default 64 MiB; the load's\n" +
				"memory is a small multiple of it) and at most --batch-rows rows.\n" +
				"Without a terminal, a status line goes to stderr every 10 s (rows, bytes of the input, rows/s, ETA).",
			example: "graphkernel load fs:/tmp/g g1 main testdata/people.jsonl --schema testdata/people.schema",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.BoolVar(&o.upsert, "upsert", false, "rows whose id exists update only the columns they name (a patch); new ids are inserted")
				fs.BoolVar(&o.replace, "replace", false, "with --upsert: replace whole rows (columns a row leaves out become null)")
				fs.Func("null-string", "CSV: a cell equal to `S` is null, for every column kind (default: an empty cell is null except in string columns)", func(v string) error {
					o.nullString = &v
					return nil
				})
				fs.StringVar(&o.schemaFile, "schema", "", "create the graph with the schema in `FILE` if ROOT holds none")
				fs.IntVar(&o.batchRows, "batch-rows", data.DefaultMaxRows, "at most `N` rows per transaction (at most the data plane's transaction row limit)")
				fs.Int64Var(&o.batchBytes, "batch-bytes", data.DefaultMaxBytes, "the transaction byte budget: a transaction commits when its staged rows' estimated size would pass `N` bytes; the load's memory is a small multiple of it")
				fs.StringVar(&o.actor, "actor", "graphkernel-load", "commit `actor`")
				fs.StringVar(&o.message, "message", "", "commit `message` (default: load and the file names)")
			},
			run: runLoad},
		{name: "export", args: "STORE ROOT REF DIR", nargs: exactly(4),
			summary: "write one file per type (and schema.gk) from a snapshot; REF is a commit id, BRANCH or BRANCH@VERSION",
			example: "graphkernel export fs:/var/lib/graphs g1 main@12 out/ --format parquet",
			flags: func(fs *flag.FlagSet, o *opts) {
				fs.StringVar(&o.format, "format", "jsonl", "output `format`: parquet, arrow or jsonl")
			},
			run: runExport},
	}
}

// committedTxn is one transaction a load committed.
type committedTxn struct {
	Commit string `json:"commit"`
	Rows   int    `json:"rows"`
	First  string `json:"first"` // location of its first row
	Last   string `json:"last"`
}

// loadReport is `load --json`.
type loadReport struct {
	Branch       string         `json:"branch"`
	Rows         int            `json:"rows"`
	Transactions []committedTxn `json:"transactions"`
	Error        string         `json:"error,omitempty"`
}

// loader stages rows into transactions of at most batch rows and within
// the transaction byte budget (the graph's Limits.MaxBytes, --batch-bytes)
// and commits each. It keeps nothing per row beyond what the transaction
// stages: a rejection's location is found by reading the input again.
type loader struct {
	a       *app
	g       *data.Graph
	b       kernel.BranchRef
	types   map[string]typeInfo
	upsert  bool
	replace bool // with upsert: whole rows (Upsert), not patches (Patch)
	src     sourceOpts
	meter   *meter
	batch   int
	intent  kernel.LineageIntent

	files  []string
	tx     *data.Txn
	seen   int // rows handed to stage so far, in pass order
	start  int // seen at the current transaction's first row
	staged int
	first  location
	last   location
	rep    loadReport
}

func runLoad(ctx context.Context, a *app, o *opts, pos []string) error {
	if o.replace && !o.upsert {
		return &usageError{"--replace needs --upsert (it says how --upsert writes rows that exist)"}
	}
	if o.batchRows < 1 || o.batchRows > data.DefaultMaxRows {
		return &usageError{fmt.Sprintf("--batch-rows %d: want 1..%d", o.batchRows, data.DefaultMaxRows)}
	}
	if o.batchBytes < 1 {
		return &usageError{fmt.Sprintf("--batch-bytes %d: want a positive byte count", o.batchBytes)}
	}
	if a.limits.MaxBytes == 0 {
		defer func(l data.Limits) { a.limits = l }(a.limits)
		a.limits.MaxBytes = o.batchBytes
	}
	defer softMemoryLimit(o.batchBytes)()
	files := pos[3:]
	for _, f := range files {
		if _, err := sourceFormat(f); err != nil {
			return err
		}
	}
	g, err := a.loadGraph(ctx, o, pos[0], pos[1])
	if err != nil {
		return err
	}
	b, err := g.Branch(ctx, pos[2])
	if err != nil {
		return err // names the branch
	}
	msg := o.message
	if msg == "" {
		msg = "load " + strings.Join(files, " ")
	}
	l := &loader{a: a, g: g, b: b, upsert: o.upsert, replace: o.replace, batch: o.batchRows, files: files,
		src:    sourceOpts{nullString: o.nullString},
		meter:  a.newMeter("load", "rows", inputBytes(files)),
		intent: kernel.LineageIntent{Actor: o.actor, Message: msg}, rep: loadReport{Branch: b.String(), Transactions: []committedTxn{}}}
	err = l.run(ctx, files)
	l.meter.done()
	if err != nil {
		l.rep.Error = err.Error()
	}
	if o.json {
		if jerr := a.emitJSON(l.rep); jerr != nil {
			return jerr
		}
	} else {
		l.print(err)
	}
	if err != nil {
		return &loadStoppedError{err: err, committed: len(l.rep.Transactions)}
	}
	return nil
}

// loadSoftLimitHalves is the soft memory limit of a load in halves of
// its byte budget (7: 3.5x): below the goal of a peak heap at most 4x the
// transaction byte budget (BenchmarkLoadMemory), because the heap passes a
// soft limit by what the program allocates while a collection runs, which
// grows when the machine is busy (BenchmarkLoadMemory at load average
// ~20: 4.2x under a 4x limit; 3.2x under 3x, at 44% more CPU).
const loadSoftLimitHalves = 7

// softMemoryLimit lowers the Go runtime's soft memory limit to
// loadSoftLimitHalves/2 times the byte budget for the load (unless GOMEMLIMIT or
// the caller set a lower one) and returns the restore. A transaction's live
// memory is bounded by the budget; the limit makes the collector reclaim
// the garbage of earlier batches before the heap doubles (GOGC's default),
// which is what kept the peak above 4x at 1.2 M rows. It is soft: a load
// whose live memory passes it runs on, collecting more often.
func softMemoryLimit(budget int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" || budget <= 0 || budget > (1<<62)/loadSoftLimitHalves {
		return func() {}
	}
	old := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(old, loadSoftLimitHalves*budget/2))
	return func() { debug.SetMemoryLimit(old) }
}

// loadStoppedError is a load that stopped: the cause, and how many
// transactions were committed before it (visible on the branch).
type loadStoppedError struct {
	err       error
	committed int
}

func (e *loadStoppedError) Error() string {
	return fmt.Sprintf("%v (%d transaction(s) committed before it)", e.err, e.committed)
}

func (e *loadStoppedError) Unwrap() error { return e.err }

// Hint is the cause's hint; when transactions were committed and the
// cause is not about the rows (an I/O failure, contention), it adds that a
// re-run with --upsert finishes the load (it writes the committed rows
// again unchanged). A rejected row gets only its own hint: re-running
// with --upsert is not the fix for a bad row, and for an id that exists
// it would overwrite that row's named columns.
func (e *loadStoppedError) Hint() string {
	h := hintFor(e.err)
	if e.committed == 0 || errors.Is(e.err, data.ErrValidation) || errors.Is(e.err, errUnknownType) || errors.Is(e.err, errBadInput) {
		return h
	}
	more := fmt.Sprintf("%d transaction(s) are committed; once the cause is fixed, re-running with --upsert finishes the load idempotently", e.committed)
	if h == "" {
		return more
	}
	return h + "; " + more
}

// inputBytes is the size of the input files, when every one is JSON Lines
// or CSV (read twice: nodes, then edges); 0 (unknown) otherwise.
func inputBytes(files []string) int64 {
	var n int64
	for _, f := range files {
		kind, _ := sourceFormat(f)
		st, err := os.Stat(f)
		if kind == "parquet" || err != nil {
			return 0
		}
		n += st.Size()
	}
	return 2 * n
}

// loadGraph opens the graph, or with --schema creates it if ROOT holds
// none (and refuses a graph whose schema differs).
func (a *app) loadGraph(ctx context.Context, o *opts, spec, root string) (*data.Graph, error) {
	if o.schemaFile == "" {
		g, _, err := a.openGraph(ctx, spec, root, true)
		return g, err
	}
	text, err := os.ReadFile(o.schemaFile)
	if err != nil {
		return nil, err
	}
	s, err := schema.Decode(text)
	if err != nil {
		if s, err = schema.Parse(text); err != nil {
			return nil, fmt.Errorf("%s: %w", o.schemaFile, err)
		}
	}
	if dir, ok := strings.CutPrefix(spec, "fs:"); ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	st, err := a.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	opts := data.Options{Kernel: kernel.Options{Env: a.env}, Limits: a.limits}
	g, err := data.Init(ctx, st, root, s, opts)
	if !errors.Is(err, kernel.ErrGraphExists) {
		return g, err
	}
	if g, err = data.Open(ctx, st, root, opts); err != nil {
		return nil, fmt.Errorf("open graph %q: %w", root, err)
	}
	want, _ := s.Contract()
	have, err := g.Kernel().Schema(ctx)
	if err != nil {
		return nil, err
	}
	if string(want) != string(have) {
		return nil, fmt.Errorf("graph %q exists with another schema than %s (see `graphkernel schema`)", root, o.schemaFile)
	}
	return g, nil
}

// run stages node rows first (pass 1), then edge rows (pass 2), so edges
// find their endpoints whatever the file order; a transaction fills up
// across the passes (a small load is one transaction).
func (l *loader) run(ctx context.Context, files []string) error {
	contract, err := l.g.Kernel().Schema(ctx)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	s, err := schema.Decode(contract)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	l.types = typeInfos(s)
	err = l.each(ctx, true, func(ti typeInfo, r record) error { return l.stage(ctx, ti, r) })
	if err != nil {
		return err
	}
	return l.flush(ctx)
}

// each reads the files in load order (node rows, then edge rows) and
// calls fn for each row of the pass; with columnar, it stages the files
// the columnar path takes itself (load_columnar.go), in the same order.
func (l *loader) each(ctx context.Context, columnar bool, fn func(typeInfo, record) error) error {
	for _, edges := range []bool{false, true} {
		for _, f := range l.files {
			if typ, rowBytes, ok := csvStemTyped(f); ok {
				if ti, known := l.types[typ]; known && ti.edge != edges {
					l.meter.add(0, rowBytes) // every row is of the other pass: skip the file unparsed
					continue
				}
			}
			if p, ok := l.columnarPlan(ctx, f, edges, columnar); ok {
				if err := l.loadColumnar(ctx, p); err != nil {
					return err
				}
				continue
			}
			err := readSource(ctx, f, l.src, func(r record) error {
				l.meter.add(0, r.bytes)
				ti, ok := l.types[r.typ]
				if !ok {
					return fmt.Errorf("%s: rejected: type %q: %w", r.loc, r.typ, errUnknownType)
				}
				if ti.edge != edges {
					return nil
				}
				return fn(ti, r)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// errFound stops locate's read once it is past the transaction's rows.
var errFound = errors.New("found")

// locate returns the location of the row of type typ with id id among the
// current transaction's rows (the last one, if the id repeats), reading
// the input again up to the transaction's last row.
func (l *loader) locate(ctx context.Context, typ, id string) (string, bool) {
	saved := l.meter
	l.meter = nil // the re-read is not progress
	defer func() { l.meter = saved }()
	i, loc := 0, ""
	err := l.each(ctx, false, func(ti typeInfo, r record) error {
		if i++; i <= l.start {
			return nil
		}
		if i > l.start+l.staged {
			return errFound
		}
		if r.typ == typ {
			if v, ok := r.fields[colID]; ok {
				if k, err := keyOf(v); err == nil && k == id {
					loc = r.loc.String()
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return "", false
	}
	return loc, loc != ""
}

// stage adds one row to the current transaction, committing first when it
// is full.
func (l *loader) stage(ctx context.Context, ti typeInfo, r record) error {
	row, err := toRow(ti, r)
	if err != nil {
		return fmt.Errorf("%s: rejected: %w: %w", r.loc, errBadInput, err)
	}
	if l.staged >= l.batch {
		if err := l.flush(ctx); err != nil {
			return err
		}
	}
	err = l.add(ctx, r.typ, row)
	if errors.Is(err, data.ErrTooLarge) && l.staged > 0 {
		if err = l.flush(ctx); err == nil {
			err = l.add(ctx, r.typ, row)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: rejected: %w", r.loc, err)
	}
	if l.staged++; l.staged == 1 {
		l.first, l.start = r.loc, l.seen
	}
	l.seen++
	l.last = r.loc
	l.meter.add(1, 0)
	return nil
}

func (l *loader) add(ctx context.Context, typ string, row data.Row) error {
	if err := l.begin(ctx); err != nil {
		return err
	}
	switch {
	case l.upsert && l.replace:
		return l.tx.Upsert(typ, row)
	case l.upsert:
		return l.tx.Patch(ctx, typ, row)
	}
	return l.tx.Insert(typ, row)
}

// begin starts the current transaction if there is none.
func (l *loader) begin(ctx context.Context) error {
	if l.tx != nil {
		return nil
	}
	tx, err := l.g.Begin(ctx, l.b)
	if err != nil {
		return err
	}
	l.tx = tx
	return nil
}

// flush commits the current transaction. A rejection names the row's
// location when the error names its id.
func (l *loader) flush(ctx context.Context) error {
	if l.tx == nil || l.staged == 0 {
		return nil
	}
	tx := l.tx
	l.tx = nil
	c, err := tx.Commit(ctx, l.intent)
	if err != nil {
		var ve *data.ValidationError
		if errors.As(err, &ve) {
			if loc, ok := l.locate(ctx, ve.Table, ve.ID); ve.ID != "" && ok {
				return fmt.Errorf("%s: rejected: %w", loc, err)
			}
			return fmt.Errorf("transaction of rows %s .. %s rejected: %w", l.first, l.last, err)
		}
		return fmt.Errorf("commit of rows %s .. %s: %w", l.first, l.last, err)
	}
	l.rep.Transactions = append(l.rep.Transactions, committedTxn{Commit: c.ID.String(), Rows: l.staged, First: l.first.String(), Last: l.last.String()})
	l.rep.Rows += l.staged
	l.staged = 0
	l.meter.flush()
	return nil
}

func (l *loader) print(err error) {
	w := l.a.stdout
	for i, t := range l.rep.Transactions {
		fmt.Fprintf(w, "committed transaction %d: %s, %d rows (%s .. %s)\n", i+1, t.Commit, t.Rows, filepath.ToSlash(t.First), filepath.ToSlash(t.Last))
	}
	if err != nil {
		fmt.Fprintf(w, "load stopped: %d rows in %d committed transaction(s) are visible on %s; nothing after them was committed\n",
			l.rep.Rows, len(l.rep.Transactions), l.rep.Branch)
		return
	}
	fmt.Fprintf(w, "loaded %d rows into %s in %d transaction(s)\n", l.rep.Rows, l.rep.Branch, len(l.rep.Transactions))
}
