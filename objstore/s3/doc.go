// Package s3 is the objstore backend for S3 and S3-compatible servers, built
// on aws-sdk-go-v2. A Store maps objstore keys onto one bucket under an
// optional key prefix ("s3://bucket/prefix/").
//
// # What this backend guarantees
//
//   - Keys and List prefixes are validated (objstore.ValidateKey,
//     objstore.ValidatePrefix) before any I/O; an invalid key never reaches
//     the network. S3 limits keys to 1024 bytes including the store
//     prefix, so a prefix of n bytes shortens the longest accepted key to
//     objstore.MaxKeyBytes-n; a longer key is ErrInvalidKey, also before
//     any I/O. A store opened without a prefix accepts every valid key.
//   - Put maps the three conditions onto S3 conditional writes: CondNone is a
//     plain PUT, CondCreateOnly sends If-None-Match: *, CondIfMatch sends
//     If-Match: <etag>. The server evaluates the condition; this package
//     never emulates it with a read-then-write, so a conditional Put is
//     exactly as atomic as the server's conditional PUT.
//   - ETags are returned in S3's quoted form (`"<hex md5>"`), the same from
//     Put, Get and Head. IfMatch accepts that form and also a bare unquoted
//     ETag (it is quoted before sending). On S3 an ETag is a content MD5, so
//     rewriting identical bytes yields the same ETag (no ABA protection, as
//     the objstore package documents).
//   - Every error is an *objstore.Error with Op and Key (the caller's key,
//     without the store prefix). 404 NoSuchKey/NotFound is ErrNotFound,
//     except on an If-Match PUT where it is ErrPreconditionFailed; 412 is
//     ErrPreconditionFailed; 409 is ErrConflict; 5xx (except 501),
//     throttling and timeouts (408, 429, and the codes RequestTimeout,
//     SlowDown, Throttling, ThrottlingException, TooManyRequests,
//     RequestLimitExceeded on any 4xx) and network failures are
//     ErrTransient. Every other 4xx (400, 403, 405, 411, 413, 416, ...) and
//     501 NotImplemented is ErrRejected, unambiguous: a permanent refusal,
//     decided before the write took effect; the cause keeps the S3 code. A
//     missing bucket (NoSuchBucket) is never reported as ErrNotFound: it is
//     ErrRejected, so it cannot be mistaken for an empty store (HEAD
//     responses carry no error code, so a Head on a missing bucket is
//     indistinguishable from a missing key).
//   - Put and Delete report Ambiguous (objstore.ErrAmbiguous) whenever the
//     request may have reached the server without its answer reaching us: a
//     timeout, a cancelled context, a reset connection, or any 5xx but 501. Only
//     failures before the request was sent (refused connection, failed dial
//     or DNS lookup, a context already done), definite 4xx answers and 501
//     are unambiguous. Reads are never ambiguous.
//   - Writes (Put, Delete) are sent exactly once: the SDK retryer is
//     replaced by aws.NopRetryer for them. The standard retryer would resend
//     a PUT whose acknowledgement was lost; the resend of a create-only or
//     If-Match PUT would then fail with 412 against the writer's own first
//     attempt, turning "applied" into a misleading, final "precondition
//     failed". Without SDK retries every lost acknowledgement surfaces as
//     ErrTransient+Ambiguous and the kernel resolves it by reading back.
//     Reads (Get, Head, List) keep the SDK's standard bounded retryer.
//   - List uses ListObjectsV2 with StartAfter and MaxKeys (clamped with
//     objstore.ClampLimit) and returns keys in byte-wise order, as S3 lists
//     in UTF-8 binary order. The store checks the answer: keys must carry the
//     requested prefix, sort strictly after startAfter and strictly
//     increase; a violating page is an ErrTransient error, never passed on.
//   - Delete is unconditional and deleting a missing key is not an error.
//   - The endpoint, region and credentials come from Options and the
//     standard AWS configuration chain (config.LoadDefaultConfig, which
//     honours AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_S3). They are never
//     logged and never appear in error strings: causes are rewritten to a
//     redacted message (operation, status, error code, network failure
//     class) while the original error stays reachable through errors.Is and
//     errors.As.
//   - The SDK's own log lines (e.g. "falling back to IMDSv1" when no
//     credentials are configured off EC2) go to Options.SDKLog, or nowhere:
//     never to the process's stderr.
//
// # Known versitygw behaviour
//
// The tests run against versitygw (see objstore/s3/s3test). With its posix
// backend, conditional PUTs are evaluated and published under a per-object
// lock and are atomic. Its conditional DELETE, however, is not atomic
// against a concurrent PUT, and it compares `If-Match: *` on DELETE
// literally against the ETag instead of treating it as "exists". Nothing in
// graphkernel depends on conditional deletes; Store.Delete is unconditional.
// The posix backend also stores keys as files and directories, so a key and
// a key below it ("a" and "a/b") cannot coexist there (the second write
// fails with 409, ErrConflict), and a path segment longer than 255 bytes is
// refused (400 KeyTooLongError, ErrRejected). Real S3 has neither
// restriction.
package s3
