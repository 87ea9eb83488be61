package gc

import (
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// LeastRetention is the least any collection with this KeepLast retains:
// KeepFor, Grace and SkewMargin zero (not defaulted, so Protected's settle
// time is zero). Protected is monotone in those fields, so a manifest it
// protects under LeastRetention is protected under every policy with the
// same KeepLast: it is what a checker that knows only KeepLast (graphkernel
// verify --keep-last) may require present, with what it pins.
func LeastRetention(keepLast int) Policy {
	if keepLast < 1 {
		keepLast = 1
	}
	return Policy{KeepLast: keepLast}
}

// ManifestTimeOf is a manifest's time for retention: its commit's, or for
// a branch-create manifest (no commit) the creation time in its
// incarnation id (a ULID minted when the branch was created).
func ManifestTimeOf(m format.Manifest) ManifestTime {
	t := ManifestTime{Version: m.Version}
	if m.Commit != nil {
		t.CommitUnixNano = m.Commit.TimeUnixNano
	} else {
		t.CommitUnixNano = int64(m.Branch.IncarnationID.Time()) * int64(time.Millisecond)
	}
	return t
}

// TombstoneTime is the time Protected takes of an incarnation whose head
// manifest is head: the tombstone's commit time, 0 for a live head.
func TombstoneTime(head format.Manifest) int64 {
	if head.Tombstone && head.Commit != nil {
		return head.Commit.TimeUnixNano
	}
	return 0
}
