package s3test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the versitygw release the tests run; tools/go.mod pins it.
const Version = "v1.8.0"

// BuildTimeout bounds one `go build` of versitygw (a cold build takes about
// two minutes on two cores).
const BuildTimeout = 10 * time.Minute

const (
	rootModule  = "module github.com/graphkernel/graphkernel"
	gatewayPkg  = "github.com/versity/versitygw/cmd/versitygw"
	maxRootWalk = 64   // directory levels searched for the repository root
	maxEINTR    = 1000 // interrupted flock calls retried
)

var (
	buildMu   sync.Mutex
	builtPath string // set once a binary is known to exist
)

// Binary returns the path of the versitygw binary, building it on first use
// into the user cache directory (<cache>/graphkernel/versitygw-<version>-<hash>,
// where the hash covers tools/go.mod, tools/go.sum and the Go version). The
// build runs `go build` in <repo>/tools, writes to a temporary name and
// renames it into place, all under a flock so that parallel test processes
// build it once. It logs progress with t.Log. It does not consult the
// opt-out variable; Start and Shared do.
func Binary(t testing.TB) (string, error) {
	t.Helper()
	return binary(t.Logf)
}

// binary is Binary logging with logf.
func binary(logf func(format string, args ...any)) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtPath != "" {
		return builtPath, nil
	}
	path, err := buildBinary(logf)
	if err != nil {
		return "", err
	}
	builtPath = path
	return path, nil
}

func buildBinary(logf func(format string, args ...any)) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	tools := filepath.Join(root, "tools")
	hash, err := toolsHash(tools)
	if err != nil {
		return "", err
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	final := filepath.Join(dir, fmt.Sprintf("versitygw-%s-%s", Version, hash))
	if isExecutable(final) {
		return final, nil
	}
	unlock, err := lockFile(filepath.Join(dir, "versitygw.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(final) { // built by another process while we waited
		return final, nil
	}
	tmp := final + ".tmp" // safe: only the lock holder writes it
	_ = os.Remove(tmp)
	logf("s3test: building versitygw %s (a cold build takes about two minutes)", Version)
	start := time.Now()
	if err := goBuild(tools, tmp); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("s3test: install versitygw binary: %w", err)
	}
	logf("s3test: built versitygw %s in %s", Version, time.Since(start).Round(time.Second))
	return final, nil
}

// goBuild builds the gateway from the tools module into out.
func goBuild(toolsDir, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("s3test: no go binary on PATH to build versitygw with: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, gatewayPkg)
	cmd.Dir = toolsDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	output := newTail(16 << 10)
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("s3test: go build versitygw timed out after %s: %s", BuildTimeout, output)
		}
		return fmt.Errorf("s3test: go build versitygw in %s: %w: %s", toolsDir, err, output)
	}
	return nil
}

// repoRoot walks up from the working directory to the directory whose
// go.mod declares the graphkernel root module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("s3test: find repository root: %w", err)
	}
	for range maxRootWalk {
		if isRootModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("s3test: no go.mod declaring " + rootModule + " above the working directory")
}

func isRootModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == rootModule {
			return true
		}
	}
	return false
}

// toolsHash identifies the build inputs: the tools module files and the Go
// version. It also checks that tools/go.mod pins Version.
func toolsHash(toolsDir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(toolsDir, name))
		if err != nil {
			return "", fmt.Errorf("s3test: read tools module: %w", err)
		}
		if name == "go.mod" && !bytes.Contains(b, []byte("github.com/versity/versitygw "+Version)) {
			return "", fmt.Errorf("s3test: %s does not pin versitygw %s", filepath.Join(toolsDir, name), Version)
		}
		h.Write(b)
	}
	h.Write([]byte(runtime.Version()))
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "graphkernel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("s3test: create cache directory: %w", err)
	}
	return dir, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// lockFile takes an exclusive flock on path, blocking while another process
// holds it (a holder is bounded by BuildTimeout, and the kernel releases
// the lock if it dies).
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("s3test: open build lock: %w", err)
	}
	for range maxEINTR {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("s3test: take build lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// tail keeps the last max bytes written to it; safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
