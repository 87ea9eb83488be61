package feed

import (
	"fmt"
	"time"
)

// changeOverhead is the fixed size charged per change and per image (op,
// kind, lengths), so an empty-image change still costs something.
const changeOverhead = 16

// ChangeSize is the size in bytes a change counts against a page's
// MaxBytes: a fixed overhead plus the type, the id and each image given
// (nil images cost nothing). It is a deterministic function of the change,
// so page boundaries are the same on every poll.
func ChangeSize(typ, id string, images ...*Image) int {
	n := changeOverhead + len(typ) + len(id)
	for _, im := range images {
		if im != nil {
			n += im.size()
		}
	}
	return n
}

// Image is one row image as ChangeSize sees it: the edge endpoints (empty
// for nodes) and the property values (nil or absent is null). Values are
// the data plane's Go types: string, []byte, int64 (or int), float64, bool,
// time.Time.
type Image struct {
	From, To string
	Props    map[string]any
}

func (im *Image) size() int {
	n := changeOverhead + len(im.From) + len(im.To)
	for k, v := range im.Props { //detlint:ordered a sum; the order does not change it
		if v != nil {
			n += len(k) + valueSize(v)
		}
	}
	return n
}

// valueSize is the byte size of one property value.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	case int, int64, float64, time.Time:
		return 8
	case bool:
		return 1
	}
	panic(fmt.Sprintf("feed: ChangeSize of unsupported value type %T", v))
}
