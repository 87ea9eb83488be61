package main

import (
	"errors"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// errUnknownType: an input row's type (its _type column, else the file
// name's stem) is not in the graph's schema.
var errUnknownType = errors.New("type is not in the schema")

// errBadInput: an input row the command cannot turn into a row of its
// type (an unknown column, a value of the wrong kind). The message says
// what; there is no general hint.
var errBadInput = errors.New("bad input row")

// hinted is an error that carries its own hint (checked before the table).
type hinted interface{ Hint() string }

// hints maps typed errors to what to do next, first match wins. An error
// none matches gets no hint: a hint is printed only where it is right for
// that error (a duplicate id must not be told to --upsert blindly).
var hints = []struct {
	err  error
	hint string
}{
	{errUnknownType, "the schema has no such type; `graphkernel schema STORE ROOT` lists the types (a row's type is its _type column, else the file name up to the first dot)"},
	{data.ErrUnknownType, "`graphkernel schema STORE ROOT` lists the types"},
	{data.ErrIDExists, "the id is on the branch already. If the input means to update those rows, load with --upsert " +
		"(it changes only the columns each row names; --upsert --replace replaces whole rows); if it is a different entity, give it another id"},
	{data.ErrDuplicateID, "the input writes this id twice within one transaction: remove the duplicate row"},
	{data.ErrDanglingEdge, "load the endpoint node first (a load stages every file's nodes before its edges; nodes already on the branch count)"},
	{data.ErrCardinality, "the edge type's @card bounds (`graphkernel schema STORE ROOT`) count the node's out-edges on the branch plus the load's"},
	{data.ErrMixedTransaction, ""},
	{data.ErrTxnBytes, "one row is larger than the transaction byte budget: raise it with --batch-bytes N"},
	{kernel.ErrBranchNotFound, "`graphkernel branches STORE ROOT` lists the branches; `graphkernel branch create STORE ROOT NAME --from REF` creates one"},
	{kernel.ErrBranchExists, "pick another name, or delete the branch first (`graphkernel branch delete STORE ROOT NAME`)"},
	{kernel.ErrHasDependents, "delete the branches forked from it first (they are named above)"},
	{kernel.ErrProtectedBranch, ""},
	{kernel.ErrVersionMismatch, "another writer changed the table since the transaction began; run the command again"},
	{data.ErrMergeConflict, "resolve with --prefer source|target (or KIND=source|target), or change one branch and merge again"},
}

// hintFor returns the hint for err, or "".
func hintFor(err error) string {
	var h hinted
	if errors.As(err, &h) {
		return h.Hint()
	}
	for _, e := range hints {
		if errors.Is(err, e.err) {
			return e.hint
		}
	}
	return ""
}
