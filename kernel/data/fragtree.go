package data

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Paged fragment chunk refs (docs/format.md, "Paged fragment infos",
// format 10): a table version whose fragment chunks (level 0) would need
// more than InlineFragRefs refs under data.frags lists them through
// fragment ref chunks instead, as the index refs are (indextree.go): a
// fragment ref chunk of level L >= 1 (a kind-14 chunk, dir "frag", with
// "level":L and "refs") lists 1..FragRefChunkRefs refs of level L-1, each
// summarising what is below it (fragments, rows, id envelope) exactly as
// a level-0 chunk's ref does, and data.frags lists the top level's refs.
// A reader expands a ref chunk into its refs in place (expandFragRef), so
// a point lookup reads only the ref chunks whose envelope holds its id,
// and a whole-list reader (ensureFrags) reads every one.
const (
	// InlineFragRefs is the most fragment chunk refs a table version this
	// build writes under data.frags before it adds a level.
	InlineFragRefs = 4
	// FragRefChunkRefs bounds the refs of one fragment ref chunk.
	FragRefChunkRefs = 64
	// fragRefCutMod cuts a ref chunk after a ref whose name's CRC-32C is 0
	// mod it (content-defined, as fragment chunks are cut).
	fragRefCutMod = 16
	// maxFragLevels bounds the levels above the fragment chunks (a reader
	// refuses more; test handles with ref chunks of 2 refs need a few).
	maxFragLevels = 16
)

// fragRefChunk is the payload of a fragment ref chunk.
type fragRefChunk struct {
	Table string         `json:"table"`
	Dir   string         `json:"dir"`
	Level int            `json:"level"`
	Refs  []fragChunkRef `json:"refs"`
}

// fragRefNode is a fragment ref chunk a view expanded: its ref and the
// names of the refs it lists, in order (a writer reuses it by them).
type fragRefNode struct {
	ref  fragChunkRef
	kids []string
}

// inlineFragRefs is this handle's bound on the refs data.frags lists.
func (g *Graph) inlineFragRefs() int {
	if g.fragRefInline > 0 {
		return g.fragRefInline
	}
	return InlineFragRefs
}

// fragRefChunkRefs bounds the refs of a fragment ref chunk this handle
// writes.
func (g *Graph) fragRefChunkRefs() int {
	if g.fragRefMax > 1 {
		return min(g.fragRefMax, FragRefChunkRefs)
	}
	return FragRefChunkRefs
}

// maxRefFrags bounds the fragments a ref of level may stand for.
func maxRefFrags(level int) uint64 {
	if level == 0 {
		return FragChunkInfos
	}
	return format.MaxFragments
}

// --- reading ----------------------------------------------------------------

// fragRefChunkOf returns the checked refs fragment ref chunk ref of t
// lists (cached).
func (r *reader) fragRefChunkOf(ctx context.Context, t *Table, ref fragChunkRef) ([]fragChunkRef, error) {
	key := "fref:" + cacheKey(t.Storage, ref.Name)
	if d, ok := r.g.cache.getAny(key); ok {
		return d.([]fragChunkRef), nil
	}
	b, err := r.getChecked(ctx, t, adjRef{Name: ref.Name, Bytes: ref.Bytes})
	if err != nil {
		return nil, err
	}
	refs, err := checkFragRefChunk(t.Storage, ref, b)
	if err != nil {
		return nil, corruptFragment(ref.Name, "fragment ref chunk: %v", err)
	}
	r.g.cache.put(key, refs, int64(ref.Bytes))
	return refs, nil
}

// checkFragRefChunk checks the bytes of fragment ref chunk ref of table
// against its ref (size, CRC, level, count, fragments, rows, envelope)
// and returns the refs it lists.
func checkFragRefChunk(table string, ref fragChunkRef, b []byte) ([]fragChunkRef, error) {
	if uint64(len(b)) != ref.Bytes || crc32.Checksum(b, castagnoli) != ref.CRC32C {
		return nil, fmt.Errorf("size or crc32c does not match its reference")
	}
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, err
	}
	c, err := decodeFragRefChunkPayload(payload)
	if err != nil || c.Table != table || c.Dir != dirFrag || c.Level != ref.Level || c.Level < 1 {
		return nil, fmt.Errorf("fragment ref chunk payload (table %q, dir %q, level %d; its ref's %d): %v", c.Table, c.Dir, c.Level, ref.Level, err)
	}
	if len(c.Refs) == 0 || len(c.Refs) > FragRefChunkRefs {
		return nil, fmt.Errorf("fragment ref chunk lists %d refs", len(c.Refs))
	}
	var frags, rows uint64
	lo, hi := c.Refs[0].Min, c.Refs[0].Max
	for _, k := range c.Refs {
		if err := checkFragRef(k); err != nil || k.Level != c.Level-1 {
			return nil, fmt.Errorf("ref %+v below level %d: %v", k, c.Level, err)
		}
		frags, rows = frags+k.Frags, rows+k.Rows
		lo, hi = min(lo, k.Min), max(hi, k.Max)
	}
	if frags != ref.Frags || rows != ref.Rows || lo != ref.Min || hi != ref.Max {
		return nil, fmt.Errorf("holds %d fragments, %d rows, %q..%q; its reference says %d, %d, %q..%q", frags, rows, lo, hi, ref.Frags, ref.Rows, ref.Min, ref.Max)
	}
	return c.Refs, nil
}

// checkFragRef checks one fragment chunk ref alone: a ULID name, a level
// within maxFragLevels, fragments within what the level can hold, rows
// at least one a fragment, a size and an ordered envelope.
func checkFragRef(r fragChunkRef) error {
	if _, err := ulid.ParseStrict(r.Name); err != nil || r.Level < 0 || r.Level > maxFragLevels || r.Frags == 0 || r.Frags > maxRefFrags(r.Level) ||
		r.Rows < r.Frags || r.Bytes == 0 || r.Min > r.Max {
		return fmt.Errorf("fragment chunk ref %+v is not sane", r)
	}
	return nil
}

// expandFragRef replaces entry c of paged view v, a fragment ref chunk,
// by the refs it lists (one level down), keeping every fragment's index:
// its refs cover exactly its fragments, in order.
func (r *reader) expandFragRef(ctx context.Context, v *tableView, c int) error {
	ref := v.paged[c]
	kids, err := r.fragRefChunkOf(ctx, v.t, ref)
	if err != nil {
		return err
	}
	starts := make([]int, len(kids))
	names := make([]string, len(kids))
	at := v.pageAt[c]
	for i, k := range kids {
		starts[i], names[i] = at, k.Name
		at += int(k.Frags)
	}
	if v.fragNodes == nil {
		v.fragNodes = map[string]fragRefNode{}
	}
	v.fragNodes[kids[0].Name] = fragRefNode{ref: ref, kids: names}
	v.paged = splice(v.paged, c, kids)
	v.pageAt = splice(v.pageAt, c, starts)
	v.pageLoaded = splice(v.pageLoaded, c, make([]bool, len(kids)))
	return nil
}

// splice returns s with element i replaced by with.
func splice[T any](s []T, i int, with []T) []T {
	out := make([]T, 0, len(s)-1+len(with))
	out = append(out, s[:i]...)
	out = append(out, with...)
	return append(out, s[i+1:]...)
}

// loadChunksFor loads every fragment chunk of v whose envelope holds id,
// expanding the ref chunks on the way: at most one read per chunk.
func (r *reader) loadChunksFor(ctx context.Context, v *tableView, id string) error {
	for range maxFragLoads(v) {
		next := -1
		for _, c := range v.chunksFor(id) {
			if !v.pageLoaded[c] {
				next = c
				break
			}
		}
		if next < 0 {
			return nil
		}
		if err := r.stepFragChunk(ctx, v, next); err != nil {
			return err
		}
	}
	return fmt.Errorf("table %s: fragment chunks holding %q not loaded within bound: %w", v.t.Name, id, format.ErrCorrupt)
}

// maxFragLoads bounds the chunk loads and expansions of one paged view:
// each fragment's chunk path, at most maxFragLevels + 1 objects, once.
func maxFragLoads(v *tableView) int { return (len(v.frags) + 1) * (maxFragLevels + 2) }

// --- writing ------------------------------------------------------------------

// fragRefLevels returns the refs data.frags lists for a version whose
// top refs so far are leaves (of one level): leaves itself while they are at most the
// handle's inline bound, else the refs of fragment ref chunks written
// above them, level by level, until they are, each kept by ref from head
// when it lists the same refs.
func (c adjWriter) fragRefLevels(ctx context.Context, t *Table, leaves []fragChunkRef, head *tableView) ([]fragChunkRef, error) {
	refs := leaves
	if len(refs) == 0 {
		return refs, nil
	}
	for level := refs[0].Level + 1; format.CurrentFormat >= FormatIndexTrees && len(refs) > c.g.inlineFragRefs(); level++ {
		if level > maxFragLevels {
			return nil, fmt.Errorf("fragment refs of %s need more than %d levels: %w", t.Name, maxFragLevels, ErrTreeTooTall)
		}
		var up []fragChunkRef
		for len(refs) > 0 {
			n := cutFragRefs(refs, c.g.fragRefChunkRefs())
			ref, err := c.fragRefChunkFor(ctx, t, refs[:n], level, head)
			if err != nil {
				return nil, err
			}
			up, refs = append(up, ref), refs[n:]
		}
		refs = up
	}
	return refs, nil
}

// cutFragRefs returns how many of refs the next ref chunk takes: up to
// the first ref whose name's CRC-32C is 0 mod fragRefCutMod, at most
// limit.
func cutFragRefs(refs []fragChunkRef, limit int) int {
	for i, r := range refs {
		if i+1 == limit || crc32.Checksum([]byte(r.Name), castagnoli)%fragRefCutMod == 0 {
			return i + 1
		}
	}
	return len(refs)
}

// fragRefChunkFor returns the ref of a fragment ref chunk of level level
// listing exactly refs: head's when a ref chunk it expanded lists the same
// refs, else a new one written create-only under a fresh name.
func (c adjWriter) fragRefChunkFor(ctx context.Context, t *Table, refs []fragChunkRef, level int, head *tableView) (fragChunkRef, error) {
	if head != nil {
		if n, ok := head.fragNodes[refs[0].Name]; ok && n.ref.Level == level && sameRefNames(n.kids, refs) {
			return n.ref, nil
		}
	}
	ref := fragChunkRef{Level: level, Min: refs[0].Min, Max: refs[0].Max}
	for _, k := range refs {
		ref.Frags, ref.Rows = ref.Frags+k.Frags, ref.Rows+k.Rows
		ref.Min, ref.Max = min(ref.Min, k.Min), max(ref.Max, k.Max)
	}
	b := format.EncodeAdjacencyChunk(encodeFragRefChunkPayload(fragRefChunk{Table: t.Storage, Dir: dirFrag, Level: level, Refs: refs}, c.g.jsonChunks))
	a, err := c.putAdj(ctx, t, adjRef{}, b)
	if err != nil {
		return fragChunkRef{}, err
	}
	ref.Name, ref.Bytes, ref.CRC32C = a.Name, a.Bytes, a.CRC32C
	if _, err := checkFragRefChunk(t.Storage, ref, b); err != nil {
		panic(fmt.Sprintf("data: fragment ref chunk of %s breaks its rules: %v", t.Name, err))
	}
	return ref, nil
}

// sameRefNames reports whether names are refs' names in order.
func sameRefNames(names []string, refs []fragChunkRef) bool {
	if len(names) != len(refs) {
		return false
	}
	for i := range names {
		if names[i] != refs[i].Name {
			return false
		}
	}
	return true
}

// --- a commit on a partly read paged head -------------------------------------

// allKnown reports whether every fragment info of v is loaded (always, for
// an inline view).
func (v *tableView) allKnown() bool {
	for c := range v.paged {
		if !v.pageLoaded[c] {
			return false
		}
	}
	return true
}

// unknownRows is the rows of the fragments of v whose infos are not
// loaded: the rows of its unread chunks.
func (v *tableView) unknownRows() uint64 {
	var n uint64
	for c, ref := range v.paged {
		if !v.pageLoaded[c] {
			n += ref.Rows
		}
	}
	return n
}

// loadFragOf makes fragment i's info of paged view v known, reading the
// chunks on its path.
func (r *reader) loadFragOf(ctx context.Context, v *tableView, i int) error {
	for range maxFragLevels + 2 {
		if v.fragKnown(i) {
			return nil
		}
		if err := r.stepFragChunk(ctx, v, v.chunkOf(i)); err != nil {
			return err
		}
	}
	return fmt.Errorf("table %s: fragment %d not known within bound: %w", v.t.Name, i, format.ErrCorrupt)
}

// loadForBuild reads, of a paged head view, the infos a commit's build
// needs beyond the fragments its replaced and deleted ids fall in (read
// while planning): the trailing fragments the new rows may merge with
// (mergeCount), newest first, until the rule stops. The other chunks stay
// unread and are kept by ref (fragContentTree).
func (r *reader) loadForBuild(ctx context.Context, v *tableView, newRows uint64) error {
	if v.paged == nil || newRows == 0 {
		return nil
	}
	// mergeCount over the known suffix takes all of it until the rule
	// stops inside it: read one fragment more while it does.
	for i := len(v.frags) - 1; i >= 0; i-- {
		if err := r.loadFragOf(ctx, v, i); err != nil {
			return err
		}
		if mergeCount(v.frags[i:], newRows) < len(v.frags)-i {
			return nil
		}
	}
	return nil
}

// unattachedEmbeds returns, sorted, the names of the fragments v embeds
// whose infos are in chunks it has not read: they belong to chunks a
// commit keeps by ref, so the new version embeds them too.
func (v *tableView) unattachedEmbeds() []string {
	if len(v.embeds) == 0 {
		return nil
	}
	known := map[string]bool{}
	for i, f := range v.frags {
		if v.fragKnown(i) && f.embed != nil {
			known[f.Name] = true
		}
	}
	var out []string
	for name := range v.embeds { //detlint:ordered collects names, sorted below
		if !known[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// fragContentTree is fragContent for a commit on a paged head whose
// chunks were not all read: infos is the new fragment list, from[k] the
// head fragment infos[k] keeps (same name) or rewrites, -1 for the new
// rows' fragments (all at the end), carried the names of head's embedded
// fragments in unread chunks (unattachedEmbeds). Every subtree of the head's fragment
// chunk refs holding no changed fragment is kept by ref, unread; a chunk
// holding one is rewritten from its new infos (the appended fragments go
// to the last), and every ref chunk above it, re-cut at its level.
func (c adjWriter) fragContentTree(ctx context.Context, t *Table, infos []FragmentInfo, from []int, carried []string, rows uint64, head *tableView) (kernel.TableContent, error) {
	e := fragEdit{head: head, kept: make([]bool, len(head.frags)), repl: map[int][]FragmentInfo{}}
	for k, f := range infos {
		switch j := from[k]; {
		case j < 0:
			e.appended = append(e.appended, f)
		case f.Name == head.frags[j].Name:
			e.kept[j] = true
		default:
			e.repl[j] = append(e.repl[j], f)
		}
	}
	refs, err := c.rewriteFragRefs(ctx, t, &e, head.fragTop, 0, true)
	if err != nil {
		return kernel.TableContent{}, err
	}
	if refs, err = c.fragRefLevels(ctx, t, refs, head); err != nil {
		return kernel.TableContent{}, err
	}
	var sumRows, sumFrags uint64
	for _, r := range refs {
		sumRows, sumFrags = sumRows+r.Rows, sumFrags+r.Frags
	}
	if sumRows != rows || sumFrags != uint64(len(infos)) {
		panic(fmt.Sprintf("data: fragment refs of %s hold %d rows and %d fragments, want %d and %d", t.Name, sumRows, sumFrags, rows, len(infos)))
	}
	b, err := json.Marshal(refs)
	if err != nil {
		panic(fmt.Sprintf("data: marshal fragment chunk refs: %v", err))
	}
	md := map[string]string{metaKeyFormat: dataFormatValue, metaFragsKey: string(b)}
	addEmbeds(md, infos, c.g.memo)
	for _, name := range carried {
		md[metaEmbedPrefix+name] = c.g.memo.encodeEmbed(head.embeds[name])
	}
	return kernel.TableContent{Rows: rows, Metadata: md}, nil
}

// fragEdit is what a commit does to a paged head's fragment list: the
// head fragments kept as they are, the infos replacing each rewritten
// one (none: dropped, or merged into the tail), and the new fragments
// appended at the end.
type fragEdit struct {
	head     *tableView
	kept     []bool
	repl     map[int][]FragmentInfo
	appended []FragmentInfo
}

// touches reports whether the edit changes any head fragment in [lo, hi),
// or appends to a range that ends the list (last).
func (e *fragEdit) touches(lo, hi int, last bool) bool {
	if last && len(e.appended) > 0 {
		return true
	}
	for j := lo; j < hi; j++ {
		if !e.kept[j] {
			return true
		}
	}
	return false
}

// rewriteFragRefs returns the refs replacing refs (one level, covering the
// head's fragments from start on; last when they end the list) under e.
func (c adjWriter) rewriteFragRefs(ctx context.Context, t *Table, e *fragEdit, refs []fragChunkRef, start int, last bool) ([]fragChunkRef, error) {
	var out []fragChunkRef
	for idx, ref := range refs {
		lo, hi := start, start+int(ref.Frags)
		start = hi
		end := last && idx == len(refs)-1
		if !e.touches(lo, hi, end) {
			out = append(out, ref)
			continue
		}
		var got []fragChunkRef
		var err error
		if ref.Level == 0 {
			got, err = c.rewriteFragChunk(ctx, t, e, lo, hi, end)
		} else {
			got, err = c.rewriteFragRefChunk(ctx, t, e, ref, lo, end)
		}
		if err != nil {
			return nil, err
		}
		if plant.Enabled(plant.FragEditDropsSubtree) && len(got) == 1 && got[0].Level == ref.Level && got[0].Frags == ref.Frags &&
			got[0].Rows == ref.Rows && got[0].Min == ref.Min && got[0].Max == ref.Max { // planted bug: "the same subtree" by summary, not by names
			got = []fragChunkRef{ref}
		}
		out = append(out, got...)
	}
	return out, nil
}

// rewriteFragChunk writes the fragment chunks listing the new infos of
// head fragments [lo, hi) (and the appended ones when end).
func (c adjWriter) rewriteFragChunk(ctx context.Context, t *Table, e *fragEdit, lo, hi int, end bool) ([]fragChunkRef, error) {
	var list []FragmentInfo
	for j := lo; j < hi; j++ {
		if !e.head.fragKnown(j) {
			panic(fmt.Sprintf("data: fragment chunk of %s holding fragment %d is rewritten unread", t.Name, j))
		}
		if e.kept[j] {
			list = append(list, e.head.frags[j])
		}
		list = append(list, e.repl[j]...)
	}
	if end {
		list = append(list, e.appended...)
	}
	var out []fragChunkRef
	for len(list) > 0 {
		n := cutFrags(list, c.g.chunkInfos(), c.g.cutEvery())
		ref, err := c.fragChunkFor(ctx, t, list[:n], nil, nil)
		if err != nil {
			return nil, err
		}
		out, list = append(out, ref), list[n:]
	}
	return out, nil
}

// rewriteFragRefChunk writes the fragment ref chunks (of ref's level)
// replacing ref under e: its refs rewritten one level down, re-cut.
func (c adjWriter) rewriteFragRefChunk(ctx context.Context, t *Table, e *fragEdit, ref fragChunkRef, lo int, end bool) ([]fragChunkRef, error) {
	kids, err := c.r.fragRefChunkOf(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	kids, err = c.rewriteFragRefs(ctx, t, e, kids, lo, end)
	if err != nil {
		return nil, err
	}
	var out []fragChunkRef
	for len(kids) > 0 {
		n := cutFragRefs(kids, c.g.fragRefChunkRefs())
		up, err := c.fragRefChunkFor(ctx, t, kids[:n], ref.Level, nil)
		if err != nil {
			return nil, err
		}
		out, kids = append(out, up), kids[n:]
	}
	return out, nil
}

// --- consumers outside the data plane ---------------------------------------

// FragmentChunkEntries returns what a fragment chunk of table lists,
// given its stored bytes: a level-0 chunk's fragment infos (names set),
// or a fragment ref chunk's (format 10) chunk names, which are to be read
// in turn. A malformed one matches format.ErrCorrupt. Garbage collection
// and the simulator's leak check walk a paged version through it.
func FragmentChunkEntries(table string, b []byte) (infos []FragmentInfo, chunks []string, err error) {
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, nil, err
	}
	var probe struct {
		Level int `json:"level"`
	}
	if !bytes.HasPrefix(payload, fragRefBinaryMagic) { // a binary payload is a ref chunk; JSON says its level
		if err := json.Unmarshal(payload, &probe); err != nil {
			return nil, nil, fmt.Errorf("fragment chunk: %v: %w", err, format.ErrCorrupt)
		}
		if probe.Level == 0 {
			infos, err := FragmentChunkInfos(table, b)
			return infos, nil, err
		}
	}
	c, err := decodeFragRefChunkPayload(payload)
	if err != nil || c.Table != table || c.Dir != dirFrag || c.Level < 1 || c.Level > maxFragLevels || len(c.Refs) == 0 || len(c.Refs) > FragRefChunkRefs {
		return nil, nil, fmt.Errorf("fragment ref chunk of %s (level %d, %d refs): %v: %w", table, c.Level, len(c.Refs), err, format.ErrCorrupt)
	}
	for _, k := range c.Refs {
		chunks = append(chunks, k.Name)
	}
	return nil, chunks, nil
}

// MaxFragmentLevels bounds the levels of fragment ref chunks above a
// version's fragment chunks: a walker that descends further has met a
// corrupt (or cyclic) list.
const MaxFragmentLevels = maxFragLevels
