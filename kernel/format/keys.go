package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/oklog/ulid/v2"
)

// InvertedDigits is the width of an inverted version in a key.
const InvertedDigits = 20

// Invert renders v as the 20-digit zero-padded decimal of MaxUint64-v, so
// that byte-wise ascending key order is descending version order and one
// LIST with limit 1 returns the newest version.
func Invert(v uint64) string {
	return fmt.Sprintf("%020d", math.MaxUint64-v)
}

// ParseInverted reverses Invert. It accepts exactly 20 decimal digits.
func ParseInverted(s string) (uint64, error) {
	if len(s) != InvertedDigits {
		return 0, corrupt("key", "inverted version %q is not %d digits", s, InvertedDigits)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, corrupt("key", "inverted version %q has a non-digit", s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, corrupt("key", "inverted version %q: %v", s, err)
	}
	return math.MaxUint64 - n, nil
}

// Keys builds every key of one graph root. The zero Keys has root "" and
// places objects at the top of the key space.
type Keys struct {
	root string
}

// NewKeys returns the key builder for root (no trailing slash; "" allowed).
func NewKeys(root string) Keys { return Keys{root: root} }

// Root returns the graph root.
func (k Keys) Root() string { return k.root }

func (k Keys) join(parts ...string) string {
	s := strings.Join(parts, "/")
	if k.root == "" {
		return s
	}
	return k.root + "/" + s
}

// Schema is the key of the schema contract with sha256 hex digest sum.
func (k Keys) Schema(sum string) string { return k.join("schema", sum) }

// NamesPrefix is the prefix of the branch-name index markers.
func (k Keys) NamesPrefix() string { return k.join("names") + "/" }

// NameMarker is the create-only marker of a branch name ever created.
func (k Keys) NameMarker(name string) string { return k.join("names", name) }

// BranchPrefix lists every incarnation of a branch; LIST limit 1 of it
// returns the newest incarnation's newest manifest.
func (k Keys) BranchPrefix(name string) string { return k.join("branches", name) + "/" }

// IncarnationPrefix lists the manifests of one incarnation, newest first.
func (k Keys) IncarnationPrefix(name string, inc uint64) string {
	return k.join("branches", name, Invert(inc)) + "/"
}

// Manifest is the key of manifest version v of incarnation inc of a branch.
func (k Keys) Manifest(name string, inc, v uint64) string {
	return k.join("branches", name, Invert(inc), Invert(v))
}

// ParseManifestKey splits a manifest key under branch name into its
// incarnation and version.
func (k Keys) ParseManifestKey(name, key string) (inc, v uint64, err error) {
	rest, ok := strings.CutPrefix(key, k.BranchPrefix(name))
	if !ok {
		return 0, 0, corrupt("key", "%q is not under %q", key, k.BranchPrefix(name))
	}
	a, b, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, corrupt("key", "%q has no version segment", key)
	}
	if inc, err = ParseInverted(a); err != nil {
		return 0, 0, err
	}
	if v, err = ParseInverted(b); err != nil {
		return 0, 0, err
	}
	return inc, v, nil
}

// TableForkPrefix lists the versions of table on one fork, newest first.
func (k Keys) TableForkPrefix(table string, fork ID) string {
	return k.join("tables", table, fork.String()) + "/"
}

// TableVersion is the key of version v of table on fork.
func (k Keys) TableVersion(table string, fork ID, v uint64) string {
	return k.join("tables", table, fork.String(), Invert(v))
}

// TableAttemptPrefix lists the versions of table on fork named per write
// attempt (format 8), oldest attempt first. Every key under it sorts after
// every counter-named key of the fork (a digit sorts before 'a'), so a LIST
// limit 1 of TableForkPrefix still returns the newest counter-named version
// when there is one.
func (k Keys) TableAttemptPrefix(table string, fork ID) string {
	return k.join("tables", table, fork.String(), "a") + "/"
}

// TableAttempt is the key of the version of table on fork written by
// attempt (format 8): R/tables/<table>/<fork>/a/<ulid>.
func (k Keys) TableAttempt(table string, fork, attempt ID) string {
	return k.join("tables", table, fork.String(), "a", attempt.String())
}

// TableVersionRef is the key of the table version r names: by attempt
// when r is named, by counter otherwise.
func (k Keys) TableVersionRef(table string, r TableRef) string {
	if r.Named() {
		return k.TableAttempt(table, r.Fork, r.Attempt)
	}
	return k.TableVersion(table, r.Fork, r.Version)
}

// IsTableAttemptKey reports whether key (under TableForkPrefix(table,
// fork)) is a version named per attempt.
func (k Keys) IsTableAttemptKey(table string, fork ID, key string) bool {
	return strings.HasPrefix(key, k.TableAttemptPrefix(table, fork))
}

// ParseTableVersionKey returns the version of a key under TableForkPrefix.
func (k Keys) ParseTableVersionKey(table string, fork ID, key string) (uint64, error) {
	rest, ok := strings.CutPrefix(key, k.TableForkPrefix(table, fork))
	if !ok {
		return 0, corrupt("key", "%q is not under %q", key, k.TableForkPrefix(table, fork))
	}
	return ParseInverted(rest)
}

// Data is the key of one immutable data fragment (opaque to the core).
func (k Keys) Data(table string, fragment ID) string {
	return k.join("data", table, fragment.String())
}

// SidecarPrefix lists the recovery sidecars (R/sidecars/<opID>) in op-id
// order, which is creation order (op ids are ULIDs).
func (k Keys) SidecarPrefix() string { return k.join("sidecars") + "/" }

// Sidecar is the key of the recovery sidecar of operation op.
func (k Keys) Sidecar(op ID) string { return k.join("sidecars", op.String()) }

// ParseSidecarKey returns the operation id of a key under SidecarPrefix.
func (k Keys) ParseSidecarKey(key string) (ID, error) {
	rest, ok := strings.CutPrefix(key, k.SidecarPrefix())
	if !ok {
		return ID{}, corrupt("key", "%q is not under %q", key, k.SidecarPrefix())
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil || id.String() != rest {
		return ID{}, corrupt("key", "sidecar key %q does not end in an op id", key)
	}
	return id, nil
}

// AuditPrefix lists the recovery audit records (R/audit/<opID>/record).
func (k Keys) AuditPrefix() string { return k.join("audit") + "/" }

// AuditOpPrefix lists every audit record of operation op: exactly one,
// Audit(op), unless a bug wrote a second.
func (k Keys) AuditOpPrefix(op ID) string { return k.join("audit", op.String()) + "/" }

// Audit is the key of the one audit record of operation op, written
// create-only. (It ends in a fixed segment so that no key is a path-prefix of
// another; see storetest.CheckFlatKeys.)
func (k Keys) Audit(op ID) string { return k.join("audit", op.String(), "record") }

// RecoveryPlanPrefix lists the roll-back plans (R/plans/<opID>).
func (k Keys) RecoveryPlanPrefix() string { return k.join("plans") + "/" }

// RecoveryPlan is the key of the one roll-back plan of operation op: written
// create-only, replaced only by compare-and-swap, kept with the audit record.
func (k Keys) RecoveryPlan(op ID) string { return k.join("plans", op.String()) }

// QuarantinePrefix lists the quarantine records (R/quarantine/<opID>).
func (k Keys) QuarantinePrefix() string { return k.join("quarantine") + "/" }

// Quarantine is the key of the quarantine record of operation op's
// unreadable sidecar, written create-only before the sidecar is deleted.
func (k Keys) Quarantine(op ID) string { return k.join("quarantine", op.String()) }

// CommitIndexPrefix is the prefix of the commit indexes (lineage aids).
func (k Keys) CommitIndexPrefix() string { return k.join("index", "commits") + "/" }

// CommitIndex is the key of commit id's index (format.CommitIndex).
func (k Keys) CommitIndex(id ID) string { return k.join("index", "commits", id.String()) }

// LeasePrefix is the prefix of every snapshot lease.
func (k Keys) LeasePrefix() string { return k.join("leases") + "/" }

// Lease is the key of the snapshot lease id.
func (k Keys) Lease(id ID) string { return k.join("leases", id.String()) }

// ParseLeaseKey returns the lease id of a key under LeasePrefix.
func (k Keys) ParseLeaseKey(key string) (ID, error) {
	rest, ok := strings.CutPrefix(key, k.LeasePrefix())
	if !ok {
		return ID{}, corrupt("key", "%q is not under %q", key, k.LeasePrefix())
	}
	id, err := ulid.ParseStrict(rest)
	if err != nil || id.String() != rest {
		return ID{}, corrupt("key", "lease key %q does not end in a lease id", key)
	}
	return id, nil
}

// LegacyPrefix is reserved for v3 legacy objects (R/legacy/...).
func (k Keys) LegacyPrefix() string { return k.join("legacy") + "/" }
