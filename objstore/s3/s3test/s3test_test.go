package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
)

// TestStartStop: a private server listens on 127.0.0.1 only, serves a
// store, and Stop ends the process and removes its data directory.
func TestStartStop(t *testing.T) {
	s := Start(t)
	u, err := url.Parse(s.Endpoint())
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" {
		t.Fatalf("endpoint %q is not http://127.0.0.1:PORT", s.Endpoint())
	}
	store := s.NewStore(t)
	if _, err := store.Put(t.Context(), "k", []byte("v"), objstore.CreateOnly); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if a, b := s.NewBucket(t), s.NewBucket(t); a == b {
		t.Errorf("NewBucket returned %q twice", a)
	}
	if _, err := os.Stat(s.dir); err != nil {
		t.Fatalf("data directory: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-s.exited:
	default:
		t.Fatal("process still running after Stop")
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data directory not removed: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestSharedIsShared: Shared hands out one server until StopShared.
func TestSharedIsShared(t *testing.T) {
	a, b := Shared(t), Shared(t)
	if a != b {
		t.Fatal("Shared returned two servers")
	}
	if err := StopShared(); err != nil {
		t.Fatal(err)
	}
	c := Shared(t)
	t.Cleanup(func() { _ = StopShared() })
	if c == a {
		t.Fatal("Shared returned a stopped server after StopShared")
	}
}

// TestOptOutSkips: with GRAPHKERNEL_S3_OPTOUT=1 the S3 tests are skipped
// explicitly, before anything is built. Run in a child process so that
// the skip can be observed.
func TestOptOutSkips(t *testing.T) {
	if os.Getenv("S3TEST_OPTOUT_CHILD") == "1" {
		Start(t)
		t.Fatal("Start returned despite the opt-out")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestOptOutSkips$", "-test.v")
	cmd.Env = append(os.Environ(), "S3TEST_OPTOUT_CHILD=1", OptOutEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- SKIP: TestOptOutSkips") || !strings.Contains(string(out), OptOutEnv+"=1 is set") {
		t.Fatalf("child run: %v\n%s", err, out)
	}
}

// TestRepoRoot finds the root module from this package's directory.
func TestRepoRoot(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "go.mod")); err != nil {
		t.Errorf("root %s has no tools module: %v", root, err)
	}
	if _, err := toolsHash(filepath.Join(root, "tools")); err != nil {
		t.Errorf("toolsHash: %v", err)
	}
}

func TestTailKeepsEnd(t *testing.T) {
	w := newTail(4)
	w.Write([]byte("ab"))
	w.Write([]byte("cdef"))
	if got := w.String(); got != "cdef" {
		t.Errorf("tail = %q, want %q", got, "cdef")
	}
}

// TestServerKeepsConnectionsAlive: the server keeps connections alive, as
// S3 does, so an SDK client sends request after request on one TCP
// connection. Red without --keep-alive (versitygw then answers
// "Connection: close" and every request dials: 20 here), which made every
// benchmark on this server pay a TCP dial per request.
func TestServerKeepsConnectionsAlive(t *testing.T) {
	s := Shared(t)
	var dials atomic.Int64
	client := awss3.New(s.Client().Options(), func(o *awss3.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			d := &net.Dialer{}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return d.DialContext(ctx, network, addr)
			}
		})
	})
	store := s3store.New(client, s.NewBucket(t), "")
	for i := range 20 {
		if _, err := store.Put(t.Context(), fmt.Sprintf("k/%02d", i), []byte("v"), objstore.CreateOnly); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("20 sequential Puts dialed %d connections, want 1 (kept alive)", n)
	}
}
