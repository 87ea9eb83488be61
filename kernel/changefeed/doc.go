// Package changefeed is the I/O driver of the change feed (its pure core is
// kernel/feed): exact diffs between any two snapshots, the changes of one
// commit relative to its first parent, and a durable, resumable feed of a
// branch's first-parent chain.
//
//	f := changefeed.New(g)                                  // g is a *data.Graph
//	page, err := f.Poll(ctx, "main", changefeed.Beginning(), feed.Filter{}, feed.Limits{})
//	// apply page.Blocks; save page.Cursor when it is not ""; continue with
//	// changefeed.FromToken(page.Cursor or page.PageToken).
//
// A commit that changes the schema (a schema change, or a merge that
// brings one) carries a SchemaChange in its first block, before its rows;
// its rows are expressed in the new schema (docs/invariants.md 3b, S12).
//
// Every diff is computed by data.TableChanges, which reads only the
// fragments present on one side (invariant D11), so the changes of a commit
// cost the fragments it rewrote, whatever the table's size. The driver keeps
// no state between calls besides caches: a cursor carries everything a
// resume needs, and it is checked against the store before it is trusted.
// It reads no wall clock, draws no entropy and starts no goroutines.
package changefeed
