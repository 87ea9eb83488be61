package s3_test

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// TestGetDoesNotTrustContentLength: a response that announces a large body
// but sends a few bytes must not make Get allocate what was announced. The
// buffer grows as bytes arrive; the short body is then refused as a
// truncated (transient) read. Counted in allocated bytes, not time.
func TestGetDoesNotTrustContentLength(t *testing.T) {
	const announced = 1 << 30 // 1 GiB, under MaxObjectBytes
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode:    200,
			Status:        "200 OK",
			Header:        http.Header{"Etag": {`"e"`}, "Content-Length": {"1073741824"}},
			Body:          io.NopCloser(strings.NewReader("tiny")),
			ContentLength: announced,
			Request:       req,
		}, nil
	}}
	s := stubStore(hc)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.Get(t.Context(), "k")
	runtime.ReadMemStats(&after)
	wantKind(t, err, objstore.OpGet, "k", objstore.ErrTransient, false)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("Get allocated %d bytes for a 4-byte body announced as %d", grew, announced)
	}
}

// TestPutUnknownConditionIsTyped: an unknown condition kind is a typed
// error before any I/O (as on fs), never a panic.
func TestPutUnknownConditionIsTyped(t *testing.T) {
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		return xmlResponse(req, 200, ""), nil
	}}
	s := stubStore(hc)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Put panicked: %v", r)
		}
	}()
	_, err := s.Put(t.Context(), "k", []byte("x"), objstore.Condition{Kind: objstore.CondIfMatch + 7})
	wantKind(t, err, objstore.OpPut, "k", objstore.ErrPreconditionFailed, false)
	if n := hc.count(); n != 0 {
		t.Errorf("%d requests for an invalid condition, want 0", n)
	}
}
