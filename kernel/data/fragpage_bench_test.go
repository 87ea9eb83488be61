package data

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// BenchmarkTableVersionSize: the stored table version of a Person table
// of 10^4 .. 10^7 rows (full fragments of MaxFragmentRows, each info with
// its id range and name statistics, as the writer records them), written
// through the writer's own content path (fragContent: paged past
// DefaultInlineFragments, its chunks really written) and encoded as the
// kernel stores it. tv-bytes is the paged version (what every cold lookup
// and commit reads), inline-tv-bytes the same version listed inline (the
// format-4 layout), chunks the fragment chunks written. Fragments and the
// id index are not built (the index refs are measured by
// BenchmarkColdAdjacency's tv-bytes on real fixtures).
func BenchmarkTableVersionSize(b *testing.B) {
	for _, rows := range []int{10_000, 100_000, 1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			g := initGraph(b, sim.New(sim.Config{Seed: 1}), Limits{})
			t := g.mustTable(b, "Person")
			infos := syntheticInfos(b, g, rows)
			var paged, inline int
			var c kernel.TableContent
			for b.Loop() {
				var err error
				c, err = adjWriter{g: g, r: newReader(g, nil)}.fragContent(ctx, t, infos, uint64(rows), nil)
				must(b, err)
				paged = encodedTV(b, c)
				inline = encodedTV(b, tableContent(infos, uint64(rows), nil))
			}
			// The version's own list of refs; past one level (format 10)
			// its entries are fragment ref chunks, so the fragment chunks
			// are counted once every ref is expanded (untimed).
			b.StopTimer()
			refs, _, err := parseFragRefs(c.Metadata, uint64(rows))
			must(b, err)
			chunks := 0
			if len(refs) > 0 {
				v := pagedView(t, refs, uint64(rows))
				must(b, newReader(g, nil).ensureFrags(ctx, v))
				chunks = len(v.paged)
			}
			b.ReportMetric(float64(paged), "tv-bytes")
			b.ReportMetric(float64(inline), "inline-tv-bytes")
			b.ReportMetric(float64(chunks), "chunks")
		})
	}
}

// syntheticInfos returns the infos of rows Person rows in full fragments
// with fresh names, ascending disjoint id ranges and name statistics.
func syntheticInfos(b *testing.B, g *Graph, rows int) []FragmentInfo {
	b.Helper()
	var infos []FragmentInfo
	lo1, hi1 := "aaron", "zoe"
	for lo := 0; lo < rows; lo += MaxFragmentRows {
		n := min(MaxFragmentRows, rows-lo)
		id, err := g.mintName()
		must(b, err)
		infos = append(infos, FragmentInfo{Name: id.String(), Rows: uint64(n), Bytes: uint64(40 * n), CRC32C: uint32(lo),
			MinID: fmt.Sprintf("p%09d", lo), MaxID: fmt.Sprintf("p%09d", lo+n-1),
			Stats: []ColumnStats{{Column: "name", Lo: &lo1, Hi: &hi1}}})
	}
	return infos
}

// encodedTV is the stored size of a table version with content c.
func encodedTV(b *testing.B, c kernel.TableContent) int {
	b.Helper()
	tv := format.TableVersion{Table: "Person", Fork: format.ID{1}, Version: 1 << 40, Rows: c.Rows, Fragments: c.Fragments}
	for _, k := range sortedMetaKeys(c.Metadata) {
		tv.Metadata = append(tv.Metadata, format.KV{Key: k, Value: c.Metadata[k]})
	}
	enc, err := format.EncodeTableVersion(&tv, format.Token{})
	must(b, err)
	return len(enc)
}

func sortedMetaKeys(m map[string]string) []string {
	set := map[string]bool{}
	for k := range m { //detlint:ordered collects keys sorted next
		set[k] = true
	}
	return sortedKeys(set)
}

func (g *Graph) mustTable(b *testing.B, name string) *Table {
	b.Helper()
	s := snap(b, g)
	t, err := s.cat.table(name)
	must(b, err)
	return t
}
