//go:build tools

// Package tools pins the versions of the helper programs the graphkernel tests
// build from source. It is a separate module so that the main module never
// depends on them: the S3 tests (objstore/s3/s3test) run
// `go build github.com/versity/versitygw/cmd/versitygw` with this directory
// as the working directory, which resolves the pinned version below.
// scripts/staticcheck.sh builds staticcheck from here the same way.
package tools

import (
	_ "github.com/versity/versitygw/cmd/versitygw"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
