package lineage

import (
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Time is when a manifest's state was made, by its writer's clock: its
// commit's time, or for a commit-less manifest (a branch create's version
// 0) its incarnation id's ULID time (millisecond precision).
func Time(m *format.Manifest) time.Time {
	if m.Commit != nil {
		return time.Unix(0, m.Commit.TimeUnixNano).UTC()
	}
	return time.UnixMilli(int64(m.Branch.IncarnationID.Time())).UTC()
}

// ClockBehind reports whether a clock reading now lies more than margin
// before the time of head, a manifest read before now: true time cannot run
// backwards between the head's write and the reading, so the two clocks
// disagree by more than margin (docs/gc.md §4). It returns the head's time.
func ClockBehind(head *format.Manifest, now time.Time, margin time.Duration) (time.Time, bool) {
	t := Time(head)
	return t, t.Sub(now) > margin
}
