//go:build tools

// Package tools pins the versions of the helper programs the graphkernel tests
// build from source. It is a separate module so that the main module never
// depends on them: the S3 tests (objstore/s3/s3test) run
// `go build github.com/versity/versitygw/cmd/versitygw` with this directory
// as the working directory, which resolves the pinned version below.
package tools

import (
	_ "github.com/versity/versitygw/cmd/versitygw"
)
