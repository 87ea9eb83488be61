package sim

import (
	"fmt"
	"sort"
)

// maxBlock bounds the keys one index block holds, so an insert or delete
// moves at most maxBlock strings plus one block header per maxBlock keys.
const maxBlock = 512

// index is the sorted set of keys: a list of sorted, non-empty blocks whose
// concatenation is strictly increasing. Seeking costs O(log n); inserting or
// deleting costs O(log n + maxBlock + n/maxBlock).
//
// Invariant: every block is non-empty, every block holds at most maxBlock
// keys, and blocks[i][last] < blocks[i+1][0].
type index struct {
	blocks [][]string
	n      int
}

// cursor addresses one key of the index: blocks[b][i].
type cursor struct{ b, i int }

// seek returns the cursor of the first key >= key (possibly past the end).
func (ix *index) seek(key string) cursor {
	b := sort.Search(len(ix.blocks), func(j int) bool {
		blk := ix.blocks[j]
		return blk[len(blk)-1] >= key
	})
	if b == len(ix.blocks) {
		return cursor{b: b}
	}
	blk := ix.blocks[b]
	return cursor{b: b, i: sort.SearchStrings(blk, key)}
}

// at returns the key under c and whether c is inside the index.
func (ix *index) at(c cursor) (string, bool) {
	if c.b >= len(ix.blocks) {
		return "", false
	}
	return ix.blocks[c.b][c.i], true
}

// next advances c by one key.
func (ix *index) next(c cursor) cursor {
	c.i++
	if c.i >= len(ix.blocks[c.b]) {
		c.b++
		c.i = 0
	}
	return c
}

// insert adds key, which must not be present.
func (ix *index) insert(key string) {
	if len(ix.blocks) == 0 {
		ix.blocks = [][]string{{key}}
		ix.n = 1
		return
	}
	c := ix.seek(key)
	if k, ok := ix.at(c); ok && k == key {
		panic(fmt.Sprintf("sim: index insert of present key %q", key))
	}
	if c.b == len(ix.blocks) { // past every key: append to the last block
		c.b--
		c.i = len(ix.blocks[c.b])
	}
	blk := ix.blocks[c.b]
	blk = append(blk, "")
	copy(blk[c.i+1:], blk[c.i:])
	blk[c.i] = key
	ix.blocks[c.b] = blk
	ix.n++
	if len(blk) > maxBlock {
		ix.split(c.b)
	}
}

// split halves block b into two blocks.
func (ix *index) split(b int) {
	blk := ix.blocks[b]
	half := len(blk) / 2
	left := append(make([]string, 0, maxBlock+1), blk[:half]...)
	right := append(make([]string, 0, maxBlock+1), blk[half:]...)
	ix.blocks = append(ix.blocks, nil)
	copy(ix.blocks[b+2:], ix.blocks[b+1:])
	ix.blocks[b] = left
	ix.blocks[b+1] = right
}

// remove deletes key and reports whether it was present.
func (ix *index) remove(key string) bool {
	c := ix.seek(key)
	if k, ok := ix.at(c); !ok || k != key {
		return false
	}
	blk := ix.blocks[c.b]
	copy(blk[c.i:], blk[c.i+1:])
	blk[len(blk)-1] = ""
	blk = blk[:len(blk)-1]
	ix.n--
	if len(blk) == 0 {
		copy(ix.blocks[c.b:], ix.blocks[c.b+1:])
		ix.blocks[len(ix.blocks)-1] = nil
		ix.blocks = ix.blocks[:len(ix.blocks)-1]
		return true
	}
	ix.blocks[c.b] = blk
	return true
}

// clone returns a deep copy of the index.
func (ix *index) clone() index {
	out := index{blocks: make([][]string, len(ix.blocks)), n: ix.n}
	for i, blk := range ix.blocks {
		out.blocks[i] = append(make([]string, 0, maxBlock+1), blk...)
	}
	return out
}

// check panics if the index invariant is broken. Tests call it.
func (ix *index) check() {
	total := 0
	prev, havePrev := "", false
	for b, blk := range ix.blocks {
		if len(blk) == 0 || len(blk) > maxBlock {
			panic(fmt.Sprintf("sim: index block %d holds %d keys", b, len(blk)))
		}
		for _, k := range blk {
			if havePrev && k <= prev {
				panic(fmt.Sprintf("sim: index out of order: %q after %q", k, prev))
			}
			prev, havePrev = k, true
		}
		total += len(blk)
	}
	if total != ix.n {
		panic(fmt.Sprintf("sim: index counts %d keys, holds %d", ix.n, total))
	}
}
