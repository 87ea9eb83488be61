package migrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// Fixture writer bounds.
const (
	// MaxFixtureOps bounds the operations of one FixtureSpec.
	MaxFixtureOps = 100_000
	// fixturePutAttempts bounds the attempts of one fixture write against
	// transient store faults.
	fixturePutAttempts = 64
)

// GenesisActor and GenesisMessage are the actor and message of the legacy
// genesis commit the fixture writer gives main.
const (
	GenesisActor   = "graphkernel:init"
	GenesisMessage = "genesis"
)

// OpKind is what one fixture operation does.
type OpKind uint8

// The fixture operations, each as a v3 writer performed it.
const (
	// OpCommit publishes the next v3 manifest of Branch (bumping Tables),
	// then writes its legacy commit (parent: the branch head) unless
	// LoseCommit.
	OpCommit OpKind = iota + 1
	// OpFork creates Branch (incarnation 1) from the head of From: a v3
	// version-0 manifest with the fork point and From's pins, no commit.
	OpFork
	// OpMerge is OpCommit with a second parent: the head of From.
	OpMerge
	// OpStray writes a legacy commit on Branch that claims Branch's current
	// manifest version without publishing a manifest: the v3 race where a
	// writer's second write landed for a version another writer published.
	OpStray
)

// FixtureOp is one operation of a v3 fixture.
type FixtureOp struct {
	Kind    OpKind
	Branch  string
	From    string // OpFork: the source branch; OpMerge: the merged branch
	Actor   string
	Message string
	Tables  []string // OpCommit, OpMerge: tables that get a new version
	// LoseCommit models v3's failed second write: the manifest is
	// published, its legacy commit never is.
	LoseCommit bool
}

// FixtureSpec describes a v3 graph. Main is created first (a version-0
// manifest and a legacy genesis commit); Ops then run in order.
type FixtureSpec struct {
	Schema []byte
	// Entropy supplies commit ids, incarnation ids and writer tokens.
	Entropy io.Reader
	// Start is the time of the genesis commit; each operation is 1ms later.
	Start time.Time
	// Unstamped writes every object with an absent (0) format stamp, which
	// reads as the oldest supported format.
	Unstamped bool
	Ops       []FixtureOp
}

// FixtureBranch is what the fixture wrote for one branch: the expected
// lineage a reader or a migration must preserve.
type FixtureBranch struct {
	Name          string
	Incarnation   uint64
	IncarnationID format.ID
	ForkOf        *format.ForkPoint
	Version       uint64                // the newest v3 manifest version
	Tables        []format.TablePin     // the pins of that manifest
	Commits       []format.LegacyCommit // every legacy commit written, ascending id
	Head          format.ID             // the v3 head (fork commit if no own commit)
}

// Lineage returns the indexed view of the branch's legacy commits.
func (b *FixtureBranch) Lineage() (*Lineage, error) { return NewLineage(b.Commits, b.Version) }

// Fixture is the result of WriteV3Fixture.
type Fixture struct {
	Root     string
	Schema   string          // sha256 hex of the schema contract
	Branches []FixtureBranch // in creation order, main first
}

// Branch returns the fixture branch name.
func (f *Fixture) Branch(name string) (FixtureBranch, bool) {
	for _, b := range f.Branches {
		if b.Name == name {
			return b, true
		}
	}
	return FixtureBranch{}, false
}

// History returns the history of branch name as a correct reader (or a
// correct migration) must present it before any v4 commit: its legacy
// commits, newest first by the v3 head rule, then its source branch's
// history as of the fork point, recursively. Lost second writes are absent.
func (f *Fixture) History(name string) ([]format.ID, error) {
	var out []format.ID
	upTo := uint64(math.MaxUint64)
	for hop := 0; hop <= len(f.Branches); hop++ {
		b, ok := f.Branch(name)
		if !ok {
			return nil, fmt.Errorf("fixture has no branch %q", name)
		}
		lin, err := b.Lineage()
		if err != nil {
			return nil, err
		}
		for _, c := range lin.UpTo(min(upTo, b.Version)) {
			out = append(out, c.ID)
		}
		if b.ForkOf == nil {
			return out, nil
		}
		name, upTo = b.ForkOf.Branch, b.ForkOf.ManifestVersion
	}
	return nil, fmt.Errorf("fixture fork points of %q form a cycle", name)
}

// WriteV3Fixture writes a v3 graph under root as a v3 writer would have:
// per publish, the lineage-less v3 manifest first and the legacy commit
// object after it (R/legacy/commits/<branch>/<inv(inc)>/<commitID>), plus
// the schema contract, branch-name markers and v3 table versions, all
// stamped 3 (or absent). Every write is create-only; the root must hold no
// graph. It is test support (kernel tests, the simulator's migrator
// workload) and returns what it wrote.
func WriteV3Fixture(ctx context.Context, store objstore.Store, root string, spec FixtureSpec) (Fixture, error) {
	if spec.Entropy == nil || store == nil {
		return Fixture{}, fmt.Errorf("v3 fixture: store and Entropy are required")
	}
	if len(spec.Ops) > MaxFixtureOps {
		return Fixture{}, fmt.Errorf("v3 fixture: %d ops exceeds %d", len(spec.Ops), MaxFixtureOps)
	}
	w := &fixtureWriter{ctx: ctx, store: store, keys: format.NewKeys(root), spec: spec, now: spec.Start,
		stamp: format.FormatV3, byName: map[string]int{}}
	if spec.Unstamped {
		w.stamp = 0
	}
	if err := w.init(); err != nil {
		return Fixture{}, fmt.Errorf("v3 fixture: init: %w", err)
	}
	for i, op := range spec.Ops {
		w.now = w.now.Add(time.Millisecond)
		if err := w.apply(op); err != nil {
			return Fixture{}, fmt.Errorf("v3 fixture: op %d (%d on %q): %w", i, op.Kind, op.Branch, err)
		}
	}
	out := Fixture{Root: root, Schema: w.schema}
	for _, b := range w.branches {
		b.Commits = cloneCommits(b.Commits)
		sort.Slice(b.Commits, func(i, j int) bool { return b.Commits[i].ID.Compare(b.Commits[j].ID) < 0 })
		b.Tables = append([]format.TablePin(nil), b.Tables...)
		out.Branches = append(out.Branches, *b)
	}
	return out, nil
}

type fixtureWriter struct {
	ctx      context.Context
	store    objstore.Store
	keys     format.Keys
	spec     FixtureSpec
	now      time.Time
	stamp    uint16
	schema   string
	branches []*FixtureBranch
	byName   map[string]int // lookup only; output order is branches
	frag     int
}

func (w *fixtureWriter) branch(name string) (*FixtureBranch, error) {
	i, ok := w.byName[name]
	if !ok {
		return nil, fmt.Errorf("no branch %q", name)
	}
	return w.branches[i], nil
}

func (w *fixtureWriter) id() (format.ID, error) {
	return ulid.New(ulid.Timestamp(w.now), w.spec.Entropy)
}

func (w *fixtureWriter) init() error {
	sum := sha256.Sum256(w.spec.Schema)
	w.schema = hex.EncodeToString(sum[:])
	if err := w.putEnvelope(w.keys.Schema(w.schema), format.KindSchema, w.spec.Schema); err != nil {
		return err
	}
	incID, err := w.id()
	if err != nil {
		return err
	}
	main := &FixtureBranch{Name: format.MainBranch, Incarnation: 1, IncarnationID: incID}
	if err := w.create(main); err != nil {
		return err
	}
	return w.commit(main, nil, GenesisActor, GenesisMessage)
}

// create writes the name marker and version 0 of a new branch.
func (w *fixtureWriter) create(b *FixtureBranch) error {
	if _, dup := w.byName[b.Name]; dup {
		return fmt.Errorf("branch %q exists", b.Name)
	}
	if err := format.ValidateName(b.Name); err != nil {
		return err
	}
	w.byName[b.Name] = len(w.branches)
	w.branches = append(w.branches, b)
	if err := w.putEnvelope(w.keys.NameMarker(b.Name), format.KindNameMarker, []byte(b.Name)); err != nil {
		return err
	}
	return w.manifest(b)
}

func (w *fixtureWriter) apply(op FixtureOp) error {
	switch op.Kind {
	case OpFork:
		return w.fork(op)
	case OpCommit, OpMerge, OpStray:
	default:
		return fmt.Errorf("unknown op kind %d", op.Kind)
	}
	b, err := w.branch(op.Branch)
	if err != nil {
		return err
	}
	parents := []format.ID{b.Head}
	if op.Kind == OpMerge {
		from, err := w.branch(op.From)
		if err != nil {
			return err
		}
		if from.Head == b.Head {
			return fmt.Errorf("merge of %q into %q: same head", op.From, op.Branch)
		}
		parents = append(parents, from.Head)
	}
	if op.Kind == OpStray {
		return w.commit(b, parents, op.Actor, op.Message)
	}
	for _, t := range op.Tables {
		if err := w.bump(b, t); err != nil {
			return err
		}
	}
	b.Version++
	if err := w.manifest(b); err != nil {
		return err
	}
	if op.LoseCommit {
		return nil
	}
	return w.commit(b, parents, op.Actor, op.Message)
}

func (w *fixtureWriter) fork(op FixtureOp) error {
	src, err := w.branch(op.From)
	if err != nil {
		return err
	}
	incID, err := w.id()
	if err != nil {
		return err
	}
	b := &FixtureBranch{Name: op.Branch, Incarnation: 1, IncarnationID: incID, Head: src.Head,
		Tables: append([]format.TablePin(nil), src.Tables...),
		ForkOf: &format.ForkPoint{Branch: src.Name, Incarnation: src.Incarnation, IncarnationID: src.IncarnationID,
			ManifestVersion: src.Version, CommitID: src.Head}}
	return w.create(b)
}

// bump writes the next version of table on b's fork and pins it.
func (w *fixtureWriter) bump(b *FixtureBranch, table string) error {
	if err := format.ValidateName(table); err != nil {
		return err
	}
	i := sort.Search(len(b.Tables), func(i int) bool { return b.Tables[i].Name >= table })
	tv := format.TableVersion{Table: table, Fork: b.IncarnationID, Version: 1, Rows: 1}
	if i < len(b.Tables) && b.Tables[i].Name == table {
		p := b.Tables[i]
		tv.Version, tv.Rows, tv.BasedOn = p.Version+1, p.Rows+1, &format.TableRef{Fork: p.Fork, Version: p.Version}
	} else {
		b.Tables = append(b.Tables, format.TablePin{})
		copy(b.Tables[i+1:], b.Tables[i:])
	}
	w.frag++
	tv.Fragments = []string{fmt.Sprintf("v3-fragment-%d", w.frag)}
	b.Tables[i] = format.TablePin{Name: table, Fork: tv.Fork, Version: tv.Version, Rows: tv.Rows}
	tok, err := format.NewToken(w.spec.Entropy)
	if err != nil {
		return err
	}
	data, err := format.EncodeTableVersion(&tv, tok)
	if err != nil {
		return err
	}
	e, err := format.DecodeEnvelope(data)
	if err != nil {
		return err
	}
	e.Stamp = w.stamp
	return w.put(w.keys.TableVersion(table, tv.Fork, tv.Version), format.EncodeEnvelope(e))
}

func (w *fixtureWriter) manifest(b *FixtureBranch) error {
	v := format.V3Manifest{Version: b.Version, Branch: format.BranchIdentity{Name: b.Name, Incarnation: b.Incarnation,
		IncarnationID: b.IncarnationID}, ForkOf: b.ForkOf, Tables: b.Tables, Schema: w.schema}
	if len(v.Tables) == 0 {
		v.Tables = nil
	}
	tok, err := format.NewToken(w.spec.Entropy)
	if err != nil {
		return err
	}
	data, err := format.EncodeV3Manifest(&v, tok, w.stamp)
	if err != nil {
		return err
	}
	return w.put(w.keys.Manifest(b.Name, b.Incarnation, b.Version), data)
}

// commit writes one legacy commit claiming b's current manifest version and
// moves b's head by the v3 rule.
func (w *fixtureWriter) commit(b *FixtureBranch, parents []format.ID, actor, message string) error {
	id, err := w.id()
	if err != nil {
		return err
	}
	c := format.LegacyCommit{ID: id, Parents: parents, Actor: actor, Message: message,
		TimeUnixNano: w.now.UnixNano(), ManifestVersion: b.Version}
	tok, err := format.NewToken(w.spec.Entropy)
	if err != nil {
		return err
	}
	data, err := format.EncodeLegacyCommit(&c, tok, w.stamp)
	if err != nil {
		return err
	}
	if err := w.put(w.keys.LegacyCommit(b.Name, b.Incarnation, id), data); err != nil {
		return err
	}
	b.Commits = append(b.Commits, c)
	b.Head, _ = format.LegacyHead(b.Commits)
	return nil
}

func (w *fixtureWriter) putEnvelope(key string, kind format.Kind, payload []byte) error {
	tok, err := format.NewToken(w.spec.Entropy)
	if err != nil {
		return err
	}
	return w.put(key, format.EncodeEnvelope(format.Envelope{Stamp: w.stamp, Kind: kind, Token: tok, Payload: payload}))
}

// put writes data at key create-only, retrying transient faults (bounded)
// and resolving ambiguous or lost outcomes by reading back.
func (w *fixtureWriter) put(key string, data []byte) error {
	var last error
	for attempt := 0; attempt < fixturePutAttempts; attempt++ {
		_, err := w.store.Put(w.ctx, key, data, objstore.CreateOnly)
		if err == nil {
			return nil
		}
		last = err
		if errors.Is(err, objstore.ErrPreconditionFailed) || objstore.IsAmbiguous(err) {
			obj, gerr := w.store.Get(w.ctx, key)
			switch {
			case gerr == nil && bytes.Equal(obj.Data, data):
				return nil
			case gerr == nil:
				return fmt.Errorf("put %s: another object is there (the root must hold no graph): %w", key, err)
			case !errors.Is(gerr, objstore.ErrNotFound) && !objstore.IsRetryable(gerr):
				return fmt.Errorf("put %s: read back: %w", key, gerr)
			}
			continue
		}
		if !objstore.IsRetryable(err) {
			return fmt.Errorf("put %s: %w", key, err)
		}
	}
	return fmt.Errorf("put %s: %d attempts: %w", key, fixturePutAttempts, last)
}
