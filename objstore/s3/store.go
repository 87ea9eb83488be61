package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/graphkernel/graphkernel/objstore"
)

// DefaultTimeout bounds each Store operation when Options.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// MaxObjectBytes is the largest object Get reads: S3's limit for a single
// PUT, so every object Put can write is readable. A larger object is an
// ErrTransient error rather than an unbounded allocation.
const MaxObjectBytes = 5 << 30

// getPreallocBytes caps what Get allocates up front from a response's
// Content-Length; beyond it the buffer grows only as bytes arrive.
const getPreallocBytes = 1 << 20

// Options configures Open. Every field is optional; anything left empty
// comes from the standard AWS configuration chain (environment, shared
// config and credentials files, instance metadata).
type Options struct {
	// PathStyle addresses the bucket as https://host/bucket instead of
	// https://bucket.host; most S3-compatible servers need it.
	PathStyle bool
	// Endpoint overrides the S3 endpoint URL. Left empty, the SDK resolves
	// it, honouring AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL.
	Endpoint string
	// Region overrides the configured region. If neither sets one,
	// "us-east-1" is used (S3-compatible servers usually accept it).
	Region string
	// HTTPClient overrides the SDK's HTTP client.
	HTTPClient awss3.HTTPClient
	// Timeout bounds each Store operation (including the SDK's read
	// retries). Zero means DefaultTimeout; negative means no bound beyond
	// the caller's context.
	Timeout time.Duration
	// SDKLog receives the AWS SDK's log lines (warnings such as
	// "falling back to IMDSv1" when no credentials are configured off
	// EC2). Nil discards them: the SDK never writes to the process's
	// stderr; every failure surfaces as a returned (redacted) error.
	SDKLog io.Writer
}

// Store is an objstore.Store on one S3 bucket under a key prefix. It is safe
// for concurrent use. See the package documentation for its guarantees.
type Store struct {
	client  *awss3.Client
	bucket  string
	prefix  string
	timeout time.Duration
}

var _ objstore.Store = (*Store)(nil)

// Open returns a Store for url ("s3://bucket" or "s3://bucket/prefix").
// Configuration comes from opts and config.LoadDefaultConfig. Open performs
// no S3 request, so a missing bucket or bad credentials surface on first
// use. Errors never contain the endpoint or credentials.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	bucket, prefix, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	var loadOpts []func(*config.LoadOptions) error
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.HTTPClient != nil {
		loadOpts = append(loadOpts, config.WithHTTPClient(opts.HTTPClient))
	}
	loadOpts = append(loadOpts, config.WithLogger(sdkLogger(opts.SDKLog)))
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		// The loader's message may name profiles or files; keep it out.
		return nil, &redactedError{msg: "s3: load AWS configuration failed", err: err}
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		o.UsePathStyle = opts.PathStyle
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
	})
	s := New(client, bucket, prefix)
	switch {
	case opts.Timeout > 0:
		s.timeout = opts.Timeout
	case opts.Timeout < 0:
		s.timeout = 0
	}
	return s, nil
}

// sdkLogger sends the SDK's log lines to w, one per line ("aws-sdk WARN
// ..."), or discards them when w is nil (the SDK's default logger writes
// to os.Stderr).
func sdkLogger(w io.Writer) logging.Logger {
	if w == nil {
		return logging.Nop{}
	}
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		fmt.Fprintf(w, "aws-sdk %s "+format+"\n", append([]any{c}, v...)...)
	})
}

// New returns a Store on bucket under prefix using client as given (tests
// use it with a client aimed at a local server). The prefix is normalised
// to end with '/'; New panics on an invalid prefix, a programming error.
// Operations are bounded by DefaultTimeout.
func New(client *awss3.Client, bucket, prefix string) *Store {
	p, err := normalizePrefix(prefix)
	if err != nil {
		panic(fmt.Sprintf("s3.New: invalid prefix %q: %v", prefix, err))
	}
	if bucket == "" {
		panic("s3.New: empty bucket name")
	}
	return &Store{client: client, bucket: bucket, prefix: p, timeout: DefaultTimeout}
}

// Bucket returns the store's bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the store's key prefix ("" or ending with '/').
func (s *Store) Prefix() string { return s.prefix }

// noRetry sends a write exactly once; see the package documentation.
func noRetry(o *awss3.Options) { o.Retryer = aws.NopRetryer{} }

// begin validates key, applies the operation timeout and rejects a context
// that is already done (so nothing is sent and nothing is ambiguous).
func (s *Store) begin(ctx context.Context, op objstore.Op, key string) (context.Context, context.CancelFunc, error) {
	if err := objstore.ValidateKey(op, key); err != nil {
		return nil, nil, err
	}
	if len(s.prefix)+len(key) > objstore.MaxKeyBytes {
		return nil, nil, objstore.NewError(op, key, objstore.ErrInvalidKey,
			fmt.Errorf("longer than %d bytes with the store prefix", objstore.MaxKeyBytes))
	}
	return s.withTimeout(ctx, op, key)
}

func (s *Store) withTimeout(ctx context.Context, op objstore.Op, key string) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, objstore.NewError(op, key, objstore.ErrTransient, err)
	}
	if s.timeout <= 0 {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	return ctx, cancel, nil
}

// Get implements objstore.Store.
func (s *Store) Get(ctx context.Context, key string) (objstore.Object, error) {
	ctx, cancel, err := s.begin(ctx, objstore.OpGet, key)
	if err != nil {
		return objstore.Object{}, err
	}
	defer cancel()
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		return objstore.Object{}, mapError(objstore.OpGet, key, false, err)
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if size > MaxObjectBytes {
		return objstore.Object{}, objstore.NewError(objstore.OpGet, key, objstore.ErrTransient,
			fmt.Errorf("object of %d bytes exceeds the %d-byte limit", size, int64(MaxObjectBytes)))
	}
	// The buffer grows as bytes arrive; the announced length is only a
	// hint, capped so a lying or broken server cannot make Get allocate
	// more than it sends.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), getPreallocBytes)))
	n, err := buf.ReadFrom(io.LimitReader(out.Body, MaxObjectBytes+1))
	if err != nil {
		return objstore.Object{}, mapError(objstore.OpGet, key, false, err)
	}
	if n > MaxObjectBytes || (out.ContentLength != nil && n != size) {
		return objstore.Object{}, objstore.NewError(objstore.OpGet, key, objstore.ErrTransient,
			fmt.Errorf("read %d bytes, response announced %d", n, size))
	}
	etag, err := requireETag(objstore.OpGet, key, out.ETag)
	if err != nil {
		return objstore.Object{}, err
	}
	return objstore.Object{Data: buf.Bytes(), ETag: etag}, nil
}

// Head implements objstore.Store.
func (s *Store) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	ctx, cancel, err := s.begin(ctx, objstore.OpHead, key)
	if err != nil {
		return objstore.Attrs{}, err
	}
	defer cancel()
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	})
	if err != nil {
		return objstore.Attrs{}, mapError(objstore.OpHead, key, false, err)
	}
	etag, err := requireETag(objstore.OpHead, key, out.ETag)
	if err != nil {
		return objstore.Attrs{}, err
	}
	return objstore.Attrs{Size: aws.ToInt64(out.ContentLength), ETag: etag}, nil
}

// Put implements objstore.Store. The request is sent once (no SDK retries);
// a failure after it may have reached the server is ErrTransient with
// Ambiguous set. An IfMatch condition with an empty ETag can never hold and
// fails with ErrPreconditionFailed without I/O.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	switch cond.Kind {
	case objstore.CondNone:
	case objstore.CondCreateOnly:
		in.IfNoneMatch = aws.String("*")
	case objstore.CondIfMatch:
		in.IfMatch = aws.String(quoteETag(cond.ETag))
	default:
		// As on fs: a typed refusal before any I/O, never a panic.
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("unknown condition kind %d", cond.Kind))
	}
	ctx, cancel, err := s.begin(ctx, objstore.OpPut, key)
	if err != nil {
		return "", err
	}
	defer cancel()
	if cond.Kind == objstore.CondIfMatch && strings.Trim(cond.ETag, `"`) == "" {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrPreconditionFailed,
			fmt.Errorf("empty If-Match ETag matches no object"))
	}
	out, err := s.client.PutObject(ctx, in, noRetry)
	if err != nil {
		return "", mapError(objstore.OpPut, key, cond.Kind == objstore.CondIfMatch, err)
	}
	if aws.ToString(out.ETag) == "" {
		// The write was applied but we cannot name the version: read back.
		return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient,
			fmt.Errorf("server returned no ETag"))
	}
	return quoteETag(*out.ETag), nil
}

// Delete implements objstore.Store. It is unconditional, sent once, and a
// missing key is not an error; a failure after the request may have reached
// the server is ErrTransient with Ambiguous set.
func (s *Store) Delete(ctx context.Context, key string) error {
	ctx, cancel, err := s.begin(ctx, objstore.OpDelete, key)
	if err != nil {
		return err
	}
	defer cancel()
	_, err = s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.prefix + key),
	}, noRetry)
	if err == nil {
		return nil
	}
	mapped := mapError(objstore.OpDelete, key, false, err)
	if mapped.Kind == objstore.ErrNotFound {
		return nil
	}
	return mapped
}

// List implements objstore.Store with one ListObjectsV2 request.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) (objstore.ListPage, error) {
	if err := objstore.ValidatePrefix(objstore.OpList, prefix); err != nil {
		return objstore.ListPage{}, err
	}
	ctx, cancel, err := s.withTimeout(ctx, objstore.OpList, prefix)
	if err != nil {
		return objstore.ListPage{}, err
	}
	defer cancel()
	limit = objstore.ClampLimit(limit)
	in := &awss3.ListObjectsV2Input{
		Bucket:  aws.String(s.bucket),
		Prefix:  aws.String(s.prefix + prefix),
		MaxKeys: aws.Int32(int32(limit)),
	}
	if startAfter != "" {
		in.StartAfter = aws.String(s.prefix + startAfter)
	}
	out, err := s.client.ListObjectsV2(ctx, in)
	if err != nil {
		return objstore.ListPage{}, mapError(objstore.OpList, prefix, false, err)
	}
	raw := make([]string, 0, len(out.Contents))
	for _, obj := range out.Contents {
		raw = append(raw, aws.ToString(obj.Key))
	}
	if err := checkPage(raw, s.prefix+prefix, aws.ToString(in.StartAfter), limit); err != nil {
		return objstore.ListPage{}, objstore.NewError(objstore.OpList, prefix, objstore.ErrTransient, err)
	}
	keys := make([]string, len(raw))
	for i, k := range raw {
		keys[i] = k[len(s.prefix):]
	}
	return objstore.ListPage{Keys: keys, Truncated: aws.ToBool(out.IsTruncated)}, nil
}

// checkPage verifies a ListObjectsV2 answer before it is passed on: at most
// limit keys, each starting with prefix, strictly after startAfter and
// strictly increasing byte-wise.
func checkPage(raw []string, prefix, startAfter string, limit int) error {
	if len(raw) > limit {
		return fmt.Errorf("server returned %d keys for a limit of %d", len(raw), limit)
	}
	prev := startAfter
	for i, k := range raw {
		if !strings.HasPrefix(k, prefix) {
			return fmt.Errorf("server returned key %q outside prefix %q", k, prefix)
		}
		if (i > 0 || startAfter != "") && k <= prev {
			return fmt.Errorf("server returned key %q not after %q", k, prev)
		}
		prev = k
	}
	return nil
}

// quoteETag puts an ETag in S3's quoted form; an already quoted one is
// returned unchanged.
func quoteETag(etag string) string {
	if len(etag) >= 2 && strings.HasPrefix(etag, `"`) && strings.HasSuffix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}

// requireETag returns the quoted ETag of a read, or an ErrTransient error if
// the server sent none.
func requireETag(op objstore.Op, key string, etag *string) (string, error) {
	if aws.ToString(etag) == "" {
		return "", objstore.NewError(op, key, objstore.ErrTransient, fmt.Errorf("server returned no ETag"))
	}
	return quoteETag(*etag), nil
}
