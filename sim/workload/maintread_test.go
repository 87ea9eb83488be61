package workload

import (
	"fmt"
	"strings"
	"testing"
)

// TestPersonIDs: the lost-write check's id set holds exactly the Person
// rows' ids (not other types', not a value that looks like one), so an
// acknowledged id missing from main is still reported.
func TestPersonIDs(t *testing.T) {
	rows := "Company/c1/Person/x/,Knows/a/b,Person/l-c0.1/l-c0.1,Person/p2/p2,WorksAt/p2/c1"
	got := personIDs(rows)
	for _, tc := range []struct {
		id   string
		want bool
	}{{"l-c0.1", true}, {"p2", true}, {"x", false}, {"c1", false}, {"a", false}, {"l-c0", false}} {
		if got[tc.id] != tc.want {
			t.Errorf("personIDs(%q)[%q] = %t, want %t", rows, tc.id, got[tc.id], tc.want)
		}
	}
	if len(personIDs("")) != 0 {
		t.Errorf("personIDs of no rows is not empty")
	}
}

// BenchmarkLostWriteCheck: the cost of gread's lost-write check (every
// acknowledged id looked up in main's rows) at 10^3 and 10^4 rows, all
// acknowledged: personIDs makes it linear (ns-per-row flat), where
// searching the joined rows for each id was quadratic.
func BenchmarkLostWriteCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			parts, acked := make([]string, n), make([]string, n)
			for i := range parts {
				acked[i] = fmt.Sprintf("l-c%d.%d", i%3, i)
				parts[i] = "Person/" + acked[i] + "/" + acked[i]
			}
			rows := strings.Join(parts, ",")
			for b.Loop() {
				people := personIDs(rows)
				for _, id := range acked {
					if !people[id] {
						b.Fatalf("%s missing", id)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns-per-row")
		})
	}
}
