package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Storage layout under schema evolution (docs/format.md "Schema
// evolution"). A table's Arrow schema (Table.Schema) names properties; its
// fragments name storage columns (schema.Property.StorageColumn), which
// differ only after a rename or the re-add of a dropped name. Fragments
// written under an older schema are read through the table's current
// layout: a column they lack reads as null, a retired column they hold is
// skipped, a renamed column keeps its data. Nothing is rewritten.

// layout fills the storage side of t from its properties and retired
// columns: the disk schema, the storage column index, the retired set and
// the cache identity.
func (t *Table) layout(retired []string) {
	fields := append([]arrow.Field(nil), t.arrow.Fields()...)
	t.diskIndex = make(map[string]int, len(fields))
	for c := t.firstProp(); c < len(fields); c++ {
		fields[c].Name = t.Props[c-t.firstProp()].StorageColumn()
	}
	for c, f := range fields {
		t.diskIndex[f.Name] = c
	}
	md := t.arrow.Metadata()
	t.disk = arrow.NewSchema(fields, &md)
	t.retired = make(map[string]bool, len(retired))
	for _, r := range retired {
		t.retired[r] = true
	}
	t.cacheID = t.Storage + "@" + layoutID(t.arrow, t.disk, retired, t.Props)
}

// layoutID fingerprints a table's schema (its property names: cached
// records are labelled with them), its disk schema, its defaults and
// retired columns: two tables with the same fingerprint decode every
// fragment to the same record, so they may share cached records.
func layoutID(named, disk *arrow.Schema, retired []string, props []schema.Property) string {
	h := sha256.New()
	for _, f := range named.Fields() {
		fmt.Fprintf(h, "%s\x00", f.Name)
	}
	for _, f := range disk.Fields() {
		fmt.Fprintf(h, "%s\x00%s\x00%t\x00", f.Name, f.Type, f.Nullable)
	}
	for _, p := range props { // a default is what a fragment without the column reads
		if p.Default != "" {
			fmt.Fprintf(h, "=%s\x00%s\x00", p.StorageColumn(), p.Default)
		}
	}
	for _, r := range retired {
		fmt.Fprintf(h, "-%s\x00", r)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// storageName returns the storage column of column c.
func (t *Table) storageName(c int) string { return t.disk.Field(c).Name }

// storageColumn returns the column index of a storage column name.
func (t *Table) storageColumn(name string) (int, bool) {
	c, ok := t.diskIndex[name]
	return c, ok
}

// toDisk returns rec (with t's Arrow schema) relabelled with the storage
// column names, sharing its arrays; the caller releases the result.
func (t *Table) toDisk(rec arrow.Record) arrow.Record {
	return array.NewRecord(t.disk, rec.Columns(), rec.NumRows())
}

// fromDisk turns a decoded fragment record into one with t's Arrow
// schema, taking ownership of rec. A fragment in the current layout is
// relabelled; an older one is projected: a property column it lacks reads
// the property's default in every row, or null (only a property with a
// default or a nullable one may be missing), a retired column it holds is
// skipped, an int32 column of a property widened to int64 is widened.
// Anything else (an unknown or retyped column, a missing key or required
// column, another table's metadata) is an error.
func (t *Table) fromDisk(rec arrow.Record) (arrow.Record, error) {
	defer rec.Release()
	fs := rec.Schema()
	if sameSchema(fs, t.disk) {
		return array.NewRecord(t.arrow, rec.Columns(), rec.NumRows()), nil
	}
	if err := t.checkOldLayout(fs); err != nil {
		return nil, err
	}
	n := rec.NumRows()
	cols := make([]arrow.Array, len(t.disk.Fields()))
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for c, f := range t.disk.Fields() {
		idx := fs.FieldIndices(f.Name)
		if len(idx) == 1 {
			cols[c] = rec.Column(idx[0])
			if !arrow.TypeEqual(cols[c].DataType(), f.Type) { // checked: a widening
				a := widenInt32(cols[c])
				made = append(made, a)
				cols[c] = a
			}
			continue
		}
		a, err := t.missingColumn(c, int(n))
		if err != nil {
			return nil, err
		}
		made = append(made, a)
		cols[c] = a
	}
	return array.NewRecord(t.arrow, cols, n), nil
}

// checkOldLayout checks the schema of a fragment written under an older
// schema of t: its metadata, each field known (a current storage column of
// the same type, not newly required, or a retired one), none twice.
func (t *Table) checkOldLayout(fs *arrow.Schema) error {
	md, want := fs.Metadata(), t.disk.Metadata()
	if md.Len() != want.Len() {
		return fmt.Errorf("schema %v is not a schema of table %s", fs, t.Name)
	}
	for i, k := range md.Keys() {
		if k != want.Keys()[i] || md.Values()[i] != want.Values()[i] {
			return fmt.Errorf("schema metadata %v is not table %s's", md, t.Name)
		}
	}
	seen := map[string]bool{}
	for _, f := range fs.Fields() {
		if seen[f.Name] {
			return fmt.Errorf("column %q twice", f.Name)
		}
		seen[f.Name] = true
		c, ok := t.storageColumn(f.Name)
		switch {
		case !ok && t.retired[f.Name]:
			continue
		case !ok:
			return fmt.Errorf("column %q is neither a column nor a retired column of table %s", f.Name, t.Name)
		case !arrow.TypeEqual(f.Type, t.disk.Field(c).Type) && !widens(f.Type, t.disk.Field(c).Type):
			return fmt.Errorf("column %q has type %s, want %s", f.Name, f.Type, t.disk.Field(c).Type)
		case f.Nullable && !t.disk.Field(c).Nullable:
			return fmt.Errorf("column %q is nullable in the fragment, required in table %s", f.Name, t.Name)
		}
	}
	return nil
}

// retiredOf returns the retired storage columns of a type of s.
func retiredOf(s schema.Schema, typ string) []string {
	if n, ok := s.Node(typ); ok {
		return n.Retired
	}
	if e, ok := s.Edge(typ); ok {
		return e.Retired
	}
	return nil
}
