package kernel

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// Sentinel errors. Every kernel error matches exactly the sentinels that
// describe it under errors.Is, and carries context in its message.
var (
	// ErrNotFound: the graph, commit, manifest version or table version
	// does not exist. The only benign absence.
	ErrNotFound = errors.New("kernel: not found")
	// ErrVersionMismatch matches *VersionMismatchError.
	ErrVersionMismatch = errors.New("kernel: version mismatch")
	// ErrContention matches *ContentionError.
	ErrContention = errors.New("kernel: retry budget exhausted")
	// ErrInvalidName: a branch or table name breaks the name rules.
	ErrInvalidName = format.ErrInvalidName
	// ErrProtectedBranch: an operation main does not allow (delete). It
	// also matches ErrInvalidName.
	ErrProtectedBranch = fmt.Errorf("kernel: branch %q is protected: %w", format.MainBranch, ErrInvalidName)
	// ErrBranchExists: the name already has a live incarnation.
	ErrBranchExists = errors.New("kernel: branch exists")
	// ErrBranchNotFound: no live incarnation, or the handle's incarnation
	// was deleted (and perhaps re-created).
	ErrBranchNotFound = errors.New("kernel: branch not found")
	// ErrHasDependents matches *HasDependentsError.
	ErrHasDependents = errors.New("kernel: branch has dependents")
	// ErrUnsupportedFormat matches *UnsupportedFormatError.
	ErrUnsupportedFormat = format.ErrUnsupportedFormat
	// ErrCorrupt: a stored object failed its checksum or format rules.
	ErrCorrupt = format.ErrCorrupt
	// ErrReadOnly: a mutating call on a read-only handle. Nothing was
	// written.
	ErrReadOnly = errors.New("kernel: graph opened read-only")
	// ErrGraphExists: Init found an existing graph at the root.
	ErrGraphExists = errors.New("kernel: graph already exists")
	// ErrTooManyBranches: an operation that enumerates branch names or
	// fork markers met more than its bound (MaxBranchNames,
	// MaxForkMarkers). Page with ListBranchesPage instead.
	ErrTooManyBranches = errors.New("kernel: too many branches")
	// ErrInvalidArgument: a malformed request (bad options, updates,
	// commit text, cursor, ...). Retrying cannot help.
	ErrInvalidArgument = errors.New("kernel: invalid argument")
	// ErrReclaimed: the history asked for (a manifest, a table version or a
	// fragment) was deleted by garbage collection: it is outside the
	// retention policy and no lease pinned it (docs/gc.md). Never a wrong
	// answer, never ErrCorrupt.
	ErrReclaimed = errors.New("kernel: reclaimed by garbage collection")
	// ErrMergeBaseTooDeep: a merge base (MergeBaseOf, a merge) needed more
	// than lineage.MaxReachLoads commit-index loads — two branches that
	// have not merged either way across that much history. It is
	// lineage.ErrReachTooDeep (errors.Is matches either); never a guessed
	// base. Merging main into the branch, or the branch into main, bounds
	// it again.
	ErrMergeBaseTooDeep = lineage.ErrReachTooDeep
	// ErrGraceExpired matches *GraceExpiredError.
	ErrGraceExpired = errors.New("kernel: write staged longer ago than the grace period")
)

// GraceExpiredError says a write refused to publish because its staging
// began longer ago than the garbage-collection grace period (docs/gc.md):
// a collector may already have deleted objects it staged early. Nothing of
// it was published; begin again (Retryable), which stages everything anew.
type GraceExpiredError struct {
	Staged time.Time     // when the write began staging (Env.Clock)
	Now    time.Time     // when it tried to publish
	Grace  time.Duration // the handle's grace period
}

// Error implements error.
func (e *GraceExpiredError) Error() string {
	return fmt.Sprintf("kernel: write staged at %s, publish at %s is past the grace period of %s (begin again)",
		e.Staged.Format(time.RFC3339Nano), e.Now.Format(time.RFC3339Nano), e.Grace)
}

// Is makes errors.Is(err, ErrGraceExpired) hold.
func (e *GraceExpiredError) Is(target error) bool { return target == ErrGraceExpired }

// Retryable reports true: a new write stages fresh objects.
func (e *GraceExpiredError) Retryable() bool { return true }

// UnsupportedFormatError reports a graph or object whose format stamp this
// build cannot read (see format.CheckStamp).
type UnsupportedFormatError = format.UnsupportedFormatError

// VersionMismatchError says a table was not at the version the caller
// expected: refresh (re-read the branch) and retry.
type VersionMismatchError struct {
	Table    string
	Expected uint64
	Actual   uint64 // 0 = not pinned / no version
}

// Error implements error.
func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("kernel: table %q: expected version %d, found %d (refresh and retry)", e.Table, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrVersionMismatch) hold.
func (e *VersionMismatchError) Is(target error) bool { return target == ErrVersionMismatch }

// Retryable reports true: the caller may retry after refreshing its view.
func (e *VersionMismatchError) Retryable() bool { return true }

// ErrHeadMoved matches *HeadMovedError.
var ErrHeadMoved = errors.New("kernel: branch head moved")

// HeadMovedError says a publish with LineageIntent.ExpectHead found the
// branch head at another commit: nothing was published; re-read the branch
// and retry.
type HeadMovedError struct {
	Branch   string
	Expected CommitID
	Actual   CommitID
}

// Error implements error.
func (e *HeadMovedError) Error() string {
	return fmt.Sprintf("kernel: branch %q: expected head %s, found %s (re-read and retry)", e.Branch, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrHeadMoved) hold.
func (e *HeadMovedError) Is(target error) bool { return target == ErrHeadMoved }

// Retryable reports true: the caller may retry after re-reading the branch.
func (e *HeadMovedError) Retryable() bool { return true }

// ContentionError says an operation exhausted its retry budget against
// contention or transient store faults. It is retryable as a whole. When
// Ambiguous is set, the last write's outcome could not be read back: the
// commit CommitID may or may not be on the branch; Commit(CommitID) tells.
type ContentionError struct {
	Op        string
	Attempts  int
	CommitID  format.ID // the id the publish minted (zero for non-publish ops)
	Ambiguous bool
	Last      error // the last cause
}

// Error implements error.
func (e *ContentionError) Error() string {
	msg := fmt.Sprintf("kernel: %s: retry budget of %d attempts exhausted", e.Op, e.Attempts)
	if e.Ambiguous {
		msg += fmt.Sprintf(" (outcome of commit %s unknown)", e.CommitID)
	}
	if e.Last != nil {
		msg += ": last error: " + e.Last.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrContention) hold.
func (e *ContentionError) Is(target error) bool {
	return target == ErrContention || (e.Ambiguous && target == objstore.ErrAmbiguous)
}

// Unwrap exposes the last cause. On a definite error (Ambiguous false) the
// cause is exposed without its ambiguity, so that Ambiguous and
// errors.Is(err, objstore.ErrAmbiguous) always agree: a read-back that
// settled an ambiguous write makes the outcome definite.
func (e *ContentionError) Unwrap() error {
	if !e.Ambiguous && e.Last != nil && errors.Is(e.Last, objstore.ErrAmbiguous) {
		return settled{e.Last}
	}
	return e.Last
}

// settled is a cause whose ambiguity a read-back resolved: it matches every
// target its cause matches except objstore.ErrAmbiguous.
type settled struct{ err error }

func (s settled) Error() string { return s.err.Error() }

// Is delegates to the cause, but for objstore.ErrAmbiguous.
func (s settled) Is(target error) bool {
	return target != objstore.ErrAmbiguous && errors.Is(s.err, target)
}

// As delegates to the cause.
func (s settled) As(target any) bool { return errors.As(s.err, target) }

// Retryable reports true: the whole operation may be retried.
func (e *ContentionError) Retryable() bool { return true }

// HasDependentsError refuses a branch delete while live branches were forked
// from the branch's current incarnation.
type HasDependentsError struct {
	Branch     string
	Dependents []string // sorted
}

// Error implements error.
func (e *HasDependentsError) Error() string {
	return fmt.Sprintf("kernel: branch %q has dependent branches: %s", e.Branch, strings.Join(e.Dependents, ", "))
}

// Is makes errors.Is(err, ErrHasDependents) hold.
func (e *HasDependentsError) Is(target error) bool { return target == ErrHasDependents }

// storeNotFound maps a store not-found to the kernel's ErrNotFound while
// keeping the store error in the chain.
func storeNotFound(what string, err error) error {
	if errors.Is(err, objstore.ErrNotFound) {
		return fmt.Errorf("%s: %w (%w)", what, ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
