package lineage

import (
	"cmp"
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Default reach bounds (kernel.Options.ReachEntries, ReachFolds).
const (
	DefaultReachEntries = 64
	DefaultReachFolds   = 8
	// MinReachBound is the least value either bound may take: a
	// compaction keeps two explicit entries and two folds.
	MinReachBound = 2
)

// Limits bounds a joined reach (docs/format.md, "Commit index reach"):
// past Entries explicit entries or Folds folds the join compacts.
type Limits struct {
	Entries, Folds int
}

// Valid reports whether l is within MinReachBound and the format's caps.
func (l Limits) Valid() bool {
	return l.Entries >= MinReachBound && l.Entries <= format.MaxReachEntries &&
		l.Folds >= MinReachBound && l.Folds <= format.MaxReachFolds
}

// Reach is the reach of one manifest, as commit indexes store it: the
// positions in Explicit, plus the full reach of every manifest in Folds,
// recursively. At is the manifest; HeadAt the manifest holding its head
// commit ID (At, unless At is a commit-less version 0: then its fork
// commit's); Gen the head commit's generation.
type Reach struct {
	At, HeadAt format.ManifestRef
	ID         format.ID
	Gen        uint64
	Explicit   []format.ReachEntry // sorted by incarnation, one per incarnation
	Folds      []format.ReachEntry // sorted by incarnation, one per incarnation
}

// Entry is r's own position with its gen.
func (r Reach) Entry() format.ReachEntry { return format.ReachEntry{ManifestRef: r.At, Gen: r.Gen} }

// FromIndex is the reach of the manifest x.At holding commit x.ID, from its
// complete index: a legacy flat index (Gen 0) gets the derived gen
// LegacyGen and entries of unknown gen.
func FromIndex(x format.CommitIndex) Reach {
	gen := x.Gen
	if gen == 0 {
		gen = LegacyGen(x.Reach)
	}
	return Reach{At: x.At, HeadAt: x.At, ID: x.ID, Gen: gen, Explicit: x.Reach, Folds: x.Folds}
}

// LegacyGen is the generation of a commit whose legacy flat reach is r:
// Σ(version+1). A child's flat reach dominates each parent's entrywise and
// its own entry grows, so it increases strictly along every edge.
func LegacyGen(r []format.ReachEntry) uint64 {
	var g uint64
	for _, e := range r {
		g += e.Version + 1
	}
	return g
}

// ForManifest is the reach of manifest at whose head commit has reach r:
// r itself when at holds that commit, else (a commit-less version 0) r plus
// at, at the head commit's gen.
func (r Reach) ForManifest(at format.ManifestRef) Reach {
	if at == r.At {
		return r
	}
	out := r
	out.At = at
	out.Explicit = mergeEntries(r.Explicit, []format.ReachEntry{{ManifestRef: at, Gen: r.Gen}})
	return out
}

// Index returns r as the commit index of its head commit (r.At must hold
// it).
func (r Reach) Index() format.CommitIndex {
	return format.CommitIndex{ID: r.ID, At: r.At, Complete: true, Reach: r.Explicit, Gen: r.Gen, Folds: r.Folds}
}

// JoinReach returns the reach of commit id published at at, building on
// prev (the reach of the manifest before it: at's version-1, or a fork's
// version 0) and, for a merge, merged (the reach of the merged-from
// manifest). Gen is one more than its inputs'. Explicit is at, the inputs'
// explicit entries and merged's own position (highest version per
// incarnation; at's incarnation at exactly at.Version); folds are the
// inputs' folds. When either exceeds lim, or compact is set (a test's
// forced compaction), it compacts: explicit {at, merged}, folds {prev,
// merged} — everything dropped lies inside their reaches.
func JoinReach(at format.ManifestRef, id format.ID, prev Reach, merged *Reach, lim Limits, compact bool) Reach {
	gen := prev.Gen + 1
	own := []format.ReachEntry{{ManifestRef: at}}
	folds := prev.Folds
	explicit := prev.Explicit
	if merged != nil {
		gen = max(gen, merged.Gen+1)
		own = append(own, merged.Entry())
		folds = mergeEntries(folds, merged.Folds)
		explicit = mergeEntries(explicit, merged.Explicit)
	}
	own[0].Gen = gen
	self := own[0]
	own = normEntries(own)
	explicit = setOwn(mergeEntries(explicit, own), self)
	out := Reach{At: at, HeadAt: at, ID: id, Gen: gen, Explicit: explicit, Folds: folds}
	if compact || len(explicit) > lim.Entries || len(folds) > lim.Folds {
		out.Explicit = setOwn(mergeEntries(nil, own), self)
		out.Folds = normEntries(compactFolds(prev, merged))
	}
	return out
}

// compactFolds are a compaction's folds: prev and merged, whose reaches
// hold everything a compaction drops. A commit-less version 0 is folded as
// the manifest of its head commit (its fork commit): its own position
// stays explicit (the commit's own incarnation, or merged's entry), so a
// fold always names a manifest holding a commit.
func compactFolds(prev Reach, merged *Reach) []format.ReachEntry {
	f := []format.ReachEntry{prev.HeadEntry()}
	if merged != nil {
		f = append(f, merged.HeadEntry())
	}
	return f
}

// HeadEntry is the position of r's head commit with its gen.
func (r Reach) HeadEntry() format.ReachEntry {
	return format.ReachEntry{ManifestRef: r.HeadAt, Gen: r.Gen}
}

// setOwn pins at's incarnation to at's position: a commit reaches its own
// slot, never past it (a merged branch forked from at's incarnation names
// only lower versions of it anyway).
func setOwn(es []format.ReachEntry, own format.ReachEntry) []format.ReachEntry {
	i, found := slices.BinarySearchFunc(es, own, compareEntryInc)
	if !found {
		panic("lineage: setOwn: own incarnation missing from its join")
	}
	es[i] = own
	return es
}

// normEntries sorts es by incarnation and keeps per incarnation the entry
// of the highest version.
func normEntries(es []format.ReachEntry) []format.ReachEntry {
	slices.SortFunc(es, func(a, b format.ReachEntry) int {
		if c := compareEntryInc(a, b); c != 0 {
			return c
		}
		return cmp.Compare(b.Version, a.Version)
	})
	return slices.CompactFunc(es, func(a, b format.ReachEntry) bool { return compareEntryInc(a, b) == 0 })
}

// mergeEntries returns the union of two sorted entry lists, keeping per
// incarnation the entry with the highest version (a new slice).
func mergeEntries(a, b []format.ReachEntry) []format.ReachEntry {
	out := make([]format.ReachEntry, 0, len(a)+len(b))
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b):
			out, i = append(out, a[i]), i+1
		case i == len(a):
			out, j = append(out, b[j]), j+1
		default:
			switch c := compareEntryInc(a[i], b[j]); {
			case c < 0:
				out, i = append(out, a[i]), i+1
			case c > 0:
				out, j = append(out, b[j]), j+1
			default:
				out = append(out, higher(a[i], b[j]))
				i, j = i+1, j+1
			}
		}
	}
	return out
}

// insertMax is the most entries insertEntries places one by one.
const insertMax = 8

// insertEntries is mergeEntries(dst, src) built in dst, which the caller
// owns: each of src (few, sorted) is placed by binary search, so merging
// a fold's few entries into a side's many costs O(log n) compares, not
// O(n) (the collector's open-all search expands thousands of folds).
func insertEntries(dst, src []format.ReachEntry) []format.ReachEntry {
	if len(src) > insertMax {
		return mergeEntries(dst, src) // many: one linear merge beats len(src) shifts
	}
	for _, e := range src {
		i, found := slices.BinarySearchFunc(dst, e, compareEntryInc)
		if found {
			dst[i] = higher(dst[i], e)
			continue
		}
		dst = slices.Insert(dst, i, e)
	}
	return dst
}

func higher(a, b format.ReachEntry) format.ReachEntry {
	if b.Version > a.Version {
		return b
	}
	return a
}

func compareEntryInc(a, b format.ReachEntry) int {
	return format.CompareIncarnation(a.ManifestRef, b.ManifestRef)
}

// lookup returns the entry of es in at's incarnation.
func lookup(es []format.ReachEntry, at format.ManifestRef) (format.ReachEntry, bool) {
	i, found := slices.BinarySearchFunc(es, format.ReachEntry{ManifestRef: at}, compareEntryInc)
	if !found {
		return format.ReachEntry{}, false
	}
	return es[i], true
}

// covers reports whether the positions es name include at.
func covers(es []format.ReachEntry, at format.ManifestRef) bool {
	e, ok := lookup(es, at)
	return ok && e.Version >= at.Version
}
