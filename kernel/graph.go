package kernel

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/kernel/migrate"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// DefaultRetryBudget is the number of attempts one publish (and every other
// bounded retry loop of a handle) makes before returning *ContentionError.
//
// Sizing: a publish attempt that loses its create-only write lost it to
// another writer's manifest at that exact version, and every later attempt
// targets a strictly higher version; so with N writers each publishing once
// on a branch, a writer loses at most N-1 times. N <= 16 therefore needs at
// most 16 attempts; the remaining 48 absorb transient faults, injected
// conflicts and lost acknowledgements. TestLinearChainSixteenWriters pins
// it on the sim and fs stores (with faults on sim).
const DefaultRetryBudget = 64

// DefaultGrace is the default garbage-collection grace period
// (Options.Grace): far above the longest write (seconds) and the recovery
// lease (30 s). See docs/gc.md.
const DefaultGrace = time.Hour

// DefaultSkewMargin is the default clock-skew margin (Options.SkewMargin);
// it equals gc.DefaultSkewMargin. See docs/gc.md §4.
const DefaultSkewMargin = 5 * time.Minute

// Backoff between attempts: full jitter in [0, min(cap, base*2^(n-1))),
// drawn from Env.Entropy and slept on Env.Clock.
const (
	backoffBase = time.Millisecond
	backoffCap  = 50 * time.Millisecond
)

// Cache sizes (entries) of one handle.
const (
	manifestCacheEntries = 4096
	tableCacheEntries    = 1024
	locationCacheEntries = 1 << 16
	// mergeBaseCacheEntries bounds the merge bases one handle remembers
	// (MergeBaseOf): each is a pure function of two immutable commits.
	mergeBaseCacheEntries = 1 << 12
)

// Options configure Init and Open.
type Options struct {
	// ReadOnly opens a handle that never writes: every mutating call
	// returns ErrReadOnly before any I/O.
	ReadOnly bool
	// Env injects time, entropy and failpoints. Clock and Entropy are
	// required.
	Env Env
	// RetryBudget bounds every retry loop; 0 means DefaultRetryBudget.
	RetryBudget int
	// OpRequestBudget bounds the store requests of one public write
	// operation (Write*, Publish, CommitTableVersion, branch changes,
	// QuarantineSidecar) and of the resolution of one sidecar by an open or
	// Recover; 0 means DefaultOpRequestBudget. Spending it is
	// *RequestBudgetError.
	OpRequestBudget int
	// Grace is the grace period of garbage collection (docs/gc.md): a
	// Write whose staging began longer ago than this (by Env.Clock)
	// refuses to publish with *GraceExpiredError. 0 means DefaultGrace.
	Grace time.Duration
	// SkewMargin is how far the clocks of the processes sharing the store
	// may disagree (docs/gc.md §4; the collectors' gc.Policy.SkewMargin).
	// A publish whose clock reads more than this before the branch head's
	// commit time refuses with *ClockSkewError. 0 means DefaultSkewMargin.
	SkewMargin time.Duration

	// ReachEntries and ReachFolds bound a new commit index's reach: past
	// them it is compacted into folds (docs/format.md, "Commit index
	// reach"). 0 means lineage.DefaultReachEntries / DefaultReachFolds;
	// otherwise within lineage.MinReachBound and the format's caps. Tests
	// and the simulator use small values so folds are exercised. Any value
	// reads any other's indexes.
	ReachEntries, ReachFolds int

	// CounterWrites makes Write commit table versions as format 7 did:
	// counter-named (R/tables/<table>/<fork>/<inv(version)>, the HEAD found
	// by a LIST), each round guarded by a recovery sidecar that is durable
	// before any HEAD moves and deleted after the publish. Manifests are
	// still stamped with the current format, and what such a handle writes
	// is read, collected and recovered by every format-8 handle exactly as
	// a format-7 binary's writes are (docs/format.md, "v7->v8"); a crash
	// mid-write leaves a sidecar that the next opener rolls forward or back.
	// It costs a write 3 more requests (the LIST, the sidecar PUT and
	// DELETE). It exists for tests only — recovery of format-7 writes (which
	// old graphs may hold) stays exercised by the recovery tests, the
	// crash-cut sweep's counter half and the simulator's cuts workload —
	// and is an Option rather than a test hook because those tests live in
	// other packages. A production handle leaves it false and writes
	// versions named per attempt.
	CounterWrites bool

	// NoRiding makes Write commit every table version as an object, as
	// format 10 did, never riding its manifest (format 11, docs/format.md
	// "v10->v11"). Manifests are still stamped with the current format;
	// every handle reads both kinds. It exists for tests (fixtures of older
	// layouts, the object path of the collector and recovery) and for
	// measuring what riding saves; a production handle leaves it false.
	NoRiding bool

	// RidingBudget bounds what this handle's writes let ride their
	// manifest (format 11, docs/format.md "v10->v11"): a version rides only
	// if its payload is at most VersionBytes and the manifest's riding
	// bytes stay at most ManifestBytes; the publish re-checks the manifest
	// bound on the head it builds on and, over it, redoes the round with
	// objects. A zero field means the format's maximum
	// (format.MaxRidingVersionBytes, MaxRidingManifestBytes); a negative
	// one or one above the maximum is refused at Open and Init
	// (ErrInvalidArgument). It is a pure input of the decision, known to
	// the writer only: readers, the collector and verify accept any
	// manifest within the format's maxima. Tests and the simulator use
	// small budgets so that manifests go over budget and versions spill
	// to objects beside riding ones; a production handle leaves it zero.
	RidingBudget RidingBudget
}

// RidingBudget is Options.RidingBudget: the byte bounds of one riding
// version's payload and of a manifest's riding payloads, each 0 for the
// format's maximum.
type RidingBudget struct {
	VersionBytes, ManifestBytes int
}

// Valid reports whether each field is within 0 and the format's maximum.
func (b RidingBudget) Valid() bool {
	return b.VersionBytes >= 0 && b.VersionBytes <= format.MaxRidingVersionBytes && b.ManifestBytes >= 0 && b.ManifestBytes <= format.MaxRidingManifestBytes
}

// resolve returns b with each zero field replaced by the format's
// maximum, or ErrInvalidArgument for a field out of range.
func (b RidingBudget) resolve() (RidingBudget, error) {
	if !b.Valid() {
		return RidingBudget{}, fmt.Errorf("%w: RidingBudget %d/%d bytes out of range (0 to %d/%d)", ErrInvalidArgument,
			b.VersionBytes, b.ManifestBytes, format.MaxRidingVersionBytes, format.MaxRidingManifestBytes)
	}
	return RidingBudget{VersionBytes: cmp.Or(b.VersionBytes, format.MaxRidingVersionBytes), ManifestBytes: cmp.Or(b.ManifestBytes, format.MaxRidingManifestBytes)}, nil
}

// Graph is a handle on one graph under one root of one store. It is safe for
// concurrent use and starts no goroutines.
type Graph struct {
	store    objstore.Store
	keys     format.Keys
	readOnly bool
	clock    Clock
	ent      *lockedReader
	fp       *failpoint.Set
	budget   int
	// opRequests is the request budget of one public write operation.
	opRequests int
	grace      time.Duration
	skew       time.Duration // Options.SkewMargin
	// reachLimits bound the reach of the commit indexes this handle writes.
	reachLimits lineage.Limits
	// counterWrites is Options.CounterWrites.
	counterWrites bool
	// noRiding is Options.NoRiding.
	noRiding bool
	// riding is Options.RidingBudget, resolved (no zero field).
	riding RidingBudget

	manifests *cache[loaded]
	tables    *cache[format.TableVersion]
	locations *cache[format.ManifestRef]
	indexes   *cache[format.CommitIndex] // verified commit indexes (kernel/commitindex.go)
	// bases holds MergeBaseOf's answers by commit pair (mergeBaseKey).
	bases  *cache[Commit]
	legacy *cache[*migrate.Lineage] // v3 lineages, per incarnation or legacy block (kernel/legacy.go)
	views  *views                   // newest head seen per incarnation (kernel/view.go)

	// main is main's incarnation, read by Open or written by Init before
	// the handle is returned and never changed after (zero: unknown). Main
	// is never deleted or re-created (K8) and a migration keeps the
	// incarnation, so it stays main's live incarnation for the life of the
	// graph; Branch("main") answers from it (kernel/branch_ref.go).
	main BranchRef
}

// loaded is one decoded manifest with its writer token and location.
type loaded struct {
	m     format.Manifest // read-only
	token format.Token
}

func (l loaded) ref() format.ManifestRef {
	return format.ManifestRef{Branch: l.m.Branch.Name, Incarnation: l.m.Branch.Incarnation, Version: l.m.Version}
}

func newGraph(store objstore.Store, root string, opts Options) (*Graph, error) {
	if store == nil || opts.Env.Clock == nil || opts.Env.Entropy == nil {
		return nil, fmt.Errorf("%w: store, Env.Clock and Env.Entropy are required", ErrInvalidArgument)
	}
	if opts.RetryBudget < 0 || opts.OpRequestBudget < 0 || opts.Grace < 0 || opts.SkewMargin < 0 {
		return nil, fmt.Errorf("%w: negative RetryBudget, OpRequestBudget, Grace or SkewMargin", ErrInvalidArgument)
	}
	if root != "" {
		if err := objstore.ValidateKey(objstore.OpList, root); err != nil {
			return nil, fmt.Errorf("%w: root %q: %v", ErrInvalidArgument, root, err)
		}
	}
	budget := opts.RetryBudget
	if budget == 0 {
		budget = DefaultRetryBudget
	}
	grace := opts.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	skew := opts.SkewMargin
	if skew == 0 {
		skew = DefaultSkewMargin
	}
	opRequests := opts.OpRequestBudget
	if opRequests == 0 {
		opRequests = DefaultOpRequestBudget
	}
	lim := lineage.Limits{Entries: cmp.Or(opts.ReachEntries, lineage.DefaultReachEntries), Folds: cmp.Or(opts.ReachFolds, lineage.DefaultReachFolds)}
	if !lim.Valid() {
		return nil, fmt.Errorf("%w: ReachEntries %d or ReachFolds %d out of range", ErrInvalidArgument, opts.ReachEntries, opts.ReachFolds)
	}
	riding, err := opts.RidingBudget.resolve()
	if err != nil {
		return nil, err
	}
	return &Graph{
		store: budgetedStore{inner: store}, keys: format.NewKeys(root), readOnly: opts.ReadOnly,
		clock: opts.Env.Clock, ent: &lockedReader{r: opts.Env.Entropy}, fp: opts.Env.Failpoints, budget: budget,
		opRequests: opRequests, grace: grace, skew: skew, reachLimits: lim, counterWrites: opts.CounterWrites, noRiding: opts.NoRiding,
		riding:    riding,
		manifests: newCache[loaded](manifestCacheEntries),
		tables:    newCache[format.TableVersion](tableCacheEntries),
		locations: newCache[format.ManifestRef](locationCacheEntries),
		indexes:   newCache[format.CommitIndex](indexCacheEntries),
		bases:     newCache[Commit](mergeBaseCacheEntries),
		legacy:    newCache[*migrate.Lineage](legacyCacheEntries),
		views:     newViews(),
	}, nil
}

// Root returns the graph root the handle was opened on.
func (g *Graph) Root() string { return g.keys.Root() }

// ReadOnly reports whether the handle refuses every write.
func (g *Graph) ReadOnly() bool { return g.readOnly }

// RetryBudget returns the handle's attempt budget per retry loop.
func (g *Graph) RetryBudget() int { return g.budget }

func (g *Graph) checkWritable(op string) error {
	if g.readOnly {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	return nil
}

// Init creates a new graph under root: the schema contract object, the
// branch-name marker of main and the genesis manifest (main, incarnation 1,
// version 0, a genesis commit with no parent, the current format stamp). It
// returns a read-write handle, or ErrGraphExists if root already holds one.
func Init(ctx context.Context, store objstore.Store, root string, schemaContract []byte, opts Options) (*Graph, error) {
	if opts.ReadOnly {
		return nil, fmt.Errorf("init: %w", ErrReadOnly)
	}
	if len(schemaContract) > format.MaxPayloadBytes {
		return nil, fmt.Errorf("init: %w: schema contract exceeds %d bytes", ErrInvalidArgument, format.MaxPayloadBytes)
	}
	g, err := newGraph(store, root, opts)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if _, found, err := g.latest(ctx, format.MainBranch); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	} else if found {
		return nil, fmt.Errorf("init %q: %w", root, ErrGraphExists)
	}
	sum, err := g.writeSchema(ctx, schemaContract)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if err := g.writeNameMarker(ctx, format.MainBranch); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	// No fork exists yet, so the fork index is complete (kernel/forkindex.go).
	if err := g.writeForkIndexFlag(ctx, 0); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	if err := g.writeGenesis(ctx, sum); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	return g, nil
}

func (g *Graph) writeSchema(ctx context.Context, contract []byte) (string, error) {
	s := sha256.Sum256(contract)
	sum := hex.EncodeToString(s[:])
	tok, err := g.token()
	if err != nil {
		return "", err
	}
	key := g.keys.Schema(sum)
	if _, err := g.putCreateOnly(ctx, "write schema", key, format.EncodeSchema(contract, tok)); err != nil {
		return "", err
	}
	// Identical content (content-addressed key) is fine; prove it.
	got, err := g.readSchema(ctx, sum)
	if err != nil {
		return "", err
	}
	if string(got) != string(contract) {
		return "", fmt.Errorf("schema %s: stored contract differs from its hash: %w", sum, ErrCorrupt)
	}
	return sum, nil
}

func (g *Graph) readSchema(ctx context.Context, sum string) ([]byte, error) {
	key := g.keys.Schema(sum)
	var obj objstore.Object
	err := g.withRetry(ctx, "read schema", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if err != nil {
		return nil, storeNotFound("read schema "+sum, err)
	}
	contract, _, err := format.DecodeSchema(obj.Data)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", key, err)
	}
	if s := sha256.Sum256(contract); hex.EncodeToString(s[:]) != sum {
		return nil, fmt.Errorf("read schema %s: content does not match its hash: %w", key, ErrCorrupt)
	}
	return contract, nil
}

// writeNameMarker writes name's marker create-only (someone else's marker
// there is as good as ours), writing it again when a collection deleted the
// marker it found before its read-back.
func (g *Graph) writeNameMarker(ctx context.Context, name string) error {
	tok, err := g.token()
	if err != nil {
		return err
	}
	key, data := g.keys.NameMarker(name), format.EncodeNameMarker(name, tok)
	for range maxMarkerWrites {
		// A precondition failure comes back only when the read-back found
		// no marker: one existed at the write and a collection deleted it
		// before the read (the name had no manifest then; docs/gc.md rule
		// 10). A marker only says "list this name": write it again.
		if _, err = g.putCreateOnly(ctx, "write name marker", key, data); !errors.Is(err, objstore.ErrPreconditionFailed) {
			return err
		}
	}
	return &ContentionError{Op: "write name marker " + name, Attempts: maxMarkerWrites, Last: err}
}

// maxMarkerWrites bounds the writes of one name marker that each found a
// marker deleted before its read-back.
const maxMarkerWrites = 8

func (g *Graph) writeGenesis(ctx context.Context, schema string) error {
	incID, err := g.mintID()
	if err != nil {
		return err
	}
	c, err := g.newCommit(format.KindGenesis, "graphkernel:init", "genesis")
	if err != nil {
		return err
	}
	m := lineage.Genesis(format.BranchIdentity{Name: format.MainBranch, Incarnation: 1, IncarnationID: incID}, c, schema)
	at := format.ManifestRef{Branch: format.MainBranch, Incarnation: 1, Version: 0}
	x := genesisIndex(c.ID, at)
	if _, _, err := g.writeCommitIndex(ctx, &x, false); err != nil {
		return err
	}
	tok, err := g.token()
	if err != nil {
		return err
	}
	data := mustEncodeManifest(&m, tok)
	ours, err := g.putCreateOnly(ctx, "write genesis", g.keys.Manifest(format.MainBranch, 1, 0), data)
	if err != nil {
		return err
	}
	if !ours {
		return ErrGraphExists
	}
	g.manifests.put(g.keys.Manifest(format.MainBranch, 1, 0), loaded{m: m, token: tok})
	g.main = refOf(&m)
	return nil
}

// Open opens the graph under root. It reads main's head manifest (one LIST
// and one GET), which fixes main's incarnation for the handle (Branch("main")
// then costs no request), and refuses a format stamp outside what this build reads with
// *UnsupportedFormatError, in both modes (format.CheckStamp, the one guard).
// A read-write open of a graph whose main is in an older supported format
// migrates main forward (kernel/migration.go); a read-only handle never
// writes and reads the older format as is. A root with no graph returns
// ErrNotFound.
//
// A read-write open then runs the recovery sweep over every sidecar past
// RecoveryLease (kernel/recovery_sweep.go): interrupted writes are rolled forward or back,
// each with one audit record. It fails, keeping the sidecar, on an invariant
// violation (*RecoveryInvariantError) or a corrupt or newer-format sidecar.
// Last, it reads the fork-index flag (one GET); a graph written before fork
// markers has none, and this open backfills the marker of every live fork
// and writes the flag (once per graph, O(branch names); an error fails the
// open and the next read-write open starts again).
func Open(ctx context.Context, store objstore.Store, root string, opts Options) (*Graph, error) {
	g, err := newGraph(store, root, opts)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	head, found, err := g.latest(ctx, format.MainBranch)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", root, err)
	}
	if !found {
		return nil, fmt.Errorf("open %q: no graph: %w", root, ErrNotFound)
	}
	if err := g.migrateOnOpen(ctx, head); err != nil {
		return nil, fmt.Errorf("open %q: %w", root, err)
	}
	if !head.m.Tombstone { // main is never deleted; a tombstone keeps Branch's lookup (and its refusal)
		g.main = refOf(&head.m)
	}
	if !g.readOnly { // recovery: converge interrupted writes (kernel/recovery_sweep.go)
		if err := g.sweepOpen(ctx); err != nil {
			return nil, fmt.Errorf("open %q: %w", root, err)
		}
		// A graph from before fork markers gets them once (kernel/forkindex.go).
		if err := g.ensureForkIndex(ctx); err != nil {
			return nil, fmt.Errorf("open %q: %w", root, err)
		}
	}
	return g, nil
}

// Schema returns the schema contract bytes main's head manifest names.
func (g *Graph) Schema(ctx context.Context) ([]byte, error) {
	head, found, err := g.latest(ctx, format.MainBranch)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("schema: main: %w", ErrNotFound)
	}
	return g.readSchema(ctx, head.m.Schema)
}

// --- minting ---------------------------------------------------------------

func (g *Graph) mintID() (format.ID, error) {
	id, err := ulid.New(ulid.Timestamp(g.clock.Now()), g.ent)
	if err != nil {
		return format.ID{}, fmt.Errorf("mint id: %w", err)
	}
	return id, nil
}

func (g *Graph) token() (format.Token, error) {
	t, err := format.NewToken(g.ent)
	if err != nil {
		return t, fmt.Errorf("mint writer token: %w", err)
	}
	return t, nil
}

func (g *Graph) newCommit(kind format.CommitKind, actor, message string) (format.Commit, error) {
	id, err := g.mintID()
	if err != nil {
		return format.Commit{}, err
	}
	return format.Commit{ID: id, Actor: actor, Message: message, TimeUnixNano: g.clock.Now().UnixNano(), Kind: kind}, nil
}

func mustEncodeManifest(m *format.Manifest, tok format.Token) []byte {
	data, err := format.EncodeManifest(m, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: built an invalid manifest: %v", err))
	}
	return data
}

// --- retry -----------------------------------------------------------------

func retryable(err error) bool { return objstore.IsRetryable(err) }

// backoff sleeps a full-jitter delay before attempt n (n >= 1).
func (g *Graph) backoff(ctx context.Context, n int) error {
	ceil := backoffBase << min(n-1, 16)
	if ceil > backoffCap || ceil <= 0 {
		ceil = backoffCap
	}
	var b [8]byte
	if _, err := io.ReadFull(g.ent, b[:]); err != nil {
		return fmt.Errorf("backoff jitter: %w", err)
	}
	return g.clock.Sleep(ctx, time.Duration(binary.BigEndian.Uint64(b[:])%uint64(ceil)))
}

// withRetry runs f until it succeeds, fails with a non-retryable error, or
// the budget is spent (*ContentionError). A failure caused by
// objstore.ErrSyncFailed is returned at once: it is transient for the
// caller, who must write the object again, but the same request fails
// the same way until then (TestRetryStopsAtASyncFailure).
func (g *Graph) withRetry(ctx context.Context, op string, f func() error) error {
	var last error
	for attempt := 0; attempt < g.budget; attempt++ {
		if attempt > 0 {
			if err := g.backoff(ctx, attempt); err != nil {
				return err
			}
		}
		err := f()
		if err == nil || !retryable(err) || errors.Is(err, objstore.ErrSyncFailed) {
			return err
		}
		last = err
	}
	return &ContentionError{Op: op, Attempts: g.budget, Last: last}
}

// putCreateOnly writes data at key unless the key exists, resolving
// ambiguous and lost outcomes by reading back: ours reports whether the
// object now at key carries data's writer token (true: our write landed,
// possibly in an earlier ambiguous attempt; false: someone else's object
// was there first).
func (g *Graph) putCreateOnly(ctx context.Context, op, key string, data []byte) (ours bool, err error) {
	return g.createOnly(ctx, op, key, data, func() error {
		_, err := g.store.Put(ctx, key, data, objstore.CreateOnly)
		return err
	})
}

// putCreateOnlyDeferred is putCreateOnly through
// objstore.PutDeferredIntact: on a store that can, the object is whole or
// absent after a crash but its name is durable only once a later
// objstore.PutAfterDeferred (the publish) or SyncDeferred names key;
// deferred reports that some attempt's durability was deferred (key must
// then ride the publish's sync).
func (g *Graph) putCreateOnlyDeferred(ctx context.Context, op, key string, data []byte) (ours, deferred bool, err error) {
	ours, err = g.createOnly(ctx, op, key, data, func() error {
		_, d, err := objstore.PutDeferredIntact(ctx, g.store, key, data, objstore.CreateOnly)
		deferred = deferred || d
		return err
	})
	return ours, deferred, err
}

// createOnly is putCreateOnly with put as the create-only write.
func (g *Graph) createOnly(ctx context.Context, op, key string, data []byte, put func() error) (ours bool, err error) {
	env, err := format.DecodeEnvelope(data)
	if err != nil {
		panic(fmt.Sprintf("kernel: putCreateOnly(%s): unframed data: %v", key, err))
	}
	err = g.withRetry(ctx, op, func() error {
		perr := put()
		if perr == nil {
			ours = true
			return nil
		}
		if !errors.Is(perr, objstore.ErrPreconditionFailed) && !objstore.IsAmbiguous(perr) {
			return perr // transient or final
		}
		present, mine, rerr := g.readBackToken(ctx, key, env.Token)
		if rerr != nil {
			return rerr
		}
		if !present {
			return perr // ambiguous and not applied: write again
		}
		ours = mine
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", op, key, err)
	}
	return ours, nil
}

// readBackToken reports whether an object exists at key and whether it
// carries token.
func (g *Graph) readBackToken(ctx context.Context, key string, token format.Token) (present, mine bool, err error) {
	obj, err := g.store.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	env, err := format.DecodeEnvelope(obj.Data)
	if err != nil {
		return false, false, fmt.Errorf("read back %s: %w", key, err)
	}
	return true, env.Token == token, nil
}

// --- manifest loading ------------------------------------------------------

// latest returns the newest manifest of the newest incarnation of name
// (LIST limit 1 + GET, the GET served from cache when possible).
func (g *Graph) latest(ctx context.Context, name string) (loaded, bool, error) {
	var page objstore.ListPage
	err := g.withRetry(ctx, "load head of "+name, func() (err error) {
		page, err = g.store.List(ctx, g.keys.BranchPrefix(name), "", 1)
		return err
	})
	if err != nil {
		return loaded{}, false, fmt.Errorf("load head of %q: %w", name, err)
	}
	if len(page.Keys) == 0 {
		return loaded{}, false, nil
	}
	inc, v, err := g.keys.ParseManifestKey(name, page.Keys[0])
	if err != nil {
		return loaded{}, false, fmt.Errorf("load head of %q: %w", name, err)
	}
	l, err := g.manifestAt(ctx, format.ManifestRef{Branch: name, Incarnation: inc, Version: v})
	if err == nil {
		g.views.note(l)
	}
	return l, err == nil, err
}

// manifestAt returns the manifest at ref (see rawManifestAt), with the head
// of a v3 manifest filled in from its legacy lineage.
func (g *Graph) manifestAt(ctx context.Context, ref format.ManifestRef) (loaded, error) {
	l, err := g.rawManifestAt(ctx, ref)
	if err != nil || !isV3(l) {
		return l, err
	}
	return g.withLegacyHead(ctx, l)
}

// rawManifestAt GETs and decodes the manifest at ref, of any format the
// stamp guard accepts, checking that its content names the location it was
// stored at. A v3 manifest comes back with a zero head.
func (g *Graph) rawManifestAt(ctx context.Context, ref format.ManifestRef) (loaded, error) {
	key := g.keys.Manifest(ref.Branch, ref.Incarnation, ref.Version)
	if l, ok := g.manifests.get(key); ok {
		return l, nil
	}
	var obj objstore.Object
	err := g.withRetry(ctx, "read manifest", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if err != nil {
		return loaded{}, storeNotFound("read manifest "+key, err)
	}
	return g.acceptManifest(key, ref, obj.Data)
}

// acceptManifest decodes the bytes read at key, the manifest at ref, of
// any format the stamp guard accepts, checks that its content names ref,
// and caches it.
func (g *Graph) acceptManifest(key string, ref format.ManifestRef, data []byte) (loaded, error) {
	m, tok, err := format.DecodeManifestAnyStamp(data)
	if err != nil {
		return loaded{}, fmt.Errorf("read manifest %s: %w", key, err)
	}
	l := loaded{m: m, token: tok}
	if l.ref() != ref {
		return loaded{}, fmt.Errorf("read manifest %s: content names %+v: %w", key, l.ref(), ErrCorrupt)
	}
	g.manifests.put(key, l)
	g.noteCommit(l)
	return l, nil
}

// noteCommit remembers where l's commit lives.
func (g *Graph) noteCommit(l loaded) {
	if l.m.Commit != nil {
		g.locations.put(l.m.Commit.ID.String(), l.ref())
	}
}
