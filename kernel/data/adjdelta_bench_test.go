package data

import (
	"fmt"
	"testing"
)

// BenchmarkEdgeInsertStream: a service's stream of one-edge commits into E
// (endpoints scattered over the nodes, a property each) on one warm
// handle, as fixtures of adjSizes edges take them: bytes read plus written
// and requests per commit, averaged over two fold cycles of the adjacency
// delta (2·MaxAdjDeltaRows+2 commits an iteration), with the delta
// (format 13) and without it (format 12: every insert rewrites the out and
// in pages and the chunks above them) side by side on fixtures of the same
// size. ratio-rw-delta-vs-pages and ratio-requests-delta-vs-pages divide
// the delta run's figures by the page-rewrite run's just before it. The
// delta costs manifest bytes (it rides the table version, which rides the
// manifest every commit writes) and saves page and chunk rewrites, so the
// ratio says which wins at each size.
func BenchmarkEdgeInsertStream(b *testing.B) {
	for _, n := range adjSizes() {
		var pagesRW, pagesReq float64
		for _, delta := range []bool{false, true} {
			b.Run(fmt.Sprintf("edges=%d/delta=%t", n, delta), func(b *testing.B) {
				fixture := adjGraph
				if n >= bulkFrom {
					fixture = bulkAdjGraph
				}
				cs, nodes := fixture(b, n)
				adjDeltaWrites = delta
				defer func() { adjDeltaWrites = true }()
				g := openGraph(b, cs, 7)
				commits := 2*MaxAdjDeltaRows + 2
				var rw, reqs uint64
				k := 0
				for b.Loop() {
					for range commits {
						k++
						cs.Reset()
						commitTx(b, g, func(tx *Txn) error {
							return tx.Insert("E", Row{ID: fmt.Sprintf("s%09d", k), From: benchNode((k * 7919) % nodes), To: benchNode((k * 104729) % nodes),
								Props: map[string]any{"w": int64(k)}})
						})
						c := cs.Counts()
						rw += c.BytesRead + c.BytesWritten
						reqs += uint64(c.Requests())
					}
				}
				perRW := float64(rw) / float64(b.N*commits)
				perReq := float64(reqs) / float64(b.N*commits)
				b.ReportMetric(perRW, "rw-bytes/commit")
				b.ReportMetric(perReq, "requests/commit")
				if !delta {
					pagesRW, pagesReq = perRW, perReq
				} else if pagesRW > 0 {
					b.ReportMetric(perRW/pagesRW, "ratio-rw-delta-vs-pages")
					b.ReportMetric(perReq/pagesReq, "ratio-requests-delta-vs-pages")
				}
			})
		}
	}
}
