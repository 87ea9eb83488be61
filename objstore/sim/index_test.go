package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestIndexMatchesSortedSlice drives the block index and a plain sorted
// slice with the same seeded inserts and removes, enough to split blocks and
// empty them again, and checks they agree on contents and on seeks.
func TestIndexMatchesSortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var ix index
	var ref []string
	for step := 0; step < 20000; step++ {
		key := fmt.Sprintf("k%05d", rng.IntN(4000))
		i, found := slices.BinarySearch(ref, key)
		if rng.IntN(3) == 0 { // remove a third of the time
			if got := ix.remove(key); got != found {
				t.Fatalf("step %d: remove(%q) = %v, want %v", step, key, got, found)
			}
			if found {
				ref = slices.Delete(ref, i, i+1)
			}
		} else if !found {
			ix.insert(key)
			ref = slices.Insert(ref, i, key)
		}
		if step%997 == 0 {
			ix.check()
			checkSeeks(t, &ix, ref, rng)
		}
	}
	ix.check()
	if len(ix.blocks) < 2 {
		t.Fatalf("test too small: %d blocks, splits not exercised", len(ix.blocks))
	}
	checkSeeks(t, &ix, ref, rng)
	for i, key := range ref { // drain: every block empties and is dropped
		if !ix.remove(key) {
			t.Fatalf("drain: %q missing", key)
		}
		if i%101 == 0 {
			ix.check()
		}
	}
	ix.check()
	if ix.n != 0 || len(ix.blocks) != 0 {
		t.Fatalf("drained index holds %d keys in %d blocks", ix.n, len(ix.blocks))
	}
}

// checkSeeks compares seek+walk against the reference for random probes.
func checkSeeks(t *testing.T, ix *index, ref []string, rng *rand.Rand) {
	t.Helper()
	if got := walk(ix, "", len(ref)+1); !slices.Equal(got, ref) {
		t.Fatalf("index holds %d keys, reference %d", len(got), len(ref))
	}
	for range 50 {
		probe := fmt.Sprintf("k%05d", rng.IntN(4100))[:1+rng.IntN(6)]
		i := sort.SearchStrings(ref, probe)
		want := ref[i:min(i+3, len(ref))]
		if got := walk(ix, probe, 3); !slices.Equal(got, want) {
			t.Fatalf("seek(%q) walks %q, want %q", probe, got, want)
		}
	}
}

func walk(ix *index, from string, n int) []string {
	var out []string
	for c := ix.seek(from); len(out) < n; c = ix.next(c) {
		k, ok := ix.at(c)
		if !ok {
			break
		}
		out = append(out, k)
	}
	return out
}

// TestIndexInsertPresentPanics: inserting a present key is a broken
// invariant of the store, not a silent no-op.
func TestIndexInsertPresentPanics(t *testing.T) {
	var ix index
	ix.insert("a")
	defer func() {
		if recover() == nil {
			t.Fatal("insert of a present key did not panic")
		}
	}()
	ix.insert("a")
}
