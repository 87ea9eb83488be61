package format

// FormatV3 is the legacy format: manifests carry table pins but no commit
// lineage; lineage lives in separate legacy commit objects written after the
// manifest publish (see stamp_legacy.go and docs/format.md, "Formats and
// migrations"). A v3 graph is read as is and migrated to v4 per branch.
const FormatV3 uint16 = 3

// FormatV4 is the lineage format (commits inside manifests) with inline
// fragment infos only. Its objects have the current layout: they are read as
// they are, never rewritten; the next publish of a branch stamps the
// current format.
const FormatV4 uint16 = 4

// FormatV5 is format 4's layout plus paged fragment infos, without the id
// index's delta. Its objects have format 7's layout: they are read as they
// are, never rewritten; the next publish of a branch stamps 7.
const FormatV5 uint16 = 5

// FormatV6 is format 5 plus the id index's delta, with id pages stored
// plain, adjacency pages as Arrow IPC files only and adjacency chunks as
// JSON. Its objects have format 7's layout: they are read as they are,
// never rewritten; the next publish of a branch stamps 7.
const FormatV6 uint16 = 6

// FormatV7 is format 6 plus compact index pages (zstd id pages and chunk
// payloads, column-file adjacency pages), with every table version
// counter-named (R/tables/<table>/<fork>/<inv(version)>, the HEAD found by
// a LIST) and every Write guarded by a recovery sidecar. Its objects have
// format 8's layout: they are read as they are, never rewritten; the next
// publish of a branch stamps 8, after its first write swept the
// incarnation's sidecars (docs/format.md, "v7->v8").
const FormatV7 uint16 = 7

// FormatV8 is format 7 plus table versions named per write attempt
// (R/tables/<table>/<fork>/a/<ulid>, pinned by name, no sidecar), with
// every fragment an object of its own. Its objects have format 9's
// layout: they are read as they are, never rewritten; the next publish of
// a branch stamps 9 (docs/format.md, "v8->v9").
const FormatV8 uint16 = 8

// FormatV9 is format 8 plus small fragments embedded in their table
// version, with every index direction listed inline in its table version.
// Its objects have format 10's layout: they are read as they are, never
// rewritten; the next publish of a branch stamps 10 (docs/format.md,
// "v9->v10").
const FormatV9 uint16 = 9

// FormatV10 is format 9 plus paged index refs, with every table version
// an object of its own. Its objects have format 11's layout: they are read
// as they are, never rewritten; the next publish of a branch stamps 11
// (docs/format.md, "v10->v11").
const FormatV10 uint16 = 10

// FormatV11 is format 10 plus table versions riding their manifest, with
// every index chunk's payload JSON. Its objects have format 12's layout:
// they are read as they are, never rewritten; the next publish of a
// branch stamps 12 (docs/format.md, "v11->v12").
const FormatV11 uint16 = 11

// FormatV12 is format 11 plus binary index chunks, with no adjacency
// delta. Its objects have format 13's layout: they are read as they are,
// never rewritten; the next publish of a branch stamps 13 (docs/format.md,
// "v12->v13").
const FormatV12 uint16 = 12

// CurrentLayout reports whether an object of stamp has the manifest and
// recovery layout of the current format (formats 4 to 13).
func CurrentLayout(stamp uint16) bool {
	s := EffectiveStamp(stamp)
	return s >= FormatV4 && s <= CurrentFormat
}

// EffectiveStamp is the stamp an object is judged by: an absent (zero)
// stamp reads as OldestSupportedFormat, every other stamp as itself.
func EffectiveStamp(stamp uint16) uint16 {
	if stamp == 0 {
		return OldestSupportedFormat
	}
	return stamp
}

// TooNew reports that the refused stamp is newer than this build writes:
// the remedy is to upgrade the binary.
func (e *UnsupportedFormatError) TooNew() bool { return e.Stamp > e.Current }

// TooOld reports that the refused stamp is older than the oldest this build
// reads: the remedy is to migrate forward with an older release first.
func (e *UnsupportedFormatError) TooOld() bool { return e.Stamp != 0 && e.Stamp < e.Oldest }

// Refusal reasons of CheckStamp. Tests and operators match on them.
const (
	ReasonTooNew = "written by a newer graphkernel; upgrade this binary"
	ReasonTooOld = "too old for this build; migrate forward with an older release first"
)
