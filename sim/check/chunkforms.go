package check

import (
	"strings"

	"github.com/graphkernel/graphkernel/kernel/data"
)

// ChunkForms counts the index chunks a run left on the store by payload
// form (docs/format.md "Binary index chunks"): the simulator's data
// handles write JSON in about one process of four and binary in the rest,
// so a graph mixes both as one migrated from format 11 does.
type ChunkForms struct {
	JSON, Binary int
}

// CountChunkForms counts the index chunks under root's R/adj/ by form.
// It reads objects only; a torn or undecodable object is not counted (the
// leak and table checks judge those).
func CountChunkForms(in Inspector, root string) ChunkForms {
	var f ChunkForms
	for _, k := range in.Keys(strings.TrimSuffix(root, "/") + "/adj/") {
		b, ok := in.Peek(k)
		if !ok {
			continue
		}
		switch binaryForm, chunk := data.IndexChunkForm(b); {
		case !chunk:
		case binaryForm:
			f.Binary++
		default:
			f.JSON++
		}
	}
	return f
}
