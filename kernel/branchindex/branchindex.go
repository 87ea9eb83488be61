// Package branchindex holds the pure decisions behind bounded branch
// operations: which fork marker a branch create writes, which loaded heads
// are dependents of an incarnation being deleted, and the cursor and page
// bounds of branch listing. It does no I/O; the kernel loads the markers
// and head manifests (kernel/forkindex.go) and acts on these answers.
//
// Fork markers (format.ForkMarker) are a reverse index from a source
// incarnation to the incarnations forked from it. A marker never proves a
// dependent: IsDependent decides from the child's live head manifest,
// which is the truth. Only the absence of markers is relied on, and only
// on a graph whose fork index is complete (format.ForkIndexFlag).
package branchindex

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Page bounds of branch listing, in name markers examined per page.
const (
	DefaultPageNames = 256
	MaxPageNames     = 1000
)

// ErrBadCursor matches a malformed listing cursor.
var ErrBadCursor = errors.New("branchindex: malformed branch cursor")

// PageNames clamps a requested page size: 0 or less means
// DefaultPageNames, and no page examines more than MaxPageNames names.
func PageNames(limit int) int {
	if limit <= 0 {
		return DefaultPageNames
	}
	return min(limit, MaxPageNames)
}

// EncodeCursor returns the cursor that resumes listing after name.
func EncodeCursor(after string) string { return "v1:" + after }

// DecodeCursor returns the name a cursor resumes after ("" for the empty
// cursor, which starts at the first name).
func DecodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	name, ok := strings.CutPrefix(c, "v1:")
	if !ok || format.ValidateName(name) != nil {
		return "", fmt.Errorf("%w: %q", ErrBadCursor, c)
	}
	return name, nil
}

// MarkerFor returns the fork marker of manifest m's incarnation, or false
// when m's incarnation was not forked (main).
func MarkerFor(m *format.Manifest) (format.ForkMarker, bool) {
	if m.ForkOf == nil {
		return format.ForkMarker{}, false
	}
	return format.ForkMarker{Source: m.ForkOf.IncarnationID, Child: m.Branch.Name, ChildIncarnationID: m.Branch.IncarnationID}, true
}

// NeedsMarker reports whether a backfill must write a marker for head: a
// live (not tombstoned) forked incarnation. Deleted incarnations never
// come back, so they need none.
func NeedsMarker(head *format.Manifest) bool {
	return head.ForkOf != nil && !head.Tombstone
}

// IsDependent reports whether head, the live head manifest of a branch,
// makes that branch a dependent of incarnation source of branch deleting:
// it is not a tombstone and its fork point is that incarnation.
func IsDependent(source format.ID, deleting string, head *format.Manifest) bool {
	return !head.Tombstone && head.ForkOf != nil && head.ForkOf.IncarnationID == source && head.Branch.Name != deleting
}

// Dependents returns the sorted, unique names of the heads that are
// dependents of incarnation source of branch deleting.
func Dependents(source format.ID, deleting string, heads []format.Manifest) []string {
	var out []string
	for i := range heads {
		if IsDependent(source, deleting, &heads[i]) {
			out = append(out, heads[i].Branch.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ChildNames returns the sorted, unique child names of markers: the
// branches whose heads a dependents check must load (several incarnations
// of one name share one head).
func ChildNames(children []string) []string {
	out := slices.Clone(children)
	slices.Sort(out)
	return slices.Compact(out)
}

// NextIncarnation is the incarnation number a create of a name takes:
// one above the name's newest incarnation (tombstoned, cur) when the name
// lookup found one, else the incarnation floor (format.IncarnationFloor;
// 0 when there is none), at least 1. A collection raises the floor above
// every incarnation number it collects before deleting a dead name's
// tombstone (docs/gc.md rule 1a), so a re-created name never reuses one.
func NextIncarnation(found bool, cur, floor uint64) uint64 {
	if found {
		return cur + 1
	}
	return max(1, floor)
}
