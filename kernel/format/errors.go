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

// CheckStamp returns nil when stamp is the current format and a typed
// *UnsupportedFormatError otherwise. Stamps older than OldestSupportedFormat
// or newer than CurrentFormat are refused outright; a stamp inside the range
// but older than current (the v3 legacy format) is refused too until the
// legacy reader and migration exist.
func CheckStamp(stamp uint16) error {
	e := &UnsupportedFormatError{Stamp: stamp, Oldest: OldestSupportedFormat, Current: CurrentFormat}
	switch {
	case stamp == CurrentFormat:
		return nil
	case stamp > CurrentFormat:
		e.Reason = "written by a newer graphkernel; upgrade this binary"
	case stamp < OldestSupportedFormat:
		e.Reason = "too old for this build; migrate with an older release first"
	default:
		// TODO(issue 6): read the v3 legacy format and migrate it to v4 on a
		// read-write open. Until then, refuse rather than misread.
		e.Reason = "legacy format: the v3 reader and v3->v4 migration are not implemented yet"
	}
	return e
}
