package format

import (
	"errors"
	"fmt"
)

// MaxNameBytes bounds branch and table names.
const MaxNameBytes = 64

// MainBranch is the protected branch every graph starts with. It can be
// neither deleted nor re-created.
const MainBranch = "main"

// ErrInvalidName matches every name-rule violation.
var ErrInvalidName = errors.New("format: invalid name")

// ValidateName checks the rules shared by branch and table names: 1..64
// bytes of [A-Za-z0-9._-], not starting with '.' or '-'. These rules keep a
// name a single, valid object-store key segment.
func ValidateName(name string) error {
	if len(name) == 0 || len(name) > MaxNameBytes {
		return fmt.Errorf("%w: %q: length %d not in 1..%d", ErrInvalidName, name, len(name), MaxNameBytes)
	}
	if name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("%w: %q: must not start with '.' or '-'", ErrInvalidName, name)
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return fmt.Errorf("%w: %q: byte %d (%q) not in [A-Za-z0-9._-]", ErrInvalidName, name, i, name[i])
		}
	}
	return nil
}

func nameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c == '.' || c == '_' || c == '-'
}
