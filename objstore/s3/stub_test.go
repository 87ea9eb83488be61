package s3_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
)

// stubClient is an HTTP client that records every request and answers
// with respond. It never touches the network.
type stubClient struct {
	mu      sync.Mutex
	calls   []string // "METHOD /path"
	respond func(req *http.Request) (*http.Response, error)
}

func (c *stubClient) Do(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.calls = append(c.calls, req.Method+" "+req.URL.Path)
	c.mu.Unlock()
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return c.respond(req)
}

func (c *stubClient) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func xmlResponse(req *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode:    status,
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		Header:        http.Header{"Content-Type": {"application/xml"}, "X-Amz-Request-Id": {"STUB"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

func s3ErrorBody(code string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>stub</Message><RequestId>STUB</RequestId></Error>`
}

// stubStore returns a Store whose client talks only to hc, with fast read
// retries (the SDK's standard retryer, 3 attempts, tiny backoff).
func stubStore(hc awss3.HTTPClient) *s3store.Store {
	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://127.0.0.1:9"),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("AK", "SK", ""),
		HTTPClient:   hc,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxBackoff = time.Millisecond
		}),
	})
	return s3store.New(client, "bucket", "pre")
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return port
}

// TestInvalidKeysBeforeIO: invalid keys and prefixes are rejected with
// ErrInvalidKey without a single HTTP request, even when the endpoint is a
// closed port.
func TestInvalidKeysBeforeIO(t *testing.T) {
	var dialer net.Dialer
	real := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		req.URL.Host = "127.0.0.1:" + closedPort(t)
		return real.Do(req)
	}}
	s := stubStore(hc)
	ctx := t.Context()
	long := strings.Repeat("k", objstore.MaxKeyBytes-len("pre/")+1) // valid alone, too long with the prefix
	for _, key := range []string{"", "/a", "a//b", "a/", "a/./b", "..", "a\x00b", "a\nb", "\xff", strings.Repeat("k", 1025), long} {
		calls := []struct {
			op  objstore.Op
			err error
		}{
			{objstore.OpGet, second(s.Get(ctx, key))},
			{objstore.OpHead, second(s.Head(ctx, key))},
			{objstore.OpPut, second(s.Put(ctx, key, []byte("x"), objstore.Unconditional))},
			{objstore.OpPut, second(s.Put(ctx, key, []byte("x"), objstore.CreateOnly))},
			{objstore.OpPut, second(s.Put(ctx, key, []byte("x"), objstore.IfMatch(`"e"`)))},
			{objstore.OpDelete, s.Delete(ctx, key)},
		}
		for _, c := range calls {
			wantKind(t, c.err, c.op, key, objstore.ErrInvalidKey, false)
		}
	}
	for _, prefix := range []string{"/a", "a//", "\xff", "a/../"} {
		_, err := s.List(ctx, prefix, "", 0)
		wantKind(t, err, objstore.OpList, prefix, objstore.ErrInvalidKey, false)
	}
	if n := hc.count(); n != 0 {
		t.Fatalf("%d HTTP requests were made for invalid keys: %v", n, hc.calls)
	}
	// The same client does reach the (closed) port for a valid key, so the
	// zero above is not an artefact of the stub.
	if _, err := s.Get(ctx, "valid"); !errors.Is(err, objstore.ErrTransient) || hc.count() == 0 {
		t.Fatalf("Get(valid) = %v after %d requests; want a transient error after at least one request", err, hc.count())
	}
}

func second[T any](_ T, err error) error { return err }

// wantKind checks err's kind, op, key and ambiguity.
func wantKind(t *testing.T, err error, op objstore.Op, key string, kind error, ambiguous bool) {
	t.Helper()
	var oe *objstore.Error
	if !errors.As(err, &oe) {
		t.Errorf("%s %q: got %v (%T), want an *objstore.Error of kind %v", op, key, err, err, kind)
		return
	}
	if oe.Op != op || oe.Key != key || oe.Kind != kind || oe.Ambiguous != ambiguous {
		t.Errorf("%s %q: got op %q key %q kind %v ambiguous %v (%v); want kind %v ambiguous %v",
			op, key, oe.Op, oe.Key, oe.Kind, oe.Ambiguous, err, kind, ambiguous)
	}
}

// TestWritesAreSentOnce: a 500 on Put or Delete is returned after exactly
// one request and marked ambiguous, while reads are retried by the SDK.
// Without the NopRetryer on writes, Put and Delete would make 3 requests.
func TestWritesAreSentOnce(t *testing.T) {
	ops := []struct {
		name      string
		op        objstore.Op
		call      func(s *s3store.Store) error
		attempts  int
		ambiguous bool
	}{
		{"Put", objstore.OpPut, func(s *s3store.Store) error {
			return second(s.Put(t.Context(), "k", []byte("x"), objstore.Unconditional))
		}, 1, true},
		{"PutCreateOnly", objstore.OpPut, func(s *s3store.Store) error {
			return second(s.Put(t.Context(), "k", []byte("x"), objstore.CreateOnly))
		}, 1, true},
		{"PutIfMatch", objstore.OpPut, func(s *s3store.Store) error {
			return second(s.Put(t.Context(), "k", []byte("x"), objstore.IfMatch(`"e"`)))
		}, 1, true},
		{"Delete", objstore.OpDelete, func(s *s3store.Store) error { return s.Delete(t.Context(), "k") }, 1, true},
		{"Get", objstore.OpGet, func(s *s3store.Store) error { return second(s.Get(t.Context(), "k")) }, 3, false},
		{"Head", objstore.OpHead, func(s *s3store.Store) error { return second(s.Head(t.Context(), "k")) }, 3, false},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
				return xmlResponse(req, 500, s3ErrorBody("InternalError")), nil
			}}
			err := tc.call(stubStore(hc))
			wantKind(t, err, tc.op, "k", objstore.ErrTransient, tc.ambiguous)
			if n := hc.count(); n != tc.attempts {
				t.Errorf("%d requests, want %d: %v", n, tc.attempts, hc.calls)
			}
		})
	}
}

// TestCancelledPutIsAmbiguous: a context cancelled while the PUT is in
// flight leaves the outcome unknown; a context already done sends nothing
// and is not ambiguous.
func TestCancelledPutIsAmbiguous(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		cancel() // the request has reached the "server"
		<-req.Context().Done()
		return nil, req.Context().Err()
	}}
	s := stubStore(hc)
	_, err := s.Put(ctx, "k", []byte("x"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrTransient, true)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v does not match context.Canceled", err)
	}
	err = s.Delete(ctx, "k")
	wantKind(t, err, objstore.OpDelete, "k", objstore.ErrTransient, false)
	if n := hc.count(); n != 1 {
		t.Errorf("%d requests, want 1 (none for the already-cancelled Delete)", n)
	}
}

// TestResetPutIsAmbiguous: a connection reset after the PUT was written is
// ambiguous; a refused connection is not.
func TestResetPutIsAmbiguous(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		ambiguous bool
	}{
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := &stubClient{respond: func(*http.Request) (*http.Response, error) { return nil, tc.err }}
			_, err := stubStore(hc).Put(t.Context(), "k", []byte("x"), objstore.IfMatch(`"e"`))
			wantKind(t, err, objstore.OpPut, "k", objstore.ErrTransient, tc.ambiguous)
		})
	}
}

// TestDeleteMissingIsNil: a 404 on DELETE is success; a 404 NoSuchBucket
// is not.
func TestDeleteMissingIsNil(t *testing.T) {
	code := "NoSuchKey"
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		return xmlResponse(req, 404, s3ErrorBody(code)), nil
	}}
	s := stubStore(hc)
	if err := s.Delete(t.Context(), "k"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
	code = "NoSuchBucket"
	wantKind(t, s.Delete(t.Context(), "k"), objstore.OpDelete, "k", objstore.ErrRejected, false)
}

// TestIfMatchSendsQuotedETag: IfMatch accepts quoted and bare ETags and
// always sends the quoted form; an empty ETag fails without I/O.
func TestIfMatchSendsQuotedETag(t *testing.T) {
	var sent []string
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		sent = append(sent, req.Header.Get("If-Match"))
		resp := xmlResponse(req, 200, "")
		resp.Header.Set("ETag", `"new"`)
		return resp, nil
	}}
	s := stubStore(hc)
	for _, etag := range []string{`"abc"`, `abc`} {
		got, err := s.Put(t.Context(), "k", []byte("x"), objstore.IfMatch(etag))
		if err != nil || got != `"new"` {
			t.Errorf("Put(IfMatch(%s)) = %q, %v; want \"new\", nil", etag, got, err)
		}
	}
	if want := []string{`"abc"`, `"abc"`}; strings.Join(sent, ",") != strings.Join(want, ",") {
		t.Errorf("If-Match headers sent: %q, want %q", sent, want)
	}
	_, err := s.Put(t.Context(), "k", []byte("x"), objstore.IfMatch(""))
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrPreconditionFailed, false)
	if n := hc.count(); n != 2 {
		t.Errorf("%d requests, want 2 (none for the empty ETag)", n)
	}
}

// TestListChecksServerPage: keys out of order, outside the prefix or not
// after startAfter are refused rather than passed on; a good page has the
// store prefix stripped.
func TestListChecksServerPage(t *testing.T) {
	page := func(keys ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><IsTruncated>true</IsTruncated>`)
		for _, k := range keys {
			b.WriteString("<Contents><Key>" + k + "</Key><ETag>&quot;e&quot;</ETag><Size>1</Size></Contents>")
		}
		b.WriteString("</ListBucketResult>")
		return b.String()
	}
	cases := []struct {
		name  string
		body  string
		after string
		ok    bool
	}{
		{"good", page("pre/a/1", "pre/a/2"), "", true},
		{"out of order", page("pre/a/2", "pre/a/1"), "", false},
		{"duplicate", page("pre/a/1", "pre/a/1"), "", false},
		{"outside store prefix", page("other/a/1"), "", false},
		{"outside list prefix", page("pre/b"), "", false},
		{"not after startAfter", page("pre/a/1"), "a/1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
				return xmlResponse(req, 200, tc.body), nil
			}}
			p, err := stubStore(hc).List(t.Context(), "a/", tc.after, 10)
			if tc.ok {
				if err != nil || strings.Join(p.Keys, ",") != "a/1,a/2" || !p.Truncated {
					t.Errorf("List = %+v, %v; want [a/1 a/2] truncated", p, err)
				}
				return
			}
			wantKind(t, err, objstore.OpList, "a/", objstore.ErrTransient, false)
		})
	}
}

// TestDeleteManyMapsEachKey: one DeleteObjects request; a key the answer
// lists with NoSuchKey is no error, one with InternalError is ambiguous
// and retryable, AccessDenied is rejected, an unlisted key is deleted; a
// service answering DeleteObjects NotImplemented gets one DeleteObject a
// key instead.
func TestDeleteManyMapsEachKey(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?><DeleteResult>` +
		`<Error><Key>pre/b</Key><Code>NoSuchKey</Code><Message>x</Message></Error>` +
		`<Error><Key>pre/c</Key><Code>InternalError</Code><Message>x</Message></Error>` +
		`<Error><Key>pre/d</Key><Code>AccessDenied</Code><Message>x</Message></Error>` +
		`</DeleteResult>`
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		return xmlResponse(req, 200, body), nil
	}}
	errs := stubStore(hc).DeleteMany(t.Context(), []string{"a", "b", "c", "d"})
	if hc.count() != 1 {
		t.Fatalf("%d requests, want one DeleteObjects", hc.count())
	}
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("deleted and missing keys: %v, %v; want nil", errs[0], errs[1])
	}
	wantKind(t, errs[2], objstore.OpDelete, "c", objstore.ErrTransient, true)
	wantKind(t, errs[3], objstore.OpDelete, "d", objstore.ErrRejected, false)

	hc = &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPost {
			return xmlResponse(req, 501, s3ErrorBody("NotImplemented")), nil
		}
		return xmlResponse(req, 204, ""), nil
	}}
	for i, err := range stubStore(hc).DeleteMany(t.Context(), []string{"a", "b"}) {
		if err != nil {
			t.Errorf("key %d after the fallback: %v", i, err)
		}
	}
	if hc.count() != 3 {
		t.Errorf("%d requests, want DeleteObjects then one DeleteObject a key (3)", hc.count())
	}
}
