package data

import (
	"flag"
	"hash/crc32"
	"sort"
	"strconv"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// testSchemaText is the schema of the pure tests: every kind, a bounded
// card (WorksAt 0..1), a min card (Reports 1..2) and an unbounded edge.
const testSchemaText = `
node Person  { name: string  age: int64?  score: float64?  active: bool?  born: timestamp?  avatar: bytes? }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) { since: timestamp? }
edge Knows:   Person -> Person
edge Reports: Person -> Person @card(0..2) {}
`

func testCatalog(t testing.TB) *catalog {
	t.Helper()
	return catalogOf(t, testSchemaText)
}

func catalogOf(t testing.TB, text string) *catalog {
	t.Helper()
	s, err := schema.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Contract()
	if err != nil {
		t.Fatal(err)
	}
	return newCatalog(s.Normalized(), schema.ContractID(c))
}

func person(id, name string) Row { return Row{ID: id, Props: map[string]any{"name": name}} }
func company(id string) Row      { return Row{ID: id, Props: map[string]any{"name": "co " + id}} }
func edge(id, from, to string) Row {
	return Row{ID: id, From: from, To: to}
}

// viewOf builds a fully loaded view of table from rows, split into
// fragments of fragRows rows, through the real fragment codec.
func viewOf(t testing.TB, cat *catalog, table string, rows []Row, fragRows int) *tableView {
	t.Helper()
	tb, err := cat.table(table)
	if err != nil {
		t.Fatal(err)
	}
	rows = append([]Row(nil), rows...)
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	var infos []FragmentInfo
	var total uint64
	v := &tableView{t: tb}
	for len(rows) > 0 {
		n := min(len(rows), fragRows)
		for i := range rows[:n] {
			if _, err := checkRowShape(tb, &rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		rec := buildRecord(tb, rows[:n])
		b, info, err := EncodeFragment(tb, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		info.Name = table + "-" + itoa(len(infos))
		back, err := DecodeFragment(tb, info, b)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
		v.recs = append(v.recs, back)
		total += uint64(n)
		rows = rows[n:]
	}
	v.frags, v.rows = infos, total
	return v
}

func itoa(i int) string { return strconv.Itoa(i) }

// views builds a viewSet with every table of cat: base from rows, head
// from head (falling back to rows per table).
func views(t testing.TB, cat *catalog, base, head map[string][]Row) viewSet {
	t.Helper()
	vs := viewSet{base: map[string]*tableView{}, head: map[string]*tableView{}}
	for _, name := range cat.names {
		vs.base[name] = viewOf(t, cat, name, base[name], 2)
		h, ok := head[name]
		if !ok {
			h = base[name]
		}
		vs.head[name] = viewOf(t, cat, name, h, 2)
	}
	return vs
}

var update = flag.Bool("update", false, "rewrite golden files")

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
