package s3_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	s3store "github.com/graphkernel/graphkernel/objstore/s3"
)

// TestGetManyIsConcurrentGets: GetMany issues one GetObject a valid key,
// up to BatchGetWorkers of them in flight at once and never more; each
// result is its key's Get's, in key order (a missing key ErrNotFound, an
// invalid key ErrInvalidKey with no request); more than MaxGetBatch keys
// fail every key with no request.
func TestGetManyIsConcurrentGets(t *testing.T) {
	const n = 3 * s3store.BatchGetWorkers
	var mu sync.Mutex
	inFlight, most := 0, 0
	full := make(chan struct{}) // closed once BatchGetWorkers Gets are in flight together
	var once sync.Once
	release := func() { once.Do(func() { close(full) }) }
	guard := time.AfterFunc(30*time.Second, release) // a deadlock guard for a sequential GetMany, not a timing assertion
	defer guard.Stop()
	hc := &stubClient{respond: func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == s3store.BatchGetWorkers {
			release()
		}
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		<-full // the first requests wait for the pool to fill
		key := strings.TrimPrefix(req.URL.Path, "/bucket/pre/")
		if key == "missing" {
			return xmlResponse(req, 404, s3ErrorBody("NoSuchKey")), nil
		}
		resp := xmlResponse(req, 200, "data of "+key)
		resp.Header.Set("ETag", `"`+key+`"`)
		return resp, nil
	}}
	keys := []string{"missing", "/invalid"}
	for i := range n {
		keys = append(keys, fmt.Sprintf("k%03d", i))
	}
	got := stubStore(hc).GetMany(t.Context(), keys)
	if len(got) != len(keys) {
		t.Fatalf("%d results for %d keys", len(got), len(keys))
	}
	wantKind(t, got[0].Err, objstore.OpGet, "missing", objstore.ErrNotFound, false)
	wantKind(t, got[1].Err, objstore.OpGet, "/invalid", objstore.ErrInvalidKey, false)
	for i, k := range keys[2:] {
		r := got[i+2]
		if r.Err != nil || string(r.Object.Data) != "data of "+k || r.Object.ETag != `"`+k+`"` {
			t.Errorf("key %q: %q %q %v", k, r.Object.Data, r.Object.ETag, r.Err)
		}
	}
	if c := hc.count(); c != n+1 {
		t.Errorf("%d requests, want one GetObject a valid key (%d)", c, n+1)
	}
	if most != s3store.BatchGetWorkers {
		t.Errorf("at most %d Gets in flight, want %d", most, s3store.BatchGetWorkers)
	}

	hc = &stubClient{respond: func(req *http.Request) (*http.Response, error) { return xmlResponse(req, 200, ""), nil }}
	big := make([]string, objstore.MaxGetBatch+1)
	for i := range big {
		big[i] = fmt.Sprintf("b%d", i)
	}
	for i, r := range stubStore(hc).GetMany(t.Context(), big) {
		wantKind(t, r.Err, objstore.OpGet, big[i], objstore.ErrRejected, false)
	}
	if hc.count() != 0 {
		t.Errorf("%d requests for an oversized batch, want none", hc.count())
	}
}
