package format

import (
	"fmt"
)

// MaxLegacyCommits bounds the legacy commits of one branch incarnation that
// a reader accepts and a migration folds into one manifest.
const MaxLegacyCommits = 1 << 18

// LegacyCommit is one v3 commit: the lineage record a v3 writer stored in a
// separate legacy commit object after its manifest publish, and the entry
// the v3->v4 migration folds into the migration manifest unchanged.
type LegacyCommit struct {
	ID              ID     `json:"id"`
	Parents         []ID   `json:"parents,omitempty"` // first = previous head; second = merged parent
	Actor           string `json:"actor"`
	Message         string `json:"message"`
	TimeUnixNano    int64  `json:"time_unix_nano"`
	ManifestVersion uint64 `json:"manifest_version"` // the v3 manifest version the commit was published at
}

// Kind derives the commit kind of a legacy commit from its parents (v3
// recorded none): no parent is a genesis, two are a merge.
func (c *LegacyCommit) Kind() CommitKind {
	switch len(c.Parents) {
	case 0:
		return KindGenesis
	case 2:
		return KindMerge
	}
	return KindCommit
}

// NewerThan reports whether c beats o under the v3 head rule: the higher
// manifest version, ties broken by the higher id.
func (c *LegacyCommit) NewerThan(o *LegacyCommit) bool {
	if c.ManifestVersion != o.ManifestVersion {
		return c.ManifestVersion > o.ManifestVersion
	}
	return c.ID.Compare(o.ID) > 0
}

// ValidateLegacyCommit checks one legacy commit on its own: non-zero id, at
// most two parents, none zero or the commit itself, merge parents distinct,
// text bounds.
func ValidateLegacyCommit(c *LegacyCommit) error {
	if c.ID == (ID{}) {
		return fmt.Errorf("zero commit id")
	}
	if len(c.Parents) > 2 {
		return fmt.Errorf("commit %s has %d parents, at most 2", c.ID, len(c.Parents))
	}
	for i, p := range c.Parents {
		if p == (ID{}) || p == c.ID {
			return fmt.Errorf("commit %s: parent %d is zero or the commit itself", c.ID, i)
		}
	}
	if len(c.Parents) == 2 && c.Parents[0] == c.Parents[1] {
		return fmt.Errorf("commit %s: merge parents are equal", c.ID)
	}
	if err := ValidateText(c.Actor, c.Message); err != nil {
		return fmt.Errorf("commit %s: %v", c.ID, err)
	}
	return nil
}

// LegacyHead applies the v3 head rule to commits: the one with the highest
// manifest version, ties broken by the highest id. ok=false when there are
// none (the head is then the fork commit, if any).
func LegacyHead(commits []LegacyCommit) (head ID, ok bool) {
	best := -1
	for i := range commits {
		if best < 0 || commits[i].NewerThan(&commits[best]) {
			best = i
		}
	}
	if best < 0 {
		return ID{}, false
	}
	return commits[best].ID, true
}

// LegacyLineage is the v3 lineage of one branch incarnation, folded into its
// migration manifest by the v3->v4 migration: every legacy commit of the
// incarnation in ascending id order, and the head the v3 rule gives.
type LegacyLineage struct {
	Commits []LegacyCommit `json:"commits,omitempty"` // sorted by id, unique
	Head    ID             `json:"head"`
}

// validateMigrationManifest checks the rules of a manifest carrying a
// legacy block: it adds no commit, is no tombstone, follows at least one v3
// manifest, its commits are valid, sorted, unique and older than it, and
// its head is the v3 head of those commits (the fork commit if none).
func validateMigrationManifest(m *Manifest) error {
	l := m.Legacy
	switch {
	case m.Commit != nil:
		return fmt.Errorf("a migration manifest adds no commit")
	case m.Tombstone:
		return fmt.Errorf("a migration manifest is no tombstone")
	case m.Version == 0:
		return fmt.Errorf("a migration manifest follows at least one v3 manifest (version 0)")
	case m.Head != l.Head:
		return fmt.Errorf("head %s is not the legacy head %s", m.Head, l.Head)
	case len(l.Commits) > MaxLegacyCommits:
		return fmt.Errorf("%d legacy commits exceeds %d", len(l.Commits), MaxLegacyCommits)
	}
	for i := range l.Commits {
		c := &l.Commits[i]
		if err := ValidateLegacyCommit(c); err != nil {
			return fmt.Errorf("legacy: %v", err)
		}
		if i > 0 && l.Commits[i-1].ID.Compare(c.ID) >= 0 {
			return fmt.Errorf("legacy commits not sorted and unique at %s", c.ID)
		}
		if c.ManifestVersion >= m.Version {
			return fmt.Errorf("legacy commit %s at manifest version %d is not older than the migration manifest %d",
				c.ID, c.ManifestVersion, m.Version)
		}
	}
	want, ok := LegacyHead(l.Commits)
	switch {
	case ok && l.Head != want:
		return fmt.Errorf("legacy head %s is not the v3 head %s", l.Head, want)
	case !ok && (m.ForkOf == nil || l.Head != m.ForkOf.CommitID):
		return fmt.Errorf("no legacy commits and head %s is not the fork commit", l.Head)
	}
	return nil
}

// legacyManifestError refuses to decode a v3 manifest as a v4 one.
func legacyManifestError(stamp uint16) error {
	return &UnsupportedFormatError{Stamp: stamp, Oldest: OldestSupportedFormat, Current: CurrentFormat,
		Reason: "a v3 manifest: decode it with DecodeManifestAnyStamp"}
}
