//go:build simplant

package plant

import (
	"fmt"
	"sync/atomic"
)

// Built reports whether this binary was built with the simplant tag.
const Built = true

// enabled is the set switched on by Enable, replaced atomically so kernel
// reads never race a configuration (which happens once, before any run).
var enabled atomic.Pointer[map[string]bool]

// Enabled reports whether the planted bug name is switched on.
func Enabled(name string) bool {
	m := enabled.Load()
	return m != nil && (*m)[name]
}

// Enable replaces the set of switched-on planted bugs with names (none
// switches every bug off). An unknown name is an error and changes nothing.
func Enable(names ...string) error {
	m := map[string]bool{}
	for _, n := range names {
		if !Known(n) {
			return fmt.Errorf("plant: unknown planted bug %q (known: %v)", n, All())
		}
		m[n] = true
	}
	enabled.Store(&m)
	return nil
}
