// Package data is graphkernel's typed data plane: node and edge tables of
// immutable Arrow IPC fragments, write transactions that validate
// everything before any durable effect, and snapshot reads.
//
//	g, _ := data.Init(ctx, store, "graphs/g", s, data.Options{Kernel: kernel.Options{Env: env}})
//	main, _ := g.Branch(ctx, "main")
//	tx, _ := g.Begin(ctx, main)                      // pins main's head, reads the schema once
//	_ = tx.Insert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "Ann"}})
//	_ = tx.Insert("WorksAt", data.Row{ID: "w1", From: "p1", To: "c1"})
//	_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "me"}) // one version per table, one publish
//	snap, _ := g.SnapshotAt(ctx, main)
//	rr, _ := snap.Scan(ctx, "Person", "id", "name") // arrow array.RecordReader
//
// A transaction is constructive (Insert, Upsert, Update, Patch) or
// destructive (Delete, DeleteCascade), never both. Upsert and Update
// replace whole rows (an omitted property becomes null); Patch changes
// only the properties a row names (an Update of the merged row, or an
// Insert of a new id). Staging rejects bad rows, mixing and
// oversize transactions at once, before any I/O. Commit checks duplicate
// ids, id existence on the live table, edge endpoints on the pinned base
// plus pending writes, remaining edges of deleted nodes, and @card counted
// on the live edge table plus pending rows; every rejection is a
// *ValidationError matching ErrValidation and one rule sentinel. Update,
// Patch and Delete are strict: a table that moved since Begin fails Commit with
// kernel.ErrVersionMismatch (begin again and retry). Insert and Upsert
// rebase onto newer versions and are validated again there.
//
// Reads: Get, GetMany (each covering fragment fetched once), Scan and
// ScanWhere (a kernel/data/pred predicate bound before any I/O; fragments
// whose column statistics rule it out are skipped), Out, In, OutDegree,
// InDegree (through each edge table version's adjacency index: a cold
// lookup reads one chunk and one page of it, never the edge table) and
// Expand (a bounded breadth-first traversal, kernel/data/traverse). A
// handle caches decoded fragments and index objects (Options.CacheBytes),
// shared by its snapshots; the @card and node-delete checks find edges
// through the index too, so a write costs the touched nodes' degrees.
//
// Updates and deletes never change a file: the fragments holding touched
// ids are rewritten as new files (copy-on-write). The on-store format is in
// docs/format.md, "Data plane". The package reads no wall clock (time and
// entropy come from the kernel Env), starts no goroutines, and never lets
// map order reach an output or a decision.
package data
