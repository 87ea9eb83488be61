package lineage

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestClockBehind pins the skew rule (docs/gc.md §4): a clock is behind a
// manifest when the manifest's time (its commit's, else its incarnation
// id's) lies more than the margin after it; at exactly the margin, or with
// the clock ahead, it is not.
func TestClockBehind(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	withCommit := format.Manifest{Commit: &format.Commit{TimeUnixNano: t0.UnixNano()}}
	var created format.Manifest
	created.Branch.IncarnationID = ulid.MustNew(ulid.Timestamp(t0), nil)
	for _, c := range []struct {
		name   string
		m      *format.Manifest
		now    time.Time
		behind bool
	}{
		{"commit, clock past the margin behind", &withCommit, t0.Add(-time.Minute - time.Nanosecond), true},
		{"commit, clock exactly the margin behind", &withCommit, t0.Add(-time.Minute), false},
		{"commit, clock ahead", &withCommit, t0.Add(time.Hour), false},
		{"branch create, clock past the margin behind", &created, t0.Add(-2 * time.Minute), true},
		{"branch create, clock within the margin", &created, t0.Add(-30 * time.Second), false},
	} {
		at, behind := ClockBehind(c.m, c.now, time.Minute)
		if behind != c.behind || !at.Equal(t0) {
			t.Errorf("%s: ClockBehind = %v, %v; want %v, %v", c.name, at, behind, t0, c.behind)
		}
	}
}
