package kernel_test

import (
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// s3DepthDeep adds depth 10^5 to BenchmarkDepthS3 (its fixture is about
// 200,000 objects PUT into the local server, minutes; the default depths
// 10, 10^3 and 10^4 take under a minute, mostly the 10^4 fixture's copy).
var s3DepthDeep = flag.Bool("s3depth.deep", false, "BenchmarkDepthS3: also measure depth 100000")

// s3CopyWorkers is how many PUTs copy a fixture into S3 at once.
const s3CopyWorkers = 8

// buildS3Fixture builds a history of depth commits on main (buildHistory,
// on the in-memory sim store) and copies every object byte for byte into
// a fresh bucket of srv, s3CopyWorkers PUTs at a time: the objects the
// kernel would have written there itself, at a fraction of the cost of
// depth commits over HTTP.
func buildS3Fixture(tb testing.TB, srv *s3test.Server, depth int) fsFixture {
	tb.Helper()
	start := time.Now()
	src := sim.New(sim.Config{Seed: 1})
	buildHistory(tb, src, depth)
	f := fsFixture{simBuild: time.Since(start), store: srv.NewStore(tb)}
	start = time.Now()
	copyObjects(tb, src, f.store, root+"/", s3CopyWorkers)
	f.copyToDisk = time.Since(start)
	return f
}

// copyObjects copies every object under prefix from src to dst, a List
// page at a time, each page's copies spread over workers goroutines (the
// fs and S3 depth fixtures share it).
func copyObjects(tb testing.TB, src, dst objstore.Store, prefix string, workers int) {
	tb.Helper()
	after := ""
	for {
		page, err := src.List(ctx, prefix, after, objstore.MaxListLimit)
		if err != nil {
			tb.Fatal(err)
		}
		keys := make(chan string)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range keys {
					obj, err := src.Get(ctx, k)
					if err == nil {
						_, err = dst.Put(ctx, k, obj.Data, objstore.Unconditional)
					}
					if err != nil {
						errs <- fmt.Errorf("copy %s: %w", k, err)
						for range keys { // drain so the sender finishes
						}
						return
					}
				}
			}()
		}
		for _, k := range page.Keys {
			keys <- k
		}
		close(keys)
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

// BenchmarkDepthS3 is BenchmarkDepthFS on S3: through the kernel API on a
// local S3 server (objstore/s3/s3test: versitygw, posix backend, on
// 127.0.0.1), a commit (CommitTableVersion + Publish on main) and a
// read-only open of main (Open + Branch + Head) at history depths 10,
// 10^3 and 10^4 (BenchmarkDepthFS's) and, with -s3depth.deep, 10^5. Each depth times the operation
// fsDepthSamples times on a depth-D bucket and as many times on a depth-10
// bucket, alternating, and reports median-ns/<op>, requests/<op> (counted:
// the same on every backend), the depth-10 medians and ratio/depth10. The
// depth-10 commit side moves to a fresh depth-10 bucket every
// fsShallowCommits commits (untimed). fixture-sim-s and fixture-copy-s
// report building each fixture (history on the sim store, then PUT into
// the bucket). The built-in ns/op covers the whole pair and is not the
// figure. Latency here is versitygw's over loopback (its posix backend
// lists a prefix by reading directories), not a cloud S3's.
//
//	go test ./kernel -run '^$' -bench BenchmarkDepthS3 -benchtime 1x
//	go test ./kernel -run '^$' -bench BenchmarkDepthS3 -benchtime 1x -s3depth.deep
func BenchmarkDepthS3(b *testing.B) {
	depths := []int{10, 100, 1000, 10000}
	if *s3DepthDeep {
		depths = append(depths, 100000)
	}
	depths = benchsize.Smallest(depths)
	srv := s3test.Shared(b)
	runDepthPairs(b, depths, func(tb testing.TB, _ string, depth int) fsFixture {
		return buildS3Fixture(tb, srv, depth)
	})
}
