package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
)

// Options configure Init and Open.
type Options struct {
	// Kernel configures the kernel handle (environment, read-only, retry
	// budget). Its Env supplies the clock and entropy of fragment names too.
	Kernel kernel.Options
	// Limits bound each transaction; zero fields take the defaults.
	Limits Limits
	// CacheBytes bounds the handle's cache of decoded fragments, shared by
	// its snapshots and transactions: 0 takes DefaultCacheBytes, a
	// negative value disables the cache.
	CacheBytes int64
	// Group turns on group commit for the handle's transactions (group.go);
	// the zero value leaves it off.
	Group GroupOptions
	// Codec encodes the fragments and adjacency pages this handle writes
	// (CodecDefault: DefaultCodec); reads accept every codec.
	Codec Codec
	// InlineFragments is the most fragments a table version this handle
	// writes lists inline; a version with more is written paged
	// (docs/format.md, "Paged fragment infos"). 0 takes
	// DefaultInlineFragments; a negative value pages every version
	// holding a fragment (tests and the simulator).
	InlineFragments int
	// EmbedFragments, if negative, makes every fragment this handle writes
	// an object of its own; otherwise a new fragment of at most
	// MaxEmbeddedFragmentBytes rides its table version while the version
	// embeds at most MaxEmbeddedBytes (format 9; docs/format.md, "v8->v9").
	EmbedFragments int
	// IndexFanout, when at least 2, shapes the indexes this handle writes
	// so that small tables carry index trees (docs/format.md, "Paged
	// index refs"; tests and the simulator): pages of IndexFanout rows,
	// IndexFanout pages per chunk and refs per ref chunk, one ref per
	// direction in a table version; likewise a paged version's fragment
	// chunks list IndexFanout infos, its fragment ref chunks IndexFanout
	// refs, and the version one ref.
	// 0 takes the defaults; readers accept every shape.
	IndexFanout int
	// JSONIndexChunks makes this handle write index chunk and fragment
	// ref chunk payloads as JSON, as formats 7 to 11 did, instead of
	// binary (format 12;
	// docs/format.md "Binary index chunks"): graphs mixing both forms, as
	// a migrated graph does, for tests, the simulator and side-by-side
	// measurement. Every reader reads both forms.
	JSONIndexChunks bool
}

// maxCatalogs bounds the decoded schemas one handle keeps (schema changes
// are out of scope, so one is the norm).
const maxCatalogs = 16

// Graph is a typed property graph on a kernel graph: node and edge tables
// of Arrow fragments, written through transactions and read through
// snapshots. It is safe for concurrent use and starts no goroutines.
type Graph struct {
	k      *kernel.Graph
	store  objstore.Store
	keys   format.Keys
	clock  kernel.Clock
	ent    *lockedReader
	limits Limits
	cache  *fragCache
	memo   *codecMemo // remembered info and embed codings (memo.go)
	group  *grouper   // group commit (group.go)
	codec  Codec
	inline int // Options.InlineFragments
	embed  int // Options.EmbedFragments
	// fragChunkMax bounds the infos of a fragment chunk written (0:
	// FragChunkInfos); set only by tests, to cut many small chunks.
	fragChunkMax int
	fragCutEvery uint32 // 0: fragCutMod; set only by tests
	// fragRefInline and fragRefMax bound the fragment chunk refs a
	// version lists and the refs of a fragment ref chunk written (0:
	// InlineFragRefs, FragRefChunkRefs; set only by tests).
	fragRefInline, fragRefMax int
	// idxInline, idxFanout and idxLeafPages shape the index trees this
	// handle writes (indextree.go; 0: the defaults); set only by tests.
	idxInline, idxFanout, idxLeafPages, idxPageRows int
	// jsonChunks is Options.JSONIndexChunks (tests also set it).
	jsonChunks bool

	mu       sync.Mutex
	catalogs map[string]*catalog // schema hash -> decoded, validated schema
}

// Init creates a graph under root whose schema contract is s (validated and
// canonically encoded by s.Contract) and returns a read-write handle.
func Init(ctx context.Context, store objstore.Store, root string, s schema.Schema, opts Options) (*Graph, error) {
	contract, err := s.Contract()
	if err != nil {
		return nil, fmt.Errorf("data init: %w", err)
	}
	if err := opts.Codec.check(); err != nil {
		return nil, fmt.Errorf("data init: %w", err)
	}
	g, kopts := newGraph(store, root, opts)
	k, err := kernel.Init(ctx, store, root, contract, kopts)
	if err != nil {
		return nil, fmt.Errorf("data init: %w", err)
	}
	g.k = k
	return g, nil
}

// Open opens the graph under root.
func Open(ctx context.Context, store objstore.Store, root string, opts Options) (*Graph, error) {
	if err := opts.Codec.check(); err != nil {
		return nil, fmt.Errorf("data open: %w", err)
	}
	g, kopts := newGraph(store, root, opts)
	k, err := kernel.Open(ctx, store, root, kopts)
	if err != nil {
		return nil, fmt.Errorf("data open: %w", err)
	}
	g.k = k
	return g, nil
}

func newGraph(store objstore.Store, root string, opts Options) (*Graph, kernel.Options) {
	kopts := opts.Kernel
	ent := &lockedReader{r: kopts.Env.Entropy}
	if kopts.Env.Entropy != nil {
		kopts.Env.Entropy = ent // one lock for the kernel's draws and ours
	}
	return (&Graph{store: store, keys: format.NewKeys(root), clock: kopts.Env.Clock, ent: ent,
		limits: opts.Limits.withDefaults(), cache: newFragCache(opts.CacheBytes), memo: newCodecMemo(), codec: opts.Codec.resolve(), inline: opts.InlineFragments, embed: opts.EmbedFragments, catalogs: map[string]*catalog{},
		jsonChunks: opts.JSONIndexChunks, group: newGrouper(opts.Group, opts.Limits.withDefaults())}).withIndexFanout(opts.IndexFanout), kopts
}

// withIndexFanout applies Options.IndexFanout n (>= 2) to g.
func (g *Graph) withIndexFanout(n int) *Graph {
	if n >= 2 {
		g.idxInline, g.idxFanout, g.idxLeafPages, g.idxPageRows = 1, n, n, n
		g.fragChunkMax, g.fragRefInline, g.fragRefMax = n, 1, n
	}
	return g
}

// Kernel returns the underlying kernel handle (branches, history, ...).
func (g *Graph) Kernel() *kernel.Graph { return g.k }

// Branch returns a handle on the live incarnation of the branch name.
func (g *Graph) Branch(ctx context.Context, name string) (kernel.BranchRef, error) {
	return g.k.Branch(ctx, name)
}

// catalog returns the decoded schema whose contract has sha256 hex sum:
// one GET of the contract the first time a handle meets it, then from
// memory (the contract is content-addressed and immutable).
func (g *Graph) catalog(ctx context.Context, sum string) (*catalog, error) {
	g.mu.Lock()
	c, ok := g.catalogs[sum]
	g.mu.Unlock()
	if ok {
		return c, nil
	}
	raw, err := g.get(ctx, g.keys.Schema(sum))
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", sum, err)
	}
	contract, _, err := format.DecodeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", sum, err)
	}
	if h := sha256.Sum256(contract); hex.EncodeToString(h[:]) != sum {
		return nil, fmt.Errorf("read schema %s: content does not match its hash: %w", sum, format.ErrCorrupt)
	}
	s, err := schema.Decode(contract)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", sum, err)
	}
	c = newCatalog(s, sum)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.catalogs) >= maxCatalogs {
		g.catalogs = map[string]*catalog{}
	}
	g.catalogs[sum] = c
	return c, nil
}

// --- store access with bounded retry ------------------------------------------

// readBackoff is the pause before retry n of a transient read failure.
func readBackoff(n int) time.Duration {
	d := time.Millisecond << min(n, 6)
	return d
}

// retry runs f until it succeeds, fails with a non-retryable error, or the
// kernel's retry budget is spent (then the last error, which is retryable).
func (g *Graph) retry(ctx context.Context, f func() error) error {
	var err error
	for n := 0; n < g.k.RetryBudget(); n++ {
		if n > 0 {
			if serr := g.clock.Sleep(ctx, readBackoff(n)); serr != nil {
				return errors.Join(err, serr)
			}
		}
		if err = f(); err == nil || !objstore.IsRetryable(err) || objstore.IsAmbiguous(err) {
			return err
		}
	}
	return fmt.Errorf("retry budget of %d spent: %w", g.k.RetryBudget(), err)
}

func (g *Graph) get(ctx context.Context, key string) ([]byte, error) {
	var obj objstore.Object
	err := g.retry(ctx, func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	return obj.Data, err
}

// putFragment stores new fragment bytes create-only. An ambiguous or lost
// outcome is resolved by reading back: the key is fresh, so finding our
// exact bytes there means our write landed. Inside materialize the write
// may be deferred (putObject): its key joins the batch materialize syncs;
// in a collecting batch it is not written here but left to the kernel
// (kernel.TableContent.New).
func (g *Graph) putFragment(ctx context.Context, key string, b []byte) error {
	if batch := batchOf(ctx); batch != nil && batch.collect {
		batch.objects = append(batch.objects, kernel.NewObject{Key: key, Data: b})
		return nil
	}
	deferred := false
	err := g.retry(ctx, func() error {
		var err error
		deferred, err = g.putObject(ctx, key, b)
		if err == nil || !(objstore.IsAmbiguous(err) || errors.Is(err, objstore.ErrPreconditionFailed)) {
			return err
		}
		got, rerr := g.get(ctx, key)
		switch {
		case rerr == nil && string(got) == string(b):
			return nil
		case errors.Is(rerr, objstore.ErrNotFound) && objstore.IsAmbiguous(err):
			return objstore.NewError(objstore.OpPut, key, objstore.ErrTransient, errors.New("ambiguous write did not land; retrying"))
		case rerr == nil:
			return fmt.Errorf("fragment %s exists with other content: %w", key, format.ErrCorrupt)
		}
		return rerr
	})
	if err != nil {
		return fmt.Errorf("write fragment %s: %w", key, err)
	}
	if deferred {
		batch := batchOf(ctx)
		batch.keys = append(batch.keys, key)
	}
	return nil
}

// mintName returns a fresh fragment name: a ULID from the injected clock
// and entropy.
func (g *Graph) mintName() (format.ID, error) {
	id, err := ulid.New(ulid.Timestamp(g.clock.Now()), g.ent)
	if err != nil {
		return format.ID{}, fmt.Errorf("mint fragment name: %w", err)
	}
	return id, nil
}

// lockedReader serialises reads of the injected entropy, which the kernel
// and the data plane share.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// sortedKeys returns the keys of a set, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m { //detlint:ordered collects keys that are sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
