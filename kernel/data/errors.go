package data

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// ErrValidation matches every error that rejects a transaction because of
// what it contains (as opposed to I/O or contention). A rejected transaction
// has had no durable effect.
var ErrValidation = errors.New("data: transaction rejected")

// The validation rules. Each rejection is a *ValidationError whose Rule is
// one of these; errors.Is(err, ErrDuplicateID) etc. select the rule.
var (
	// ErrUnknownType: the type name is not in the schema.
	ErrUnknownType = errors.New("unknown type")
	// ErrInvalidRow: a value has the wrong Go type, a required property is
	// missing or null, an unknown property is set, or an id/endpoint is not
	// a valid key.
	ErrInvalidRow = errors.New("invalid row")
	// ErrDuplicateID: the transaction writes or deletes one id twice.
	ErrDuplicateID = errors.New("duplicate id in transaction")
	// ErrIDExists: Insert of an id that already exists.
	ErrIDExists = errors.New("id already exists")
	// ErrIDMissing: Update or Delete of an id that does not exist.
	ErrIDMissing = errors.New("id does not exist")
	// ErrDanglingEdge: an edge endpoint is not a node in the base snapshot
	// plus the transaction's pending writes.
	ErrDanglingEdge = errors.New("edge endpoint does not exist")
	// ErrCardinality: a source node would have an out-edge count outside
	// its edge type's @card bounds.
	ErrCardinality = errors.New("edge cardinality violated")
	// ErrHasEdges: Delete of a node that still has edges, without cascade.
	ErrHasEdges = errors.New("node still has edges")
	// ErrMixedTransaction: a transaction both constructs (Insert, Upsert,
	// Update) and destroys (Delete).
	ErrMixedTransaction = errors.New("constructive and destructive operations mixed")
	// ErrTooLarge: the transaction exceeds its row or byte limit.
	ErrTooLarge = errors.New("transaction too large")
)

// ValidationError is a rejected transaction: which rule, and where. It
// matches ErrValidation and its Rule with errors.Is.
type ValidationError struct {
	Rule   error  // one of the rule sentinels above
	Table  string // table (type) name, if any
	ID     string // row id, if any
	Column string // column name, if any
	Msg    string // what is wrong and, where useful, what to do
}

// Error implements error.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("data: ")
	b.WriteString(e.Rule.Error())
	if e.Table != "" {
		b.WriteString(": " + e.Table)
	}
	if e.ID != "" {
		b.WriteString(" id " + strconv.Quote(e.ID))
	}
	if e.Column != "" {
		b.WriteString(" column " + e.Column)
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	return b.String()
}

// Unwrap exposes the rule and ErrValidation.
func (e *ValidationError) Unwrap() []error { return []error{e.Rule, ErrValidation} }

func reject(rule error, table, id, column, format string, args ...any) *ValidationError {
	return &ValidationError{Rule: rule, Table: table, ID: id, Column: column, Msg: fmt.Sprintf(format, args...)}
}

func unknownType(name string) *ValidationError {
	return reject(ErrUnknownType, name, "", "", "not a node or edge type of the graph's schema")
}

// ErrTxnDone is returned by every method of a transaction after Commit or
// Discard.
var ErrTxnDone = errors.New("data: transaction already committed or discarded")

// ErrCorruptFragment matches a data fragment that fails its checksum, is not
// a valid Arrow IPC file, or breaks the fragment rules (schema, sorted unique
// ids, non-null required columns). It also matches format.ErrCorrupt.
var ErrCorruptFragment = errors.New("data: corrupt fragment")

// ErrTreeTooTall: a commit would write an index tree or a fragment tree
// taller than the readers accept (MaxIndexLevels, MaxFragmentLevels). It
// publishes nothing. Only a handle writing tiny chunks (Options.IndexFanout
// 2) can get there; compacting the table repacks its trees.
var ErrTreeTooTall = errors.New("data: index or fragment tree too tall")

func corruptFragment(name, msg string, args ...any) error {
	return fmt.Errorf("%w %s: %s (%w)", ErrCorruptFragment, name, fmt.Sprintf(msg, args...), format.ErrCorrupt)
}
