package verify

import (
	"hash/fnv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// indexDirs are the index directions, in the order of a fragment's sums.
var indexDirs = [3]string{"out", "in", "id"}

// indexSum is an order-free (multiset) hash of (key, id) entries: the sum
// of their entryHash, and their count. known is false once any object it
// covers was damaged or could not be decoded (reported on its own).
type indexSum struct {
	sum, rows uint64
	known     bool
}

// add folds o into s.
func (s *indexSum) add(o indexSum) {
	s.sum += o.sum
	s.rows += o.rows
	s.known = s.known && o.known
}

// entryHash hashes one (key, id) entry (FNV-1a 64 over key, NUL, id).
func entryHash(key, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return h.Sum64()
}

// rowSums holds what verify needs to compare a table version's indexes
// with its rows without keeping either in memory: the sums of every
// decoded fragment (per direction), of every index chunk and page, and of
// each direction of the table versions being checked.
type rowSums struct {
	frags   map[string][3]indexSum // fragment key -> its rows as out, in and id entries
	objects map[string]indexSum    // index chunk or page key -> its entries
	index   map[string]indexSum    // table-version key NUL dir -> its index's entries
}

func newRowSums() rowSums {
	return rowSums{frags: map[string][3]indexSum{}, objects: map[string]indexSum{}, index: map[string]indexSum{}}
}

// fragment records the entries a decoded fragment's rows must have in each
// index: (from, id) out, (to, id) in, (id, id) id.
func (r rowSums) fragment(key string, rec arrow.Record, edge bool) {
	var s [3]indexSum
	ids := idColumn(rec, 0)
	from, to := idColumn(rec, 1), idColumn(rec, 2)
	if ids == nil || (edge && (from == nil || to == nil)) {
		return // reported by the fragment rules
	}
	for i := 0; i < ids.Len(); i++ {
		id := ids.Value(i)
		if edge {
			s[0].sum += entryHash(from.Value(i), id)
			s[1].sum += entryHash(to.Value(i), id)
		}
		s[2].sum += entryHash(id, id)
	}
	for d := range s {
		s[d].rows, s[d].known = uint64(ids.Len()), true
	}
	r.frags[key] = s
}

// indexMatchesRows checks that each index of table version tvKey lists
// exactly the entries of its fragments' rows (rule adjacency): an index
// that lost, gained or changed an entry differs in its multiset hash. A
// direction whose index or fragments were damaged is skipped (that damage
// is reported on its own).
func (v *verifier) indexMatchesRows(tvKey, table string, infos []data.FragmentInfo) {
	for d, dir := range indexDirs {
		idx, ok := v.sums.index[tvKey+"\x00"+dir]
		if !ok {
			continue
		}
		delete(v.sums.index, tvKey+"\x00"+dir)
		rows := indexSum{known: idx.known}
		for _, f := range infos {
			fs, ok := v.sums.frags[v.fragKey(table, f.Name)]
			if !ok {
				rows.known = false
				break
			}
			rows.add(fs[d])
		}
		if rows.known && (rows.sum != idx.sum || rows.rows != idx.rows) {
			v.problem(tvKey, RuleAdjacency, "the %s index lists %d entries that are not the %d rows of the fragments (multiset hash %016x, the rows' %016x)",
				dir, idx.rows, rows.rows, idx.sum, rows.sum)
		}
	}
}
