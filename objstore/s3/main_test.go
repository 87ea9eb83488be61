package s3_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// TestMain stops the shared versitygw server after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := s3test.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "s3test.StopShared:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
