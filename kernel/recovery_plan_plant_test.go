//go:build simplant

package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// With the planted bug private-plan (each recoverer makes its own roll-back
// plan), the race reproductions of R5 publish two recovery commits: the
// stored plan is what makes TestRacingRecoverersPublishOneRecoveryCommit hold.
func TestPrivatePlanPublishesTwice(t *testing.T) {
	if err := plant.Enable(plant.PrivatePlan); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	for _, tc := range recoveryRaceCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, rc := recRaceRecoverers(t, tc.frags, tc.crashAt); len(rc) < 2 {
				t.Fatalf("private-plan: %d recovery commits, want the bug's second one", len(rc))
			}
		})
	}
}
