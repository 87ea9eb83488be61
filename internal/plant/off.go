//go:build !simplant

package plant

import "fmt"

// Built reports whether this binary was built with the simplant tag.
const Built = false

// Enabled reports whether the planted bug name is switched on. Without the
// simplant build tag it is always false and compiles away.
func Enabled(name string) bool { return false }

// Enable switches planted bugs on. Without the simplant build tag it fails:
// planted bugs never reach a normal build.
func Enable(names ...string) error {
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("plant: %v needs a build with -tags simplant", names)
}
