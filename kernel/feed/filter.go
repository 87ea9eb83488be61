package feed

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
)

// Op is what happened to one id in a change. Its values equal
// data.ChangeOp's.
type Op uint8

// The operations.
const (
	OpInsert Op = iota + 1
	OpUpdate
	OpDelete
)

// String returns "insert", "update" or "delete".
func (o Op) String() string {
	switch o {
	case OpInsert:
		return "insert"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Filter selects changes by type and by operation. Empty Types means every
// type; empty Ops means every operation. The zero Filter selects
// everything.
type Filter struct {
	Types []string
	Ops   []Op
}

// Digest is the 16-byte identity of a filter that tokens carry.
type Digest [16]byte

// Canonical returns f with Types and Ops sorted and deduplicated, so two
// filters that select the same changes are equal (and have one digest).
func (f Filter) Canonical() Filter {
	types := slices.Clone(f.Types)
	slices.Sort(types)
	ops := slices.Clone(f.Ops)
	slices.Sort(ops)
	c := Filter{Types: slices.Compact(types), Ops: slices.Compact(ops)}
	if len(c.Ops) == 3 && c.Ops[0] == OpInsert && c.Ops[2] == OpDelete {
		c.Ops = nil // every operation, spelled out
	}
	return c
}

// Validate refuses an unknown operation or an empty type name.
func (f Filter) Validate() error {
	for _, o := range f.Ops {
		if o < OpInsert || o > OpDelete {
			return fmt.Errorf("feed: filter: unknown operation %d", o)
		}
	}
	for _, t := range f.Types {
		if t == "" {
			return fmt.Errorf("feed: filter: empty type name")
		}
	}
	return nil
}

// Digest returns the first 16 bytes of the SHA-256 of the canonical
// filter's encoding (for each type its length and bytes, a 0xff separator,
// then the operation bytes).
func (f Filter) Digest() Digest {
	c := f.Canonical()
	h := sha256.New()
	for _, t := range c.Types {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(t))))
		h.Write([]byte(t))
	}
	h.Write([]byte{0xff})
	for _, o := range c.Ops {
		h.Write([]byte{byte(o)})
	}
	var d Digest
	copy(d[:], h.Sum(nil))
	return d
}

// WantsType reports whether the filter selects changes of typ.
func (f Filter) WantsType(typ string) bool {
	return len(f.Types) == 0 || slices.Contains(f.Types, typ)
}

// WantsOp reports whether the filter selects changes with op.
func (f Filter) WantsOp(op Op) bool {
	return len(f.Ops) == 0 || slices.Contains(f.Ops, op)
}
