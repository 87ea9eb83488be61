package data

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
)

// planned stages calls against base (HEAD = base) and returns the plans.
func planned(t *testing.T, cat *catalog, base map[string][]Row, fragRows int, calls ...tx) map[string]*tablePlan {
	t.Helper()
	s := newStaging(cat, Limits{})
	t.Cleanup(s.release)
	for _, c := range calls {
		if err := stage(s, c); err != nil {
			t.Fatal(err)
		}
	}
	vs := viewSet{base: map[string]*tableView{}, head: map[string]*tableView{}}
	for _, name := range cat.names {
		vs.base[name] = viewOf(t, cat, name, base[name], fragRows)
		vs.head[name] = vs.base[name]
	}
	plans, err := validate(s, vs)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// contents renders a build as "kept:<name>" or the ids of a new fragment.
func contents(b builtTable) []string {
	var out []string
	for _, f := range b.frags {
		if f.keep != nil {
			out = append(out, "kept:"+f.keep.Name)
			continue
		}
		ids := f.rec.Column(colID).(*array.String)
		var s []string
		for i := 0; i < ids.Len(); i++ {
			s = append(s, ids.Value(i))
		}
		out = append(out, strings.Join(s, ","))
	}
	return out
}

// TestBuildCopyOnWrite pins the update/delete representation: files that
// hold no touched id are kept by name, a fragment holding a replaced or
// deleted id is rewritten whole (in place in the list), new ids go to a new
// fragment after the rest, and small trailing fragments merge.
func TestBuildCopyOnWrite(t *testing.T) {
	cat := testCatalog(t)
	base := map[string][]Row{"Company": {company("a"), company("b"), company("c"), company("d"), company("e")}}
	cases := []struct {
		name     string
		fragRows int // base fragment size: 2 gives [a,b][c,d][e]; 4 gives [a-d][e]
		calls    []tx
		want     []string
		rows     uint64
	}{
		{"insert merges the small tail", 4, []tx{{op: OpInsert, typ: "Company", rows: []Row{company("f")}}}, []string{"kept:Company-0", "e,f"}, 6},
		{"insert merges all smaller", 2, []tx{{op: OpInsert, typ: "Company", rows: []Row{company("g"), company("f")}}}, []string{"a,b,c,d,e,f,g"}, 7},
		{"upsert rewrites in place", 2, []tx{{op: OpUpsert, typ: "Company", rows: []Row{company("c")}}}, []string{"kept:Company-0", "c,d", "kept:Company-2"}, 5},
		{"update rewrites in place", 2, []tx{{op: OpUpdate, typ: "Company", rows: []Row{company("a")}}}, []string{"a,b", "kept:Company-1", "kept:Company-2"}, 5},
		{"delete drops a row", 2, []tx{{op: OpDelete, typ: "Company", ids: []string{"d"}}}, []string{"kept:Company-0", "c", "kept:Company-2"}, 4},
		{"delete empties a fragment", 2, []tx{{op: OpDelete, typ: "Company", ids: []string{"e"}}}, []string{"kept:Company-0", "kept:Company-1"}, 4},
		{"upsert new and existing", 4, []tx{{op: OpUpsert, typ: "Company", rows: []Row{company("z"), company("a")}}}, []string{"a,b,c,d", "e,z"}, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planned(t, cat, base, tc.fragRows, tc.calls...)["Company"]
			b := buildTable(p)
			defer b.release()
			if got := contents(b); strings.Join(got, " | ") != strings.Join(tc.want, " | ") || b.rows != tc.rows {
				t.Fatalf("build = %v (%d rows), want %v (%d rows)", got, b.rows, tc.want, tc.rows)
			}
			for _, f := range b.frags {
				if f.rec != nil {
					if err := checkRecord(p.t, f.rec); err != nil {
						t.Fatalf("built fragment breaks the fragment rules: %v", err)
					}
				}
			}
		})
	}
}

// TestBuildReplacedValues pins that a rewritten fragment carries the new
// values of replaced rows and the old values of the others.
func TestBuildReplacedValues(t *testing.T) {
	cat := testCatalog(t)
	base := map[string][]Row{"Person": {person("a", "old-a"), person("b", "old-b")}}
	p := planned(t, cat, base, 10, tx{op: OpUpdate, typ: "Person", rows: []Row{{ID: "b", Props: map[string]any{"name": "new-b", "age": 5}}}})["Person"]
	b := buildTable(p)
	defer b.release()
	if len(b.frags) != 1 || b.frags[0].rec == nil {
		t.Fatalf("build = %v", contents(b))
	}
	rec := b.frags[0].rec
	got := []Row{rowAt(p.t, rec, 0), rowAt(p.t, rec, 1)}
	if got[0].Props["name"] != "old-a" || got[1].Props["name"] != "new-b" || got[1].Props["age"] != int64(5) {
		t.Fatalf("rows = %+v", got)
	}
}

// TestMergeCount pins the binary-counter merge rule and its bound: however
// many single-row commits a table gets, its fragments stay logarithmic.
func TestMergeCount(t *testing.T) {
	var frags []FragmentInfo
	for i := 0; i < 5000; i++ {
		k := mergeCount(frags, 1)
		var rows uint64 = 1
		for _, f := range frags[len(frags)-k:] {
			rows += f.Rows
		}
		frags = append(frags[:len(frags)-k], FragmentInfo{Rows: rows})
		if len(frags) > 14 {
			t.Fatalf("after %d single-row commits: %d fragments", i+1, len(frags))
		}
	}
	if k := mergeCount([]FragmentInfo{{Rows: MaxFragmentRows}}, 1); k != 0 {
		t.Fatalf("merged into a full fragment: %d", k)
	}
	if k := mergeCount([]FragmentInfo{{Rows: 1}}, 0); k != 0 {
		t.Fatalf("merged without new rows: %d", k)
	}
}
