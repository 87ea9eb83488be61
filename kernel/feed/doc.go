// Package feed is the pure core of graphkernel's change feed: the cursor and
// page-token codec, the fixed order of changes inside a commit, page
// packing by change count and bytes, the filter and its digest, and the rule
// that a cursor moves only once a whole commit has been delivered. It does
// no I/O; the driver (package kernel/changefeed) loads snapshots, computes
// row diffs with data.TableChanges and calls these functions.
//
// A consumer sees a branch's first-parent chain as blocks, one per commit,
// oldest first. A page ends either at a commit boundary (the page carries a
// cursor: every commit up to and including the last block is complete) or
// inside a commit (the page carries a page token that continues that
// commit). Delivery is at-least-once: a consumer that saves only cursors
// and resumes from the last one may see the tail of a commit again, never
// miss one. The kernel keeps no per-consumer state: everything a resume
// needs is inside the token.
//
// Order inside a commit (frozen; two polls of one range return the same
// changes in the same order): node types before edge types, types by name
// (byte order), then ids ascending (byte order). An id appears at most once
// per type per commit, so no further tie-break is needed.
//
// Token layout (version 1) is documented in docs/format.md, "Change feed
// tokens".
package feed
