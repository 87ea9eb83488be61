package storetest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// The S3 store against a real versitygw server on 127.0.0.1 (built on first
// use; GRAPHKERNEL_S3_OPTOUT=1 skips it). Each subtest gets a fresh bucket
// on one shared server, stopped after the tests. S3 ETags are content MD5s,
// so identical bytes give identical ETags: UniqueETags is false.
// versitygw's posix backend keeps keys as files and directories, so a key
// and a key below it ("a" and "a/b") cannot coexist (409) and no path
// segment may exceed 255 bytes (400): FlatKeysOnly is true, and every
// property runs on flat key sets. sim and fs run the nested ones.
func init() {
	register("s3", func(t *testing.T) objstore.Store {
		return s3test.Shared(t).NewStore(t)
	}, storetest.RunOptions{UniqueETags: false, FlatKeysOnly: true})
	registerCleanup(func() {
		if err := s3test.StopShared(); err != nil {
			fmt.Fprintln(os.Stderr, "s3test.StopShared:", err)
		}
	})
}
