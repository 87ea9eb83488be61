package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Column names every input and output uses besides the properties. "_type"
// can never be a property name (names start with a letter).
const (
	colType = "_type"
	colID   = "id"
	colFrom = "from"
	colTo   = "to"
)

// record is one input row: where it came from, its type, and its fields as
// the reader decoded them (string, json.Number, bool, nil, or Arrow's Go
// values: int64, float64, time.Time, []byte ...).
type record struct {
	loc    location
	bytes  int64 // input bytes the record took (0 for Parquet)
	typ    string
	fields map[string]any
}

// location is where a record came from: file:line (JSON Lines, CSV) or
// file:row N (Parquet). It is formatted only when shown (a load reads
// millions of records).
type location struct {
	path string
	n    int
	row  bool // Parquet: n counts rows, not lines
}

func (l location) String() string {
	if l.path == "" {
		return ""
	}
	if l.row {
		return fmt.Sprintf("%s:row %d", l.path, l.n)
	}
	return fmt.Sprintf("%s:%d", l.path, l.n)
}

// typeInfo is what loading needs of one type.
type typeInfo struct {
	edge  bool
	props map[string]schema.Kind
}

func typeInfos(s schema.Schema) map[string]typeInfo {
	out := map[string]typeInfo{}
	add := func(name string, edge bool, props []schema.Property) {
		ti := typeInfo{edge: edge, props: map[string]schema.Kind{}}
		for _, p := range props {
			ti.props[p.Name] = p.Kind
		}
		out[name] = ti
	}
	for _, n := range s.Nodes {
		add(n.Name, false, n.Props)
	}
	for _, e := range s.Edges {
		add(e.Name, true, e.Props)
	}
	return out
}

// toRow converts a record's fields to a data.Row of its type. Unknown
// columns are an error (the transaction's staging checks the rest: required
// properties, key rules).
func toRow(ti typeInfo, r record) (data.Row, error) {
	row := data.Row{Props: map[string]any{}}
	names := make([]string, 0, len(r.fields))
	for name := range r.fields { //detlint:ordered sorted below
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := r.fields[name]
		var err error
		switch name {
		case colType:
		case colID:
			row.ID, err = keyOf(v)
		case colFrom, colTo:
			if !ti.edge {
				return row, fmt.Errorf("column %q: %s is a node type", name, r.typ)
			}
			if name == colFrom {
				row.From, err = keyOf(v)
			} else {
				row.To, err = keyOf(v)
			}
		default:
			k, ok := ti.props[name]
			if !ok {
				return row, fmt.Errorf("column %q is not a property of %s", name, r.typ)
			}
			row.Props[name], err = coerce(k, v)
		}
		if err != nil {
			return row, fmt.Errorf("column %q: %w", name, err)
		}
	}
	return row, nil
}

func keyOf(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case json.Number:
		return x.String(), nil
	}
	return "", fmt.Errorf("want a string key, got %T", v)
}

// coerce converts one input value to the Go type of kind k (nil stays
// null). Strings are parsed (CSV cells, timestamps in RFC 3339, bytes in
// base64); an empty string is null for every kind but string.
func coerce(k schema.Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok && k != schema.String {
		if s == "" {
			return nil, nil
		}
		return parseKind(k, s)
	}
	switch k {
	case schema.String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case schema.Int64:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case json.Number:
			return x.Int64()
		}
	case schema.Int32:
		switch x := v.(type) {
		case int32:
			return x, nil
		case int64:
			if x == int64(int32(x)) {
				return int32(x), nil
			}
		case json.Number:
			n, err := strconv.ParseInt(string(x), 10, 32)
			return int32(n), err
		}
	case schema.Float64:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		case json.Number:
			return x.Float64()
		}
	case schema.Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case schema.Timestamp:
		if t, ok := v.(time.Time); ok {
			return t.UTC(), nil
		}
	case schema.Bytes:
		if b, ok := v.([]byte); ok {
			return append([]byte{}, b...), nil
		}
	}
	return nil, fmt.Errorf("%T is not a %s", v, kindName(k))
}

// parseKind parses the text form of a value of kind k.
func parseKind(k schema.Kind, s string) (any, error) {
	switch k {
	case schema.Int64:
		return strconv.ParseInt(s, 10, 64)
	case schema.Int32:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case schema.Float64:
		return strconv.ParseFloat(s, 64)
	case schema.Bool:
		return strconv.ParseBool(s)
	case schema.Timestamp:
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case schema.Bytes:
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, fmt.Errorf("cannot parse %q as %s", s, kindName(k))
}

// textOf renders a property value for JSON Lines: numbers and bools as
// JSON values, timestamps as RFC 3339 (UTC, nanoseconds), bytes as base64,
// and non-finite floats as strings (JSON has no NaN).
func textOf(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return v
}

func kindName(k schema.Kind) string {
	for _, n := range []string{"string", "int64", "float64", "bool", "timestamp", "bytes"} {
		if kk, ok := schema.KindByName(n); ok && kk == k {
			return n
		}
	}
	return fmt.Sprintf("kind %d", k)
}
