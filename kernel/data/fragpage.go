package data

import (
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

// Paged fragment infos (docs/format.md, "Paged fragment infos"): a table
// version with more than InlineFragments fragments lists its fragment
// infos in immutable fragment chunks (kind-14 envelopes with dir "frag"
// in R/adj/<table>/), and names only the chunks under data.frags. Readers
// accept both forms; a point lookup loads only the chunks whose id
// envelope holds a requested id.
const (
	// DefaultInlineFragments is the most fragments a table version lists
	// inline (Options.InlineFragments 0 takes it).
	DefaultInlineFragments = 8
	// FragChunkInfos bounds the fragment infos of one fragment chunk.
	FragChunkInfos = 256
	// fragCutMod cuts a chunk after an info whose name's CRC-32C is 0 mod
	// it (content-defined: a local change moves only nearby cuts): about
	// 16 infos a chunk, so a one-row commit's read and rewrite of the
	// chunk at the list's tail stays small (64 until session 26: a
	// one-node commit into a 10^7-row table read and wrote 13,837 bytes
	// against 9,355; docs/perf.md "A one-row commit at 10^7 rows").
	fragCutMod   = 16
	metaFragsKey = "data.frags"
	dirFrag      = "frag"
)

// fragChunkRef names one fragment chunk in a table version: its info
// count, rows, id envelope (smallest min, largest max) and exact size and
// CRC-32C.
type fragChunkRef struct {
	Name   string `json:"name"`
	Frags  uint64 `json:"frags"`
	Rows   uint64 `json:"rows"`
	Min    string `json:"min"`
	Max    string `json:"max"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
	// Level is 0 for a fragment chunk (it lists infos), L >= 1 for a
	// fragment ref chunk listing level L-1 refs (format 10, fragtree.go);
	// omitted when 0.
	Level int `json:"level,omitempty"`
}

// mayContain reports whether id is inside the chunk's id envelope.
func (r fragChunkRef) mayContain(id string) bool { return r.Min <= id && id <= r.Max }

// fragChunkInfo is one fragment info as a chunk lists it: name first.
type fragChunkInfo struct {
	Name string `json:"name"`
	FragmentInfo
}

// fragChunk is the payload of a fragment chunk.
type fragChunk struct {
	Table string          `json:"table"`
	Dir   string          `json:"dir"`
	Frags []fragChunkInfo `json:"frags"`
}

// inlineFragments is the handle's inline bound (0: page every version
// with a fragment).
func (g *Graph) inlineFragments() int {
	switch {
	case g.inline > 0:
		return g.inline
	case g.inline < 0:
		return 0
	}
	return DefaultInlineFragments
}

// chunkInfos bounds the infos of a chunk this handle writes.
func (g *Graph) chunkInfos() int {
	if g.fragChunkMax > 0 {
		return g.fragChunkMax
	}
	return FragChunkInfos
}

// cutEvery is the content-defined cut modulus of this handle.
func (g *Graph) cutEvery() uint32 {
	if g.fragCutEvery > 0 {
		return g.fragCutEvery
	}
	return fragCutMod
}

// parseFragRefs reads the fragment chunk refs of a table version's
// metadata: ok=false when the version lists its infos inline.
func parseFragRefs(md map[string]string, rows uint64) (refs []fragChunkRef, ok bool, err error) {
	raw, ok := md[metaFragsKey]
	if !ok {
		return nil, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &refs); err != nil {
		return nil, false, fmt.Errorf("fragment chunks: %v", err)
	}
	var sum, frags uint64
	for _, r := range refs {
		if err := checkFragRef(r); err != nil || r.Level != refs[0].Level || (r.Level == 0 && r.Frags > FragChunkInfos) {
			return nil, false, fmt.Errorf("fragment chunk ref %+v is not sane (or not of level %d)", r, refs[0].Level)
		}
		sum += r.Rows
		frags += r.Frags
	}
	if sum != rows || frags > format.MaxFragments || len(refs) == 0 {
		return nil, false, fmt.Errorf("%d fragment chunks holding %d fragments and %d rows, want %d rows", len(refs), frags, sum, rows)
	}
	return refs, true, nil
}

// pagedView sets v up for paged infos: placeholders for every fragment,
// filled chunk by chunk (loadFragChunk).
func pagedView(t *Table, refs []fragChunkRef, rows uint64) *tableView {
	n := 0
	starts := make([]int, len(refs))
	for i, r := range refs {
		starts[i] = n
		n += int(r.Frags)
	}
	v := newTableView(t, make([]FragmentInfo, n), rows)
	v.stats = make([]fragStats, n)
	v.paged, v.pageAt, v.pageLoaded = refs, starts, make([]bool, len(refs))
	v.fragTop = refs
	return v
}

// chunksFor returns the indexes of v's fragment chunks whose envelope holds
// id (none for an inline view).
func (v *tableView) chunksFor(id string) []int {
	var out []int
	for i, r := range v.paged {
		if r.mayContain(id) {
			out = append(out, i)
		}
	}
	if plant.Enabled(plant.PageSkip) && len(out) > 0 && out[len(out)-1] == len(v.paged)-1 { // planted bug: the last chunk is skipped
		out = out[:len(out)-1]
	}
	return out
}

// chunkOf returns the index of the chunk listing fragment i of a paged v.
func (v *tableView) chunkOf(i int) int {
	return sort.Search(len(v.pageAt), func(k int) bool { return v.pageAt[k] > i }) - 1
}

// fragKnown reports whether fragment i's info is loaded (always, inline).
func (v *tableView) fragKnown(i int) bool { return v.paged == nil || v.pageLoaded[v.chunkOf(i)] }

// ensureFrags loads every fragment chunk of v, so v.frags is whole
// (expanding every fragment ref chunk on the way).
func (r *reader) ensureFrags(ctx context.Context, v *tableView) error {
	for c := 0; c < len(v.paged); c++ {
		if err := r.loadFragChunk(ctx, v, c); err != nil {
			return err
		}
	}
	return nil
}

// loadFragChunk fills the infos fragment chunk c of v lists; when entry c
// is a fragment ref chunk, it first expands it down to its first
// fragment chunk, which takes index c (the others follow it): the order
// of a reader of the whole list (ensureFrags). A point path steps
// (stepFragChunk) instead.
func (r *reader) loadFragChunk(ctx context.Context, v *tableView, c int) error {
	if v.pageLoaded[c] {
		return nil
	}
	for v.paged[c].Level > 0 {
		if err := r.expandFragRef(ctx, v, c); err != nil {
			return err
		}
	}
	return r.loadLeafFragChunk(ctx, v, c)
}

// stepFragChunk takes one step down a point path at entry c of v: it
// expands a fragment ref chunk (reading only it; its children take its
// place, unread) or loads a fragment chunk. The caller finds the entry
// on its path again: a ref's first child is read only if the path goes
// through it.
func (r *reader) stepFragChunk(ctx context.Context, v *tableView, c int) error {
	switch {
	case v.pageLoaded[c]:
		return nil
	case v.paged[c].Level > 0:
		return r.expandFragRef(ctx, v, c)
	}
	return r.loadLeafFragChunk(ctx, v, c)
}

// loadLeafFragChunk fills the infos of fragment chunk (level 0) c of v.
func (r *reader) loadLeafFragChunk(ctx context.Context, v *tableView, c int) error {
	infos, stats, err := r.fragChunk(ctx, v.t, v.paged[c])
	if err != nil {
		return err
	}
	got := v.frags[v.pageAt[c] : v.pageAt[c]+len(infos)]
	copy(got, infos)
	copy(v.stats[v.pageAt[c]:], stats)
	v.embedsSeen += attachEmbeds(got, v.embeds)
	v.pageLoaded[c] = true
	v.chunksLoaded++
	if v.chunksLoaded == len(v.paged) && v.embedsSeen != len(v.embeds) {
		return fmt.Errorf("table %s: its version embeds a fragment it does not list: %w", v.t.Name, format.ErrCorrupt)
	}
	return nil
}

// decodedFragChunk is a cached decoded fragment chunk.
type decodedFragChunk struct {
	infos []FragmentInfo
	stats []fragStats
}

// fragChunk returns the checked infos of fragment chunk ref of t (cached).
func (r *reader) fragChunk(ctx context.Context, t *Table, ref fragChunkRef) ([]FragmentInfo, []fragStats, error) {
	key := "fchunk:" + cacheKey(t.Storage, ref.Name)
	if d, ok := r.g.cache.getAny(key); ok {
		return d.(*decodedFragChunk).infos, d.(*decodedFragChunk).stats, nil
	}
	b, err := r.getChecked(ctx, t, adjRef{Name: ref.Name, Bytes: ref.Bytes})
	if err != nil {
		return nil, nil, err
	}
	infos, stats, err := decodeFragChunk(t, ref, b)
	if err != nil {
		return nil, nil, err
	}
	r.g.cache.put(key, &decodedFragChunk{infos, stats}, int64(ref.Bytes))
	return infos, stats, nil
}

// decodeFragChunk checks and decodes fragment chunk ref of t
// (checkFragChunk) and decodes each info's statistics. Any failure
// matches ErrCorruptFragment; it never panics.
func decodeFragChunk(t *Table, ref fragChunkRef, b []byte) ([]FragmentInfo, []fragStats, error) {
	infos, err := checkFragChunk(t.Storage, ref, b)
	if err != nil {
		return nil, nil, corruptFragment(ref.Name, "fragment chunk: %v", err)
	}
	stats := make([]fragStats, len(infos))
	for i, f := range infos {
		if stats[i], err = decodeStats(t, f); err != nil {
			return nil, nil, corruptFragment(ref.Name, "fragment %s: %v", f.Name, err)
		}
	}
	return infos, stats, nil
}

// parseFragChunk opens a fragment chunk of table and returns its infos,
// each sane (a ULID name, rows and bytes, min <= max), 1..FragChunkInfos.
func parseFragChunk(table string, b []byte) ([]FragmentInfo, error) {
	payload, err := format.OpenAdjacencyChunk(b)
	if err != nil {
		return nil, err
	}
	var c fragChunk
	if err := json.Unmarshal(payload, &c); err != nil || c.Table != table || c.Dir != dirFrag {
		return nil, fmt.Errorf("fragment chunk payload (table %q, dir %q): %v", c.Table, c.Dir, err)
	}
	if len(c.Frags) == 0 || len(c.Frags) > FragChunkInfos {
		return nil, fmt.Errorf("fragment chunk lists %d infos", len(c.Frags))
	}
	infos := make([]FragmentInfo, len(c.Frags))
	for i, f := range c.Frags {
		infos[i] = f.FragmentInfo
		infos[i].Name = f.Name
		if _, err := ulid.ParseStrict(f.Name); err != nil || f.Rows == 0 || f.Bytes == 0 || f.MinID > f.MaxID {
			return nil, fmt.Errorf("fragment %s info is not sane", f.Name)
		}
	}
	return infos, nil
}

// --- consumers outside the data plane ---------------------------------------

// FragmentChunks returns the names of the fragment chunks a paged table
// version lists (R/adj/<table>/<name>), in order; none for an inline one.
// Garbage collection keeps them, and what they list (FragmentChunkEntries:
// fragments, or the chunks below a fragment ref chunk), while it keeps
// the version.
func FragmentChunks(tv kernel.TableVersion) ([]string, error) {
	for _, kv := range tv.Metadata {
		if kv.Key != metaFragsKey {
			continue
		}
		var refs []fragChunkRef
		if err := json.Unmarshal([]byte(kv.Value), &refs); err != nil {
			return nil, fmt.Errorf("table %s version %d: %s: %v: %w", tv.Table, tv.Version, kv.Key, err, format.ErrCorrupt)
		}
		names := make([]string, len(refs))
		for i, r := range refs {
			names[i] = r.Name
		}
		return names, nil
	}
	return nil, nil
}

// FragmentChunkInfos returns the fragment infos (names set) a fragment
// chunk of table lists, given its stored bytes, in order. A malformed one
// matches format.ErrCorrupt.
func FragmentChunkInfos(table string, b []byte) ([]FragmentInfo, error) {
	infos, err := parseFragChunk(table, b)
	if err != nil {
		return nil, fmt.Errorf("fragment chunk: %v: %w", err, format.ErrCorrupt)
	}
	return infos, nil
}

// PagedFragmentInfos returns every fragment info of a paged table version
// (nil, false for an inline one), reading each of its fragment chunks
// through get (given the chunk's name) and checking it as a reader does:
// size and CRC-32C against its ref, then its infos, count, rows and id
// envelope. A chunk that breaks a rule is a *ChunkError matching
// format.ErrCorrupt; get's errors are returned wrapped in a *ChunkError.
// Column statistics are not decoded here (verify checks fragments).
func PagedFragmentInfos(tv kernel.TableVersion, get func(name string) ([]byte, error)) ([]FragmentInfo, bool, error) {
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	refs, ok, err := parseFragRefs(md, tv.Rows)
	if err != nil {
		return nil, false, fmt.Errorf("table %s version %d: %v: %w", tv.Table, tv.Version, err, format.ErrCorrupt)
	}
	var out []FragmentInfo
	for len(refs) > 0 {
		ref := refs[0]
		refs = refs[1:]
		b, err := get(ref.Name)
		if err != nil {
			return nil, true, &ChunkError{Name: ref.Name, Err: err}
		}
		if ref.Level > 0 { // a fragment ref chunk: its refs come next, in order
			kids, err := checkFragRefChunk(tv.Table, ref, b)
			if err != nil {
				return nil, true, &ChunkError{Name: ref.Name, Err: fmt.Errorf("%v: %w", err, format.ErrCorrupt)}
			}
			refs = append(kids, refs...)
			continue
		}
		infos, err := checkFragChunk(tv.Table, ref, b)
		if err != nil {
			return nil, true, &ChunkError{Name: ref.Name, Err: fmt.Errorf("%v: %w", err, format.ErrCorrupt)}
		}
		out = append(out, infos...)
	}
	return out, ok, nil
}

// ChunkError is a failure to read or check one fragment chunk.
type ChunkError struct {
	Name string // the chunk's name (R/adj/<table>/<name>)
	Err  error
}

func (e *ChunkError) Error() string { return "fragment chunk " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ChunkError) Unwrap() error { return e.Err }

// checkFragChunk checks the bytes of fragment chunk ref of table against
// its ref (size, CRC, count, rows, envelope) and returns its infos.
func checkFragChunk(table string, ref fragChunkRef, b []byte) ([]FragmentInfo, error) {
	if uint64(len(b)) != ref.Bytes || crc32.Checksum(b, castagnoli) != ref.CRC32C {
		return nil, fmt.Errorf("size or crc32c does not match its reference")
	}
	infos, err := parseFragChunk(table, b)
	if err != nil {
		return nil, err
	}
	var rows uint64
	lo, hi := infos[0].MinID, infos[0].MaxID
	for _, f := range infos {
		rows += f.Rows
		lo, hi = min(lo, f.MinID), max(hi, f.MaxID)
	}
	if uint64(len(infos)) != ref.Frags || rows != ref.Rows || lo != ref.Min || hi != ref.Max {
		return nil, fmt.Errorf("holds %d infos, %d rows, %q..%q; its reference says %d, %d, %q..%q", len(infos), rows, lo, hi, ref.Frags, ref.Rows, ref.Min, ref.Max)
	}
	return infos, nil
}

// --- writing ------------------------------------------------------------------

// fragContent is the kernel content of a new version of t holding infos
// (rows rows): inline up to the handle's bound, else paged, keeping by
// ref every chunk of head (nil: none) whose infos it repeats exactly.
func (c adjWriter) fragContent(ctx context.Context, t *Table, infos []FragmentInfo, rows uint64, head *tableView) (kernel.TableContent, error) {
	if len(infos) <= c.g.inlineFragments() {
		return tableContent(infos, rows, c.g.memo), nil
	}
	embedded := infos
	reuse := map[string]int{} // first fragment name -> head chunk
	if head != nil {
		for i := range head.paged {
			if head.pageLoaded[i] {
				reuse[head.frags[head.pageAt[i]].Name] = i
			}
		}
	}
	var refs []fragChunkRef
	for len(infos) > 0 {
		n := cutFrags(infos, c.g.chunkInfos(), c.g.cutEvery())
		ref, err := c.fragChunkFor(ctx, t, infos[:n], head, reuse)
		if err != nil {
			return kernel.TableContent{}, err
		}
		refs = append(refs, ref)
		infos = infos[n:]
	}
	refs, err := c.fragRefLevels(ctx, t, refs, head)
	if err != nil {
		return kernel.TableContent{}, err
	}
	b, err := json.Marshal(refs)
	if err != nil {
		panic(fmt.Sprintf("data: marshal fragment chunk refs: %v", err))
	}
	md := map[string]string{metaKeyFormat: dataFormatValue, metaFragsKey: string(b)}
	addEmbeds(md, embedded, c.g.memo)
	return kernel.TableContent{Rows: rows, Metadata: md}, nil
}

// cutFrags returns how many of infos the next chunk takes: up to the
// first info whose name's CRC-32C is 0 mod every, at most limit
// (FragChunkInfos and fragCutMod; smaller only in tests).
func cutFrags(infos []FragmentInfo, limit int, every uint32) int {
	for i, f := range infos {
		if i+1 == limit || crc32.Checksum([]byte(f.Name), castagnoli)%every == 0 {
			return i + 1
		}
	}
	return len(infos)
}

// fragChunkFor returns the ref of a chunk listing exactly infos: a head
// chunk's when it lists the same fragments, else a new chunk written
// create-only under a fresh name.
func (c adjWriter) fragChunkFor(ctx context.Context, t *Table, infos []FragmentInfo, head *tableView, reuse map[string]int) (fragChunkRef, error) {
	if i, ok := reuse[infos[0].Name]; ok && sameFragNames(head.frags[head.pageAt[i]:head.pageAt[i]+int(head.paged[i].Frags)], infos) {
		return head.paged[i], nil
	}
	ref := fragChunkRef{Frags: uint64(len(infos)), Min: infos[0].MinID, Max: infos[0].MaxID}
	payload := fragChunk{Table: t.Storage, Dir: dirFrag, Frags: make([]fragChunkInfo, len(infos))}
	for i, f := range infos {
		payload.Frags[i] = fragChunkInfo{Name: f.Name, FragmentInfo: f}
		ref.Rows += f.Rows
		ref.Min, ref.Max = min(ref.Min, f.MinID), max(ref.Max, f.MaxID)
	}
	p, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("data: marshal fragment chunk: %v", err))
	}
	b := format.EncodeAdjacencyChunk(p)
	a, err := c.putAdj(ctx, t, adjRef{}, b)
	if err != nil {
		return fragChunkRef{}, err
	}
	ref.Name, ref.Bytes, ref.CRC32C = a.Name, a.Bytes, a.CRC32C
	c.g.cacheWrittenFragChunk(ctx, t, ref, b)
	return ref, nil
}

// sameFragNames reports whether a and b name the same fragments in order.
func sameFragNames(a, b []FragmentInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// versionInfos returns every fragment info of table version tv (inline or
// paged) and its view.
func (r *reader) versionInfos(ctx context.Context, t *Table, tv kernel.TableVersion) (*tableView, error) {
	v, err := r.viewOf(t, tv)
	if err != nil {
		return nil, err
	}
	if err := r.ensureFrags(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}
