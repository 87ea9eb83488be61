package s3_test

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// TestConditionalPutLive pins the conditional write semantics on a real
// server: create-only, if-match with quoted and bare ETags, stale and
// missing if-match, and ETags that agree across Put, Get and Head.
func TestConditionalPutLive(t *testing.T) {
	s := s3test.Shared(t).NewS3Store(t)
	ctx := t.Context()
	e1, err := s.Put(ctx, "doc", []byte("v1"), objstore.CreateOnly)
	if err != nil {
		t.Fatalf("create-only on a new key: %v", err)
	}
	if !strings.HasPrefix(e1, `"`) || !strings.HasSuffix(e1, `"`) || len(e1) < 3 {
		t.Fatalf("Put ETag %q is not in quoted form", e1)
	}
	_, err = s.Put(ctx, "doc", []byte("other"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "doc", objstore.ErrPreconditionFailed, false)
	wantContent(t, s, "doc", "v1", e1)

	e2, err := s.Put(ctx, "doc", []byte("v2"), objstore.IfMatch(e1))
	if err != nil || e2 == e1 {
		t.Fatalf("if-match with the current ETag = %q, %v; want a new ETag", e2, err)
	}
	_, err = s.Put(ctx, "doc", []byte("v3"), objstore.IfMatch(e1))
	wantKind(t, err, objstore.OpPut, "doc", objstore.ErrPreconditionFailed, false)
	wantContent(t, s, "doc", "v2", e2)

	e3, err := s.Put(ctx, "doc", []byte("v3"), objstore.IfMatch(strings.Trim(e2, `"`)))
	if err != nil {
		t.Fatalf("if-match with a bare ETag: %v", err)
	}
	wantContent(t, s, "doc", "v3", e3)

	_, err = s.Put(ctx, "missing", []byte("x"), objstore.IfMatch(e3))
	wantKind(t, err, objstore.OpPut, "missing", objstore.ErrPreconditionFailed, false)
	wantMissing(t, s, "missing")

	// S3 ETags are content MD5s: identical bytes give the identical ETag.
	e4, err := s.Put(ctx, "doc", []byte("v3"), objstore.Unconditional)
	if err != nil || e4 != e3 {
		t.Errorf("rewrite of identical bytes = %q, %v; want the same ETag %q", e4, err, e3)
	}
	if err := s.Delete(ctx, "doc"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantMissing(t, s, "doc")
	if err := s.Delete(ctx, "doc"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
	if _, err := s.Put(ctx, "doc", []byte("again"), objstore.CreateOnly); err != nil {
		t.Errorf("create-only after delete: %v", err)
	}
}

func wantContent(t *testing.T, s objstore.Store, key, data, etag string) {
	t.Helper()
	obj, err := s.Get(t.Context(), key)
	if err != nil || string(obj.Data) != data || obj.ETag != etag {
		t.Errorf("Get(%q) = %q %q, %v; want %q %q", key, obj.Data, obj.ETag, err, data, etag)
	}
	attrs, err := s.Head(t.Context(), key)
	if err != nil || attrs.Size != int64(len(data)) || attrs.ETag != etag {
		t.Errorf("Head(%q) = %+v, %v; want size %d etag %q", key, attrs, err, len(data), etag)
	}
}

func wantMissing(t *testing.T, s objstore.Store, key string) {
	t.Helper()
	_, err := s.Get(t.Context(), key)
	wantKind(t, err, objstore.OpGet, key, objstore.ErrNotFound, false)
	_, err = s.Head(t.Context(), key)
	wantKind(t, err, objstore.OpHead, key, objstore.ErrNotFound, false)
}

// TestPrefixIsolationLive: two stores in one bucket under different
// prefixes see only their own keys, listed without the store prefix.
func TestPrefixIsolationLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	a := s3store.New(srv.Client(), bucket, "tenant/a")
	b := s3store.New(srv.Client(), bucket, "tenant/b/")
	root := s3store.New(srv.Client(), bucket, "")
	ctx := t.Context()
	for _, k := range []string{"x/1", "x/2", "y"} {
		if _, err := a.Put(ctx, k, []byte("a"+k), objstore.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Put(ctx, "x/1", []byte("b"), objstore.CreateOnly); err != nil {
		t.Fatalf("same key under another prefix: %v", err)
	}
	p, err := a.List(ctx, "", "", 0)
	if err != nil || strings.Join(p.Keys, ",") != "x/1,x/2,y" || p.Truncated {
		t.Errorf("a.List = %+v, %v; want [x/1 x/2 y]", p, err)
	}
	p, err = a.List(ctx, "x/", "x/1", 1)
	if err != nil || strings.Join(p.Keys, ",") != "x/2" {
		t.Errorf("a.List(x/, after x/1, 1) = %+v, %v; want [x/2]", p, err)
	}
	p, err = b.List(ctx, "", "", 0)
	if err != nil || strings.Join(p.Keys, ",") != "x/1" {
		t.Errorf("b.List = %+v, %v; want [x/1]", p, err)
	}
	p, err = root.List(ctx, "tenant/", "", 2)
	if err != nil || strings.Join(p.Keys, ",") != "tenant/a/x/1,tenant/a/x/2" || !p.Truncated {
		t.Errorf("root.List(tenant/, limit 2) = %+v, %v; want two keys, truncated", p, err)
	}
	wantContent(t, root, "tenant/b/x/1", "b", mustHead(t, b, "x/1"))
}

func mustHead(t *testing.T, s objstore.Store, key string) string {
	t.Helper()
	attrs, err := s.Head(t.Context(), key)
	if err != nil {
		t.Fatalf("Head(%q): %v", key, err)
	}
	return attrs.ETag
}

// lossyClient forwards requests to the real server but, for PUTs, drops
// the answer and reports a reset connection: a lost acknowledgement.
type lossyClient struct {
	inner awss3.HTTPClient
	puts  atomic.Int64
}

func (c *lossyClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.Do(req)
	if req.Method != http.MethodPut || err != nil {
		return resp, err
	}
	c.puts.Add(1)
	resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// TestLostAckLive: a create-only PUT that the server applied but whose
// answer was lost is reported as ambiguous after exactly one request, and
// reading back finds the write. Were the SDK allowed to resend it, the
// resend would meet the writer's own object and report a false 412.
func TestLostAckLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	lossy := &lossyClient{inner: awshttp.NewBuildableClient()}
	client := awss3.New(awss3.Options{
		Region:       s3test.Region,
		BaseEndpoint: aws.String(srv.Endpoint()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s3test.AccessKey, s3test.SecretKey, ""),
		HTTPClient:   lossy,
	})
	s := s3store.New(client, bucket, "p")
	_, err := s.Put(t.Context(), "k", []byte("mine"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrTransient, true)
	if n := lossy.puts.Load(); n != 1 {
		t.Errorf("%d PUT requests, want exactly 1", n)
	}
	readBack := s3store.New(srv.Client(), bucket, "p")
	obj, err := readBack.Get(t.Context(), "k")
	if err != nil || string(obj.Data) != "mine" {
		t.Fatalf("read back = %q, %v; want the ambiguous write to have been applied", obj.Data, err)
	}
	// What a resend would have seen:
	_, err = readBack.Put(t.Context(), "k", []byte("mine"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrPreconditionFailed, false)
}

// TestMissingBucketLive: a missing bucket never reads as an empty store.
// Head cannot tell (a HEAD 404 has no error code) and says not found, as
// the package documents.
func TestMissingBucketLive(t *testing.T) {
	s := s3store.New(s3test.Shared(t).Client(), "gk-no-such-bucket", "")
	ctx := t.Context()
	_, err := s.Get(ctx, "k")
	wantKind(t, err, objstore.OpGet, "k", objstore.ErrRejected, false)
	_, err = s.List(ctx, "", "", 0)
	wantKind(t, err, objstore.OpList, "", objstore.ErrRejected, false)
	_, err = s.Put(ctx, "k", []byte("x"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrRejected, false)
	err = s.Delete(ctx, "k")
	wantKind(t, err, objstore.OpDelete, "k", objstore.ErrRejected, false)
	_, err = s.Head(ctx, "k")
	wantKind(t, err, objstore.OpHead, "k", objstore.ErrNotFound, false)
}

// TestAccessDeniedLive: a real server's refusal of bad credentials (403)
// is ErrRejected on every operation, never retryable, and a refused write
// is unambiguous and left nothing behind.
func TestAccessDeniedLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	client := awss3.New(awss3.Options{
		Region:       s3test.Region,
		BaseEndpoint: aws.String(srv.Endpoint()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s3test.AccessKey, "not-the-secret", ""),
	})
	s := s3store.New(client, bucket, "p")
	ctx := t.Context()
	_, err := s.Put(ctx, "k", []byte("x"), objstore.CreateOnly)
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrRejected, false)
	if objstore.IsRetryable(err) {
		t.Errorf("refused put %v is retryable", err)
	}
	_, err = s.Get(ctx, "k")
	wantKind(t, err, objstore.OpGet, "k", objstore.ErrRejected, false)
	_, err = s.Head(ctx, "k")
	wantKind(t, err, objstore.OpHead, "k", objstore.ErrRejected, false)
	_, err = s.List(ctx, "", "", 0)
	wantKind(t, err, objstore.OpList, "", objstore.ErrRejected, false)
	err = s.Delete(ctx, "k")
	wantKind(t, err, objstore.OpDelete, "k", objstore.ErrRejected, false)
	if _, err := s3store.New(srv.Client(), bucket, "p").Get(ctx, "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("the refused put left something behind: %v", err)
	}
}

// isolateAWSEnv points the AWS configuration chain at nothing but the
// variables the test sets.
func isolateAWSEnv(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_PROFILE":                 "",
		"AWS_SESSION_TOKEN":           "",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
		"AWS_ACCESS_KEY_ID":           s3test.AccessKey,
		"AWS_SECRET_ACCESS_KEY":       s3test.SecretKey,
		"AWS_REGION":                  s3test.Region,
	} {
		t.Setenv(k, v)
	}
}

// TestOpenLive: Open takes the endpoint from AWS_ENDPOINT_URL_S3 or from
// Options.Endpoint, and credentials from the environment.
func TestOpenLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	isolateAWSEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint())
	fromEnv, err := s3store.Open(t.Context(), "s3://"+bucket+"/env", s3store.Options{PathStyle: true})
	if err != nil {
		t.Fatalf("Open from environment: %v", err)
	}
	etag, err := fromEnv.Put(t.Context(), "k", []byte("env"), objstore.CreateOnly)
	if err != nil {
		t.Fatalf("Put through Open: %v", err)
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	fromOpts, err := s3store.Open(t.Context(), "s3://"+bucket, s3store.Options{PathStyle: true, Endpoint: srv.Endpoint()})
	if err != nil {
		t.Fatalf("Open with Options.Endpoint: %v", err)
	}
	wantContent(t, fromOpts, "env/k", "env", etag)
	if _, err := s3store.Open(t.Context(), "s3://"+bucket+"//x", s3store.Options{}); !errors.Is(err, s3store.ErrBadURL) {
		t.Errorf("Open of a bad URL: %v, want ErrBadURL", err)
	}
}

// TestErrorsHideEndpoint: failures against an unreachable endpoint name no
// address, and a refused write is not ambiguous.
func TestErrorsHideEndpoint(t *testing.T) {
	isolateAWSEnv(t)
	port := closedPort(t)
	s, err := s3store.Open(t.Context(), "s3://bucket/p", s3store.Options{PathStyle: true, Endpoint: "http://127.0.0.1:" + port})
	if err != nil {
		t.Fatal(err)
	}
	_, getErr := s.Get(t.Context(), "k")
	wantKind(t, getErr, objstore.OpGet, "k", objstore.ErrTransient, false)
	_, putErr := s.Put(t.Context(), "k", []byte("x"), objstore.CreateOnly)
	wantKind(t, putErr, objstore.OpPut, "k", objstore.ErrTransient, false)
	for _, err := range []error{getErr, putErr} {
		if msg := err.Error(); strings.Contains(msg, port) || strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, s3test.SecretKey) {
			t.Errorf("error string leaks the endpoint: %s", msg)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%v: cause not reachable with errors.Is", err)
		}
	}
}

// TestLargeObjectLive: a multi-megabyte object round-trips intact.
func TestLargeObjectLive(t *testing.T) {
	s := s3test.Shared(t).NewS3Store(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	etag, err := s.Put(t.Context(), "big", data, objstore.CreateOnly)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Get(t.Context(), "big")
	if err != nil || !bytes.Equal(obj.Data, data) || obj.ETag != etag {
		t.Fatalf("Get(big) = %d bytes etag %q, %v; want %d bytes etag %q", len(obj.Data), obj.ETag, err, len(data), etag)
	}
}

// posixSafeOrderKeys exercise byte-wise order (case, digits, punctuation
// around '/', multi-byte UTF-8, URL-special characters) without a key that
// is a path prefix of another, which versitygw's posix backend cannot
// store.
var posixSafeOrderKeys = []string{
	"a/b/c/d", "a/b-c", "a/b0", "a/bc", "a/B", "a/a", "a/c", "A", "B/x", "Z", "a-b", "a.b", "a0", "a9",
	"aa", "ab", "b", "1", "10", "2", "é/x", "e", "f", "日本/語", "日本語", "😀", "\u00a0nbsp", "z~", "~tilde",
	".a", "..a", "a/.hidden", "a/..b", "a b", "a+b", "a%2Fb", "a&b=c", "a?b", "a#b", "a*b", "a'b", "a\\b",
}

// TestListOrderLive: on a real server, with and without a store prefix,
// walking List pages of every size yields exactly the keys with the list
// prefix, in byte-wise order.
func TestListOrderLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	for _, storePrefix := range []string{"", "p/q"} {
		s := s3store.New(srv.Client(), bucket, storePrefix)
		for _, k := range slices.Backward(posixSafeOrderKeys) { // an unsorted order
			if _, err := s.Put(t.Context(), k, []byte(k), objstore.Unconditional); err != nil {
				t.Fatalf("Put(%q): %v", k, err)
			}
		}
		for _, prefix := range []string{"", "a", "a/", "a/b", "日本", "a/b/c/d", "none"} {
			var want []string
			for _, k := range posixSafeOrderKeys {
				if strings.HasPrefix(k, prefix) {
					want = append(want, k)
				}
			}
			slices.Sort(want)
			for _, limit := range []int{1, 2, 3, 7, 0} {
				got := walk(t, s, prefix, limit, len(posixSafeOrderKeys)+2)
				if !slices.Equal(got, want) {
					t.Errorf("store prefix %q, List(%q) limit %d:\n got  %q\n want %q", storePrefix, prefix, limit, got, want)
				}
			}
		}
	}
}

// walk lists every page, bounded by maxPages.
func walk(t *testing.T, s objstore.Store, prefix string, limit, maxPages int) []string {
	t.Helper()
	var all []string
	after := ""
	for range maxPages {
		p, err := s.List(t.Context(), prefix, after, limit)
		if err != nil {
			t.Fatalf("List(%q, %q, %d): %v", prefix, after, limit, err)
		}
		all = append(all, p.Keys...)
		if !p.Truncated {
			return all
		}
		if len(p.Keys) == 0 {
			t.Fatalf("List(%q, %q, %d): empty truncated page", prefix, after, limit)
		}
		after = p.Keys[len(p.Keys)-1]
	}
	t.Fatalf("List(%q) limit %d did not finish in %d pages", prefix, limit, maxPages)
	return nil
}

// TestMaxKeyLengthLive: a 1024-byte key (segments the posix backend can
// hold) works without a store prefix; with a prefix the limit shrinks by
// the prefix length and a longer key fails before any I/O.
func TestMaxKeyLengthLive(t *testing.T) {
	srv := s3test.Shared(t)
	bucket := srv.NewBucket(t)
	key := func(n int) string {
		k := strings.Repeat(strings.Repeat("s", 99)+"/", 10)
		return k + strings.Repeat("e", n-len(k))
	}
	cases := []struct {
		prefix string
		n      int
		ok     bool
	}{
		{"", objstore.MaxKeyBytes, true},
		{"pp", objstore.MaxKeyBytes - 3, true},
		{"pp", objstore.MaxKeyBytes - 2, false},
	}
	for _, tc := range cases {
		s := s3store.New(srv.Client(), bucket, tc.prefix)
		k := key(tc.n)
		etag, err := s.Put(t.Context(), k, []byte("long"), objstore.CreateOnly)
		if !tc.ok {
			wantKind(t, err, objstore.OpPut, k, objstore.ErrInvalidKey, false)
			continue
		}
		if err != nil {
			t.Fatalf("prefix %q, %d-byte key: %v", tc.prefix, tc.n, err)
		}
		wantContent(t, s, k, "long", etag)
		if got := walk(t, s, k[:500], 0, 3); !slices.Equal(got, []string{k}) {
			t.Errorf("List of the long key = %q", got)
		}
	}
}
