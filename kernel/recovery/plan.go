package recovery

// Roll-back plans. A roll-back is carried out from one stored plan per
// abandoned write, so that racing recoverers write the same restores and
// publish the same commit at the same manifest version: at most one
// recovery commit can land (R5). The decisions below are pure; the kernel
// reads the plan and what stands at its slots, and stores the plans.

// RestoreAt returns, for each observed table, the version a new roll-back
// plan restores it at (0: no restore): one above the observed HEAD for
// every table NeedsRestore selects.
func RestoreAt(obs []Observation) []uint64 {
	at := make([]uint64, len(obs))
	for i, o := range obs {
		if NeedsRestore(o) {
			at[i] = o.Head + 1
		}
	}
	return at
}

// PlanStatus is where a stored roll-back plan stands.
type PlanStatus uint8

// The plan statuses.
const (
	// PlanLive: the plan's commit has not landed and still can: its slot
	// is free and every restore version written so far carries the plan's
	// token. Any recoverer may carry it out (again).
	PlanLive PlanStatus = iota + 1
	// PlanLanded: the plan's commit is the manifest at its slot. The
	// roll-back is done; only the audit record and the sidecar delete are
	// left. Nothing may be published for this op again.
	PlanLanded
	// PlanDead: someone else took the plan's slot or one of its restore
	// versions. Slots and versions are written once, so the plan can never
	// land: it must be replaced by a new plan made on fresh state.
	PlanDead
)

// String names the status.
func (s PlanStatus) String() string {
	switch s {
	case PlanLive:
		return "live"
	case PlanLanded:
		return "landed"
	case PlanDead:
		return "dead"
	}
	return "invalid-plan-status"
}

// SlotState is what stands at one of a plan's write-once slots (its
// manifest slot, or one of its restore versions).
type SlotState uint8

// The slot states.
const (
	SlotFree  SlotState = iota + 1 // nothing written there yet
	SlotPlan                       // the plan's own write (its commit id, or its token)
	SlotTaken                      // someone else's write
)

// JudgePlan returns the status of a plan whose manifest slot stands at
// manifest and whose restore versions stand at restores. A landed commit
// wins over everything (its restores were all written before it); a free
// manifest slot with a restore taken by someone else can never land.
func JudgePlan(manifest SlotState, restores []SlotState) PlanStatus {
	switch manifest {
	case SlotPlan:
		return PlanLanded
	case SlotTaken:
		return PlanDead
	case SlotFree:
	default:
		panic("recovery: JudgePlan: invalid manifest slot state")
	}
	for _, r := range restores {
		switch r {
		case SlotTaken:
			return PlanDead
		case SlotFree, SlotPlan:
		default:
			panic("recovery: JudgePlan: invalid restore slot state")
		}
	}
	return PlanLive
}
