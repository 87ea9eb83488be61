// Package storetest is the conformance suite every objstore backend runs, so
// that objstore/sim, objstore/fs and objstore/s3 provably mean the same
// thing.
//
// A backend's test calls Run (or RunWith) with a factory that returns a new,
// empty store isolated from every other store the factory returned (a fresh
// directory, bucket or key prefix). The factory may call t.Skip when the
// backend is unavailable and should register its own cleanup with t.Cleanup.
//
// The suite uses no sleeps and no wall clock; the concurrency subtests
// coordinate with channels and always run at full size (16 writers x 200
// keys for create-only, 8 workers x 100 increments for compare-and-swap).
package storetest

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// RunOptions describes what a backend guarantees beyond the contract.
type RunOptions struct {
	// UniqueETags: every successful write yields an ETag never returned
	// before for that key, even when the bytes are identical. True for
	// objstore/sim; false for S3, whose ETag is a content MD5.
	UniqueETags bool

	// FlatKeysOnly: the backend cannot hold a key that is a proper
	// path-prefix of another key ("a" and "a/b"), nor a path segment longer
	// than 255 bytes, e.g. S3 servers backed by a POSIX filesystem such as
	// versitygw. The suite then uses flat key sets (see CheckFlatKeys) that
	// have no such pairs or segments; every property still runs and checks
	// the same thing. False runs the nested key sets.
	FlatKeysOnly bool
}

// Run runs the conformance suite with default options.
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	t.Helper()
	RunWith(t, RunOptions{}, newStore)
}

// RunWith runs the conformance suite with opts, one subtest per property,
// each on a fresh store from newStore.
func RunWith(t *testing.T, opts RunOptions, newStore func(t *testing.T) objstore.Store) {
	t.Helper()
	for _, tc := range cases(opts) {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// testCase is one conformance property.
type testCase struct {
	name string
	run  func(t *testing.T, s objstore.Store)
}

func cases(opts RunOptions) []testCase {
	ks := keySetsFor(opts)
	out := []testCase{
		{"PutGetHead", func(t *testing.T, s objstore.Store) { testPutGetHead(t, s, ks.putGetHead) }},
		{"MissingIsNotFound", testMissingIsNotFound},
		{"DeleteMissingIsNil", testDeleteMissing},
		{"DeleteMany", testDeleteMany},
		{"GetMany", testGetMany},
		{"DeleteThenRecreate", testDeleteThenRecreate},
		{"CreateOnlyOnExisting", testCreateOnlyExisting},
		{"IfMatch", testIfMatch},
		{"IfMatchMissingKey", testIfMatchMissing},
		{"ETagChangesWithBytes", testETagChangesWithBytes},
		{"EmptyObject", testEmptyObject},
		{"BinaryBytes", testBinaryBytes},
		{"NoAliasing", testNoAliasing},
		{"ListOrder", func(t *testing.T, s objstore.Store) { testListOrder(t, s, ks.order) }},
		{"ListPagination", func(t *testing.T, s objstore.Store) { testListPagination(t, s, ks.order) }},
		{"ListPrefixNotSegmentAligned", func(t *testing.T, s objstore.Store) { testListPrefix(t, s, ks.prefix) }},
		{"ListStartAfterNotAKey", testListStartAfter},
		{"ListLimitClamp", testListLimitClamp},
		{"InvalidKeys", func(t *testing.T, s objstore.Store) { testInvalidKeys(t, s, ks.survivors) }},
		{"InvalidPrefixes", testInvalidPrefixes},
		{"MaxLengthKeys", func(t *testing.T, s objstore.Store) { testMaxLengthKeys(t, s, ks.maxKeys) }},
		{"CreateOnlyRace", testCreateOnlyRace},
		{"IfMatchCounter", testIfMatchCounter},
		{"PutMany", testPutMany},
	}
	if opts.UniqueETags {
		out = append(out, testCase{"UniqueETagsForIdenticalBytes", testUniqueETags})
	}
	return out
}
