// Package benchsize lets a benchmark shrink under go test -short, which is
// how CI's benchmark smoke stage runs every benchmark once (.ci/run,
// "benchmarks, once each at their smallest size"): a benchmark with sizes
// takes only its smallest, and a heavy one fewer samples, so a format
// change that breaks a benchmark fails CI without CI paying for the
// measurement. Without -short everything is as the benchmark lists it.
//
// Only test code imports it: testing.Short needs the test binary's flags.
package benchsize

import "testing"

// Short reports whether the benchmark runs as a smoke test (go test
// -short).
func Short() bool { return testing.Short() }

// Smallest returns sizes, or under -short only its first element (a
// benchmark lists its sizes smallest first); an empty list is returned as
// it is.
func Smallest[T any](sizes []T) []T {
	if testing.Short() && len(sizes) > 1 {
		return sizes[:1]
	}
	return sizes
}

// First returns sizes, or under -short only its first n elements (for a
// benchmark whose metrics need more than one size, such as a ratio to the
// smallest).
func First[T any](sizes []T, n int) []T {
	if testing.Short() && len(sizes) > n {
		return sizes[:n]
	}
	return sizes
}

// Or returns full, or under -short smoke (a count of samples, cycles or
// rows a smoke run needs to exercise every path of the benchmark).
func Or(full, smoke int) int {
	if testing.Short() {
		return smoke
	}
	return full
}
