package kernel_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// TestMergeBaseTooDeepIsKernelTyped: the error a merge base past
// lineage.MaxReachLoads returns through MergeBaseOf (the search's
// *lineage.ReachError, wrapped once with the pair) matches the kernel's
// own sentinel, so callers of the kernel need not import lineage.
func TestMergeBaseTooDeepIsKernelTyped(t *testing.T) {
	err := fmt.Errorf("merge base of a and b: %w", &lineage.ReachError{Err: lineage.ErrReachTooDeep})
	if !errors.Is(err, kernel.ErrMergeBaseTooDeep) {
		t.Fatalf("%v does not match kernel.ErrMergeBaseTooDeep", err)
	}
	if errors.Is(fmt.Errorf("x: %w", &lineage.ReachError{Err: lineage.ErrReachMissing}), kernel.ErrMergeBaseTooDeep) {
		t.Fatal("a missing reach matches ErrMergeBaseTooDeep")
	}
}
