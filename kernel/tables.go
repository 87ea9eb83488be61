package kernel

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// TableContent is the content of a new table version: opaque data-fragment
// names (in order), a row count, and metadata (stored as sorted pairs).
type TableContent struct {
	Fragments []string
	Rows      uint64
	Metadata  map[string]string
	// ContentPreserving marks the version as holding exactly the rows of
	// the version it is built on (a compaction), so strict writers' pins
	// of that version stay satisfied (lineage.PinSatisfied). Only a Write
	// Build may set it, and only on a pinned table.
	ContentPreserving bool
	// New are objects the content names that the caller has not written
	// (fragments, index pages: fresh names, never reused for other bytes).
	// The kernel writes each create-only before anything references it
	// (an object already there with the same bytes is this one, written by
	// an earlier round: a Build may return the same content again), and
	// durable before the publish. A format-8 write round issues them in
	// one batch with its table versions (objstore.PutMany), their
	// durability deferred to the publish (objstore.PutAfterDeferred).
	New []NewObject
}

// TableRef names one version of a table on one fork; the zero TableRef means
// "no version".
type TableRef = format.TableRef

// TablePin is one table version visible in a snapshot.
type TablePin = format.TablePin

// TableVersion is one decoded, immutable table version.
type TableVersion = format.TableVersion

// TableHead returns the newest committed version of table on b: the newer of
// the newest version on b's own fork (LIST limit 1) and the version b's
// head manifest pins (inherited from the source branch, or adopted by a
// merge). The zero TableRef means the table has no version on b. The HEAD
// may be ahead of the pinned version: a version is committed before it is
// published. A version that rides its manifest (Rides, format 11) has no
// object: read it with ReadPinned from a snapshot's pin.
func (g *Graph) TableHead(ctx context.Context, b BranchRef, table string) (TableRef, error) {
	if err := format.ValidateName(table); err != nil {
		return TableRef{}, fmt.Errorf("table head: %w", err)
	}
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return TableRef{}, fmt.Errorf("table head of %q: %w", table, err)
	}
	return g.tableHead(ctx, b, &head.m, table)
}

func (g *Graph) tableHead(ctx context.Context, b BranchRef, m *format.Manifest, table string) (TableRef, error) {
	var page objstore.ListPage
	err := g.withRetry(ctx, "table head", func() (err error) {
		page, err = g.store.List(ctx, g.keys.TableForkPrefix(table, b.incID), "", 1)
		return err
	})
	if err != nil {
		return TableRef{}, fmt.Errorf("table head of %q on %s: %w", table, b, err)
	}
	var head TableRef
	if pin, ok := m.Pin(table); ok {
		head = pin.Ref()
	}
	if len(page.Keys) == 1 && !g.keys.IsTableAttemptKey(table, b.incID, page.Keys[0]) { // attempt keys sort after every counter key
		v, err := g.keys.ParseTableVersionKey(table, b.incID, page.Keys[0])
		if err != nil {
			return TableRef{}, fmt.Errorf("table head of %q on %s: %w", table, b, err)
		}
		if v > head.Version || (v == head.Version && !head.Named()) {
			head = TableRef{Fork: b.incID, Version: v}
		}
	}
	return head, nil
}

// CommitTableVersion writes version HEAD+1 of table on b's fork, create-only,
// with basedOn recorded as the version the content was built from (zero:
// none). It moves the table HEAD but publishes nothing: pass the returned
// update to Publish. Losing the create-only write to a concurrent writer
// returns *VersionMismatchError (refresh and retry).
func (g *Graph) CommitTableVersion(ctx context.Context, b BranchRef, table string, content TableContent, basedOn TableRef) (TableUpdate, error) {
	if err := g.checkWritable("commit table version"); err != nil {
		return TableUpdate{}, err
	}
	ctx = g.withOpBudget(ctx, "commit table version")
	if err := format.ValidateName(table); err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version: %w", err)
	}
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version of %q: %w", table, err)
	}
	th, err := g.tableHead(ctx, b, &head.m, table)
	if err != nil {
		return TableUpdate{}, err
	}
	if err := g.writeNewObjectsDurable(ctx, []plannedWrite{{table: table, content: content}}); err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version of %q: %w", table, err)
	}
	return g.commitTableVersionAt(ctx, b, table, content, basedOn, th)
}

// commitTableVersionAt writes version th.Version+1 on b's fork.
func (g *Graph) commitTableVersionAt(ctx context.Context, b BranchRef, table string, content TableContent, basedOn, th TableRef) (TableUpdate, error) {
	tv := format.TableVersion{Table: table, Fork: b.incID, Version: th.Version + 1, Rows: content.Rows,
		Fragments: append([]string(nil), content.Fragments...), Metadata: sortedMetadata(content.Metadata)}
	if len(tv.Fragments) == 0 {
		tv.Fragments = nil
	}
	if basedOn != (TableRef{}) {
		tv.BasedOn = &basedOn
	}
	tok, err := g.token()
	if err != nil {
		return TableUpdate{}, err
	}
	data, err := format.EncodeTableVersion(&tv, tok)
	if err != nil {
		return TableUpdate{}, fmt.Errorf("commit table version of %q: %w: %v", table, ErrInvalidArgument, err)
	}
	key := g.keys.TableVersion(table, b.incID, tv.Version)
	ours, err := g.putCreateOnly(ctx, "commit table version", key, data)
	if err != nil {
		return TableUpdate{}, err
	}
	if !ours {
		return TableUpdate{}, &VersionMismatchError{Table: table, Expected: th.Version, Actual: tv.Version}
	}
	g.tables.put(key, tv)
	return TableUpdate{Table: table, Fork: b.incID, Version: tv.Version, Rows: tv.Rows}, nil
}

func sortedMetadata(md map[string]string) []format.KV {
	if len(md) == 0 {
		return nil
	}
	keys := make([]string, 0, len(md))
	//detlint:ordered collects keys that are sorted next
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]format.KV, 0, len(keys))
	for _, k := range keys {
		out = append(out, format.KV{Key: k, Value: md[k]})
	}
	return out
}

// ReadTable returns the table version ref names (or ErrNotFound). The zero
// ref yields the zero TableVersion for table. A version that rides its
// manifest (ref.Rides, format 11) has no object: ReadTable refuses it with
// ErrInvalidArgument, and ReadPinned reads it from a pin.
func (g *Graph) ReadTable(ctx context.Context, table string, ref TableRef) (TableVersion, error) {
	if err := format.ValidateName(table); err != nil {
		return TableVersion{}, fmt.Errorf("read table: %w", err)
	}
	if ref == (TableRef{}) {
		return TableVersion{Table: table}, nil
	}
	key := g.keys.TableVersionRef(table, ref)
	if ref.Rides {
		// No object holds it: the manifests pinning it carry it. Refused
		// whatever the handle's cache holds, so the answer never depends
		// on it.
		return TableVersion{}, fmt.Errorf("read table version %s: it rides its manifest and has no object; read it through its pin (ReadPinned): %w", key, ErrInvalidArgument)
	}
	if tv, ok := g.tables.get(key); ok && !tv.Rides {
		return tv, nil
	}
	var obj objstore.Object
	err := g.withRetry(ctx, "read table", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		// Named by a pin, a based_on or a sidecar, so it existed: a
		// collection removed it. Matches ErrNotFound too.
		return TableVersion{}, fmt.Errorf("read table version %s: %w (%w)", key, ErrReclaimed, storeNotFound("", err))
	}
	if err != nil {
		return TableVersion{}, storeNotFound("read table version "+key, err)
	}
	tv, _, err := format.DecodeTableVersion(obj.Data)
	if err != nil {
		return TableVersion{}, fmt.Errorf("read table version %s: %w", key, err)
	}
	if tv.Table != table || tv.Ref() != ref {
		return TableVersion{}, fmt.Errorf("read table version %s: content names %s/%s/%d: %w", key, tv.Table, tv.Fork, tv.Version, ErrCorrupt)
	}
	g.tables.put(key, tv)
	return tv, nil
}

// ReadPinned returns the table version pin names: the version riding
// the manifest with the pin (format 11: pin.Riding, no request), else
// ReadTable of its reference. A riding payload that does not decode to
// the version the pin names matches ErrCorrupt.
func (g *Graph) ReadPinned(ctx context.Context, pin TablePin) (TableVersion, error) {
	if pin.Riding == "" {
		return g.ReadTable(ctx, pin.Name, pin.Ref())
	}
	key := g.keys.TableVersionRef(pin.Name, pin.Ref())
	if tv, ok := g.tables.get(key); ok && tv.Rides {
		return tv, nil
	}
	tv, err := format.RidingVersion(pin)
	if err != nil {
		return TableVersion{}, fmt.Errorf("read table version %s: %w", key, err)
	}
	g.tables.put(key, tv)
	return tv, nil
}

// readAt reads table's version ref as manifest m shows it: through m's pin
// when m pins ref (the version may ride m), else by reference.
func (g *Graph) readAt(ctx context.Context, m *format.Manifest, table string, ref TableRef) (TableVersion, error) {
	if pin, ok := m.Pin(table); ok && pin.Ref() == ref {
		return g.ReadPinned(ctx, pin)
	}
	return g.ReadTable(ctx, table, ref)
}

// isMismatch reports a *VersionMismatchError and returns it.
func isMismatch(err error) (*VersionMismatchError, bool) {
	var mm *VersionMismatchError
	ok := errors.As(err, &mm)
	return mm, ok
}
