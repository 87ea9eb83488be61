package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/graphkernel/graphkernel/objstore"
)

// mapError turns an SDK error from operation op on key into an
// *objstore.Error. ifMatch says the operation was a PUT carrying If-Match,
// where a 404 means the condition failed. The cause is wrapped in a redacted
// error: its message names the operation, status and error code but never
// the endpoint or credentials, while errors.Is/As still reach the original.
func mapError(op objstore.Op, key string, ifMatch bool, err error) *objstore.Error {
	kind, ambiguous := classify(op, ifMatch, err)
	cause := &redactedError{msg: redact(err), err: err}
	return &objstore.Error{Op: op, Key: key, Kind: kind, Ambiguous: ambiguous, Err: cause}
}

// classify decides the error kind and whether a write may have been applied.
func classify(op objstore.Op, ifMatch bool, err error) (kind error, ambiguous bool) {
	write := op == objstore.OpPut || op == objstore.OpDelete
	status, code := responseOf(err)
	switch {
	case code == "NoSuchBucket":
		// Never benign: a missing bucket must not look like an empty store.
		// Retrying will not create it: a permanent refusal.
		return objstore.ErrRejected, false
	case status == 404 || code == "NoSuchKey" || code == "NotFound":
		if op == objstore.OpPut && ifMatch {
			return objstore.ErrPreconditionFailed, false
		}
		return objstore.ErrNotFound, false
	case status == 412 || code == "PreconditionFailed":
		return objstore.ErrPreconditionFailed, false
	case status == 409 || code == "ConditionalRequestConflict":
		return objstore.ErrConflict, false
	case status == 501 || code == "NotImplemented":
		// The server does not implement what the request needs (e.g.
		// conditional writes): refused before anything was applied, and
		// it will refuse again.
		return objstore.ErrRejected, false
	case status >= 500:
		// Conservative: the server may have applied the write before failing.
		return objstore.ErrTransient, write
	case status >= 400 && throttledOrTimedOut(status, code):
		// A definite refusal that a later attempt can pass.
		return objstore.ErrTransient, false
	case status >= 400:
		// A definite, permanent refusal (400, 403, 405, 411, 413, 416, ...):
		// decided before the write took effect, and retrying will not help.
		return objstore.ErrRejected, false
	case status != 0:
		// A 1xx-3xx answer that still failed, e.g. an unreadable 200 body:
		// the write was applied or may have been.
		return objstore.ErrTransient, write
	case notSent(err):
		return objstore.ErrTransient, false
	default:
		// No answer after the request may have gone out: timeout,
		// cancellation, reset connection, truncated response.
		return objstore.ErrTransient, write
	}
}

// throttledOrTimedOut reports the 4xx answers that mean "not now" rather
// than "never": 408 and 429, and the S3 error codes for throttling and for
// a request the server gave up waiting for (S3 sends RequestTimeout as 400).
func throttledOrTimedOut(status int, code string) bool {
	switch code {
	case "RequestTimeout", "SlowDown", "Throttling", "ThrottlingException",
		"TooManyRequests", "RequestLimitExceeded":
		return true
	}
	return status == 408 || status == 429
}

// responseOf returns the HTTP status (0 if no response arrived) and the S3
// error code ("" if none) carried by err.
func responseOf(err error) (status int, code string) {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil && re.Response.Response != nil {
		status = re.Response.StatusCode
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	return status, code
}

// notSent reports failures that provably happened before any byte of the
// request reached the server: a refused connection, a failed dial, a failed
// DNS lookup.
func notSent(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// redactedError carries an SDK error under a message that is safe to log.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact describes err from safe parts only: SDK operation name, HTTP
// status, S3 error code and message, request id, and the class of a network
// failure. Addresses, URLs and host names are left out.
func redact(err error) string {
	var parts []string
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		parts = append(parts, "S3 "+oe.OperationName)
	}
	status, code := responseOf(err)
	if status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", status))
	}
	if code != "" {
		part := "code " + code
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorMessage() != "" {
			part += ": " + ae.ErrorMessage()
		}
		parts = append(parts, part)
	}
	var are *awshttp.ResponseError
	if errors.As(err, &are) && are.RequestID != "" {
		parts = append(parts, "request id "+are.RequestID)
	}
	if status == 0 && code == "" {
		parts = append(parts, failureClass(err))
	}
	return strings.Join(parts, ", ")
}

// failureClass names a transport-level failure without any address in it.
func failureClass(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "context deadline exceeded"
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed"
	case errors.As(err, &opErr):
		msg := "network " + opErr.Op + " failed"
		if errors.As(err, &errno) {
			msg += ": " + errno.Error()
		} else if opErr.Timeout() {
			msg += ": timeout"
		}
		return msg
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, io.EOF):
		return "EOF"
	}
	inner := err
	for {
		next := errors.Unwrap(inner)
		if next == nil {
			break
		}
		inner = next
	}
	return fmt.Sprintf("request failed (%T)", inner)
}
