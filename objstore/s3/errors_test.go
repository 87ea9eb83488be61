package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/graphkernel/graphkernel/objstore"
)

// secretHost stands for an endpoint that must never show in error strings.
const secretHost = "secret-endpoint.invalid:9000"

// apiErr builds the error the SDK returns for an HTTP error response.
func apiErr(operation string, status int, code string) error {
	var inner error
	if code != "" {
		inner = &smithy.GenericAPIError{Code: code, Message: "server says " + code}
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: operation, Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err:      inner,
		},
		RequestID: "REQ123",
	}}
}

// sendErr builds the error the SDK returns when the HTTP round trip fails.
func sendErr(operation string, cause error) error {
	return &smithy.OperationError{ServiceID: "S3", OperationName: operation, Err: &smithyhttp.RequestSendError{
		Err: &url.Error{Op: "Put", URL: "http://" + secretHost + "/bucket/key", Err: cause},
	}}
}

func readReset() error {
	return &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000},
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

func dialRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func TestMapError(t *testing.T) {
	deser := &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 200}},
			Err:      &smithy.DeserializationError{Err: io.ErrUnexpectedEOF},
		},
	}}
	cases := []struct {
		name      string
		op        objstore.Op
		ifMatch   bool
		err       error
		kind      error
		ambiguous bool
	}{
		{"get 404 NoSuchKey", objstore.OpGet, false, apiErr("GetObject", 404, "NoSuchKey"), objstore.ErrNotFound, false},
		{"head 404 NotFound", objstore.OpHead, false, apiErr("HeadObject", 404, "NotFound"), objstore.ErrNotFound, false},
		{"head 404 no code", objstore.OpHead, false, apiErr("HeadObject", 404, ""), objstore.ErrNotFound, false},
		{"get NoSuchBucket is not benign", objstore.OpGet, false, apiErr("GetObject", 404, "NoSuchBucket"), objstore.ErrRejected, false},
		{"list NoSuchBucket", objstore.OpList, false, apiErr("ListObjectsV2", 404, "NoSuchBucket"), objstore.ErrRejected, false},
		{"put NoSuchBucket", objstore.OpPut, false, apiErr("PutObject", 404, "NoSuchBucket"), objstore.ErrRejected, false},
		{"if-match put 404 is precondition", objstore.OpPut, true, apiErr("PutObject", 404, "NoSuchKey"), objstore.ErrPreconditionFailed, false},
		{"delete 404", objstore.OpDelete, false, apiErr("DeleteObject", 404, "NoSuchKey"), objstore.ErrNotFound, false},
		{"put 412", objstore.OpPut, false, apiErr("PutObject", 412, "PreconditionFailed"), objstore.ErrPreconditionFailed, false},
		{"if-match put 412", objstore.OpPut, true, apiErr("PutObject", 412, "PreconditionFailed"), objstore.ErrPreconditionFailed, false},
		{"put 409 conflict", objstore.OpPut, false, apiErr("PutObject", 409, "ConditionalRequestConflict"), objstore.ErrConflict, false},
		{"put 500 is ambiguous", objstore.OpPut, false, apiErr("PutObject", 500, "InternalError"), objstore.ErrTransient, true},
		{"put 503 SlowDown is ambiguous", objstore.OpPut, true, apiErr("PutObject", 503, "SlowDown"), objstore.ErrTransient, true},
		{"delete 502 is ambiguous", objstore.OpDelete, false, apiErr("DeleteObject", 502, ""), objstore.ErrTransient, true},
		{"get 503 read never ambiguous", objstore.OpGet, false, apiErr("GetObject", 503, "SlowDown"), objstore.ErrTransient, false},
		{"list 500", objstore.OpList, false, apiErr("ListObjectsV2", 500, "InternalError"), objstore.ErrTransient, false},
		{"put 429 throttled", objstore.OpPut, false, apiErr("PutObject", 429, "TooManyRequests"), objstore.ErrTransient, false},
		{"get 429 no code", objstore.OpGet, false, apiErr("GetObject", 429, ""), objstore.ErrTransient, false},
		{"put 408 timeout", objstore.OpPut, false, apiErr("PutObject", 408, ""), objstore.ErrTransient, false},
		{"put 400 RequestTimeout", objstore.OpPut, false, apiErr("PutObject", 400, "RequestTimeout"), objstore.ErrTransient, false},
		{"put 400 SlowDown", objstore.OpPut, false, apiErr("PutObject", 400, "SlowDown"), objstore.ErrTransient, false},
		{"put 403 refused", objstore.OpPut, false, apiErr("PutObject", 403, "AccessDenied"), objstore.ErrRejected, false},
		{"head 403 no code", objstore.OpHead, false, apiErr("HeadObject", 403, ""), objstore.ErrRejected, false},
		{"get 403", objstore.OpGet, false, apiErr("GetObject", 403, "AccessDenied"), objstore.ErrRejected, false},
		{"list 403", objstore.OpList, false, apiErr("ListObjectsV2", 403, "AccessDenied"), objstore.ErrRejected, false},
		{"delete 403", objstore.OpDelete, false, apiErr("DeleteObject", 403, "AccessDenied"), objstore.ErrRejected, false},
		{"put 400 bad request", objstore.OpPut, false, apiErr("PutObject", 400, "InvalidRequest"), objstore.ErrRejected, false},
		{"put 400 KeyTooLongError", objstore.OpPut, false, apiErr("PutObject", 400, "KeyTooLongError"), objstore.ErrRejected, false},
		{"put 405", objstore.OpPut, false, apiErr("PutObject", 405, "MethodNotAllowed"), objstore.ErrRejected, false},
		{"put 411", objstore.OpPut, false, apiErr("PutObject", 411, "MissingContentLength"), objstore.ErrRejected, false},
		{"put 413", objstore.OpPut, false, apiErr("PutObject", 413, "EntityTooLarge"), objstore.ErrRejected, false},
		{"get 416", objstore.OpGet, false, apiErr("GetObject", 416, "InvalidRange"), objstore.ErrRejected, false},
		{"if-match put 501 not implemented", objstore.OpPut, true, apiErr("PutObject", 501, "NotImplemented"), objstore.ErrRejected, false},
		{"put 501 no code", objstore.OpPut, false, apiErr("PutObject", 501, ""), objstore.ErrRejected, false},
		{"put 200 unreadable answer", objstore.OpPut, false, deser, objstore.ErrTransient, true},
		{"put timeout is ambiguous", objstore.OpPut, false, sendErr("PutObject", context.DeadlineExceeded), objstore.ErrTransient, true},
		{"if-match put timeout is ambiguous", objstore.OpPut, true, sendErr("PutObject", context.DeadlineExceeded), objstore.ErrTransient, true},
		{"put canceled is ambiguous", objstore.OpPut, false, sendErr("PutObject", context.Canceled), objstore.ErrTransient, true},
		{"put reset is ambiguous", objstore.OpPut, false, sendErr("PutObject", readReset()), objstore.ErrTransient, true},
		{"put truncated answer is ambiguous", objstore.OpPut, false, sendErr("PutObject", io.ErrUnexpectedEOF), objstore.ErrTransient, true},
		{"delete timeout is ambiguous", objstore.OpDelete, false, sendErr("DeleteObject", context.DeadlineExceeded), objstore.ErrTransient, true},
		{"put refused is not ambiguous", objstore.OpPut, false, sendErr("PutObject", dialRefused()), objstore.ErrTransient, false},
		{"put dns failure is not ambiguous", objstore.OpPut, false, sendErr("PutObject", &net.DNSError{Err: "no such host", Name: "secret-endpoint.invalid"}), objstore.ErrTransient, false},
		{"get timeout", objstore.OpGet, false, sendErr("GetObject", context.DeadlineExceeded), objstore.ErrTransient, false},
		{"head reset", objstore.OpHead, false, sendErr("HeadObject", readReset()), objstore.ErrTransient, false},
		{"list reset", objstore.OpList, false, sendErr("ListObjectsV2", readReset()), objstore.ErrTransient, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mapError(tc.op, "k/ey", tc.ifMatch, tc.err)
			if got.Op != tc.op || got.Key != "k/ey" || got.Kind != tc.kind || got.Ambiguous != tc.ambiguous {
				t.Fatalf("mapError = op %q key %q kind %v ambiguous %v; want op %q kind %v ambiguous %v",
					got.Op, got.Key, got.Kind, got.Ambiguous, tc.op, tc.kind, tc.ambiguous)
			}
			if !errors.Is(got, tc.kind) || objstore.IsAmbiguous(got) != tc.ambiguous {
				t.Errorf("errors.Is does not see kind %v / ambiguity %v in %v", tc.kind, tc.ambiguous, got)
			}
			if wantRetry := tc.kind == objstore.ErrTransient || tc.kind == objstore.ErrConflict; objstore.IsRetryable(got) != wantRetry {
				t.Errorf("IsRetryable(%v) = %v, want %v", got, !wantRetry, wantRetry)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the SDK error is not reachable through %v", got)
			}
			if msg := got.Error(); strings.Contains(msg, "secret-endpoint") || strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "http://") {
				t.Errorf("error string leaks an address: %s", msg)
			}
		})
	}
}

func TestMapErrorKeepsCauseMatchable(t *testing.T) {
	err := mapError(objstore.OpPut, "k", false, sendErr("PutObject", context.DeadlineExceeded))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not match context.DeadlineExceeded", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("%v: the *url.Error is not reachable with errors.As", err)
	}
	reset := mapError(objstore.OpPut, "k", false, sendErr("PutObject", readReset()))
	if !errors.Is(reset, syscall.ECONNRESET) {
		t.Errorf("%v does not match ECONNRESET", reset)
	}
}

func TestRedact(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{apiErr("PutObject", 412, "PreconditionFailed"), "S3 PutObject, HTTP 412, code PreconditionFailed: server says PreconditionFailed, request id REQ123"},
		{apiErr("HeadObject", 404, ""), "S3 HeadObject, HTTP 404, request id REQ123"},
		{sendErr("PutObject", context.DeadlineExceeded), "S3 PutObject, context deadline exceeded"},
		{sendErr("GetObject", context.Canceled), "S3 GetObject, context canceled"},
		{sendErr("PutObject", readReset()), "S3 PutObject, network read failed: connection reset by peer"},
		{sendErr("PutObject", dialRefused()), "S3 PutObject, network dial failed: connection refused"},
		{sendErr("PutObject", &net.DNSError{Err: "no such host", Name: "secret-endpoint.invalid"}), "S3 PutObject, DNS lookup failed"},
		{sendErr("PutObject", io.ErrUnexpectedEOF), "S3 PutObject, unexpected EOF"},
		{sendErr("PutObject", fmt.Errorf("dial %s: odd", secretHost)), "S3 PutObject, request failed (*errors.errorString)"},
	}
	for _, tc := range cases {
		if got := redact(tc.err); got != tc.want {
			t.Errorf("redact(%v)\n got  %q\n want %q", tc.err, got, tc.want)
		}
	}
}
