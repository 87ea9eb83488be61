package format

import (
	"errors"
	"fmt"
)

// ErrCorrupt matches every decoding failure: bad magic, bad checksum, wrong
// length, wrong object kind, non-canonical or invalid payload.
var ErrCorrupt = errors.New("format: corrupt object")

// ErrUnsupportedFormat matches *UnsupportedFormatError.
var ErrUnsupportedFormat = errors.New("format: unsupported format stamp")

// CorruptError says why bytes were rejected. It matches ErrCorrupt.
type CorruptError struct {
	What   string // the object being decoded ("envelope", "manifest", ...)
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("format: corrupt %s: %s", e.What, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(what, format string, args ...any) error {
	return &CorruptError{What: what, Reason: fmt.Sprintf(format, args...)}
}

// UnsupportedFormatError reports an intact object (or graph) whose format
// stamp this build cannot read. It matches ErrUnsupportedFormat.
type UnsupportedFormatError struct {
	Stamp   uint16 // the stamp found
	Oldest  uint16 // OldestSupportedFormat of this build
	Current uint16 // CurrentFormat of this build
	Reason  string // what to do about it
}

// Error implements error.
func (e *UnsupportedFormatError) Error() string {
	return fmt.Sprintf("format: unsupported format stamp %d (this build reads %d..%d): %s",
		e.Stamp, e.Oldest, e.Current, e.Reason)
}

// Is makes errors.Is(err, ErrUnsupportedFormat) hold.
func (e *UnsupportedFormatError) Is(target error) bool { return target == ErrUnsupportedFormat }

// CheckStamp is the one stamp guard: it returns nil when stamp (an absent,
// zero stamp reads as OldestSupportedFormat) lies in
// [OldestSupportedFormat, CurrentFormat], and a typed
// *UnsupportedFormatError otherwise: TooNew ("upgrade this binary") above
// the ceiling, TooOld ("migrate forward with an older release first") below
// the floor. Every read of a manifest (both open modes, every branch) and
// of every other enveloped object goes through it. A stamp inside the range
// but older than CurrentFormat is legacy: readable, and migrated forward on
// a write.
func CheckStamp(stamp uint16) error {
	e := &UnsupportedFormatError{Stamp: stamp, Oldest: OldestSupportedFormat, Current: CurrentFormat}
	switch s := EffectiveStamp(stamp); {
	case s > CurrentFormat:
		e.Reason = ReasonTooNew
	case s < OldestSupportedFormat:
		e.Reason = ReasonTooOld
	default:
		return nil
	}
	return e
}
