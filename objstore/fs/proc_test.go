package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// Child processes re-exec this test binary with -test.run=^TestHelperProcess$
// and the role in helperEnv. At a rendezvous a child prints a line and
// blocks until it reads one byte from stdin: racers wait there for the
// parent's go signal; crash victims wait there until they are killed.
const (
	helperEnv = "GK_FS_HELPER_ROLE"
	envRoot   = "GK_FS_ROOT"
	envID     = "GK_FS_ID"
	envReport = "GK_FS_REPORT"
	envN      = "GK_FS_N"
	envKey    = "GK_FS_KEY"
	envETag   = "GK_FS_ETAG"
	envPoint  = "GK_FS_POINT"
	// envLockstep makes create-race children stop after writing each temp
	// file until the parent has seen every child there, so all of them
	// link the same key at the same moment.
	envLockstep = "GK_FS_LOCKSTEP"
)

// TestHelperProcess is not a test: it is the body of a child process.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		return
	}
	if err := runHelper(role); err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runHelper(role string) error {
	s, err := Open(os.Getenv(envRoot))
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch role {
	case "create-race":
		return helperCreateRace(ctx, s)
	case "cas-counter":
		return helperCASCounter(ctx, s)
	case "die-at":
		// Put envKey (create-only, or if-match envETag), stop at the crash
		// point envPoint, and wait there to be killed.
		point := os.Getenv(envPoint)
		s.hook = func(p string) {
			if p == point {
				rendezvous("READY")
				os.Exit(3) // released instead of killed: not a crash
			}
		}
		cond := objstore.CreateOnly
		if e := os.Getenv(envETag); e != "" {
			cond = objstore.IfMatch(e)
		}
		_, err := s.Put(ctx, os.Getenv(envKey), []byte("from the victim"), cond)
		return fmt.Errorf("put returned without reaching %s: %v", point, err)
	}
	return fmt.Errorf("unknown role %q", role)
}

// rendezvous prints line for the parent and blocks until the parent writes
// a byte to stdin (or closes it).
func rendezvous(line string) {
	fmt.Println(line)
	var b [1]byte
	os.Stdin.Read(b[:])
}

func helperCreateRace(ctx context.Context, s *Store) error {
	n, _ := strconv.Atoi(os.Getenv(envN))
	id := os.Getenv(envID)
	if os.Getenv(envLockstep) != "" {
		s.hook = func(p string) {
			if p == pointTempWritten {
				rendezvous("AT")
			}
		}
	}
	rendezvous("READY")
	var report strings.Builder
	for i := 0; i < n; i++ {
		key := raceKey(i)
		etag, err := s.Put(ctx, key, []byte(raceData(id, i)), objstore.CreateOnly)
		switch {
		case err == nil:
			fmt.Fprintf(&report, "%s %s\n", key, etag)
		case errors.Is(err, objstore.ErrPreconditionFailed):
		default:
			return err
		}
	}
	return os.WriteFile(os.Getenv(envReport), []byte(report.String()), 0o644)
}

func helperCASCounter(ctx context.Context, s *Store) error {
	n, _ := strconv.Atoi(os.Getenv(envN))
	rendezvous("READY")
	var report strings.Builder
	for i := 0; i < n; i++ {
		v, err := increment(ctx, s, "counter")
		if err != nil {
			return err
		}
		fmt.Fprintf(&report, "%d\n", v)
	}
	return os.WriteFile(os.Getenv(envReport), []byte(report.String()), 0o644)
}

func raceKey(i int) string             { return fmt.Sprintf("race/k%03d", i) }
func raceData(id string, i int) string { return fmt.Sprintf("proc %s key %03d", id, i) }

// child is a running helper process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

func startChild(t *testing.T, role string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return c
}

// waitReady blocks until the child printed READY.
func (c *child) waitReady(t *testing.T) { c.waitLine(t, "READY") }

// waitLine blocks until the child printed want on a line of its own.
func (c *child) waitLine(t *testing.T, want string) {
	t.Helper()
	for {
		line, err := c.stdout.ReadString('\n')
		if strings.TrimSpace(line) == want {
			return
		}
		if err != nil {
			c.cmd.Wait()
			t.Fatalf("child exited before printing %s: %v\nstderr: %s", want, err, c.stderr)
		}
	}
}

// release lets a child past its current rendezvous.
func (c *child) release(t *testing.T) {
	t.Helper()
	if _, err := c.stdin.Write([]byte{'G'}); err != nil {
		t.Fatalf("release child: %v\nstderr: %s", err, c.stderr)
	}
}

// finish drains the child's output and requires a clean exit.
func (c *child) finish(t *testing.T) {
	t.Helper()
	io.Copy(io.Discard, c.stdout)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child failed: %v\nstderr: %s", err, c.stderr)
	}
}

// kill SIGKILLs the child and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, c.stdout)
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("child was not killed by the signal: %v\nstderr: %s", err, c.stderr)
	}
}

// runRace starts procs children of role, waits until all are ready, and
// releases them together. With lockstep > 0 it then acts as a barrier
// lockstep times: it waits for every child to print AT and releases all.
// It waits for every child to finish and returns their reports.
func runRace(t *testing.T, root, role string, procs, n, lockstep int) []string {
	t.Helper()
	children := make([]*child, procs)
	reports := make([]string, procs)
	for p := range children {
		reports[p] = fmt.Sprintf("%s/report-%d", t.TempDir(), p)
		env := []string{envRoot + "=" + root, envID + "=" + strconv.Itoa(p),
			envReport + "=" + reports[p], envN + "=" + strconv.Itoa(n)}
		if lockstep > 0 {
			env = append(env, envLockstep+"=1")
		}
		children[p] = startChild(t, role, env...)
	}
	barrier(t, children, "READY")
	for i := 0; i < lockstep; i++ {
		barrier(t, children, "AT")
	}
	for _, c := range children {
		c.finish(t)
	}
	out := make([]string, procs)
	for p, path := range reports {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// barrier waits until every child printed line, then releases them all.
func barrier(t *testing.T, children []*child, line string) {
	t.Helper()
	for _, c := range children {
		c.waitLine(t, line)
	}
	for _, c := range children {
		c.release(t)
	}
}

// Create-only across OS processes: 4 processes race to create the same 200
// keys, free-running and in lockstep (every process holds a durable temp
// file for key i before any links it). Exactly one process wins each key,
// and the stored bytes and ETag are the winner's.
func TestCrossProcessCreateOnlyRace(t *testing.T) {
	const procs, keys = 4, 200
	for _, lockstep := range []int{0, keys} {
		t.Run(fmt.Sprintf("lockstep=%v", lockstep > 0), func(t *testing.T) {
			s := openT(t)
			checkCreateRace(t, s, runRace(t, s.Root(), "create-race", procs, keys, lockstep), keys)
		})
	}
}

func checkCreateRace(t *testing.T, s *Store, reports []string, keys int) {
	type win struct {
		proc int
		etag string
	}
	winners := map[string][]win{}
	for p, rep := range reports {
		for _, line := range strings.Fields(strings.ReplaceAll(rep, " ", "=")) {
			key, etag, _ := strings.Cut(line, "=")
			winners[key] = append(winners[key], win{p, etag})
		}
	}
	for i := 0; i < keys; i++ {
		key := raceKey(i)
		ws := winners[key]
		if len(ws) != 1 {
			t.Fatalf("%s: %d winners %v, want exactly 1", key, len(ws), ws)
		}
		obj := mustGet(t, s, key)
		if want := raceData(strconv.Itoa(ws[0].proc), i); string(obj.Data) != want || obj.ETag != ws[0].etag {
			t.Fatalf("%s = %q etag %s, want the winner's %q etag %s", key, obj.Data, obj.ETag, want, ws[0].etag)
		}
	}
	if len(winners) != keys {
		t.Fatalf("%d keys won, want %d", len(winners), keys)
	}
}

// Replace-if-match across OS processes: 8 processes x 100 CAS increments
// of one counter. The counter ends at exactly 800 and every value 1..800
// was written by exactly one successful CAS: no lost update, no double
// grant.
func TestCrossProcessCASCounter(t *testing.T) {
	const procs, each = 8, 100
	s := openT(t)
	mustPut(t, s, "counter", "0", objstore.CreateOnly)
	reports := runRace(t, s.Root(), "cas-counter", procs, each, 0)
	seen := make(map[int]int)
	for p, rep := range reports {
		for _, f := range strings.Fields(rep) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			if q, dup := seen[v]; dup {
				t.Fatalf("value %d written by both process %d and %d", v, q, p)
			}
			seen[v] = p
		}
	}
	for v := 1; v <= procs*each; v++ {
		if _, ok := seen[v]; !ok {
			t.Fatalf("no process wrote %d", v)
		}
	}
	if got := string(mustGet(t, s, "counter").Data); got != strconv.Itoa(procs*each) {
		t.Fatalf("counter = %s, want %d", got, procs*each)
	}
}
