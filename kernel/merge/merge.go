// Package merge is the pure core of the three-way branch merge: the row
// rule per id against the merge base, the property-level merge of rows
// changed on both sides, the checks of the merged result (orphan edges,
// cardinality) and the conflict list. It does no I/O and imports only the
// standard library: the driver (kernel/data, merge.go) loads the three
// images of every id that changed on either side and hands them in.
//
// The row rule, per table and id, against the base:
//
//	source vs base | target vs base | result
//	unchanged      | anything       | keep target
//	changed        | unchanged      | take source (a write, or a delete)
//	both changed to the same row (or both deleted)   | keep target
//	inserted on both sides, different rows           | DivergentInsert
//	deleted on one side, changed on the other        | DeleteVsUpdate
//	changed on both sides: property by property; a property (or an edge
//	endpoint) changed on both sides to different values | DivergentUpdate
//
// ResolveWith takes a Policy that resolves DivergentInsert, DeleteVsUpdate
// and DivergentUpdate with the source's or the target's image (policy.go);
// the zero Policy refuses them all.
//
// Null, the empty string and empty bytes are three different values.
package merge

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"time"
)

// Row is one node or edge image, field for field the data plane's Row:
// From and To are an edge's endpoints (empty for nodes); an absent key or a
// nil value in Props is null.
type Row struct {
	ID    string
	From  string
	To    string
	Props map[string]any
}

// Images are one id's rows at the merge base, on the source and on the
// target; nil is absent.
type Images struct {
	Base, Source, Target *Row
}

// Kind is the kind of a merge conflict.
type Kind uint8

// The conflict kinds. The zero Kind is invalid.
const (
	// DivergentInsert: an id absent at the base inserted on both sides
	// with different rows.
	DivergentInsert Kind = iota + 1
	// DeleteVsUpdate: deleted on one side, changed on the other.
	DeleteVsUpdate
	// DivergentUpdate: one property (or edge endpoint, "from"/"to")
	// changed on both sides to different values.
	DivergentUpdate
	// OrphanEdge: an edge of the merged result whose endpoint node is
	// absent from the merged result.
	OrphanEdge
	// CardinalityViolation: a node of the merged result whose out-edge
	// count of an edge type is outside the type's @card bounds.
	CardinalityViolation
	// SchemaConflict: the branches changed the schema in ways that do not
	// merge (Conflict.Rule says how; schema.go). Its ID is empty.
	SchemaConflict
)

var kindNames = [...]string{DivergentInsert: "DivergentInsert", DeleteVsUpdate: "DeleteVsUpdate",
	DivergentUpdate: "DivergentUpdate", OrphanEdge: "OrphanEdge", CardinalityViolation: "CardinalityViolation",
	SchemaConflict: "SchemaConflict"}

// String returns the kind's name, e.g. "DivergentUpdate".
func (k Kind) String() string {
	if k >= DivergentInsert && k <= SchemaConflict {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Conflict is one reason a merge cannot publish: its kind, the type and id
// it concerns, the property (DivergentUpdate: the property or endpoint
// changed on both sides; OrphanEdge: "from" or "to"; empty otherwise) and a
// message for people. A SchemaConflict has no ID and names its Rule.
type Conflict struct {
	Kind     Kind
	Rule     SchemaRule // SchemaConflict only
	Type     string
	ID       string
	Property string
	Message  string
}

// String renders the conflict on one line.
func (c Conflict) String() string {
	s := fmt.Sprintf("%s %s %q", c.Kind, c.Type, c.ID)
	if c.Kind == SchemaConflict {
		s = fmt.Sprintf("%s(%s) %s", c.Kind, c.Rule, c.Type)
	}
	if c.Property != "" {
		s += " ." + c.Property
	}
	return s + ": " + c.Message
}

// Resolution is the merged image of one id.
type Resolution struct {
	// Row is the merged row; nil when the id is absent from the result.
	Row *Row
	// Write reports that the merged image differs from the target's: the
	// target table must change for this id.
	Write bool
	// Conflicts are the conflicts of this id (sorted); when any, Row and
	// Write are meaningless.
	Conflicts []Conflict
	// Resolved are the conflicts a Policy resolved for this id (sorted),
	// each as it would have been reported without the policy.
	Resolved []Conflict
}

// Resolve applies the row rule to one id of type typ, refusing every
// conflict (ResolveWith and the zero Policy).
func Resolve(typ string, in Images) Resolution { return ResolveWith(typ, in, Policy{}) }

// ResolveWith applies the row rule to one id of type typ; a conflict of a
// kind p prefers a side for is resolved with that side's image (a whole
// row for DivergentInsert and DeleteVsUpdate, the one property or
// endpoint for DivergentUpdate) and listed in Resolved instead.
func ResolveWith(typ string, in Images, p Policy) Resolution {
	b, s, t := in.Base, in.Source, in.Target
	id := anyID(b, s, t)
	sChanged, tChanged := !Same(b, s), !Same(b, t)
	switch {
	case !sChanged:
		return Resolution{Row: t}
	case !tChanged:
		return Resolution{Row: s, Write: true}
	case Same(s, t):
		return Resolution{Row: t}
	case b == nil:
		return rowConflict(p, s, t, DivergentInsert, typ, id, "inserted on both sides with different rows")
	case s == nil:
		return rowConflict(p, s, t, DeleteVsUpdate, typ, id, "deleted on the source, changed on the target")
	case t == nil:
		return rowConflict(p, s, t, DeleteVsUpdate, typ, id, "changed on the source, deleted on the target")
	}
	return mergeProps(typ, *b, *s, *t, p)
}

// rowConflict is a whole-row conflict of kind k: refused, or resolved with
// the image of the side p prefers.
func rowConflict(p Policy, s, t *Row, k Kind, typ, id, msg string) Resolution {
	c := Conflict{Kind: k, Type: typ, ID: id, Message: msg}
	side := p.For(k)
	if side == Refuse {
		return Resolution{Conflicts: []Conflict{c}}
	}
	row := pick(side, s, t)
	return Resolution{Row: row, Write: !Same(row, t), Resolved: []Conflict{c}}
}

func anyID(rows ...*Row) string {
	for _, r := range rows {
		if r != nil {
			return r.ID
		}
	}
	panic("merge: Resolve of an id absent on all three sides")
}

// mergeProps merges a row changed on both sides field by field: the
// endpoints first, then the properties in name order. A field changed on
// one side only is taken from that side; a field changed on both sides to
// different values is a DivergentUpdate, or the value of the side p
// prefers.
func mergeProps(typ string, b, s, t Row, p Policy) Resolution {
	out := Row{ID: t.ID, Props: map[string]any{}}
	var cs, resolved []Conflict
	pickField := func(field string, bv, sv, tv any) any {
		switch {
		case ValuesEqual(sv, bv):
			return tv
		case ValuesEqual(tv, bv), ValuesEqual(sv, tv):
			return sv
		}
		c := Conflict{Kind: DivergentUpdate, Type: typ, ID: t.ID, Property: field,
			Message: fmt.Sprintf("%s changed on both sides: base %s, source %s, target %s", field, show(bv), show(sv), show(tv))}
		if side := p.For(DivergentUpdate); side != Refuse {
			resolved = append(resolved, c)
			return pick(side, sv, tv)
		}
		cs = append(cs, c)
		return tv
	}
	out.From, _ = pickField("from", str(b.From), str(s.From), str(t.From)).(string)
	out.To, _ = pickField("to", str(b.To), str(s.To), str(t.To)).(string)
	for _, name := range propNames(b, s, t) {
		if v := pickField(name, b.Props[name], s.Props[name], t.Props[name]); v != nil {
			out.Props[name] = v
		}
	}
	if len(cs) > 0 {
		return Resolution{Conflicts: cs, Resolved: resolved}
	}
	return Resolution{Row: &out, Write: !RowsEqual(out, t), Resolved: resolved}
}

// str turns an endpoint into a value ("" is a node's absent endpoint,
// equal on all sides).
func str(s string) any { return s }

func show(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%#v", v)
}

// propNames is the sorted union of the property names of three rows.
func propNames(rows ...Row) []string {
	set := map[string]bool{}
	for _, r := range rows {
		for k := range r.Props { //detlint:ordered fills a set that is sorted next
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set { //detlint:ordered collects keys that are sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Same reports whether two images are equal: both absent, or both present
// with RowsEqual rows.
func Same(a, b *Row) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return RowsEqual(*a, *b)
}

// RowsEqual reports whether two rows are exactly equal: id, endpoints and
// every property, null, "" and empty bytes being three different values
// (the data plane's RowsEqual, which the driver's tests hold it to).
func RowsEqual(a, b Row) bool {
	if a.ID != b.ID || a.From != b.From || a.To != b.To {
		return false
	}
	for _, k := range propNames(a, b) {
		if !ValuesEqual(a.Props[k], b.Props[k]) {
			return false
		}
	}
	return true
}

// ValuesEqual reports whether two property values (as data.Row.Props holds
// them; nil is null) are exactly equal: same Go type and value; []byte by
// content (empty bytes differ from null), time.Time by instant, float64 by
// bits (so NaN equals the same NaN, and 0 differs from -0); int is taken as
// int64. It is the one definition of value equality: data.ValuesEqual,
// the row diff, the change feed and the merge all use it.
func ValuesEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if i, ok := a.(int); ok {
		a = int64(i)
	}
	if i, ok := b.(int); ok {
		b = int64(i)
	}
	switch av := a.(type) {
	case []byte:
		bv, ok := b.([]byte)
		return ok && bytes.Equal(av, bv)
	case time.Time:
		bv, ok := b.(time.Time)
		return ok && av.Equal(bv)
	case float64:
		bv, ok := b.(float64)
		return ok && math.Float64bits(av) == math.Float64bits(bv)
	case string, int64, bool:
		return a == b
	}
	panic(fmt.Sprintf("ValuesEqual of unsupported value type %T", a))
}

// SortConflicts orders conflicts deterministically: by type, id, kind,
// property, message.
func SortConflicts(cs []Conflict) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		switch {
		case a.Type != b.Type:
			return a.Type < b.Type
		case a.ID != b.ID:
			return a.ID < b.ID
		case a.Kind != b.Kind:
			return a.Kind < b.Kind
		case a.Property != b.Property:
			return a.Property < b.Property
		}
		return a.Message < b.Message
	})
}
