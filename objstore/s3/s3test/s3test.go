// Package s3test runs a real S3 server for tests: versitygw (pinned in the
// separate tools module, see Version) with its posix backend, listening on
// 127.0.0.1 only.
//
// The first use on a machine builds versitygw from source into the user
// cache directory (about two minutes cold; see Binary). Each Server then
// starts in a fresh temporary directory on a free loopback port, with the
// fixed test credentials AccessKey/SecretKey, and is polled until it
// answers before it is handed out.
//
// versitygw's posix backend stores keys as files and directories, so on
// these servers a key and a key below it ("a" and "a/b") cannot coexist
// (409, ErrConflict) and no path segment may exceed 255 bytes (400,
// ErrRejected). Real S3 has neither limit; tests that need such keys
// cannot run here.
//
// No silent skips: if the server cannot be built or started, the calling
// test fails. Setting the environment variable GRAPHKERNEL_S3_OPTOUT=1
// (OptOutEnv) makes Start and Shared skip the test with a clear message
// instead, without building anything.
//
// Typical use:
//
//	srv := s3test.Shared(t)   // or s3test.Start(t) for a private server
//	store := srv.NewStore(t)  // fresh, empty bucket
//
// A package that uses Shared should call StopShared after m.Run in its
// TestMain; the server process is also killed by the kernel when the test
// process exits (Linux parent-death signal), so it never outlives the test.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
)

// OptOutEnv names the environment variable that, set to "1", skips every
// test needing the S3 server instead of failing it.
const OptOutEnv = "GRAPHKERNEL_S3_OPTOUT"

// Fixed root credentials and region of every test server. They grant
// access to a throwaway server on 127.0.0.1 and nothing else.
const (
	AccessKey = "graphkernel-test-access"
	SecretKey = "graphkernel-test-secret"
	Region    = "us-east-1"
)

const (
	startAttempts = 5               // ports tried when binding fails
	readyPolls    = 100             // readiness probes per start
	readyProbe    = 2 * time.Second // timeout of one probe
	readyMaxPause = 200 * time.Millisecond
	stopGrace     = 10 * time.Second // SIGTERM to SIGKILL
)

// Server is one running versitygw process.
type Server struct {
	endpoint string
	client   *awss3.Client
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // valid after exited is closed
	logs     *tail
	buckets  atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

// Start builds (if needed) and starts a private server for t and stops it
// when t's cleanup runs. It fails t if that is impossible, or skips t when
// GRAPHKERNEL_S3_OPTOUT=1.
func Start(t testing.TB) *Server {
	t.Helper()
	skipIfOptedOut(t)
	s, err := start(t.Logf)
	if err != nil {
		t.Fatalf("s3test: %v (set %s=1 to skip S3 tests)", err, OptOutEnv)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("s3test: stop: %v", err)
		}
	})
	return s
}

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Shared returns the process-wide server, starting it on first use. A
// failure to start is remembered and fails every later caller the same
// way. Stop it with StopShared (typically after m.Run in TestMain).
func Shared(t testing.TB) *Server {
	t.Helper()
	skipIfOptedOut(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = start(t.Logf)
	}
	if shared.err != nil {
		t.Fatalf("s3test: %v (set %s=1 to skip S3 tests)", shared.err, OptOutEnv)
	}
	return shared.srv
}

// StopShared stops the process-wide server if one was started and removes
// its data directory. Later calls to Shared start a new one.
func StopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	srv := shared.srv
	shared.srv, shared.err = nil, nil
	if srv == nil {
		return nil
	}
	return srv.Stop()
}

func skipIfOptedOut(t testing.TB) {
	t.Helper()
	if os.Getenv(OptOutEnv) == "1" {
		t.Skipf("S3 server tests skipped: %s=1 is set", OptOutEnv)
	}
}

// Endpoint returns the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return s.endpoint }

// Client returns an S3 client for the server (path-style, test
// credentials). It reads no AWS environment or config files, so it can
// only ever reach this server.
func (s *Server) Client() *awss3.Client { return s.client }

// NewBucket creates a bucket with a name unique on this server and returns
// the name. It fails t on error.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, err := s.CreateBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// NewS3Store returns an *s3.Store on a fresh bucket with no key prefix, so
// the store accepts every valid key up to objstore.MaxKeyBytes (a prefix
// would shorten that limit by its length). Tests of prefix handling build
// their own with s3.New(s.Client(), s.NewBucket(t), prefix).
func (s *Server) NewS3Store(t testing.TB) *s3store.Store {
	t.Helper()
	return s3store.New(s.client, s.NewBucket(t), "")
}

// NewStore returns an objstore.Store on a fresh bucket (see NewS3Store).
// Other packages' tests use it to run on S3.
func (s *Server) NewStore(t testing.TB) objstore.Store {
	t.Helper()
	return s.NewS3Store(t)
}

// Stop terminates the process (SIGTERM, then SIGKILL after a grace period)
// and removes its data directory. It is idempotent.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-s.exited:
	case <-grace.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove data directory: %w", err)
	}
	return nil
}

// exitNote describes the process state for error messages.
func (s *Server) exitNote() string {
	select {
	case <-s.exited:
		return fmt.Sprintf(" (versitygw exited: %v; output: %s)", s.waitErr, s.logs)
	default:
		return ""
	}
}

// StartServer builds (if needed) and starts a server outside a test, as
// Start does, logging the build's progress with logf. The caller must Stop
// it. It ignores the opt-out variable: a command asked for S3 explicitly.
// cmd/simrun uses it for -store s3test.
func StartServer(logf func(format string, args ...any)) (*Server, error) {
	return start(logf)
}

// CreateBucket creates a bucket with a name unique on this server and
// returns the name (NewBucket without a test).
func (s *Server) CreateBucket(ctx context.Context) (string, error) {
	name := fmt.Sprintf("gk-test-%06d", s.buckets.Add(1))
	if _, err := s.client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return "", fmt.Errorf("s3test: create bucket %s: %w%s", name, err, s.exitNote())
	}
	return name, nil
}

// start builds the binary and starts a server, retrying on a fresh port
// when the chosen one was taken meanwhile.
func start(logf func(format string, args ...any)) (*Server, error) {
	bin, err := binary(logf)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range startAttempts {
		s, err := launch(bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	return nil, lastErr
}

var errAddrInUse = errors.New("address already in use")

// launch starts one versitygw process and waits until it answers.
func launch(bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "graphkernel-versitygw-")
	if err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &Server{
		endpoint: "http://" + addr,
		dir:      dir,
		exited:   make(chan struct{}),
		logs:     newTail(32 << 10),
	}
	s.client = newClient(s.endpoint)
	// --keep-alive: versitygw closes every connection after one response
	// unless told otherwise (Connection: close), so every request would
	// dial a new TCP connection; S3 keeps them alive and the SDK reuses
	// them (TestServerKeepsConnectionsAlive).
	s.cmd = exec.Command(bin,
		"--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", addr, "--keep-alive", "--quiet", "posix", dir)
	s.cmd.Env = serverEnv()
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	// The child gets SIGKILL when the thread that started it dies; the
	// goroutine below keeps that thread alive until the child has exited.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.spawn(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	if err := s.waitReady(); err != nil {
		_ = s.Stop()
		if strings.Contains(s.logs.String(), "address already in use") {
			return nil, fmt.Errorf("versitygw on %s: %w", addr, errAddrInUse)
		}
		return nil, err
	}
	return s, nil
}

// spawn starts the process from a goroutine locked to its OS thread for
// the life of the child, so the parent-death signal fires only when the
// test process itself goes away.
func (s *Server) spawn() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	return <-started
}

// waitReady polls ListBuckets until the server answers, the process exits
// or the poll budget is spent.
func (s *Server) waitReady() error {
	pause := 10 * time.Millisecond
	var lastErr error
	for range readyPolls {
		ctx, cancel := context.WithTimeout(context.Background(), readyProbe)
		_, err := s.client.ListBuckets(ctx, &awss3.ListBucketsInput{})
		cancel()
		if err == nil {
			return nil
		}
		lastErr = err
		wait := time.NewTimer(pause)
		select {
		case <-s.exited:
			wait.Stop()
			return fmt.Errorf("versitygw exited before it was ready: %v; output: %s", s.waitErr, s.logs)
		case <-wait.C:
		}
		pause = min(2*pause, readyMaxPause)
	}
	return fmt.Errorf("versitygw not ready after %d probes: %v; output: %s", readyPolls, lastErr, s.logs)
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before versitygw binds it; start retries in that case.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverEnv is the child's environment: the parent's, minus every variable
// versitygw would read as configuration (VGW_*, ROOT_*, LOGFILE, WEBHOOK),
// so that only the command line configures it.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "VGW_"), strings.HasPrefix(name, "ROOT_"),
			name == "LOGFILE", name == "WEBHOOK":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// newClient builds an S3 client for endpoint from explicit options only.
func newClient(endpoint string) *awss3.Client {
	return awss3.New(awss3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
}
