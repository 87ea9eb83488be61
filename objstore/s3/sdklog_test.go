package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore/s3"
)

// TestSDKWarningsStayOffStderr: with no credentials configured, the SDK's
// credential chain asks the EC2 metadata service; when that refuses a
// token (403, as a non-EC2 host's link-local responder may) the SDK warns
// "falling back to IMDSv1" through its logger. Open routes that logger to
// Options.SDKLog, and with none set the process's stderr stays empty.
// Red without the WithLogger option: the warning is on stderr.
func TestSDKWarningsStayOffStderr(t *testing.T) {
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			http.Error(w, "no tokens here", http.StatusForbidden)
			return
		}
		http.NotFound(w, r)
	}))
	defer imds.Close()
	s3srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	defer s3srv.Close()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	t.Setenv("AWS_ENDPOINT_URL", s3srv.URL)

	use := func(sdkLog io.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		st, err := s3.Open(ctx, "s3://bucket/p", s3.Options{PathStyle: true, SDKLog: sdkLog, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(ctx, "k"); err == nil {
			t.Fatal("a Get without credentials succeeded")
		}
	}
	var logged bytes.Buffer
	use(&logged)
	if !strings.Contains(logged.String(), "falling back to IMDSv1") {
		t.Fatalf("the SDK's warning did not reach Options.SDKLog (the test no longer provokes it?): %q", logged.String())
	}

	stderr := captureStderr(t, func() { use(nil) })
	if strings.Contains(stderr, "IMDS") || strings.Contains(stderr, "WARN") {
		t.Fatalf("the SDK wrote to stderr: %q", stderr)
	}
}

// captureStderr runs fn with os.Stderr redirected to a pipe and returns
// what was written.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stderr = old }()
	fn()
	os.Stderr = old
	w.Close()
	return <-done
}
