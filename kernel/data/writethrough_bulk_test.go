package data

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestBulkCommitWritesNothingThrough: a commit changing more than
// WriteThroughRows rows of a table caches none of the objects it writes
// (they would only evict one another and the working set); one changing
// exactly WriteThroughRows still writes its small objects through (D8a).
func TestBulkCommitWritesNothingThrough(t *testing.T) {
	for _, tc := range []struct {
		rows       int
		wantCached bool
	}{{WriteThroughRows, true}, {WriteThroughRows + 1, false}} {
		t.Run(fmt.Sprint(tc.rows), func(t *testing.T) {
			g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
			commitTx(t, g, func(tx *Txn) error {
				rows := make([]Row, tc.rows)
				for i := range rows {
					rows[i] = person(fmt.Sprintf("p%06d", i), "n")
				}
				return tx.Insert("Person", rows...)
			})
			idPages := 0
			for key := range g.cache.m { //detlint:ordered counts
				if strings.HasPrefix(key, "ids:") {
					idPages++
				}
			}
			if (idPages > 0) != tc.wantCached {
				t.Fatalf("%d rows in one commit: %d id pages cached, want cached=%v", tc.rows, idPages, tc.wantCached)
			}
		})
	}
}
