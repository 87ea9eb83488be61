package data

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
)

// layoutSchema: Person and the edge types of cmd/graphkernel's
// BenchmarkStoreBytes graph, the edge types keys only (no properties),
// ids with their source, and Person and the edges with their timestamps as
// int64 seconds, for BenchmarkEdgeLayoutBytes.
const layoutSchema = `
node Person  { name: string  email: string  age: int64  city: string  joined: timestamp }
node PersonS { name: string  email: string  age: int64  city: string  joined: int64 }
node Company { name: string }
edge WorksAt:  Person -> Company @card(0..1) { since: timestamp  title: string }
edge Knows:    Person -> Person { weight: int64  since: timestamp }
edge WorksAtK: Person -> Company {}
edge KnowsK:   Person -> Person {}
node IDFrom   { source: string }
edge WorksAtS: Person -> Company { since: int64  title: string }
edge KnowsS:   Person -> Person { weight: int64  since: int64 }
`

// layoutEdges generates BenchmarkStoreBytes's persons and edges at
// 1.2·10^5 rows (16,000 persons, 2,000 companies and cities; one WorksAt
// per person, 84,000 Knows between random persons), with its value
// distributions; under -short (CI's smoke run) a tenth of each.
func layoutEdges() map[string][]Row {
	rng := rand.New(rand.NewPCG(28, 3))
	persons, companies, knows := 16000, 2000, 84000
	if benchsize.Short() { // CI's smoke run: a tenth of the graph
		persons, companies, knows = 1600, 200, 8400
	}
	first := []string{"Ann", "Bob", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Julia", "Kofi", "Lena"}
	last := []string{"Smith", "Garcia", "Müller", "Kowalski", "Nguyen", "Okafor", "Rossi", "Sato", "Silva", "Jensen"}
	titles := []string{"engineer", "manager", "analyst", "designer", "sales", "support", "director", "intern"}
	epoch := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	day := func(unit time.Duration) time.Time {
		return epoch.Add(time.Duration(rng.Int64N(int64(10 * 365 * 24 * time.Hour)))).Truncate(unit)
	}
	g := map[string][]Row{}
	for i := range persons {
		f, l := first[rng.IntN(len(first))], last[rng.IntN(len(last))]
		g["Person"] = append(g["Person"], Row{ID: fmt.Sprintf("person-%07d", i), Props: map[string]any{
			"name": f + " " + l, "email": fmt.Sprintf("%s.%s%d@example.com", f, l, rng.IntN(10000)),
			"age": int64(18 + rng.IntN(70)), "city": fmt.Sprintf("City %d", rng.IntN(companies)), "joined": day(time.Second)}})
	}
	for i := range persons {
		g["WorksAt"] = append(g["WorksAt"], Row{ID: fmt.Sprintf("works-%07d", i), From: fmt.Sprintf("person-%07d", i),
			To: fmt.Sprintf("company-%06d", rng.IntN(companies)), Props: map[string]any{
				"since": day(24 * time.Hour), "title": titles[rng.IntN(len(titles))]}})
	}
	for i := range knows {
		g["Knows"] = append(g["Knows"], Row{ID: fmt.Sprintf("knows-%08d", i), From: fmt.Sprintf("person-%07d", rng.IntN(persons)),
			To: fmt.Sprintf("person-%07d", rng.IntN(persons)), Props: map[string]any{
				"weight": int64(rng.IntN(100)), "since": day(time.Second)}})
	}
	return g
}

// layoutBytes is the stored bytes (zstd codec) of rows of tb sorted by
// less and cut every per rows, each piece encoded as a fragment (Arrow
// IPC) or as an index page (this build's column file).
func layoutBytes(b *testing.B, tb *Table, rows []Row, less func(x, y Row) bool, per int, page bool) int {
	b.Helper()
	rows = append([]Row(nil), rows...)
	sort.Slice(rows, func(i, j int) bool { return less(rows[i], rows[j]) })
	total := 0
	for ; len(rows) > 0; rows = rows[min(per, len(rows)):] {
		rec := recordOf(b, tb, rows[:min(per, len(rows))])
		var enc []byte
		var err error
		if page {
			enc, err = encodePage(CodecZstd, tb, rec)
		} else {
			enc, _, err = EncodeFragmentWith(tb, rec, CodecZstd)
		}
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
		total += len(enc)
	}
	return total
}

// BenchmarkEdgeLayoutBytes (#28.3): one copy of BenchmarkStoreBytes's edges
// (WorksAt, Knows) under each candidate storage layout, zstd codec, so the
// store-bytes goal can be checked by arithmetic before a layout is built:
// data fragments (Arrow IPC sorted by id, MaxFragmentRows), the same with
// timestamps stored as int64 seconds, the same rows as column files sorted
// by id, out and in index pages as today (whole
// rows sorted by (from, id) / (to, id), AdjPageRows), and out and in pages
// of the keys only ((from, id, to) / (to, id, from)), and id pages
// carrying both ends ((id, from, to) sorted by id, EdgeIDPageRows) or the
// source only ((id, from)): what an id index would cost that locates an
// edge without a data fragment (today's id pages hold the ids alone). The
// Person run measures its fragments with joined as a timestamp and as
// int64 seconds. Run with -benchtime 1x; the figures are exact byte counts
// (of a tenth of the graph under -short, CI's smoke run: layoutEdges).
func BenchmarkEdgeLayoutBytes(b *testing.B) {
	cat := catalogOf(b, layoutSchema)
	edges := layoutEdges()
	byID := func(x, y Row) bool { return x.ID < y.ID }
	byOut := func(x, y Row) bool { return x.From < y.From || x.From == y.From && x.ID < y.ID }
	byIn := func(x, y Row) bool { return x.To < y.To || x.To == y.To && x.ID < y.ID }
	b.Run("Person", func(b *testing.B) {
		tb, err := cat.table("Person")
		must(b, err)
		st, err := cat.table("PersonS")
		must(b, err)
		rows := edges["Person"]
		secs := make([]Row, len(rows))
		for i, r := range rows {
			secs[i] = Row{ID: r.ID, Props: map[string]any{}}
			for k, v := range r.Props { //detlint:ordered copies a map into a map
				if ts, ok := v.(time.Time); ok {
					v = ts.Unix()
				}
				secs[i].Props[k] = v
			}
		}
		for b.Loop() {
			b.ReportMetric(float64(layoutBytes(b, tb, rows, byID, MaxFragmentRows, false)), "fragments-arrow")
			b.ReportMetric(float64(layoutBytes(b, st, secs, byID, MaxFragmentRows, false)), "fragments-arrow-seconds")
		}
	})
	for _, typ := range []string{"WorksAt", "Knows"} {
		b.Run(typ, func(b *testing.B) {
			tb, err := cat.table(typ)
			must(b, err)
			kt, err := cat.table(typ + "K")
			must(b, err)
			rows := edges[typ]
			st, err := cat.table(typ + "S")
			must(b, err)
			ft, err := cat.table("IDFrom")
			must(b, err)
			keys, secs, froms := make([]Row, len(rows)), make([]Row, len(rows)), make([]Row, len(rows))
			for i, r := range rows {
				keys[i] = Row{ID: r.ID, From: r.From, To: r.To}
				froms[i] = Row{ID: r.ID, Props: map[string]any{"source": r.From}}
				secs[i] = Row{ID: r.ID, From: r.From, To: r.To, Props: map[string]any{"since": r.Props["since"].(time.Time).Unix()}}
				for _, p := range []string{"weight", "title"} {
					if v, ok := r.Props[p]; ok {
						secs[i].Props[p] = v
					}
				}
			}
			for b.Loop() {
				b.ReportMetric(float64(layoutBytes(b, tb, rows, byID, MaxFragmentRows, false)), "fragments-arrow")
				b.ReportMetric(float64(layoutBytes(b, st, secs, byID, MaxFragmentRows, false)), "fragments-arrow-seconds")
				b.ReportMetric(float64(layoutBytes(b, tb, rows, byID, MaxFragmentRows, true)), "fragments-colfile")
				b.ReportMetric(float64(layoutBytes(b, tb, rows, byOut, AdjPageRows, true)), "out-pages")
				b.ReportMetric(float64(layoutBytes(b, tb, rows, byIn, AdjPageRows, true)), "in-pages")
				b.ReportMetric(float64(layoutBytes(b, kt, keys, byOut, AdjPageRows, true)), "out-pages-keys")
				b.ReportMetric(float64(layoutBytes(b, kt, keys, byIn, AdjPageRows, true)), "in-pages-keys")
				b.ReportMetric(float64(layoutBytes(b, kt, keys, byID, EdgeIDPageRows, true)), "id-pages-keys")
				b.ReportMetric(float64(layoutBytes(b, ft, froms, byID, EdgeIDPageRows, true)), "id-pages-from")
				b.ReportMetric(float64(len(rows)), "rows")
			}
		})
	}
}
