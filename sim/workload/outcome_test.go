package workload

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
)

// TestOutcomeAmbiguityWins: the history records an operation as Failed
// only when its error is definite. An error matching objstore.ErrAmbiguous
// is Ambiguous whatever else it matches (kernel K4: a version mismatch or
// a moved head seen on a head that does not yet show a pending write, or a
// context that ended after table versions were written, is reported
// ambiguous), so the checker lets its commit be visible. The same holds
// for a merge's outcome.
func TestOutcomeAmbiguityWins(t *testing.T) {
	mismatch := &kernel.VersionMismatchError{Table: "Person", Expected: 1, Actual: 2}
	moved := &kernel.HeadMovedError{Branch: "main"}
	unknown := func(cause error) error { return &kernel.OutcomeUnknownError{Cause: cause} }
	for _, tc := range []struct {
		name string
		err  error
		want model.Outcome
	}{
		{"nil", nil, model.OK},
		{"mismatch", mismatch, model.Failed},
		{"contention", &kernel.ContentionError{Op: "w", Attempts: 1, Last: mismatch}, model.Failed},
		{"ambiguous contention", &kernel.ContentionError{Op: "w", Attempts: 1, Ambiguous: true, Last: mismatch}, model.Ambiguous},
		{"ambiguous mismatch", unknown(mismatch), model.Ambiguous},
		{"ambiguous cancel", unknown(context.Canceled), model.Ambiguous},
		{"lost ack", objstore.NewAmbiguousError(objstore.OpPut, "k", objstore.ErrTransient, errors.New("ack lost")), model.Ambiguous},
		{"validation", fmt.Errorf("commit: %w", data.ErrValidation), model.Failed},
	} {
		if got := Outcome(tc.err); got != tc.want {
			t.Errorf("Outcome(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		want model.Outcome
	}{
		{"moved, rounds spent", &kernel.ContentionError{Op: "merge", Attempts: 8, Last: moved}, model.Failed},
		{"moved and ambiguous", fmt.Errorf("merge f into main: %w", unknown(moved)), model.Ambiguous},
		{"conflict", &data.MergeConflictError{Source: "f", Target: "main"}, model.Failed},
		{"lost ack", fmt.Errorf("merge: %w", unknown(objstore.ErrAmbiguous)), model.Ambiguous},
	} {
		if got := mergeOutcome(data.MergeResult{}, tc.err); got != tc.want {
			t.Errorf("mergeOutcome(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
