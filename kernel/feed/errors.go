package feed

import (
	"errors"
	"fmt"
)

// ErrBadCursor reports a cursor or page token that cannot be used: it does
// not decode (malformed, truncated, an unknown version), its checksum does
// not match (forged or damaged), it names another graph, branch name or
// filter, or the commit it names is not where it says on the branch's
// chain. The consumer must not retry it; it re-baselines or starts from a
// known position. Every such error is a *CursorError.
var ErrBadCursor = errors.New("feed: bad cursor")

// ErrBranchChanged reports that the branch a cursor was issued on was
// deleted, or deleted and re-created, since: the cursor binds one branch
// incarnation and never reads another. The consumer re-baselines from a
// snapshot of the live branch.
var ErrBranchChanged = errors.New("feed: branch deleted or re-created since the cursor was issued")

// ErrGap reports that history the cursor still needs is no longer
// available (reclaimed by garbage collection), so the feed cannot continue
// exactly: the consumer re-baselines from a snapshot of the branch head and
// polls from Now. Nothing is reclaimed yet (garbage collection, issue 13,
// does not exist), so no path returns it today; GC's reclaimed-history
// error (kernel.ErrReclaimed, on the GC branch) will be wrapped by a
// *GapError so errors.Is matches both.
var ErrGap = errors.New("feed: history no longer available (gap); re-baseline from a snapshot")

// CursorProblem says why a token was refused.
type CursorProblem uint8

// The reasons a token is refused with ErrBadCursor.
const (
	// Malformed: not base64, truncated, trailing bytes, bad field.
	Malformed CursorProblem = iota + 1
	// UnknownVersion: a token version this build does not read.
	UnknownVersion
	// Checksum: the checksum does not match (forged or damaged).
	Checksum
	// ForeignGraph: issued by another graph.
	ForeignGraph
	// ForeignBranch: issued for another branch name.
	ForeignBranch
	// ForeignFilter: issued under another filter.
	ForeignFilter
	// WrongKind: a token of another kind (a commit-changes token given to
	// Poll, say).
	WrongKind
	// NotOnChain: the commit the token names is not on the branch's chain
	// where the token says it is.
	NotOnChain
)

var problemNames = [...]string{
	Malformed: "malformed", UnknownVersion: "unknown version", Checksum: "checksum mismatch (forged or damaged)",
	ForeignGraph: "issued by another graph", ForeignBranch: "issued for another branch",
	ForeignFilter: "issued under another filter", WrongKind: "wrong token kind", NotOnChain: "commit not on the branch's chain",
}

// String names the problem.
func (p CursorProblem) String() string {
	if int(p) < len(problemNames) && problemNames[p] != "" {
		return problemNames[p]
	}
	return fmt.Sprintf("CursorProblem(%d)", uint8(p))
}

// CursorError is a refused token: why, and a detail. It matches
// ErrBadCursor.
type CursorError struct {
	Problem CursorProblem
	Detail  string
}

// Error renders the problem and the detail.
func (e *CursorError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("feed: bad cursor: %s", e.Problem)
	}
	return fmt.Sprintf("feed: bad cursor: %s: %s", e.Problem, e.Detail)
}

// Unwrap makes errors.Is(err, ErrBadCursor) hold.
func (e *CursorError) Unwrap() error { return ErrBadCursor }

func badCursor(p CursorProblem, format string, args ...any) *CursorError {
	return &CursorError{Problem: p, Detail: fmt.Sprintf(format, args...)}
}

// GapError is ErrGap with its cause (the store's reclaimed-history error).
// errors.Is matches ErrGap and the cause.
type GapError struct {
	Commit string // the commit whose history is gone, if known
	Cause  error
}

// Error names the commit and the cause.
func (e *GapError) Error() string {
	return fmt.Sprintf("feed: history of commit %s no longer available: %v", e.Commit, e.Cause)
}

// Unwrap returns ErrGap and the cause.
func (e *GapError) Unwrap() []error { return []error{ErrGap, e.Cause} }
