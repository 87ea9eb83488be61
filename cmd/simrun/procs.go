package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// The process harness (-procs N with -store fs:DIR, s3://... or s3test):
// N real OS writer processes (this binary with -internal-writer) write one
// graph while the parent SIGKILLs a random one about once a second (seeded)
// and restarts it; at the end the parent stops them, runs a final recovery
// and checks the histories the processes recorded against the store.
const (
	killGapMin      = 500 * time.Millisecond // kill gaps are uniform in [min, min+span): mean 1 s
	killGapSpan     = time.Second
	stopBound       = 2 * time.Minute // a stopped writer must exit within this
	finalAttempts   = 20
	finalRetryPause = 500 * time.Millisecond
	defaultProcsDur = 30 * time.Second
	procsLinTimeout = 30 * time.Second // per partition: a long run's histories are long
)

// procStore is where the process harness runs: the parent's store and what
// a writer needs to open the same one.
type procStore struct {
	st      objstore.Store
	spec    string   // the writers' -store
	env     []string // extra environment of the writers
	cleanup func()
}

// openProcStore opens c.store for the harness. s3test builds and starts a
// local versitygw as the tests do (objstore/s3/s3test) on a fresh bucket.
func openProcStore(c *config, stderr io.Writer) (*procStore, error) {
	if c.store != "s3test" {
		st, err := openStore(c.store)
		if err != nil {
			return nil, err
		}
		return &procStore{st: st, spec: c.store, cleanup: func() {}}, nil
	}
	srv, err := s3test.StartServer(func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) })
	if err != nil {
		return nil, fmt.Errorf("-store s3test: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bucket, err := srv.CreateBucket(ctx)
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return &procStore{
		st:   s3store.New(srv.Client(), bucket, ""),
		spec: "s3://" + bucket,
		env: []string{"AWS_ENDPOINT_URL_S3=" + srv.Endpoint(), "AWS_ACCESS_KEY_ID=" + s3test.AccessKey,
			"AWS_SECRET_ACCESS_KEY=" + s3test.SecretKey, "AWS_REGION=" + s3test.Region,
			"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull},
		cleanup: func() { _ = srv.Stop() },
	}, nil
}

// child is one running writer process.
type child struct {
	id, seg int
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{} // closed when it has exited
	err     error         // its exit status, valid after done
	log     string
}

// procRun is one run of the process harness.
type procRun struct {
	c        *config
	ps       *procStore
	root     string
	dir      string // history files and writer logs
	exe      string
	children []*child
	kills    int
	restarts int
	exits    int // writers that exited on their own during the run
	vs       []check.Violation
	status   *status // a status line on stderr every -status-every
}

// runProcs runs the process harness and returns its summary.
func runProcs(c *config, stdout, stderr io.Writer) (*Summary, error) {
	start := time.Now()
	ps, err := openProcStore(c, stderr)
	if err != nil {
		return nil, err
	}
	defer ps.cleanup()
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-procs: %w", err)
	}
	dir := c.out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "simrun-procs-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	nonce := time.Now().UTC().Format("20060102T150405.000000000")
	r := &procRun{c: c, ps: ps, root: fmt.Sprintf("simrun/%s/procs/g", nonce), dir: dir, exe: exe}
	if err := r.initGraph(); err != nil {
		return nil, err
	}
	dur := c.duration
	if dur <= 0 {
		dur = defaultProcsDur
	}
	seed := c.seedBase
	if c.seedSet {
		seed = c.seed
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b696c6c)) // "kill"
	for id := 0; id < c.procs; id++ {
		ch, err := r.spawn(id, 0, seed)
		if err != nil {
			r.stopAll()
			return nil, err
		}
		r.children = append(r.children, ch)
	}
	r.status = newStatus(stderr, c.statusEvery)
	r.killLoop(rng, seed, start.Add(dur))
	r.stopAll()
	sum := r.check(c)
	sum.WallSeconds = time.Since(start).Seconds()
	if sum.Violations == 0 && c.out == "" {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(stderr, "simrun: process histories and writer logs kept in %s\n", dir)
	}
	return sum, nil
}

// initGraph creates the graph before any writer starts.
func (r *procRun) initGraph() error {
	var err error
	for a := 0; a < finalAttempts; a++ {
		switch r.workload() {
		case maintWorkload:
			err = initMaintGraph(context.Background(), r.ps.st, r.root, r.c.indexFanout)
		case schemaProcWorkload:
			err = initSchemaGraph(context.Background(), r.ps.st, r.root, r.c.indexFanout)
		default:
			_, err = kernel.Init(context.Background(), r.ps.st, r.root, workload.SchemaContract, kernel.Options{Env: kernel.SystemEnv()})
		}
		if err == nil || errors.Is(err, kernel.ErrGraphExists) {
			return nil
		}
		time.Sleep(finalRetryPause)
	}
	return fmt.Errorf("create the graph: %w", err)
}

// spawn starts writer id's segment seg.
func (r *procRun) spawn(id, seg int, seed uint64) (*child, error) {
	name := fmt.Sprintf("p%02d.s%04d", id, seg)
	ch := &child{id: id, seg: seg, done: make(chan struct{}), log: filepath.Join(r.dir, name+".log")}
	logf, err := os.Create(ch.log)
	if err != nil {
		return nil, err
	}
	args := []string{"-" + writerFlag, "-store", r.ps.spec, "-writer-root", r.root,
		"-writer-id", strconv.Itoa(id), "-writer-seg", strconv.Itoa(seg),
		"-writer-seed", strconv.FormatUint(seed, 10), "-writer-hist", filepath.Join(r.dir, name+".jsonl"),
		"-writer-faults=" + strconv.FormatBool(r.c.procFaults), "-writer-workload", r.workload(),
		"-index-fanout", strconv.Itoa(r.c.indexFanout)}
	if r.c.plant != "" {
		args = append(args, "-plant", r.c.plant) // the planted bug in every process, not only the checker
	}
	ch.cmd = exec.Command(r.exe, args...)
	ch.cmd.Env = append(os.Environ(), r.ps.env...)
	ch.cmd.Stdout, ch.cmd.Stderr = logf, logf
	ch.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if ch.stdin, err = ch.cmd.StdinPipe(); err != nil {
		logf.Close()
		return nil, err
	}
	if err := ch.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start writer %s: %w", name, err)
	}
	go func() {
		ch.err = ch.cmd.Wait()
		logf.Close()
		close(ch.done)
	}()
	return ch, nil
}

// killLoop SIGKILLs a random writer at random gaps (mean one second) and
// restarts it as a new process with the same id, until deadline.
func (r *procRun) killLoop(rng *rand.Rand, seed uint64, deadline time.Time) {
	for {
		gap := killGapMin + time.Duration(rng.Int64N(int64(killGapSpan)))
		if time.Until(deadline) < gap {
			time.Sleep(time.Until(deadline))
			return
		}
		time.Sleep(gap) // the kill schedule itself, in real time
		i := rng.IntN(len(r.children))
		ch := r.children[i]
		select {
		case <-ch.done:
			r.exited(ch) // it died on its own: a violation
		default:
			_ = ch.cmd.Process.Kill()
			<-ch.done
			r.kills++
		}
		next, err := r.spawn(ch.id, ch.seg+1, seed)
		if err != nil {
			r.vs = append(r.vs, check.Violation{Check: "process", Detail: err.Error()})
			return
		}
		r.children[i] = next
		r.restarts++
		left := time.Until(deadline).Round(time.Second)
		r.status.printf("%d writers, %d kills, %d restarts, %s left", len(r.children), r.kills, r.restarts, left)
	}
}

// exited records a writer that ended without being told to.
func (r *procRun) exited(ch *child) {
	r.exits++
	r.vs = append(r.vs, check.Violation{Check: "process", Detail: fmt.Sprintf(
		"writer p%d segment %d exited on its own (%v); log: %s", ch.id, ch.seg, ch.err, tailOf(ch.log))})
}

// stopAll closes every writer's stdin (a graceful stop) and waits for them.
func (r *procRun) stopAll() {
	for _, ch := range r.children {
		select {
		case <-ch.done:
			r.exited(ch)
			ch.stdin = nil
		default:
			_ = ch.stdin.Close()
		}
	}
	bound := time.NewTimer(stopBound)
	defer bound.Stop()
	for _, ch := range r.children {
		if ch.stdin == nil {
			continue
		}
		select {
		case <-ch.done:
			if ch.err != nil {
				r.vs = append(r.vs, check.Violation{Check: "process", Detail: fmt.Sprintf(
					"writer p%d segment %d stopped with %v; log: %s", ch.id, ch.seg, ch.err, tailOf(ch.log))})
			}
		case <-bound.C:
			_ = ch.cmd.Process.Kill()
			<-ch.done
			r.vs = append(r.vs, check.Violation{Check: "liveness", Detail: fmt.Sprintf(
				"writer p%d segment %d still running %v after it was told to stop", ch.id, ch.seg, stopBound)})
		}
	}
}

// tailOf returns the end of a writer's log, for violation details.
func tailOf(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// finalRecovery opens the graph with no writer running and resolves every
// sidecar, however young.
func (r *procRun) finalRecovery() (int, error) {
	ctx := context.Background()
	var last error
	for a := 0; a < finalAttempts; a++ {
		g, err := kernel.Open(ctx, r.ps.st, r.root, kernel.Options{Env: kernel.SystemEnv()})
		if err == nil {
			rep, err := g.Recover(ctx, kernel.RecoverOptions{IgnoreLease: true})
			if err == nil {
				return rep.Resolved, nil
			}
		}
		last = err
		time.Sleep(finalRetryPause)
	}
	return 0, fmt.Errorf("final recovery: %w", last)
}

// check runs the final recovery and every checker, and sums up.
func (r *procRun) check(c *config) *Summary {
	s := &Summary{Seeds: 1, FailingSeeds: []uint64{}, Parallel: c.procs, Workload: "procs", Faults: "none",
		Store: c.store, Procs: c.procs, Kills: r.kills, Crashes: r.kills, Restarts: r.restarts}
	if c.procFaults && faultsWired {
		s.Faults = "faulty"
	}
	vs := r.vs
	resolved, err := r.finalRecovery()
	if err != nil {
		vs = append(vs, check.Violation{Check: "recovery", Detail: err.Error()})
	}
	s.Resolved = resolved
	segs, err := readSegments(r.dir)
	if err != nil {
		vs = append(vs, check.Violation{Check: "history", Detail: err.Error()})
	}
	for _, sg := range segs {
		s.FaultCalls += sg.faults[0]
		s.FaultsInjected += uint64(sg.faults[1] + sg.faults[2] + sg.faults[3])
		s.FaultTransient += sg.faults[1]
		s.FaultLostAcks += sg.faults[2]
		s.FaultOutageReads += sg.faults[3]
		if sg.torn {
			s.TornRecords++
		}
		for _, rec := range sg.recs {
			switch rec.Kind {
			case recInvoke, recRead:
				s.Ops++
			case recOpen:
				if sg.name[len(sg.name)-len("s0000.jsonl"):] != "s0000.jsonl" {
					s.RecoveringOpens++
				}
			}
		}
	}
	if r.workload() == maintWorkload {
		s.Workload = maintWorkload
		vs = append(vs, r.checkMaint(segs, s)...)
		return r.finish(c, s, vs)
	}
	if r.workload() == schemaProcWorkload {
		s.Workload = schemaProcWorkload
		vs = append(vs, r.checkSchema(c, segs, s)...)
		return r.finish(c, s, vs)
	}
	h, hvs := buildHistory(segs)
	vs = append(vs, hvs...)
	vs = append(vs, r.storeChecks(c, h, s)...)
	lin := check.Linearizable(h, procsLinTimeout)
	for _, f := range lin.Failures {
		vs = append(vs, f.Violation())
	}
	_, acked, reads := h.Counts()
	s.Commits, s.Reads, s.LinChecks, s.LinUnknown = acked, reads, lin.Checks, lin.Unknown
	vs = append(vs, r.verify(noCollection, s)...)
	return r.finish(c, s, vs)
}

// finish counts the trees the final store holds (countTrees) and the
// violations into the summary (a store the count cannot walk is a
// violation).
func (r *procRun) finish(c *config, s *Summary, vs []check.Violation) *Summary {
	// The mix writers write table metadata through the kernel, no data
	// plane: their tables carry no index, so only the heads are walked
	// (a history walk would cost a GET per manifest for nothing).
	history := r.workload() != ""
	s.TreesOver = "live heads"
	if history {
		s.TreesOver, s.IndexFanout = "retained history", &c.indexFanout
	}
	if tc, err := r.countTrees(history); err != nil {
		vs = append(vs, check.Violation{Check: "trees", Detail: err.Error()})
	} else {
		s.PinnedTableVersions, s.TreeTableVersions = tc.versions, tc.treeVersions
		s.IndexRefChunks, s.FragmentRefChunks = tc.indexRefs, tc.fragRefs
		s.IndexTreeLevels, s.FragmentTreeLevels = tc.indexLevels, tc.fragLevels
		s.LiveHeads, s.HeadTableVersions, s.HeadTreeVersions = tc.heads, tc.headVersions, tc.headTrees
	}
	s.Violations = len(vs)
	if len(vs) > 0 {
		s.FailingSeeds = []uint64{c.seedBase}
		s.ViolationKinds = map[string]int{}
		s.FirstViolation = vs[0].String()
		for _, v := range vs {
			s.ViolationKinds[v.Check]++
		}
	}
	return s
}

// storeChecks runs the structural checkers on the final store, turning a
// store the inspector cannot read into a violation. It sets s.Recoveries to
// the operations recovery audited.
func (r *procRun) storeChecks(c *config, h *check.History, s *Summary) []check.Violation {
	_, vs := r.storeChecksGraph(c, h, s)
	return vs
}

// storeChecksGraph is storeChecks, returning the graph it loaded too.
func (r *procRun) storeChecksGraph(c *config, h *check.History, s *Summary) (g check.Graph, vs []check.Violation) {
	defer func() {
		if x := recover(); x != nil {
			vs = append(vs, check.Violation{Check: "inspect", Detail: fmt.Sprint(x)})
		}
	}()
	in := workload.StoreInspector(r.ps.st)
	var gvs []check.Violation
	g, gvs = check.LoadGraph(in, r.root)
	vs = append(vs, gvs...)
	vs = append(vs, check.CheckChains(g)...)
	vs = append(vs, check.CheckForks(g)...)
	vs = append(vs, check.CheckCommits(g, h)...)
	vs = append(vs, check.CheckTableHeads(in, g)...)
	audited := auditedOps(in, r.root)
	s.Recoveries = len(audited)
	if c.recovery {
		vs = append(vs, check.CheckNoSidecars(in, r.root)...)
		vs = append(vs, check.CheckAudits(in, r.root, audited)...)
	}
	return g, vs
}

// auditedOps lists the operation ids with a recovery audit record.
func auditedOps(in check.Inspector, root string) []string {
	prefix := format.NewKeys(root).AuditPrefix()
	var ops []string
	seen := map[string]bool{}
	for _, k := range in.Keys(prefix) {
		op := strings.SplitN(strings.TrimPrefix(k, prefix), "/", 2)[0]
		if !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	return ops
}
