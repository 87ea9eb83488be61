package kernel_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
)

// depthBenchDepths are the history depths of the depth benchmarks.
var depthBenchDepths = []int{10, 1000, 10000, 100000}

// BenchmarkColdLookupDepth counts the store requests of a cold read-only
// handle's Commit(id) of the commit in the middle of the history and of
// MergeBase of two branches forked at its start, on the sim store at
// depths 10^2, 10^3, 10^4 and 10^5 (the history is built once per depth,
// through the public API). It reports the requests of each lookup and, from
// 10^3 on, their ratio to 10^3 (goal: at most 2 at 10^5; the commit indexes
// make it 1). Under -short (CI's smoke run) depths 10^2 and 10^3 only.
//
//	go test ./kernel -run '^$' -bench BenchmarkColdLookupDepth -benchtime 1x
func BenchmarkColdLookupDepth(b *testing.B) {
	var first [2]float64
	for _, depth := range benchsize.First(append([]int{100}, depthBenchDepths[1:]...), 2) {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			start := time.Now()
			commit, base := coldCost(b, depth)
			b.ReportMetric(time.Since(start).Seconds(), "setup-s")
			c, m := float64(commit.Requests()), float64(base.Requests())
			if depth == depthBenchDepths[1] {
				first = [2]float64{c, m}
			}
			b.ReportMetric(c, "commit-requests")
			b.ReportMetric(m, "mergebase-requests")
			if first[0] > 0 && first[1] > 0 {
				b.ReportMetric(c/first[0], "commit-ratio/depth1000")
				b.ReportMetric(m/first[1], "mergebase-ratio/depth1000")
			}
		})
	}
}
