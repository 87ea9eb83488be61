package data

import (
	"math"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// int32Of converts a Go value given for an int32 property: an int32, or
// an int or int64 within the int32 range.
func int32Of(v any) (int32, bool) {
	switch n := v.(type) {
	case int32:
		return n, true
	case int:
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), true
		}
	case int64:
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), true
		}
	}
	return 0, false
}

// predKind is the kind predicates and column statistics use for a column
// of kind k: int32 columns compare as int64 (so literals, and statistics
// written before a widening, keep their meaning).
func predKind(k schema.Kind) schema.Kind {
	if k == schema.Int32 {
		return schema.Int64
	}
	return k
}
